# Labels for probe235 (single-cell / spatial-omics deep learning, CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
# Policy notes are in ../README.md ("How the labels were chosen").
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


NPU_LIGHTNING = ("stock Lightning resolves 'gpu'/'cuda' to CUDA (or MPS) only; 'npu' needs an NPU accelerator "
                 "registered with Lightning / an NPU-aware scvi (not in knowledge, unconfirmed)")
USE_GPU_NOTE = ("scvi 0.x parse_use_gpu_arg(True) calls torch.cuda.current_device() and raises on an NPU host; "
                "'npu:0' goes through its str branch once scvi's device helper is ported")
SEED_NOTE = ("torch.cuda seeding is a queued no-op without CUDA; torch.manual_seed on the line before already seeds "
             "the PrivateUse1 (npu) generator in torch>=2.1 (unconfirmed in knowledge) - kept for explicitness")

# ---------------------------------------------------------------------------------------------
# scvi-tools
# ---------------------------------------------------------------------------------------------
E("scvi_settings", "scvi/_settings.py", "device_branch_or_abstraction",
  "scvi-tools ScviConfig (seed, dl_pin_memory_gpu_training, jax_preallocate_gpu_memory)",
  [])

E("scvi_model_utils", "scvi/model/_utils.py", "device_branch_or_abstraction",
  "scvi-tools model/_utils.py: parse_use_gpu_arg / parse_device_args + DE helpers",
  [
    C("gpu_available = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "gpu_available = torch.npu.is_available()",
      "False on an NPU host, so use_gpu=None silently falls back to CPU"),
    C("current = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "current = torch.npu.current_device()",
      "use_gpu=True initialises the CUDA runtime and raises on an NPU host"),
    C("device = torch.device(current)", "device_type", "replace", True,
      'device = torch.device(f"npu:{current}")',
      "a bare int index is taken as a cuda device in the torch versions these projects pin"),
    C('device = torch.device(f"cuda:{use_gpu}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{use_gpu}")', "integer use_gpu hard-wired to cuda"),
    C('accelerator = "cpu" if device.type == "cpu" else "gpu"', "device_type", "replace", True,
      'accelerator = "cpu" if device.type == "cpu" else "npu"', NPU_LIGHTNING),
    C("connector = _AcceleratorConnector(accelerator=accelerator, devices=devices)", "device_type", "add_branch", True,
      'if accelerator == "npu": _accelerator, _devices = "npu", devices',
      "Lightning's connector rejects 'npu' and never resolves 'gpu'/'auto' to an Ascend device; NPU branch before it"),
    C('device = torch.device(f"cuda:{device_idx}")', "device_type", "replace", False,
      'device = torch.device(f"npu:{device_idx}")',
      "only reached when Lightning resolved a CUDA 'gpu'; mapping it to npu keeps accelerator='gpu' scripts working"),
  ])

E("scvi_data_splitting", "scvi/dataloaders/_data_splitting.py", "device_branch_or_abstraction",
  "scvi-tools DataSplitter / DeviceBackedDataSplitter (pin_memory gating, whole-matrix-on-device loader)",
  [
    C('self.pin_memory = (pin_memory or settings.dl_pin_memory_gpu_training) and accelerator in ("gpu", "cuda")',
      "pin_memory", "replace", False,
      'self.pin_memory = (pin_memory or settings.dl_pin_memory_gpu_training) and accelerator in ("gpu", "cuda", "npu")',
      "pinning silently switched off for an npu accelerator; host->NPU copies lose overlap (performance only)"),
    C('if self.device.type == "cuda":', "device_type", "replace", False,
      'if self.device.type in ("cuda", "npu"):',
      "advisory free-memory check silently skipped on NPU"),
    C("free, _total = torch.cuda.mem_get_info(self.device)", "torch_cuda_api", "replace", False,
      "free, _total = torch.npu.mem_get_info(self.device)",
      "only reachable once the gate above admits npu; must then use the NPU allocator query"),
  ])

E("scvi_anntorchdataset", "scvi/data/_anntorchdataset.py", "explicit_replacement",
  "scvi-tools AnnTorchDataset with load_sparse_tensor (scipy CSR/CSC -> torch sparse)",
  [
    C("return torch.sparse_csr_tensor(", "unsupported_op_workaround", "replace", True,
      "coo = x.tocoo(); return torch.sparse_coo_tensor(np.vstack([coo.row, coo.col]), coo.data, size=x.shape)",
      "torch.sparse_csr_tensor is marked unsupported in Ascend's 2.7.1 API list; the opt-in load_sparse_tensor path "
      "breaks once Lightning moves the batch to the NPU (COO is listed as supported)"),
    C("return torch.sparse_csc_tensor(", "unsupported_op_workaround", "replace", True,
      "coo = x.tocoo(); return torch.sparse_coo_tensor(np.vstack([coo.row, coo.col]), coo.data, size=x.shape)",
      "torch.sparse_csc_tensor is marked unsupported in Ascend's 2.7.1 API list"),
  ])

E("scvi_base_model", "scvi/model/base/_base_model.py", "device_branch_or_abstraction",
  "scvi-tools BaseModelClass (to_device, save/load with map_location)",
  [
    C("my_device = torch.device(device)", "device_type", "replace", False,
      'my_device = torch.device(f"npu:{device}") if isinstance(device, int) else torch.device(device)',
      "only an int index (documented 'integer GPU index') is read as cuda; newer torch maps it to the current "
      "accelerator (unconfirmed). Strings like 'npu:0' and torch.device objects pass through"),
  ])

