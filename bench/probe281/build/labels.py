"""Labels for probe281: crystal structure generation / inverse materials design (CUDA -> Ascend NPU).

Porting targets assumed throughout (see README "How the labels were chosen"):
  * CDVAE / DiffCSP / MatterGen code bases: upgraded to torch 2.1.0 + torch-npu 2.1.0.post12 (CANN 8.1.RC1);
    no device-backend autoload there, so entry points need `import torch_npu`.
  * relax/ + mlip/ (docker/Dockerfile image): torch 2.6.0 + torch-npu 2.6.0.post3 (CANN 8.3.RC1);
    torch_npu >= 2.5.1 autoloads, so `import torch_npu` is recommended but not required.
  * torch on the NPU host is the CPU build: torch.cuda.is_available() is False, device_count() is 0,
    lazily-initialising torch.cuda calls raise "Torch not compiled with CUDA enabled".
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu  # noqa: F401"
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# --------------------------------------------------------------------------------------------- CDVAE
E("cdvae_run", "cdvae/run.py", "explicit_replacement",
  "CDVAE cdvae/run.py (hydra + PyTorch Lightning 1.x train entry point)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "training entry point; torch 2.1 has no backend autoload, so torch.npu / the NPU accelerator only exist after import torch_npu"),
      C("cfg.train.pl_trainer.gpus = 0", "device_type", "replace", True,
        "cfg.train.pl_trainer.accelerator = 'cpu'",
        "debug path: once conf/train/default.yaml uses accelerator/devices instead of gpus, assigning a new "
        "'gpus' key to the struct hydra config raises; the debugger-friendly setting becomes accelerator=cpu"),
  ])

E("cdvae_train_conf", "conf/train/default.yaml", "explicit_replacement",
  "CDVAE conf/train/default.yaml (pl_trainer block)",
  [
      C("gpus: 1", "device_type", "replace", True, "accelerator: npu  # + devices: 1",
        "Lightning's gpus=1 requests CUDA devices and aborts when none are present; Lightning has no built-in "
        "Ascend accelerator (upstream PR #19308 was closed), so this assumes a custom NPU Accelerator registered "
        "under the name 'npu' and a Lightning version that has accelerator/devices"),
  ])

E("cdvae_evaluate", "scripts/evaluate.py", "explicit_replacement",
  "CDVAE scripts/evaluate.py (reconstruction / generation / property optimisation)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "evaluation entry point; needed for torch.npu and the npu device type on torch 2.1"),
      C("if model.device.type == 'cuda':", "device_type", "replace", True,
        "if model.device.type != 'cpu':",
        "after the port the model is on npu, so the batch would stay on CPU and encode() fails with a device mismatch"),
      C("batch.cuda()", "tensor_to_device", "replace", True, "batch.to(model.device)",
        "PyG Batch.cuda() needs CUDA"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on an NPU host: the model would silently stay on CPU"),
      C("model.to('cuda')", "tensor_to_device", "replace", True, "model.to('npu')",
        "'cuda' device string fails on an NPU host"),
  ])

E("cdvae_eval_utils", "scripts/eval_utils.py", "explicit_replacement",
  "CDVAE scripts/eval_utils.py (load_model, validity metrics, prop_model_eval)",
  [
      C("use_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "use_gpu = torch.npu.is_available()",
        "False on an NPU host: the property model silently runs on CPU"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
        "Module.cuda() needs CUDA"),
      C("batch = batch.to('cuda', non_blocking=True)", "tensor_to_device", "replace", True,
        "batch = batch.to('npu', non_blocking=True)", "'cuda' device string fails on an NPU host"),
  ])

E("cdvae_data_utils", "cdvae/common/data_utils.py", "explicit_replacement",
  "CDVAE cdvae/common/data_utils.py (lattice utils + OCP radius_graph_pbc with torch_scatter segment ops)",
  [
      C('insert_val += segment_csr(sizes[: r1[-1]], indptr, reduce="sum")', "unsupported_op_workaround", "replace", False,
        "insert_val += _segment_sum_csr(sizes[: r1[-1]], indptr)  # cumsum-based, no torch_scatter kernel",
        "unconfirmed: torch_scatter's segment_csr is a compiled CPU/CUDA kernel with no NPU implementation; only "
        "reached when some repeats are 0"),
      C("=insert_val += segment_csr(", "unsupported_op_workaround", "replace", False,
        "insert_val += _segment_sum_csr(",
        "unconfirmed: same compiled torch_scatter segment op (block_inc branch)"),
      C("num_neighbors = segment_coo(ones, index, dim_size=num_atoms)", "unsupported_op_workaround", "replace", False,
        "num_neighbors = torch.zeros(num_atoms, dtype=torch.long, device=device).index_add_(0, index, ones)",
        "unconfirmed: torch_scatter segment_coo is a compiled CPU/CUDA kernel; index_add_ has an NPU kernel"),
      C("num_neighbors_image = segment_csr(num_neighbors_thresholded, image_indptr)", "unsupported_op_workaround",
        "replace", False,
        "num_neighbors_image = torch.zeros(natoms.shape[0], dtype=torch.long, device=device).index_add_(0, torch.repeat_interleave(torch.arange(natoms.shape[0], device=device), natoms), num_neighbors_thresholded)",
        "unconfirmed: compiled torch_scatter segment_csr; runs on every otf_graph forward"),
  ])

E("cdvae_dimenet", "cdvae/pl_modules/gnn.py", "explicit_replacement",
  "CDVAE cdvae/pl_modules/gnn.py (DimeNet++ encoder adapted from OCP, torch_sparse triplets)",
  [
      C("adj_t = SparseTensor(", "unsupported_op_workaround", "replace", False,
        "adj_t_row = _triplet_adjacency(row, col, num_nodes)  # pure-torch (sort + repeat_interleave), no torch_sparse",
        "unconfirmed: torch_sparse SparseTensor indexing (adj_t[row]) dispatches to compiled CPU/CUDA kernels; "
        "the triplet construction is rewritten with plain torch ops"),
  ])

E("cdvae_model", "cdvae/pl_modules/model.py", "explicit_replacement",
  "CDVAE cdvae/pl_modules/model.py (CDVAE LightningModule, Langevin sampling)",
  [])

E("cdvae_env", "env.yml", "explicit_replacement",
  "CDVAE env.yml (conda env with cudatoolkit + PyG CUDA wheels)",
  [
      C("- nvidia", "device_type", "removal", False, None,
        "NVIDIA conda channel is unused once cudatoolkit is gone; harmless if left"),
      C("cudatoolkit=11.1", "device_type", "removal", True, None,
        "CUDA toolkit is meaningless on an Ascend host (and not solvable on linux-aarch64 Kunpeng hosts)"),
      C("pytorch=1.8.1", "device_type", "replace", True, "pytorch=2.1.0=*cpu*",
        "torch_npu needs the CPU build of torch at exactly the paired version (2.1.0 for torch-npu 2.1.0.postN); "
        "1.8.1 is EOL for torch_npu"),
      C("- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
        "torch-npu pin paired with torch 2.1.0 (CANN 8.1.RC1)"),
      C("-f https://pytorch-geometric.com/whl/torch-1.8.0+cu111.html", "custom_cuda_extension", "replace", True,
        "- -f https://data.pyg.org/whl/torch-2.1.0+cpu.html",
        "cu111 torch-scatter/sparse wheels link against CUDA torch; need the CPU wheels matching the new torch"),
  ])

# --------------------------------------------------------------------------------------------- DiffCSP
E("diffcsp_diffusion", "diffcsp/pl_modules/diffusion.py", "explicit_replacement",
  "DiffCSP diffcsp/pl_modules/diffusion.py (CSPDiffusion LightningModule, PC sampling)",
  [
      C("with torch.cuda.amp.autocast(enabled=self.use_amp):", "amp", "replace", False,
        "with torch.autocast(device_type=self.device.type, enabled=self.use_amp):",
        "torch.cuda.amp.autocast is silently disabled when CUDA is unavailable: decoder runs in fp32 on NPU "
        "(performance only; use_amp defaults to False)"),
  ])

E("diffcsp_generation", "scripts/generation.py", "explicit_replacement",
  "DiffCSP scripts/generation.py (ab initio generation from a num-atoms prior)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "sampling entry point on torch 2.1"),
      C("if torch.cuda.is_available(): batch.cuda()", "tensor_to_device", "replace", True,
        "batch = batch.to(model.device)",
        "after the port the guard is False and the batch stays on CPU while the model is on npu"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on an NPU host: sampling silently runs on CPU"),
      C("model.to('cuda')", "tensor_to_device", "replace", True, "model.to('npu')",
        "'cuda' device string fails on an NPU host"),
  ])

E("diffcsp_requirements", "requirements.txt", "explicit_replacement",
  "DiffCSP requirements.txt (torch +cu111 pins, PyG cu111 wheel index)",
  [
      C("--find-links https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu", "npu_only_addition",
        True, "torch-npu==2.1.0.post12", "torch-npu pin paired with torch 2.1.0"),
      C("torch==1.9.0+cu111", "device_type", "replace", True, "torch==2.1.0",
        "CUDA build of torch; torch_npu needs the plain/CPU 2.1.0 build"),
      C("torchvision==0.10.0+cu111", "device_type", "replace", True, "torchvision==0.16.0",
        "CUDA build; must match torch 2.1.0"),
      C("-f https://data.pyg.org/whl/torch-1.9.0+cu111.html", "custom_cuda_extension", "replace", True,
        "-f https://data.pyg.org/whl/torch-2.1.0+cpu.html",
        "PyG extension wheels built against CUDA torch"),
  ])

E("diffcsp_train_sh", "scripts/train_mp20.sh", "explicit_replacement",
  "DiffCSP-style training launcher (hydra overrides, single GPU)",
  [
      C("EXPNAME=${1:-mp20_gen}", "import_torch_npu", "npu_only_addition", True, SET_ENV,
        "CANN environment must be sourced or import torch_npu fails (libhccl.so / ASCEND_OPP_PATH)"),
      C("export CUDA_VISIBLE_DEVICES=${GPU:-0}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${GPU:-0}",
        "ignored on NPU: with GPU=1 the run would silently land on NPU 0"),
      C("nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv", "torch_cuda_api", "replace", False,
        "npu-smi info", "logging only; script has no set -e so the missing command just prints an error"),
      C("train.pl_trainer.gpus=1 \\", "device_type", "replace", True, "train.pl_trainer.devices=1 \\",
        "override of a key that no longer exists after the trainer config port (hydra error) and a CUDA request"),
  ])

# --------------------------------------------------------------------------------------------- MatterGen
E("mattergen_trainer_conf", "mattergen/conf/trainer/default.yaml", "explicit_replacement",
  "MatterGen mattergen/conf/trainer/default.yaml (Lightning 2 trainer, DDPStrategy)",
  [
      C("accelerator: 'gpu'", "device_type", "replace", True, "accelerator: 'npu'",
        "CUDAAccelerator cannot run without CUDA; assumes a custom NPU Accelerator registered as 'npu'"),
      C("find_unused_parameters: true", "dist_backend", "npu_only_addition", True, "  process_group_backend: hccl",
        "DDPStrategy picks nccl only for cuda root devices and gloo otherwise; gloo cannot all-reduce NPU tensors"),
  ])

E("mattergen_globals", "mattergen/common/utils/globals.py", "device_branch_or_abstraction",
  "MatterGen mattergen/common/utils/globals.py (get_device helper)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "this module is imported by every MatterGen entry point and owns device selection; torch 2.2/2.1 has no "
        "autoload so torch.npu does not exist without it"),
      C("if torch.cuda.is_available():", "device_type", "add_branch", True,
        'if hasattr(torch, "npu") and torch.npu.is_available(): return torch.device("npu")',
        "without an NPU branch get_device() silently returns cpu on an Ascend host"),
  ])

E("mattergen_run", "mattergen/scripts/run.py", "explicit_replacement",
  "MatterGen mattergen/scripts/run.py (hydra train entry point)",
  [
      C("n_devices = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "n_devices = torch.npu.device_count()",
        "returns 0 on an NPU host: each device silently gets the whole global batch"),
  ])

E("mattergen_generator", "mattergen/generator.py", "explicit_replacement",
  "MatterGen mattergen/generator.py (CrystalGenerator, draw_samples_from_sampler)",
  [
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op when CUDA is not initialised; NPU cache is simply never trimmed"),
      C("torch.cuda.manual_seed_all(self.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(self.seed)",
        "silently does nothing for NPU; torch.manual_seed on the line above also seeds the registered "
        "privateuse1 device (unconfirmed in the knowledge base)"),
  ])

E("mattergen_pc_sampler", "mattergen/diffusion/sampling/pc_sampler.py", "explicit_replacement",
  "MatterGen mattergen/diffusion/sampling/pc_sampler.py (PredictorCorrector)",
  [
      C('self._diffusion_module.score_fn, mode="reduce-overhead", dynamic=True', "compile_mode", "replace", False,
        "self._diffusion_module.score_fn, dynamic=True",
        "unconfirmed: reduce-overhead means CUDA graphs; torch.compile on NPU uses its own backends "
        "(npugraphs / inductor in torch_npu >= 2.6); opt-in flag"),
      C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=self._use_amp):', "amp", "replace", False,
        "with torch.autocast(device_type=torch.device(self._device).type, dtype=torch.float16, enabled=self._use_amp):",
        "cuda autocast is silently disabled on an NPU host; fp32 sampling still correct"),
  ])

E("mattergen_gemnet", "mattergen/common/gemnet/gemnet.py", "explicit_replacement",
  "MatterGen mattergen/common/gemnet/gemnet.py (GemNet-T score model, torch_sparse triplets)",
  [
      C("adj = SparseTensor(", "unsupported_op_workaround", "replace", False,
        "id3_ba, id3_ca = _triplets_dense(idx_s, idx_t, num_atoms)  # sort + repeat_interleave, no torch_sparse",
        "unconfirmed: SparseTensor row indexing runs compiled torch_sparse kernels (CPU/CUDA only)"),
  ])

E("mattergen_pyproject", "pyproject.toml", "explicit_replacement",
  "MatterGen pyproject.toml (torch +cu118 pins, uv index and PyG find-links)",
  [
      C("\"torch==2.2.1+cu118; sys_platform == 'linux'\",", "device_type", "replace", True,
        "\"torch==2.1.0; sys_platform == 'linux'\",",
        "CUDA build; torch_npu has no 2.2.1 release, nearest paired version used"),
      C("\"torchvision==0.17.1+cu118; sys_platform == 'linux'\",", "device_type", "replace", True,
        "\"torchvision==0.16.0; sys_platform == 'linux'\",", "CUDA build; must match torch 2.1.0"),
      C("\"torchaudio==2.2.1+cu118; sys_platform == 'linux'\",", "device_type", "replace", True,
        "\"torchaudio==2.1.0; sys_platform == 'linux'\",", "CUDA build; must match torch 2.1.0"),
      C("\"torch==2.2.1; sys_platform == 'darwin'\",", "import_torch_npu", "npu_only_addition", True,
        "\"torch-npu==2.1.0.post12; sys_platform == 'linux'\",",
        "torch-npu pin, added after the torch pins"),
      C("\"https://data.pyg.org/whl/torch-2.2.0+cu118.html\",", "custom_cuda_extension", "replace", True,
        "\"https://data.pyg.org/whl/torch-2.1.0+cpu.html\",", "PyG extension wheels built against CUDA torch"),
      C('url = "https://download.pytorch.org/whl/cu118"', "device_type", "replace", True,
        'url = "https://download.pytorch.org/whl/cpu"', "CUDA wheel index for torch/torchvision/torchaudio"),
  ])

E("mattergen_datamodule", "mattergen/common/data/datamodule.py", "explicit_replacement",
  "MatterGen mattergen/common/data/datamodule.py (CrystDataModule)",
  [
      C("pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
        "without pin_memory_device the DataLoader only pins when CUDA is available: silently unpinned (perf only)"),
  ])

# --------------------------------------------------------------------------------------------- relax/ (GNoME-style)
E("relax_mace", "relax/relax_mace.py", "explicit_replacement",
  "GNoME-style relaxation stage with MACE-MP-0 (ase FIRE + FrechetCellFilter, one worker per GPU)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU,
        "torch 2.6 image: torch_npu autoloads; explicit import only recommended"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu_ids[rank])', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(args.gpu_ids[rank])',
        "ignored on NPU: every worker would use NPU 0"),
      C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'device = "npu" if torch.npu.is_available() else "cpu"',
        "silently relaxes on CPU; note: whether the installed mace_mp() accepts device='npu' is unconfirmed"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op when CUDA is not initialised"),
      C("default=list(range(torch.cuda.device_count())),", "torch_cuda_api", "replace", True,
        "default=list(range(torch.npu.device_count())),",
        "device_count() is 0 on an NPU host -> no workers, script exits"),
      C('p.add_argument("--dtype", default="float64", choices=["float32", "float64"],', "unsupported_op_workaround",
        "replace", False, 'p.add_argument("--dtype", default="float32", choices=["float32", "float64"],',
        "unconfirmed: fp64 support on NPU is partial (many ops fp16/fp32 only, fp64 may be cast to fp32 with a warning)"),
  ])

E("relax_chgnet", "relax/chgnet_relax.py", "explicit_replacement",
  "CHGNet pre-screen (predict_structure + StructOptimizer)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU,
        "torch 2.6 image: autoload"),
      C('os.environ.setdefault("CHGNET_DEVICE", "cuda")', "device_type", "replace", False,
        'os.environ.setdefault("CHGNET_DEVICE", "npu")',
        "only read when no device is passed; this script always passes --device"),
      C("return torch.cuda.max_memory_allocated() / 1024**3", "torch_cuda_api", "replace", False,
        "return torch.npu.max_memory_allocated() / 1024**3", "returns 0 when CUDA is not initialised; logging only"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()",
        "unlike max_memory_allocated this resolves the current CUDA device and raises on a CPU-only torch build"),
      C('parser.add_argument("--device", default="cuda", help=', "device_type", "replace", True,
        'parser.add_argument("--device", default="npu", help=',
        "'cuda' fails (or CHGNet falls back to CPU); whether CHGNet passes 'npu' through is unconfirmed"),
  ])

E("relax_matgl", "relax/matgl_relax.py", "explicit_replacement",
  "M3GNet (matgl, DGL backend) cross-check with torch.set_default_device",
  [
      C('p.add_argument("--device", default="cuda")', "device_type", "replace", True,
        'p.add_argument("--device", default="cpu")  # DGL graphs have no NPU backend',
        "default 'cuda' makes torch.set_default_device('cuda') fail on the first tensor; matgl builds DGL graphs "
        "and no NPU build of DGL is known (unconfirmed), so the port keeps M3GNet on CPU"),
  ])

E("relax_launch", "relax/launch_relax.sh", "explicit_replacement",
  "GNoME-style relax launcher (CHGNet -> MACE per-GPU shards -> M3GNet on CPU)",
  [
      C("set -euo pipefail", "import_torch_npu", "npu_only_addition", True, SET_ENV,
        "CANN environment must be sourced for torch_npu"),
      C("NUM_GPUS=${NUM_GPUS:-$(nvidia-smi --list-gpus | wc -l)}", "torch_cuda_api", "replace", True,
        "NUM_GPUS=${NUM_GPUS:-$(npu-smi info -l | awk '/Total Count/{print $NF}')}",
        "nvidia-smi is missing; with set -e/pipefail the script aborts"),
      C("CUDA_VISIBLE_DEVICES=0 python relax/chgnet_relax.py \\", "env_var", "replace", False,
        "ASCEND_RT_VISIBLE_DEVICES=0 python relax/chgnet_relax.py \\",
        "ignored on NPU, but CHGNet then uses NPU 0 anyway: same placement"),
      C("CUDA_VISIBLE_DEVICES=$i python relax/relax_mace.py \\", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=$i python relax/relax_mace.py \\",
        "ignored on NPU: every shard (each run with --gpu-ids 0) would pile onto NPU 0"),
      C("=--cueq \\", "custom_cuda_extension", "removal", True, None,
        "cuEquivariance kernels are CUDA-only (cuequivariance-ops-torch-cu12)"),
  ])

# --------------------------------------------------------------------------------------------- mlip/
E("mlip_train", "mlip/train.py", "explicit_replacement",
  "GNoME/NequIP-style MLIP training script (torchrun DDP, AMP, EMA)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU,
        "torch 2.6 image: autoload"),
      C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
        'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
        "ignored by HCCL; the torch_npu watchdog variable already defaults to 1"),
      C('p.add_argument("--device", default="cuda")', "device_type", "replace", True,
        'p.add_argument("--device", default="npu")', "default device string fails on an NPU host"),
      C('if args.device == "cuda":', "device_type", "replace", True, 'if args.device == "npu":',
        "with --device npu the per-rank set_device branch is skipped and every rank uses npu:0"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
      C('device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
        'device = torch.device("npu", args.local_rank)', "cuda device fails on an NPU host"),
      C('backend="nccl" if args.device == "cuda" else "gloo",', "dist_backend", "replace", True,
        'backend="hccl" if args.device == "npu" else "gloo",', "NCCL is not available; HCCL is the NPU backend"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "silent no-op for NPU; torch.manual_seed above covers the registered device (unconfirmed)"),
      C('reduce_device = device if dist.get_backend() == "nccl" else torch.device("cpu")', "dist_backend", "replace",
        True, 'reduce_device = device if dist.get_backend() in ("nccl", "hccl") else torch.device("cpu")',
        "backend-string comparison: under hccl the metric tensor goes to CPU and the HCCL all_reduce fails"),
      C('use_fused = fused_available and device.type == "cuda"', "fused_optimizer", "replace", False,
        'use_fused = fused_available and device.type in ("cuda", "npu")',
        "falls back to the unfused AdamW on NPU; _fused_adamw_ has an NPU kernel (perf only)"),
      C("pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
        "silently unpinned without CUDA (perf only)"),
      C("amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16", "amp", "replace", False,
        "amp_dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
        "unconfirmed: recent torch returns False without CUDA (older versions raised); picks fp16 on a bf16-capable NPU"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp and amp_dtype == torch.float16)", "amp", "replace", False,
        "scaler = torch.npu.amp.GradScaler(enabled=args.amp and amp_dtype == torch.float16)",
        "silently disabled without CUDA; must be ported together with the autocast line or fp16 grads underflow"),
      C('ckpt = torch.load(args.resume, map_location=f"cuda:{args.local_rank}")', "device_type", "replace", True,
        'ckpt = torch.load(args.resume, map_location=f"npu:{args.local_rank}")', "cuda map_location fails"),
      C('model = torch.compile(model, mode="max-autotune", dynamic=True)', "compile_mode", "replace", False,
        "model = torch.compile(model, dynamic=True)",
        "unconfirmed: max-autotune relies on Triton/CUDA graphs autotuning; opt-in flag"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA (runs every epoch)"),
      C('with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=args.amp):', "amp", "replace", False,
        'with torch.autocast(device_type="npu", dtype=amp_dtype, enabled=args.amp):',
        "cuda autocast silently disabled on NPU host (fp32, perf only)"),
      C("mem = torch.cuda.max_memory_allocated(device) / 2**30", "torch_cuda_api", "replace", False,
        "mem = torch.npu.max_memory_allocated(device) / 2**30", "returns 0 without CUDA; logging only"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
        "raises without CUDA"),
  ])

E("mlip_finetune_sh", "mlip/finetune_mace.sh", "explicit_replacement",
  "Slurm + torchrun launcher for mace_run_train --distributed fine-tuning",
  [
      C("#SBATCH --gpus-per-node=4", "device_type", "replace", False, "#SBATCH --gres=npu:4",
        "unconfirmed: site-specific; no Ascend Slurm GRES integration found in the knowledge base"),
      C("module load cuda/12.1", "import_torch_npu", "replace", True, SET_ENV,
        "no CUDA module on the Ascend cluster; the CANN environment must be sourced instead"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
        "ignored on NPU, but torchrun LOCAL_RANK 0-3 maps to NPUs 0-3 anyway"),
      C('NGPUS=$(echo "$CUDA_VISIBLE_DEVICES" | tr', "env_var", "replace", False,
        'NGPUS=$(echo "$ASCEND_RT_VISIBLE_DEVICES" | tr \',\' \'\\n\' | wc -l)',
        "follows the renamed visibility variable"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
        "NCCL_DEBUG is ignored by HCCL"),
      C("export NCCL_P2P_DISABLE=0", "env_var", "removal", False, None, "NCCL-only knob, ignored"),
      C("=--device cuda", "device_type", "replace", True, "--device npu",
        "mace_run_train asserts CUDA for --device cuda; 'npu' support in the installed MACE is unconfirmed"),
  ])

E("mlip_finetune_yaml", "mlip/configs/mace_finetune.yaml", "explicit_replacement",
  "MACE fine-tuning YAML config (multihead fine-tune of MACE-MP-0)",
  [
      C("default_dtype: float64", "unsupported_op_workaround", "replace", False, "default_dtype: float32",
        "unconfirmed: partial fp64 support on NPU"),
      C("device: cuda", "device_type", "replace", True, "device: npu", "cuda device fails on an NPU host"),
      C("enable_cueq: True", "custom_cuda_extension", "replace", True, "enable_cueq: False",
        "cuEquivariance CUDA kernels cannot load on NPU"),
  ])

E("relax_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Relaxation/MLIP Docker image (nvidia/cuda base, cu124 wheels, cuEquivariance, FORCE_CUDA ext build)",
  [
      C("FROM nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04", "device_type", "replace", True,
        "FROM quay.io/ascend/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        "needs a CANN base image (tag naming follows Ascend/cann-container-image; registry path unconfirmed)"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None, "nvidia-container-runtime only"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "nvidia-container-runtime only"),
      C("RUN pip install torch==2.6.0 --index-url https://download.pytorch.org/whl/cu124", "device_type", "replace",
        True, "RUN pip install torch==2.6.0 --index-url https://download.pytorch.org/whl/cpu",
        "CUDA build of torch; torch_npu needs the CPU build (plain PyPI on aarch64)"),
      C("RUN pip install torch_scatter torch_sparse torch_cluster -f https://data.pyg.org/whl/torch-2.6.0+cu124.html",
        "custom_cuda_extension", "replace", True,
        "RUN pip install torch_scatter torch_sparse torch_cluster -f https://data.pyg.org/whl/torch-2.6.0+cpu.html",
        "cu124 extension wheels link against CUDA torch libraries"),
      C("RUN pip install torch_geometric==2.6.1", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install torch-npu==2.6.0.post3", "torch-npu paired with torch 2.6.0 (CANN 8.3.RC1)"),
      C('RUN pip install "cuequivariance-torch>=0.4.0" "cuequivariance-ops-torch-cu12>=0.4.0"',
        "custom_cuda_extension", "removal", False, None,
        "CUDA-only kernels; unused once --cueq/enable_cueq are removed (install itself may still succeed)"),
      C("RUN pip install dgl -f https://data.dgl.ai/wheels/torch-2.4/cu124/repo.html", "custom_cuda_extension",
        "replace", False, "RUN pip install dgl -f https://data.dgl.ai/wheels/torch-2.4/repo.html",
        "M3GNet runs on CPU after the port; whether the cu124 DGL wheel fails without CUDA is unconfirmed"),
      C('ENV TORCH_CUDA_ARCH_LIST="8.0;8.6;9.0"', "env_var", "removal", False, None,
        "only read by CUDA extension builds"),
      C("ENV FORCE_CUDA=1", "custom_cuda_extension", "replace", True, "ENV BUILD_NPU=1",
        "forces the CUDAExtension/nvcc path in csrc/setup.py, which fails without a CUDA toolkit"),
  ])

# --------------------------------------------------------------------------------------------- neighbour-list extension
E("pbcnl_setup", "csrc/setup.py", "kernel_rewrite",
  "setup.py of a fused periodic neighbour-list C++/CUDA extension (CppExtension/CUDAExtension)",
  [
      C("from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension",
        "custom_cuda_extension", "npu_only_addition", False, "from torch_npu.utils.cpp_extension import NpuExtension",
        "needed only for the optional Ascend C kernel build; the CPU build already works"),
      C("if (torch.cuda.is_available() and CUDA_HOME is not None) or force_cuda:", "custom_cuda_extension",
        "add_branch", False,
        'elif os.getenv("BUILD_NPU", "0") == "1": extension = NpuExtension; sources += glob.glob(os.path.join(CSRC, "npu", "*.cpp"))',
        "NPU kernel is a performance rewrite (cell-list kernel in Ascend C); without it the CPU extension builds"),
  ])

E("pbcnl_neighbors", "gnome_pipeline/neighbors.py", "kernel_rewrite",
  "Python front-end of the neighbour-list extension with pure-torch fallback",
  [
      C("if use_ext and _ext_has_cuda and pos.is_cuda:", "custom_cuda_extension", "add_branch", False,
        'elif use_ext and hasattr(_nl_ext, "radius_pbc_npu") and pos.device.type == "npu": edge_index, shifts, counts = _nl_ext.radius_pbc_npu(pos, cell, pbc, batch, float(cutoff), max_nb)',
        "optional NPU kernel call site (performance)"),
      C("elif use_ext and HAS_EXT:", "custom_cuda_extension", "replace", True,
        'elif use_ext and HAS_EXT and pos.device.type == "cpu":',
        "NPU tensors would fall into the CPU kernel, which asserts host memory; route them to the torch fallback"),
      C('_self_test("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", False,
        '_self_test("npu" if torch.npu.is_available() else "cpu")',
        "self-test silently checks only the CPU path on an NPU host"),
  ])

E("bench_sampling", "benchmarks/profile_sampling.py", "explicit_replacement",
  "Sampling throughput/memory benchmark with torch.cuda.Event timing, NVTX ranges and torch.profiler",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "ported lines use torch_npu.npu.mstx / torch_npu.profiler directly"),
      C("from torch.profiler import ProfilerActivity, profile, record_function, schedule, tensorboard_trace_handler",
        "torch_cuda_api", "replace", False,
        "from torch_npu.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler; from torch.profiler import record_function",
        "torch.profiler records no NPU activity; diagnostics only"),
      C("props = torch.cuda.get_device_properties(device)", "torch_cuda_api", "replace", True,
        "props = torch.npu.get_device_properties(device)", "raises without CUDA"),
      C('"name": torch.cuda.get_device_name(device),', "torch_cuda_api", "replace", True,
        '"name": torch.npu.get_device_name(device),', "raises without CUDA"),
      C('"multi_processor_count": props.multi_processor_count,', "device_capability_check", "replace", True,
        '"cube_core_num": props.cube_core_num,',
        "NPU device properties have no multi_processor_count (name, total_memory, L2_cache_size, cube/vector core num)"),
      C('"cuda": torch.version.cuda,', "torch_cuda_api", "replace", False, '"torch_npu": torch_npu.__version__,',
        "None on the CPU build; metadata only"),
      C('torch.cuda.nvtx.range_push(f"sample_batch_{i}")', "torch_cuda_api", "replace", True,
        'rng = torch_npu.npu.mstx.range_start(f"sample_batch_{i}")',
        "torch.cuda.nvtx is not redirected and raises without a CUDA build; mstx is the NPU equivalent"),
      C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(rng)",
        "as above"),
      C('device = torch.device(f"cuda:{args.gpu}")', "device_type", "replace", True,
        'device = torch.device(f"npu:{args.gpu}")', "cuda device fails"),
      C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
        "raises without CUDA"),
      C("major, minor = torch.cuda.get_device_capability(device)", "device_capability_check", "replace", True,
        "major, minor = torch.npu.get_device_capability(device) or (0, 0)",
        "raises without CUDA; the NPU version returns None (unpacking fails) unless TORCH_NPU_DEVICE_CAPABILITY is set"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
        "raises without CUDA"),
      C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats(device)", "raises for a non-CUDA device / without CUDA"),
      C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
      C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
      C("peak_gb = torch.cuda.max_memory_allocated(device) / 2**30", "torch_cuda_api", "replace", False,
        "peak_gb = torch.npu.max_memory_allocated(device) / 2**30",
        "returns 0 when CUDA is not initialised: reported memory silently wrong"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op without CUDA"),
      C("activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA]", "torch_cuda_api", "replace", False,
        "activities = [ProfilerActivity.CPU, ProfilerActivity.NPU]", "no device trace on NPU; diagnostics only"),
      C('print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=25))', "torch_cuda_api", "replace",
        False, 'print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25))',
        "unconfirmed: NPU kernel times are read from the exported kernel_details.csv; cuda_time_total is all zero"),
  ])

E("mlip_calculator", "mlip/ase_calculator.py", "explicit_replacement",
  "ASE Calculator wrapping the in-house MLIP (GNoME-style relaxations)",
  [
      C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'device = "npu" if torch.npu.is_available() else "cpu"',
        "default silently runs every relaxation on CPU"),
      C('if self.device.type == "cuda":', "device_type", "replace", False, 'if self.device.type == "npu":',
        "timing only: without it the NPU work is not synchronised and model time is under-reported"),
      C("torch.cuda.synchronize(self.device)", "torch_cuda_api", "replace", False, "torch.npu.synchronize(self.device)",
        "unreachable on NPU until the guard above is ported; then must follow it"),
  ])