E("scvi_train_atlas", "scripts/train_scvi_atlas.py", "explicit_replacement",
  "user script: scVI + scANVI atlas integration with Lightning accelerator='gpu'",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script: registers the npu device before scvi/Lightning touch it"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(args.gpu)',
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; --gpu would not pin the run"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available():",
      "always False on an NPU host, so the script silently trains on CPU"),
    C('logger.info("Using GPU: %s", torch.cuda.get_device_name(0))', "torch_cuda_api", "replace", True,
      'logger.info("Using NPU: %s", torch.npu.get_device_name(0))',
      "reached once the availability check is fixed; CUDA query raises there"),
    C('p.add_argument("--accelerator", default="gpu"', "device_type", "replace", True,
      'p.add_argument("--accelerator", default="npu", help="lightning accelerator (npu, cpu, auto)")',
      NPU_LIGHTNING),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device and raises without CUDA"),
    C('stats["peak_gpu_mem_gb"] = torch.cuda.max_memory_allocated() / 1024**3', "torch_cuda_api", "replace", True,
      'stats["peak_gpu_mem_gb"] = torch.npu.max_memory_allocated() / 1024**3',
      "uninitialised CUDA returns 0: the reported peak memory is silently wrong"),
  ])

E("scanvi_label_transfer_nb", "notebooks/scarches_scanvi_label_transfer.py", "explicit_replacement",
  "scvi-tools scArches/scANVI reference-mapping tutorial exported with jupytext (use_gpu=True era)",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "notebook entry point"),
    C('print("GPU available:", torch.cuda.is_available())', "torch_cuda_api", "replace", False,
      'print("NPU available:", torch.npu.is_available())', "log line only"),
    C("vae_ref.train(max_epochs=200, use_gpu=USE_GPU)", "device_type", "replace", True,
      'vae_ref.train(max_epochs=200, use_gpu="npu:0" if USE_GPU else False)', USE_GPU_NOTE),
    C("vae_ref_scan.train(max_epochs=20, n_samples_per_label=100, use_gpu=USE_GPU)", "device_type", "replace", True,
      'vae_ref_scan.train(max_epochs=20, n_samples_per_label=100, use_gpu="npu:0" if USE_GPU else False)', USE_GPU_NOTE),
    C('vae_q = scvi.model.SCANVI.load_query_data(adata_query, dir_path_scan, use_gpu="cuda:0")', "device_type",
      "replace", True,
      'vae_q = scvi.model.SCANVI.load_query_data(adata_query, dir_path_scan, use_gpu="npu:0")',
      "hard-coded cuda:0 device string"),
    C("    use_gpu=USE_GPU,", "device_type", "replace", True,
      '    use_gpu="npu:0" if USE_GPU else False,', USE_GPU_NOTE),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "no-op without CUDA; NPU cache is not released (memory only)"),
  ])

E("totalvi_citeseq_nb", "notebooks/totalvi_pbmc_citeseq.py", "explicit_replacement",
  "scvi-tools totalVI CITE-seq tutorial (jupytext) with a hand-written batched module loop",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "notebook entry point"),
    C('DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'DEVICE = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "silently picks CPU on an NPU host"),
    C('vae.train(max_epochs=400, accelerator="gpu", devices=1, batch_size=256)', "device_type", "replace", True,
      'vae.train(max_epochs=400, accelerator="npu", devices=1, batch_size=256)', NPU_LIGHTNING),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "initialises CUDA and raises on an NPU host"),
    C("module.cuda()", "tensor_to_device", "replace", True, "module.to(DEVICE)", ".cuda() raises without CUDA"),
    C('x = torch.as_tensor(x.toarray() if hasattr(x, "toarray") else x, dtype=torch.float32).cuda()',
      "tensor_to_device", "replace", True,
      'x = torch.as_tensor(x.toarray() if hasattr(x, "toarray") else x, dtype=torch.float32).to(DEVICE)',
      ".cuda() raises without CUDA"),
    C("y = torch.as_tensor(y_all[start:stop], dtype=torch.float32).cuda()", "tensor_to_device", "replace", True,
      "y = torch.as_tensor(y_all[start:stop], dtype=torch.float32).to(DEVICE)", ".cuda() raises without CUDA"),
    C('print("peak GPU memory (MB):", torch.cuda.max_memory_allocated(DEVICE) // 2**20)', "torch_cuda_api",
      "replace", True,
      'print("peak NPU memory (MB):", torch.npu.max_memory_allocated(DEVICE) // 2**20)',
      "torch.cuda.* rejects a non-cuda device argument (cpu or npu) and raises"),
  ])

# ---------------------------------------------------------------------------------------------
# CellBender
# ---------------------------------------------------------------------------------------------
E("cellbender_run", "cellbender/remove_background/run.py", "device_branch_or_abstraction",
  "CellBender remove-background run.py (run_remove_background / run_inference, pyro SVI)",
  [
    C("torch.cuda.manual_seed_all(consts.RANDOM_SEED)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(consts.RANDOM_SEED)", SEED_NOTE.replace("on the line before", "(via pyro.set_rng_seed)")),
    C('force_device="cuda:0" if args.use_cuda else "cpu",', "device_type", "replace", True,
      'force_device="npu:0" if args.use_cuda else "cpu",',
      "checkpoint restart maps model/optimizer/param store onto cuda:0 and fails on an NPU host"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "retry path; no-op without CUDA so the NPU cache is kept (memory only)"),
  ])

E("cellbender_model", "cellbender/remove_background/model.py", "device_branch_or_abstraction",
  "CellBender RemoveBackgroundPyroModel.__init__ (use_cuda -> self.cuda(), device strings, pyro.plate)",
  [
    C("self.cuda()", "tensor_to_device", "replace", True, 'self.to("npu")',
      "--cuda (kept as the 'use accelerator' switch) calls Module.cuda(), which raises"),
    C("value.cuda()", "tensor_to_device", "replace", True, 'value.to("npu")', "same, per encoder"),
    C('self.device = "cuda"', "device_type", "replace", True, 'self.device = "npu"',
      "every prior tensor is created with .to(self.device)"),
  ])

E("cellbender_train", "cellbender/remove_background/train.py", "device_branch_or_abstraction",
  "CellBender train.py (run_training loop, epoch timing, debug memory log)",
  [
    C("allocated = torch.cuda.memory_allocated(device_index) / 1e9", "torch_cuda_api", "replace", False,
      "allocated = torch.npu.memory_allocated(device_index) / 1e9",
      "--debug log only; reads 0 without CUDA"),
    C("reserved = torch.cuda.memory_reserved(device_index) / 1e9", "torch_cuda_api", "replace", False,
      "reserved = torch.npu.memory_reserved(device_index) / 1e9", "--debug log only; reads 0 without CUDA"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "runs every epoch when --cuda is set; raises without CUDA"),
  ])

E("cellbender_posterior", "cellbender/remove_background/posterior.py", "device_branch_or_abstraction",
  "CellBender posterior.py (minibatched noise-count posterior, empty_cache between batches)",
  [
    C("self.use_cuda = torch.cuda.is_available() if vi_model is None else vi_model.use_cuda", "torch_cuda_api",
      "replace", True,
      "self.use_cuda = torch.npu.is_available() if vi_model is None else vi_model.use_cuda",
      "device auto-detection silently picks CPU on an NPU host"),
    C('self.device = "cuda" if self.use_cuda else "cpu"', "device_type", "replace", True,
      'self.device = "npu" if self.use_cuda else "cpu"', "posterior tensors would be sent to cuda"),
    C("torch.cuda.empty_cache()  # training leaves", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # training leaves a lot of cached blocks behind",
      "no-op without CUDA; posterior is memory hungry so worth freeing the NPU cache"),
    C('analyzed_gene_inds = analyzed_gene_inds.to("cuda:0")', "tensor_to_device", "replace", True,
      'analyzed_gene_inds = analyzed_gene_inds.to("npu:0")', "hard-coded cuda:0"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "per-10-minibatch cache release; no-op without CUDA"),
  ])

E("cellbender_dataprep", "cellbender/remove_background/data/dataprep.py", "device_branch_or_abstraction",
  "CellBender data/dataprep.py (sparse minibatch DataLoader with empty droplets)",
  [
    C('pin_memory_device="cuda" if use_cuda else "",', "pin_memory", "replace", True,
      'pin_memory_device="npu" if use_cuda else "",',
      "pinning for the cuda device fails in the pin-memory thread on an NPU host"),
    C('self.device = "cuda"', "device_type", "replace", True, 'self.device = "npu"',
      "every minibatch is moved with .to(device=self.device)"),
  ])

E("cellbender_checkpoint", "cellbender/remove_background/checkpoint.py", "device_branch_or_abstraction",
  "CellBender checkpoint.py (tarball checkpoints incl. CUDA RNG state, map_location on restore)",
  [
    C("USE_CUDA = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "USE_CUDA = torch.npu.is_available()",
      "False on NPU: the device RNG state is silently not checkpointed, so restarts are not reproducible"),
    C("cuda_random_state = torch.cuda.get_rng_state_all()", "torch_cuda_api", "replace", True,
      "cuda_random_state = torch.npu.get_rng_state_all()", "reached once the flag above is fixed"),
    C("torch.cuda.set_rng_state_all(cuda_random_state)", "torch_cuda_api", "replace", True,
      "torch.npu.set_rng_state_all(cuda_random_state)", "reached once the flag above is fixed"),
    C('train_loader.device = "cuda" if train_loader.use_cuda else "cpu"', "device_type", "replace", True,
      'train_loader.device = "npu" if train_loader.use_cuda else "cpu"',
      "restored loader would emit cuda tensors"),
    C('test_loader.device = "cuda" if test_loader.use_cuda else "cpu"', "device_type", "replace", True,
      'test_loader.device = "npu" if test_loader.use_cuda else "cpu"', "restored loader would emit cuda tensors"),
  ])

E("cellbender_cli", "cellbender/remove_background/cli.py", "device_branch_or_abstraction",
  "CellBender remove-background CLI (--cuda flag, argument validation, logging setup)",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "CLI entry point of the tool"),
    C('assert torch.cuda.is_available(), "Trying to use CUDA, but CUDA is not available."', "torch_cuda_api",
      "replace", True,
      'assert torch.npu.is_available(), "Trying to use an NPU (--cuda), but no NPU is available."',
      "--cuda aborts on an NPU host"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "only decides whether to print a hint"),
    C('logger.info(f"Running on GPU: {torch.cuda.get_device_name(torch.cuda.current_device())}")',
      "torch_cuda_api", "replace", True,
      'logger.info(f"Running on NPU: {torch.npu.get_device_name(torch.npu.current_device())}")',
      "CUDA queries raise on an NPU host"),
  ])

E("cellbender_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "CellBender Dockerfile (nvidia/cuda base, conda pytorch-cuda)",
  [
    C("FROM nvcr.io/nvidia/cuda:11.7.1-base-ubuntu20.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "needs a CANN toolkit image (set_env.sh exports baked into ENV) instead of the CUDA runtime"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=all",
      "read by the NVIDIA container runtime only; Ascend-Docker-Runtime uses ASCEND_VISIBLE_DEVICES, otherwise "
      "/dev/davinci* are passed with --device (unconfirmed which the target cluster uses)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA runtime hint, inert on Ascend"),
    C("RUN conda install -y pytorch=1.13.1 pytorch-cuda=11.7 -c pytorch -c nvidia \\", "import_torch_npu",
      "replace", True,
      "RUN pip install torch==2.1.0 --index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==2.1.0.post12 \\",
      "CUDA build of torch 1.13 has no torch_npu counterpart; torch-npu wheel must match torch exactly"),
  ])

# ---------------------------------------------------------------------------------------------
# rapids-singlecell
# ---------------------------------------------------------------------------------------------
RSC = "rapids-singlecell/cupy are CUDA-only (no Ascend backend); the step moves to scanpy on CPU"

E("rsc_preprocess", "workflow/scripts/rsc_preprocess.py", "explicit_replacement",
  "rapids-singlecell GPU preprocessing script (rmm pool, anndata_to_GPU, rsc.pp/tl pipeline)",
  [
    C("=import cupy as cp", "unsupported_op_workaround", "removal", True, None, "cupy has no Ascend support"),
    C("=import rapids_singlecell as rsc", "unsupported_op_workaround", "removal", True, None, RSC),
    C("=import rmm", "unsupported_op_workaround", "removal", True, None, "RAPIDS memory manager is CUDA-only"),
    C("from rmm.allocators.cupy import rmm_cupy_allocator", "unsupported_op_workaround", "removal", True, None,
      "RAPIDS memory manager is CUDA-only"),
    C("cp.cuda.Device().synchronize()", "unsupported_op_workaround", "removal", True, None,
      "cupy device sync; nothing to synchronise for CPU scanpy"),
    C("rmm.reinitialize(", "unsupported_op_workaround", "removal", True, None, "RMM pool setup (call spans 5 lines)"),
    C("cp.cuda.set_allocator(rmm_cupy_allocator)", "unsupported_op_workaround", "removal", True, None, RSC),
    C("free, total = cp.cuda.runtime.memGetInfo()", "unsupported_op_workaround", "replace", True,
      "free, total = psutil.virtual_memory().available, psutil.virtual_memory().total",
      "cupy runtime query; report host memory for the CPU path"),
    C('rsc.pp.flag_gene_family(adata, gene_family_name="MT", gene_family_prefix="MT-")', "unsupported_op_workaround",
      "replace", True, 'adata.var["MT"] = adata.var_names.str.startswith("MT-")', RSC),
    C('rsc.pp.flag_gene_family(adata, gene_family_name="RIBO", gene_family_prefix="RPS")',
      "unsupported_op_workaround", "replace", True, 'adata.var["RIBO"] = adata.var_names.str.startswith("RPS")', RSC),
    C('rsc.pp.calculate_qc_metrics(adata, qc_vars=["MT", "RIBO"])', "unsupported_op_workaround", "replace", True,
      'sc.pp.calculate_qc_metrics(adata, qc_vars=["MT", "RIBO"], inplace=True)', RSC),
    C("rsc.pp.filter_genes(adata, min_count=3)", "unsupported_op_workaround", "replace", True,
      "sc.pp.filter_genes(adata, min_counts=3)", RSC),
    C("rsc.pp.normalize_total(adata, target_sum=1e4)", "unsupported_op_workaround", "replace", True,
      "sc.pp.normalize_total(adata, target_sum=1e4)", RSC),
    C("rsc.pp.log1p(adata)", "unsupported_op_workaround", "replace", True, "sc.pp.log1p(adata)", RSC),
    C("rsc.pp.highly_variable_genes(", "unsupported_op_workaround", "replace", True,
      "sc.pp.highly_variable_genes(", RSC),
    C('rsc.pp.regress_out(adata, keys=["total_counts", "pct_counts_MT"])', "unsupported_op_workaround", "replace",
      True, 'sc.pp.regress_out(adata, keys=["total_counts", "pct_counts_MT"], n_jobs=8)', RSC),
    C("rsc.pp.scale(adata, max_value=10)", "unsupported_op_workaround", "replace", True,
      "sc.pp.scale(adata, max_value=10)", RSC),
    C("rsc.pp.pca(adata, n_comps=100, use_highly_variable=False)", "unsupported_op_workaround", "replace", True,
      "sc.pp.pca(adata, n_comps=100, use_highly_variable=False)", RSC),
    C("rsc.pp.harmony_integrate(adata, key=batch_key, max_iter_harmony=20)", "unsupported_op_workaround", "replace",
      True, "sc.external.pp.harmony_integrate(adata, key=batch_key, max_iter_harmony=20)", RSC),
    C('rsc.pp.neighbors(adata, n_neighbors=15, n_pcs=50, use_rep="X_pca_harmony")', "unsupported_op_workaround",
      "replace", True, 'sc.pp.neighbors(adata, n_neighbors=15, n_pcs=50, use_rep="X_pca_harmony")', RSC),
    C("rsc.tl.umap(adata, min_dist=0.3)", "unsupported_op_workaround", "replace", True,
      "sc.tl.umap(adata, min_dist=0.3)", RSC),
    C('rsc.tl.leiden(adata, resolution=1.0, key_added="leiden")', "unsupported_op_workaround", "replace", True,
      'sc.tl.leiden(adata, resolution=1.0, key_added="leiden")', RSC),
    C('rsc.tl.rank_genes_groups_logreg(adata, groupby="leiden", use_raw=False)', "unsupported_op_workaround",
      "replace", True, 'sc.tl.rank_genes_groups(adata, groupby="leiden", method="logreg", use_raw=False)', RSC),
    C("rsc.get.anndata_to_GPU(adata)", "unsupported_op_workaround", "removal", True, None,
      "device transfer of .X to cupy; data stays on host for scanpy"),
    C("rsc.get.anndata_to_CPU(adata)", "unsupported_op_workaround", "removal", True, None,
      "nothing to copy back"),
  ])

KR = ("cupy.RawKernel compiles CUDA C with NVRTC; rewritten as torch ops on the NPU "
      "(per-row sums via index_add_/scatter_add over the CSR buffers, both with NPU kernels)")
E("rsc_kernels", "rapids_singlecell/preprocessing/_qc_kernels.py", "kernel_rewrite",
  "rapids-singlecell cupy RawKernel QC / normalisation kernels over CSR buffers",
  [
    C("=import cupy as cp", "unsupported_op_workaround", "replace", True, "import torch",
      "cupy has no Ascend support; arrays become torch tensors on the NPU"),
    C("from cupyx.scipy import sparse as cpx_sparse", "unsupported_op_workaround", "replace", True,
      "from scipy import sparse as cpx_sparse",
      "CSR container stays scipy on host; buffers are copied to NPU tensors inside the rewritten kernels"),
    C('_sparse_qc_csr_src = r"""', "custom_cuda_extension", "removal", False, None,
      "CUDA C source string; dead after the rewrite"),
    C('_sparse_qc_csr_sub_src = r"""', "custom_cuda_extension", "removal", False, None,
      "CUDA C source string; dead after the rewrite"),
    C('_mul_csr_src = r"""', "custom_cuda_extension", "removal", False, None,
      "CUDA C source string; dead after the rewrite"),
    C('return cp.RawKernel(_sparse_qc_csr_src.replace("{0}", _dtype_to_c(dtype)), "sparse_qc_csr")',
      "custom_cuda_extension", "replace", True, "return _sparse_qc_csr_torch", KR),
    C('return cp.RawKernel(_sparse_qc_csr_sub_src.replace("{0}", _dtype_to_c(dtype)), "sparse_qc_csr_sub")',
      "custom_cuda_extension", "replace", True, "return _sparse_qc_csr_sub_torch", KR),
    C('return cp.RawKernel(_mul_csr_src.replace("{0}", _dtype_to_c(dtype)), "mul_csr")',
      "custom_cuda_extension", "replace", True, "return _mul_csr_torch", KR),
    C("qc_kernel(_grid(n_cells), (_THREADS_PER_BLOCK,),", "custom_cuda_extension", "replace", True,
      "qc_kernel(X, sums_cells, sums_genes, cell_ex, gene_ex)",
      "grid/block launch of the CUDA kernel becomes a plain call of the torch rewrite"),
    C("sub_kernel(_grid(n_cells), (_THREADS_PER_BLOCK,),", "custom_cuda_extension", "replace", True,
      "sub_kernel(X, sums_cells_sub, mask)", "grid/block launch becomes a plain call"),
    C("mul_kernel(_grid(n_rows), (_THREADS_PER_BLOCK,),", "custom_cuda_extension", "replace", True,
      "mul_kernel(X, float(target_sum))", "grid/block launch becomes a plain call"),
    C("sums_cells = cp.zeros(n_cells, dtype=X.dtype)", "unsupported_op_workaround", "replace", True,
      'sums_cells = torch.zeros(n_cells, dtype=torch.float32, device="npu")', "cupy allocation"),
    C("sums_genes = cp.zeros(n_genes, dtype=X.dtype)", "unsupported_op_workaround", "replace", True,
      'sums_genes = torch.zeros(n_genes, dtype=torch.float32, device="npu")', "cupy allocation"),
    C("cell_ex = cp.zeros(n_cells, dtype=cp.int32)", "unsupported_op_workaround", "replace", True,
      'cell_ex = torch.zeros(n_cells, dtype=torch.int32, device="npu")', "cupy allocation"),
    C("gene_ex = cp.zeros(n_genes, dtype=cp.int32)", "unsupported_op_workaround", "replace", True,
      'gene_ex = torch.zeros(n_genes, dtype=torch.int32, device="npu")', "cupy allocation"),
    C("sums_cells_sub = cp.zeros(n_cells, dtype=X.dtype)", "unsupported_op_workaround", "replace", True,
      'sums_cells_sub = torch.zeros(n_cells, dtype=torch.float32, device="npu")', "cupy allocation"),
    C('obs_metrics["log1p_total_counts"] = cp.log1p(sums_cells)', "unsupported_op_workaround", "replace", True,
      'obs_metrics["log1p_total_counts"] = torch.log1p(sums_cells)', "cupy ufunc"),
    C("mask = cp.asarray(adata.var[qc_var].to_numpy(), dtype=cp.bool_)", "unsupported_op_workaround", "replace",
      True, 'mask = torch.as_tensor(adata.var[qc_var].to_numpy(), dtype=torch.bool, device="npu")', "cupy transfer"),
    C("cp.cuda.get_current_stream().synchronize()", "unsupported_op_workaround", "replace", True,
      "torch.npu.synchronize()", "cupy stream sync"),
    C("adata.obs[key] = cp.asnumpy(val)", "unsupported_op_workaround", "replace", True,
      "adata.obs[key] = val.cpu().numpy()", "cupy device-to-host copy"),
    C("adata.var[key] = cp.asnumpy(val)", "unsupported_op_workaround", "replace", True,
      "adata.var[key] = val.cpu().numpy()", "cupy device-to-host copy"),
  ])

# ---------------------------------------------------------------------------------------------
# cell2location / Tangram / spatial GNNs
# ---------------------------------------------------------------------------------------------
E("c2l_lymph_node", "tutorials/cell2location_lymph_node.py", "explicit_replacement",
  "cell2location short lymph-node tutorial exported as a script (RegressionModel + Cell2location, use_gpu=True)",
  [
    C("=import cell2location", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script never imports torch itself; torch_npu must be loaded before scvi/pyro pick a device"),
    C("mod.train(max_epochs=250, use_gpu=True)", "device_type", "replace", True,
      'mod.train(max_epochs=250, use_gpu="npu:0")', USE_GPU_NOTE),
    C('adata_ref, sample_kwargs={"num_samples": 1000, "batch_size": 2500, "use_gpu": True}', "device_type",
      "replace", True, 'adata_ref, sample_kwargs={"num_samples": 1000, "batch_size": 2500, "use_gpu": "npu:0"}',
      USE_GPU_NOTE),
    C("=use_gpu=True,", "device_type", "replace", True, 'use_gpu="npu:0",', USE_GPU_NOTE),
    C('sample_kwargs={"num_samples": 1000, "batch_size": mod.adata.n_obs, "use_gpu": True},', "device_type",
      "replace", True, 'sample_kwargs={"num_samples": 1000, "batch_size": mod.adata.n_obs, "use_gpu": "npu:0"},',
      USE_GPU_NOTE),
  ])

E("c2l_pyro_mixin", "cell2location/models/base/_pyro_mixin.py", "device_branch_or_abstraction",
  "cell2location models/base/_pyro_mixin.py (QuantileMixin minibatch posterior, autoguides, training plan)",
  [
    C('if device.type == "cuda":', "device_type", "replace", False, 'if device.type in ("cuda", "npu"):',
      "cache release between posterior batches silently skipped on NPU (memory only)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "only reachable once the gate admits npu"),
    C('if device.type != "cuda":', "device_type", "replace", False, 'if device.type not in ("cuda", "npu"):',
      "auto batch size falls back to a fixed 2500 on NPU (performance only)"),
    C("free_bytes, _ = torch.cuda.mem_get_info(device)", "torch_cuda_api", "replace", False,
      "free_bytes, _ = torch.npu.mem_get_info(device)", "only reachable once the gate admits npu"),
    C("torch.cuda.empty_cache()  # pyro keeps", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # pyro keeps references to large traces",
      "unconditional; no-op without CUDA (memory only)"),
  ])

E("tangram_mapping", "scripts/run_tangram_mapping.py", "explicit_replacement",
  "Tangram map_cells_to_space driver script (cells/clusters/constrained modes, LOOCV)",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("if gpu_index < 0 or not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if gpu_index < 0 or not torch.npu.is_available():", "silently maps on CPU on an NPU host"),
    C("n = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n = torch.npu.device_count()",
      "reached once the availability check is fixed; CUDA count is 0 there"),
    C("props = torch.cuda.get_device_properties(gpu_index)", "torch_cuda_api", "replace", True,
      "props = torch.npu.get_device_properties(gpu_index)",
      "NPU properties keep name/total_memory, which is all the log uses"),
    C('return f"cuda:{gpu_index}"', "device_type", "replace", True, 'return f"npu:{gpu_index}"',
      "device string handed to tg.map_cells_to_space"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(args.seed)", SEED_NOTE),
    C("free_gb = torch.cuda.mem_get_info(device)[0] / 1e9", "torch_cuda_api", "replace", True,
      "free_gb = torch.npu.mem_get_info(device)[0] / 1e9",
      "reached with an npu device once select_device is fixed; the CUDA query rejects it"),
    C('if device.startswith("cuda"):', "device_type", "replace", False, 'if device.startswith("npu"):',
      "sync before timing silently skipped; mapping time under-reported"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
      "only reachable once the gate admits npu"),
    C('device="cuda:0",', "device_type", "replace", True, "device=device,",
      "hard-coded cuda:0 in the cross-validation call"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA (memory only)"),
  ])

E("graphst_model", "GraphST/GraphST.py", "device_branch_or_abstraction",
  "GraphST (spatial contrastive GCN): utils, dense/sparse encoders, trainer, tutorial smoke test",
  [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
    C('os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"', "env_var", "removal", False, None,
      "cuBLAS determinism knob; inert on Ascend"),
    C("self.adj = preprocess_adj_sparse(self.adj).to(self.device)", "unsupported_op_workaround", "replace", False,
      "self.adj = preprocess_adj_sparse(self.adj).to_dense().to(self.device)",
      "Stereo/Slide path feeds a sparse COO adjacency to torch.spmm; no sparse matmul kernel appears in the NPU op "
      "lists (unconfirmed whether it errors or falls back); densify for moderate spot counts"),
    C('device = torch.device("cuda:1" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:1" if torch.npu.is_available() else "cpu")',
      "tutorial device choice silently falls back to CPU"),
  ])

E("stagate_train", "STAGATE_pyG/Train_STAGATE.py", "device_branch_or_abstraction",
  "STAGATE_pyG Train_STAGATE.py (spatial graph attention autoencoder on PyG)",
  [
    C('device=torch.device("cuda:0" if torch.cuda.is_available() else "cpu")):', "device_type", "replace", True,
      'device=torch.device("npu:0" if torch.npu.is_available() else "cpu")):',
      "default evaluated at import time: silently CPU on an NPU host"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
  ])

# ---------------------------------------------------------------------------------------------
# scGPT
# ---------------------------------------------------------------------------------------------
E("scgpt_model", "scgpt/model/model.py", "explicit_replacement",
  "scGPT TransformerModel with optional flash-attn FlashMHA encoder layers",
  [
    C("from flash_attn.flash_attention import FlashMHA", "attention_kernel", "replace", False,
      "from .npu_flash_layers import NpuFlashMHA as FlashMHA  # wraps torch_npu.npu_fusion_attention",
      "flash-attn cannot be installed on NPU; the guarded import makes the model fall back to "
      "nn.TransformerEncoderLayer, so only speed is lost (padding-mask polarity must flip: FA keeps True, "
      "npu_fusion_attention masks True)"),
  ])

E("scgpt_finetune", "examples/finetune_integration.py", "explicit_replacement",
  "scGPT integration fine-tuning script (AMP GradScaler, optional torchrun DDP, wandb)",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('dist.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl")', "NCCL is not available on Ascend"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C('device = torch.device("cuda", local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", local_rank)', "per-rank device"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")', "silently CPU on an NPU host"),
    C("model.load_state_dict(torch.load(model_file))", "device_type", "replace", True,
      'model.load_state_dict(torch.load(model_file, map_location="cpu"))',
      "released checkpoints hold cuda tensors; without map_location torch.load raises and the except branch "
      "silently switches to partial loading"),
    C('pretrained_dict = torch.load(model_file, map_location="cuda:0")', "device_type", "replace", True,
      'pretrained_dict = torch.load(model_file, map_location="cpu")', "hard-coded cuda:0"),
    C("optimizer = torch.optim.Adam(model.parameters()", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdam(model.parameters(), lr=config.lr, eps=1e-4 if config.amp else 1e-8)",
      "performance only (msFmkTransplt advice)"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=config.amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=config.amp)",
      "CUDA GradScaler disables itself without CUDA (silently no loss scaling)"),
    C("with torch.cuda.amp.autocast(enabled=config.amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=config.amp):",
      "cuda autocast is silently disabled: the fp16 mixed-precision run becomes fp32"),
    C("with torch.no_grad(), torch.cuda.amp.autocast(enabled=config.amp):", "amp", "replace", True,
      "with torch.no_grad(), torch.npu.amp.autocast(enabled=config.amp):", "same, evaluation"),
    C('f"mem {torch.cuda.max_memory_allocated() / 2**30:.1f}G"', "torch_cuda_api", "replace", False,
      'f"mem {torch.npu.max_memory_allocated() / 2**30:.1f}G"', "log only; reads 0 without CUDA"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "end of script; no-op without CUDA"),
  ])

E("scgpt_pretrain_sh", "scripts/pretrain_ddp.sh", "explicit_replacement",
  "scGPT SLURM/torchrun pretraining launcher",
  [
    C("#SBATCH --gres=gpu:4", "device_type", "replace", False, "#SBATCH --gres=npu:4",
      "site-specific GRES name for Ascend nodes (unconfirmed)"),
    C("set -euo pipefail", "import_torch_npu", "npu_only_addition", True,
      "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
      "CANN env must be sourced; knowledge notes set_env.sh fails under set -u"),
    C("module load cuda/11.7", "env_var", "removal", False, None,
      "site module for the CUDA toolkit; irrelevant on Ascend nodes (may fail under set -e if absent; unconfirmed)"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "ignored by the Ascend runtime"),
    C("N_GPU=$(nvidia-smi --list-gpus | wc -l)", "device_type", "replace", True,
      'N_GPU=$(python -c "import torch, torch_npu; print(torch.npu.device_count())")',
      "nvidia-smi missing: pipefail + set -e abort the job"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL-only logging knob; inert on HCCL"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only; inert on HCCL"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NVLink P2P knob; inert on HCCL"),
    C("nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv", "device_type", "replace", True,
      "npu-smi info", "command not found aborts the script under set -e"),
  ])

E("scgpt_pyproject", "pyproject.toml", "explicit_replacement",
  "scGPT poetry pyproject with a CUDA torch source and optional flash-attn extra",
  [
    C('torch = { version = "==2.1.0+cu118", source = "pytorch-cu118" }', "import_torch_npu", "replace", True,
      'torch = { version = "==2.1.0", source = "pytorch-cpu" }',
      "x86 NPU hosts use the CPU torch wheel; torch-npu must match torch exactly"),
    C('torchtext = "0.16.0"', "import_torch_npu", "npu_only_addition", True, 'torch-npu = "==2.1.0.post12"',
      "torch-npu pin added after the torch stack"),
    C('flash-attn = { version = "<1.0.5", optional = true }', "attention_kernel", "removal", False, None,
      "optional extra; flash-attn needs nvcc/CUDA and cannot be installed on NPU"),
    C('flash = ["flash-attn"]', "attention_kernel", "removal", False, None, "extra that points at flash-attn"),
    C('url = "https://download.pytorch.org/whl/cu118"', "import_torch_npu", "replace", True,
      'url = "https://download.pytorch.org/whl/cpu"', "CUDA wheel index"),
  ])

# ---------------------------------------------------------------------------------------------
# workflow / environments / benchmarks
# ---------------------------------------------------------------------------------------------
E("sc_snakefile", "workflow/Snakefile", "device_branch_or_abstraction",
  "Snakemake single-cell workflow (CellRanger -> CellBender --cuda -> rapids-singlecell -> scVI -> cell2location)",
  [
    C('RESULTS = config.get("results", "results")', "import_torch_npu", "npu_only_addition", True,
      'shell.prefix("set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u; ")',
      "every shell rule that imports torch_npu needs the CANN environment"),
    C('HAS_GPU = shutil.which("nvidia-smi") is not None', "device_type", "replace", True,
      'HAS_GPU = shutil.which("npu-smi") is not None',
      "accelerator detection is False on an NPU node: CellBender and scVI silently run on CPU"),
    C('SCVI_ACCELERATOR = "gpu" if HAS_GPU else "cpu"', "device_type", "replace", True,
      'SCVI_ACCELERATOR = "npu" if HAS_GPU else "cpu"', NPU_LIGHTNING),
    C("CUDA_VISIBLE_DEVICES=${{CUDA_VISIBLE_DEVICES:-0}} python scripts/train_scvi_atlas.py \\", "env_var",
      "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${{ASCEND_RT_VISIBLE_DEVICES:-0}} python scripts/train_scvi_atlas.py \\",
      "device pinning ignored by the Ascend runtime"),
  ])

E("scvi_gpu_env", "workflow/envs/scvi-gpu.yaml", "explicit_replacement",
  "conda environment.yml for the scVI rules (pytorch-cuda, nvidia channel, jax[cuda])",
  [
    C("=- nvidia", "import_torch_npu", "removal", False, None, "channel only needed for pytorch-cuda"),
    C("=- pytorch-cuda=11.8", "import_torch_npu", "removal", True, None,
      "pulls the CUDA build of pytorch; NPU hosts need the CPU build that torch-npu pairs with"),
    C("=- cudnn", "import_torch_npu", "removal", False, None, "CUDA library, dead weight on Ascend"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post12",
      "torch-npu pin matching pytorch=2.1.0"),
    C('"jax[cuda11_pip]==0.4.20"', "unsupported_op_workaround", "replace", False, '- "jax==0.4.20"',
      "JAX has no Ascend backend; the CUDA plugin is useless (JaxSCVI would run on CPU)"),
    C("- -f https://storage.googleapis.com/jax-releases/jax_cuda_releases.html", "unsupported_op_workaround",
      "removal", False, None, "CUDA jaxlib index"),
    C("=- pynvml==11.5.0", "unsupported_op_workaround", "removal", False, None,
      "NVML bindings; no NVIDIA driver on Ascend nodes"),
  ])

E("rsc_requirements", "requirements-gpu.txt", "explicit_replacement",
  "requirements file for the RAPIDS + scvi-tools GPU stack (cu121 index, pypi.nvidia.com)",
  [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index"),
    C("--extra-index-url https://pypi.nvidia.com", "import_torch_npu", "removal", False, None,
      "only serves the RAPIDS cu12 wheels"),
    C("torch==2.2.1+cu121", "import_torch_npu", "replace", True, "torch==2.3.1",
      "CUDA build; no torch-npu release exists for 2.2.1, so move to a paired version"),
    C("torchvision==0.17.1+cu121", "import_torch_npu", "replace", True, "torchvision==0.18.1",
      "CUDA build; version follows torch 2.3.1"),
    C("=lightning==2.2.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.3.1.post4",
      "torch-npu pin matching torch 2.3.1"),
    C("cupy-cuda12x==13.0.0", "unsupported_op_workaround", "removal", False, None,
      "CUDA-only; unused once the rsc scripts are ported"),
    C("rapids-singlecell[rapids12]==0.10.1", "unsupported_op_workaround", "removal", False, None,
      "CUDA-only; unused once the rsc scripts are ported"),
    C("cudf-cu12==24.2.*", "unsupported_op_workaround", "removal", False, None, "RAPIDS, CUDA-only"),
    C("cuml-cu12==24.2.*", "unsupported_op_workaround", "removal", False, None, "RAPIDS, CUDA-only"),
    C("cugraph-cu12==24.2.*", "unsupported_op_workaround", "removal", False, None, "RAPIDS, CUDA-only"),
    C("rmm-cu12==24.2.*", "unsupported_op_workaround", "removal", False, None, "RAPIDS, CUDA-only"),
    C("=pynvml==11.5.0", "unsupported_op_workaround", "removal", False, None, "NVML bindings"),
    C("nvidia-ml-py==12.535.133", "unsupported_op_workaround", "removal", False, None, "NVML bindings"),
    C("gpustat==1.1.1", "unsupported_op_workaround", "removal", False, None, "NVML-based monitor"),
  ])

E("scvi_gpu_benchmark", "benchmarks/bench_scvi_gpu.py", "explicit_replacement",
  "scVI throughput/memory benchmark (NVML sampler, CUDA events, NVTX ranges, torch.profiler)",
  [
    C("=import pynvml", "unsupported_op_workaround", "removal", False, None,
      "NVML bindings; the sampler is rewritten on torch.npu / npu-smi"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; mstx and profiler come from torch_npu"),
    C("from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler", "torch_cuda_api",
      "replace", True,
      "from torch_npu.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler",
      "the torch profiler does not record NPU kernels"),
    C("=pynvml.nvmlInit()", "unsupported_op_workaround", "removal", True, None,
      "NVMLError: no NVIDIA driver on an Ascend host"),
    C("self.handle = pynvml.nvmlDeviceGetHandleByIndex(index)", "unsupported_op_workaround", "replace", True,
      "self.index = index", "no NVML handle"),
    C("self.util.append(pynvml.nvmlDeviceGetUtilizationRates(self.handle).gpu)", "unsupported_op_workaround",
      "replace", True, "self.util.append(torch.npu.utilization(self.index))",
      "torch.npu.utilization is in torch_npu.npu.__all__"),
    C("self.power.append(pynvml.nvmlDeviceGetPowerUsage(self.handle) / 1000.0)", "unsupported_op_workaround",
      "replace", True, "self.power.append(_npu_smi_power(self.index))",
      "no torch API for power; parse npu-smi (which takes the NPU id, not the logical id; exact query unconfirmed)"),
    C("self.start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "self.start = torch.npu.Event(enable_timing=True)", "CUDA events need a CUDA device"),
    C("self.end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "self.end = torch.npu.Event(enable_timing=True)", "CUDA events need a CUDA device"),
    C('torch.cuda.nvtx.range_push(f"epoch{trainer.current_epoch}")', "torch_cuda_api", "replace", True,
      'self._rid = torch_npu.npu.mstx.range_start(f"epoch{trainer.current_epoch}")',
      "torch.cuda.nvtx is not redirected by torch_npu; mstx is the NPU form (exact signature unconfirmed)"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(self._rid)",
      "torch.cuda.nvtx is not redirected by torch_npu"),
    C('module = model.module.to("cuda")', "tensor_to_device", "replace", True, 'module = model.module.to("npu")',
      "cuda device string"),
    C("activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],", "torch_cuda_api", "replace", True,
      "activities=[ProfilerActivity.CPU, ProfilerActivity.NPU],", "CUDA activity records nothing on Ascend"),
    C("tensors = {k: v.cuda(non_blocking=True) for k, v in tensors.items()}", "tensor_to_device", "replace", True,
      'tensors = {k: v.to("npu", non_blocking=True) for k, v in tensors.items()}', ".cuda() raises without CUDA"),
    C('print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=15))', "torch_cuda_api", "replace",
      False, 'print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))',
      "sort key names the CUDA column; NPU profiler output is read from the exported trace (unconfirmed)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA (memory only)"),
    C("torch.cuda.reset_peak_memory_stats(gpu_index)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(gpu_index)", "raises without CUDA"),
    C('accelerator="cuda",', "device_type", "replace", True, 'accelerator="npu",', NPU_LIGHTNING),
    C("peak = torch.cuda.max_memory_allocated(gpu_index) / 1024**3", "torch_cuda_api", "replace", True,
      "peak = torch.npu.max_memory_allocated(gpu_index) / 1024**3",
      "reads 0 without CUDA: the benchmark's memory column is silently wrong"),
    C('"gpu": torch.cuda.get_device_name(args.gpu),', "torch_cuda_api", "replace", True,
      '"gpu": torch.npu.get_device_name(args.gpu),', "raises without CUDA"),
    C('"driver": pynvml.nvmlSystemGetDriverVersion() if pynvml.nvmlInit() is None else "?",',
      "unsupported_op_workaround", "replace", True, '"driver": _ascend_driver_version(),',
      "NVML call raises; read /usr/local/Ascend/driver/version.info instead"),
  ])
