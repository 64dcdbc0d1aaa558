# Labels for probe274 (visual place recognition / geo-localization, CUDA -> Ascend NPU).
# Format: see /work/main/bench/probe_build.py. One C(...) per upstream line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
ENTRY_NOTE = ("entry script: torch_npu must be imported so the npu device and torch.npu exist "
              "(mandatory before torch_npu 2.5.1; these projects pin older torch)")
LOG_MEM_NOTE = ("torch.cuda memory statistics return 0 on a host where CUDA was never initialised; "
                "diagnostic log only, the run is unaffected")
EMPTY_CACHE_NOTE = ("torch.cuda.empty_cache() is a silent no-op when CUDA is not initialised; "
                    "the NPU caching allocator is simply not trimmed (memory only)")
AMP_NOTE = ("torch.cuda.amp on a host without CUDA warns and disables itself, so the run silently "
            "falls back to fp32: performance/memory only")

# ---------------------------------------------------------------------------------------------
E("netvlad-main", "main.py", "explicit_replacement",
  "Nanne/pytorch-NetVlad main.py (train / test / cluster modes, --nocuda flag)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, ENTRY_NOTE),
    C("print('Allocated:', torch.cuda.memory_allocated())", "torch_cuda_api", "replace", False,
      "print('Allocated:', torch.npu.memory_allocated())", LOG_MEM_NOTE),
    C("print('Cached:', torch.cuda.memory_cached())", "torch_cuda_api", "replace", False,
      "print('Cached:', torch.npu.memory_cached())", LOG_MEM_NOTE),
    C("print('Allocated (batch):', torch.cuda.memory_allocated())", "torch_cuda_api", "replace", False,
      "print('Allocated (batch):', torch.npu.memory_allocated())", LOG_MEM_NOTE),
    C("print('Cached (batch):', torch.cuda.memory_cached())", "torch_cuda_api", "replace", False,
      "print('Cached (batch):', torch.npu.memory_cached())", LOG_MEM_NOTE),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("if cuda and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if cuda and not torch.npu.is_available():",
      "torch.cuda.is_available() is False on an NPU host, so the script raises 'No GPU found' unless --nocuda"),
    C('device = torch.device("cuda" if cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if cuda else "cpu")', "model and batches would be sent to a non-existent CUDA device"),
    C("torch.cuda.manual_seed(opt.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(opt.seed)",
      "lazily queued no-op without CUDA; torch.manual_seed above should already seed the NPU generator "
      "(custom-device seeding in torch>=2.1; unconfirmed in knowledge)"),
    C("if opt.nGPU > 1 and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", True,
      "if opt.nGPU > 1 and torch.npu.device_count() > 1:",
      "device_count() is 0 on an NPU host, so --nGPU>1 is silently ignored"),
    C("model.encoder = nn.DataParallel(model.encoder)", "distributed_framework", "replace", True,
      "model.encoder = nn.parallel.DistributedDataParallel(model.encoder.to(device))",
      "torch.nn.DataParallel is unsupported on Ascend (✘ in the 2.7.1 API list); use DDP with an hccl process group"),
    C("model.pool = nn.DataParallel(model.pool)", "distributed_framework", "replace", True,
      "model.pool = nn.parallel.DistributedDataParallel(model.pool.to(device))",
      "same as the encoder: DataParallel is unsupported on NPU"),
])

E("netvlad-layer", "netvlad.py", "device_branch_or_abstraction",
  "Nanne/pytorch-NetVlad netvlad.py (NetVLAD pooling layer)", [])

E("patchnv-extract", "feature_extract.py", "explicit_replacement",
  "QVPR/Patch-NetVLAD feature_extract.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, ENTRY_NOTE),
    C("if cuda and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if cuda and not torch.npu.is_available():", "raises 'No GPU found' on an NPU host"),
    C('device = torch.device("cuda" if cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if cuda else "cpu")', "CUDA device string"),
    C("if int(config['global_params']['nGPU']) > 1 and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", True,
      "if int(config['global_params']['nGPU']) > 1 and torch.npu.device_count() > 1:",
      "returns 0 on an NPU host, silently ignoring nGPU"),
    C("model.encoder = nn.DataParallel(model.encoder)", "distributed_framework", "replace", True,
      "model.encoder = nn.parallel.DistributedDataParallel(model.encoder.to(device))",
      "DataParallel unsupported on NPU (✘)"),
    C("model.pool = nn.DataParallel(model.pool)", "distributed_framework", "replace", True,
      "model.pool = nn.parallel.DistributedDataParallel(model.pool.to(device))",
      "DataParallel unsupported on NPU (✘)"),
    C("torch.cuda.empty_cache()  # garbage clean GPU memory", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # garbage clean NPU memory", EMPTY_CACHE_NOTE),
])

E("patchnv-localmatch", "patchnetvlad/models/local_matcher.py", "device_branch_or_abstraction",
  "QVPR/Patch-NetVLAD patchnetvlad/models/local_matcher.py + tools/patch_matcher.py torch_nn", [])

E("mixvpr-main", "main.py", "explicit_replacement",
  "amaralibey/MixVPR main.py (pytorch-lightning VPRModel + Trainer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, ENTRY_NOTE),
    C("accelerator='gpu', devices=[0],", "device_type", "replace", True,
      "accelerator='npu', devices=[0],",
      "Lightning raises when accelerator='gpu' finds no CUDA; Lightning has no built-in NPU accelerator, "
      "an NPU accelerator plugin must be registered (unconfirmed in knowledge)"),
    C("precision=16,  # we use half precision", "amp", "replace", False,
      "precision=16, plugins=[MixedPrecisionPlugin('16', 'npu', scaler=torch.npu.amp.GradScaler())],",
      "Lightning's native 16-bit plugin builds a CUDA GradScaler/autocast; needs an NPU scaler to keep AMP (unconfirmed)"),
])

E("mixvpr-validation", "utils/validation.py", "explicit_replacement",
  "amaralibey/MixVPR utils/validation.py (faiss recall@k with optional GPU index)", [
    C("=res = faiss.StandardGpuResources()", "unsupported_op_workaround", "removal", False, None,
      "faiss GPU resources need a CUDA faiss build; branch only taken with faiss_gpu=True (default False)"),
    C("faiss_index = faiss.GpuIndexFlatL2(res, embed_size, flat_config)", "unsupported_op_workaround", "replace", False,
      "faiss_index = faiss.IndexFlatL2(embed_size)  # no faiss GPU build on Ascend",
      "GPU index unavailable on NPU hosts; CPU flat index gives identical results"),
    C("gpu_res = faiss.StandardGpuResources()", "unsupported_op_workaround", "removal", False, None,
      "same as above, reranking helper"),
    C("faiss_index = faiss.GpuIndexFlatIP(gpu_res, embed_size)", "unsupported_op_workaround", "replace", False,
      "faiss_index = faiss.IndexFlatIP(embed_size)", "GPU index unavailable on NPU hosts"),
])

E("gsv-datamodule", "dataloaders/GSVCitiesDataloader.py", "device_branch_or_abstraction",
  "amaralibey/gsv-cities dataloaders/GSVCitiesDataloader.py (LightningDataModule)", [])

E("mixvpr-reqs", "requirements.txt", "explicit_replacement",
  "MixVPR / GSV-Cities requirements.txt pinned to CUDA 11.7 wheels", [
    C("--extra-index-url https://download.pytorch.org/whl/cu117", "custom_cuda_extension", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; Ascend hosts use the CPU torch wheel (x86) or plain PyPI torch (aarch64) plus torch-npu"),
    C("torch==1.13.1+cu117", "custom_cuda_extension", "replace", True, "torch==2.1.0",
      "+cu117 local build does not exist for aarch64 and there is no torch_npu for 1.13; move to a torch_npu-paired version"),
    C("torchvision==0.14.1+cu117", "custom_cuda_extension", "replace", True, "torchvision==0.16.0",
      "must follow the torch version; +cu117 build"),
    C("matplotlib==3.6.2", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "torch-npu pin (paired with torch 2.1.0) appended to the env recipe; without it import torch_npu fails"),
    C("faiss-gpu==1.7.2", "custom_cuda_extension", "replace", True, "faiss-cpu==1.7.2",
      "faiss-gpu is a CUDA build with no aarch64/NPU wheel"),
])

E("salad-config", "config/dinov2_salad.yaml", "explicit_replacement",
  "serizba/salad / LightningCLI-style training config (DINOv2 + SALAD on GSV-Cities)", [
    C("accelerator: gpu", "device_type", "replace", True, "accelerator: npu",
      "Lightning rejects accelerator=gpu without CUDA; needs a registered NPU accelerator (unconfirmed)"),
    C("process_group_backend: nccl", "dist_backend", "replace", True, "process_group_backend: hccl",
      "NCCL does not exist on Ascend; collectives go through HCCL"),
    C("precision: 16-mixed", "amp", "replace", False, "precision: 16-mixed  # with an NPU MixedPrecision plugin",
      "Lightning 16-mixed uses CUDA autocast/GradScaler by default; unconfirmed how it behaves with an NPU accelerator"),
    C("faiss_gpu: true", "unsupported_op_workaround", "replace", True, "faiss_gpu: false",
      "validation would build faiss.StandardGpuResources, which needs the CUDA faiss build (not installable on Ascend)"),
])

E("salad-eval", "eval.py", "explicit_replacement",
  "serizba/salad eval.py (DINOv2-SALAD evaluation on MSLS/Pitts/Nordland/SPED)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, ENTRY_NOTE),
    C("with torch.autocast(device_type='cuda', dtype=torch.float16):", "amp", "replace", False,
      "with torch.autocast(device_type='npu', dtype=torch.float16):",
      "autocast('cuda') is disabled with a warning when CUDA is absent, descriptors are computed in fp32 (perf only)"),
    C("model.load_state_dict(torch.load(ckpt_path))", "device_type", "replace", True,
      "model.load_state_dict(torch.load(ckpt_path, map_location='cpu'))",
      "released checkpoints were saved from CUDA tensors; torch.load without map_location fails to deserialise them on a host without CUDA"),
    C("model = model.to('cuda')", "tensor_to_device", "replace", True, "model = model.to('npu')", "CUDA device string"),
    C("descriptors = get_descriptors(model, val_loader, 'cuda')", "device_type", "replace", True,
      "descriptors = get_descriptors(model, val_loader, 'npu')", "batches are moved with .to('cuda') inside get_descriptors"),
])

E("anyloc-utilities", "utilities.py", "device_branch_or_abstraction",
  "AnyLoc/AnyLoc utilities.py (DinoV2ExtractFeatures, VLAD, seed_everything, get_top_k_recall)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "no-op without CUDA; torch.manual_seed on the line above should already seed the NPU (unconfirmed)"),
    C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "npu_only_addition", False,
      "torch.use_deterministic_algorithms(True)",
      "cudnn flags do nothing on NPU; deterministic NPU kernels must be requested separately (unconfirmed)"),
    C('self.c_centers = torch.load(f"{self.cache_dir}/c_centers.pt")', "device_type", "replace", False,
      'self.c_centers = torch.load(f"{self.cache_dir}/c_centers.pt", map_location="cpu")',
      "the downloadable vocabularies fail to load without CUDA only if they were saved as CUDA tensors (unconfirmed)"),
    C("=res = faiss.StandardGpuResources()", "unsupported_op_workaround", "removal", False, None,
      "GPU faiss needs the CUDA build; only with use_gpu=True (default False)"),
    C("index = faiss.index_cpu_to_gpu(res, 0, index)", "unsupported_op_workaround", "replace", False,
      "pass  # keep the CPU index: no faiss GPU build on Ascend", "only with use_gpu=True"),
])

E("anyloc-vlad-generate", "demo/anyloc_vlad_generate.py", "explicit_replacement",
  "AnyLoc/AnyLoc demo/anyloc_vlad_generate.py (VLAD descriptors of a folder with DINOv2 ViT-G)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, ENTRY_NOTE),
    C("torch.cuda.set_device(largs.gpu_id)", "torch_cuda_api", "replace", True, "torch.npu.set_device(largs.gpu_id)",
      "initialises CUDA: raises on an NPU host"),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")', "hard-coded CUDA device"),
    C("c_centers = torch.load(c_centers_file)", "device_type", "replace", False,
      'c_centers = torch.load(c_centers_file, map_location="cpu")',
      "downloaded vocabulary; only fails if it was saved as CUDA tensors (unconfirmed)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize initialises CUDA and raises; also needed so the NPU timing is correct"),
    C("f\"{torch.cuda.max_memory_allocated(device) / 1024**3:.2f} GB\")", "torch_cuda_api", "replace", False,
      "f\"{torch.npu.max_memory_allocated(device) / 1024**3:.2f} GB\")", LOG_MEM_NOTE),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("dinov2-attention", "dinov2/layers/attention.py", "kernel_rewrite",
  "facebookresearch/dinov2 dinov2/layers/attention.py (xFormers MemEffAttention, loaded via torch.hub by AnyLoc/SALAD)", [
    C("attn = q @ k.transpose(-2, -1)", "attention_kernel", "replace", False,
      "x = nn.functional.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], dropout_p=self.attn_drop.p if self.training else 0.0)",
      "xFormers cannot be installed on NPU, so MemEffAttention falls back to this eager path (still correct); "
      "SDPA dispatches to the NPU fused attention kernel - performance only"),
])

E("anyloc-setup-conda", "setup_conda.sh", "explicit_replacement",
  "AnyLoc/AnyLoc setup_conda.sh (conda + pip environment bootstrap)", [
    C("if ! command -v nvidia-smi &> /dev/null; then", "device_capability_check", "replace", True,
      "if ! command -v npu-smi &> /dev/null; then", "no nvidia-smi on an Ascend host: the script exits 1"),
    C("nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader", "device_capability_check", "replace", True,
      "npu-smi info", "command not found on an Ascend host"),
    C("conda_install -c pytorch -c nvidia pytorch==2.0.1 torchvision==0.15.2 pytorch-cuda=11.8", "custom_cuda_extension", "replace", True,
      "pip_install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12",
      "pytorch-cuda is a CUDA-only conda metapackage; Ascend uses CPU torch + torch-npu from pip"),
    C("conda_install -c pytorch faiss-gpu==1.7.2", "custom_cuda_extension", "replace", True,
      "conda_install -c pytorch faiss-cpu==1.7.2", "faiss-gpu needs CUDA"),
    C("pip_install xformers==0.0.21 --index-url https://download.pytorch.org/whl/cu118", "attention_kernel", "removal", True, None,
      "xFormers has no NPU backend and the cu118 wheel does not install on Ascend hosts; DINOv2 falls back to its own attention"),
    C("# Sanity check: the GPU build must be importable", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before python imports torch_npu"),
    C("assert torch.cuda.is_available(), 'CUDA not available'", "torch_cuda_api", "replace", True,
      "python -c \"import torch, torch_npu; assert torch.npu.is_available(), 'NPU not available'; print(torch.__version__, torch_npu.__version__)\"",
      "the sanity check fails on an NPU host"),
])

E("cosplace-parser", "parser.py", "explicit_replacement",
  "gmberton/CosPlace parser.py (argparse with --device / --augmentation_device)", [
    C('parser.add_argument("--augmentation_device", type=str, default="cuda",', "device_type", "replace", True,
      'parser.add_argument("--augmentation_device", type=str, default="npu",',
      "default 'cuda' device string"),
    C('=choices=["cuda", "cpu"],', "device_type", "replace", True, 'choices=["npu", "cpu"],',
      "argparse rejects 'npu' otherwise"),
    C('parser.add_argument("--device", type=str, default="cuda",', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu",', "default 'cuda' device string"),
    C('choices=["cuda", "cpu"], help="_")', "device_type", "replace", True, 'choices=["npu", "cpu"], help="_")',
      "argparse rejects 'npu' otherwise"),
    C('if args.augmentation_device == "cuda" and args.device != "cuda":', "device_type", "replace", False,
      'if args.augmentation_device == "npu" and args.device != "npu":',
      "after porting the defaults this validation is silently skipped, nothing breaks"),
])

E("cosplace-commons", "commons.py", "device_branch_or_abstraction",
  "gmberton/CosPlace commons.py (InfiniteDataLoader, make_deterministic, setup_logging)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "no-op without CUDA; torch.manual_seed above should already seed the NPU generator (unconfirmed)"),
    C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "npu_only_addition", False,
      "torch.use_deterministic_algorithms(True)",
      "cudnn flags have no effect on NPU; determinism on NPU has to be requested explicitly (unconfirmed)"),
])

E("cosplace-train", "train.py", "device_branch_or_abstraction",
  "gmberton/CosPlace train.py (groups, CosFace classifiers, GPU augmentation, AMP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, ENTRY_NOTE),
    C('logging.info(f"There are {torch.cuda.device_count()} GPUs', "torch_cuda_api", "replace", False,
      'logging.info(f"There are {torch.npu.device_count()} NPUs and {multiprocessing.cpu_count()} CPUs.")',
      "log only: prints 0 GPUs on an NPU host"),
    C("model_state_dict = torch.load(args.resume_model)", "device_type", "replace", True,
      "model_state_dict = torch.load(args.resume_model, map_location=args.device)",
      "models trained on GPU hold CUDA tensors; loading them without map_location raises on a host without CUDA"),
    C('=if args.augmentation_device == "cuda":', "device_type", "replace", True,
      'if args.augmentation_device == "npu":',
      "with the ported 'npu' default the GPU augmentation pipeline is silently never built"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", False, "scaler = torch.npu.amp.GradScaler()", AMP_NOTE),
    C('pin_memory=(args.device == "cuda"), drop_last=True)', "pin_memory", "replace", False,
      'pin_memory=(args.device == "npu"), drop_last=True)',
      "compares against the CUDA device string: after porting pinning is silently off (perf only)"),
    C('if args.augmentation_device == "cuda":  # batch-wise augmentation on the GPU', "device_type", "replace", True,
      'if args.augmentation_device == "npu":  # batch-wise augmentation on the NPU',
      "otherwise training silently runs without colour jitter / random resized crop"),
    C("with torch.cuda.amp.autocast():", "amp", "replace", False, "with torch.npu.amp.autocast():", AMP_NOTE),
])

E("cosplace-test", "test.py", "device_branch_or_abstraction",
  "gmberton/CosPlace test.py (descriptor extraction + faiss recall)", [
    C('batch_size=args.infer_batch_size, pin_memory=(args.device == "cuda"))', "pin_memory", "replace", False,
      'batch_size=args.infer_batch_size, pin_memory=(args.device == "npu"))',
      "string comparison with 'cuda': pinning silently disabled after porting (perf only)"),
    C('batch_size=queries_infer_batch_size, pin_memory=(args.device == "cuda"))', "pin_memory", "replace", False,
      'batch_size=queries_infer_batch_size, pin_memory=(args.device == "npu"))', "same as above"),
])

E("eigenplaces-eval", "eval.py", "device_branch_or_abstraction",
  "gmberton/EigenPlaces eval.py (torch.hub or local checkpoint, test on one dataset)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, ENTRY_NOTE),
    C('logging.info(f"There are {torch.cuda.device_count()} GPUs', "torch_cuda_api", "replace", False,
      'logging.info(f"There are {torch.npu.device_count()} NPUs and {multiprocessing.cpu_count()} CPUs.")',
      "log only"),
    C("torch.cuda.get_device_name(torch.cuda.current_device())", "torch_cuda_api", "replace", True,
      'logging.info(f"Evaluating on {torch.npu.get_device_name(torch.npu.current_device())}")',
      "current_device() initialises CUDA and raises on an NPU host"),
    C('=if args.device == "cuda":', "device_type", "replace", False, 'if args.device == "npu":',
      "after porting the device string the peak-memory log is silently skipped"),
    C("torch.cuda.max_memory_reserved()", "torch_cuda_api", "replace", False,
      'logging.info(f"Peak NPU memory: {torch.npu.max_memory_reserved() / 2**20:.0f} MiB")', LOG_MEM_NOTE),
])

E("vgbench-train", "train.py", "device_branch_or_abstraction",
  "gmberton/deep-visual-geo-localization-benchmark train.py (triplet training, DataParallel, sync BN)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, ENTRY_NOTE),
    C('logging.info(f"Using {torch.cuda.device_count()} GPUs', "torch_cuda_api", "replace", False,
      'logging.info(f"Using {torch.npu.device_count()} NPUs and {multiprocessing.cpu_count()} CPUs")', "log only"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
      "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank])",
      "DataParallel is ✘ on Ascend; DDP keeps the .module attribute the optimizer setup relies on (needs an hccl process group)"),
    C("if torch.cuda.device_count() >= 2:", "torch_cuda_api", "replace", True,
      "if torch.npu.device_count() >= 2:",
      "0 on an NPU host: the multi-card SyncBN branch is silently skipped"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
      "Module.cuda() fails without CUDA once the branch above is reachable"),
    C('pin_memory=(args.device == "cuda"),', "pin_memory", "replace", False, 'pin_memory=(args.device == "npu"),',
      "compares with the CUDA string: pinning silently off after porting (perf only)"),
])

E("vgbench-datasets", "datasets_ws.py", "device_branch_or_abstraction",
  "gmberton/deep-visual-geo-localization-benchmark datasets_ws.py (triplet mining with a feature cache)", [
    C('pin_memory=(args.device == "cuda"))', "pin_memory", "replace", False, 'pin_memory=(args.device == "npu"))',
      "compares with the CUDA string: pinning silently off after porting (perf only)"),
])

E("vgbench-eval-sh", "scripts/eval_all.sh", "explicit_replacement",
  "evaluation sweep script of the geo-localization benchmark (one process per dataset)", [
    C("export CUDA_VISIBLE_DEVICES=$GPU", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=$GPU",
      "ignored by the NPU runtime: every run lands on npu:0 whatever GPU id is passed"),
    C("export OMP_NUM_THREADS=8", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment for torch_npu"),
    C("export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512", "env_var", "replace", False,
      "export PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:512", "allocator tuning, silently ignored on NPU"),
    C("nvidia-smi --query-gpu=name --format=csv,noheader -i $GPU", "device_capability_check", "replace", False,
      'echo "Evaluating $RESUME on NPU $GPU ($(npu-smi info -t board -i $GPU | grep -i "chip name"))"',
      "nvidia-smi missing only breaks the echoed device name (no set -e)"),
    C("--device=cuda \\", "device_type", "replace", True, "--device=npu \\", "CUDA device string passed to eval.py"),
])

E("r2former-dist", "utils/dist.py", "explicit_replacement",
  "DETR-style util/misc.py used by R2Former-like VPR reranking code (init_distributed_mode, all_gather, MetricLogger)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "tensor_to_device", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "CUDA device string (fp64 all_reduce over HCCL not confirmed; float32 is the safe choice)"),
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu")', "CUDA device string"),
    C('local_size = torch.tensor([tensor.numel()], device="cuda")', "tensor_to_device", "replace", True,
      'local_size = torch.tensor([tensor.numel()], device="npu")', "CUDA device string"),
    C('size_list = [torch.tensor([0], device="cuda") for _ in range(world_size)]', "tensor_to_device", "replace", True,
      'size_list = [torch.tensor([0], device="npu") for _ in range(world_size)]', "CUDA device string"),
    C('tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))', "tensor_to_device", "replace", True,
      'tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="npu"))', "CUDA device string"),
    C('padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")', "tensor_to_device", "replace", True,
      'padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="npu")', "CUDA device string"),
    C("self.log_gpu_mem = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "self.log_gpu_mem = torch.npu.is_available()", "False on an NPU host: the memory column is silently dropped (log only)"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))", LOG_MEM_NOTE),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()", "device_count() is 0 on an NPU host: ZeroDivisionError under SLURM"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "initialises CUDA and raises on an NPU host"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
      "NCCL is not available on Ascend; HCCL is the collective backend"),
])

E("r2former-train", "train_reranker.py", "explicit_replacement",
  "R2Former-style DDP training of global retrieval + transformer reranking", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, ENTRY_NOTE),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu', help='device to use for training / testing')",
      "default CUDA device string"),
    C('torch.cuda.nvtx.range_push(f"iter{it}")', "torch_cuda_api", "replace", True,
      'rng_id = torch_npu.npu.mstx.range_start(f"iter{it}")',
      "torch.cuda.nvtx is not redirected and raises on a non-CUDA build; mstx is the NPU counterpart (only with --profile)"),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=args.amp):", AMP_NOTE),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(rng_id)",
      "same as range_push"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)", AMP_NOTE),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "initialises CUDA and raises on an NPU host"),
    C("'max_mem_GB': torch.cuda.max_memory_allocated() / 1024 ** 3}", "torch_cuda_api", "replace", False,
      "'max_mem_GB': torch.npu.max_memory_allocated() / 1024 ** 3}", LOG_MEM_NOTE),
])

E("r2former-train-sh", "scripts/train_msls.sh", "explicit_replacement",
  "multi-GPU launcher script (torch.distributed.launch, NCCL tuning variables)", [
    C("export CUDA_VISIBLE_DEVICES=$GPUS", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=$GPUS",
      "ignored by the NPU runtime: the selected card list is not honoured"),
    C("export OMP_NUM_THREADS=4", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment for torch_npu / HCCL"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL variables are ignored by HCCL; logging only"),
    C("export NCCL_P2P_DISABLE=0", "env_var", "removal", False, None, "NCCL-only knob, ignored on Ascend"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only knob, ignored on Ascend"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
      "HCCL picks the host NIC with its own rules; matters for multi-node root-info setup only"),
])

E("hloc-extract", "hloc/extract_features.py", "device_branch_or_abstraction",
  "cvg/Hierarchical-Localization hloc/extract_features.py (local + global retrieval features: netvlad, openibl, eigenplaces)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, ENTRY_NOTE),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "add_branch", True,
      'device = "cuda" if torch.cuda.is_available() else ("npu" if torch.npu.is_available() else "cpu")',
      "on an NPU host this silently runs every extractor on the CPU"),
])

E("hloc-retrieval", "hloc/pairs_from_retrieval.py", "device_branch_or_abstraction",
  "cvg/Hierarchical-Localization hloc/pairs_from_retrieval.py (global-descriptor image retrieval)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, ENTRY_NOTE),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "add_branch", True,
      'device = "cuda" if torch.cuda.is_available() else ("npu" if torch.npu.is_available() else "cpu")',
      "silently computes the similarity matrix on the CPU on an NPU host"),
])

E("latency-bench", "tools/benchmark_latency.py", "explicit_replacement",
  "latency / peak-memory benchmark script shipped with VPR papers (CUDA events, pynvml, torch.profiler)", [
    C("=import pynvml", "device_capability_check", "removal", False, None,
      "nvidia-ml-py imports without a GPU; it is only dead weight once gpu_info is rewritten"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, ENTRY_NOTE),
    C("pynvml.nvmlInit()", "device_capability_check", "removal", True, None, "NVML library not found on an Ascend host"),
    C("handle = pynvml.nvmlDeviceGetHandleByIndex(idx)", "device_capability_check", "removal", True, None, "NVML only"),
    C("return pynvml.nvmlDeviceGetName(handle)", "device_capability_check", "replace", True,
      "return torch.npu.get_device_name(idx), torch.npu.get_device_properties(idx).total_memory / 1024 ** 3",
      "NVML only; torch.npu exposes name and total_memory"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=amp):', "amp", "replace", True,
      'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=amp):',
      "in a benchmark the silently disabled autocast means --amp numbers are really fp32 numbers"),
    C("torch.cuda.synchronize()  # drain the warm-up queue", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # drain the warm-up queue", "initialises CUDA and raises on an NPU host"),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "starter = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "ender = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C('with torch.autocast("cuda", dtype=torch.float16, enabled=amp):', "amp", "replace", True,
      'with torch.autocast("npu", dtype=torch.float16, enabled=amp):', "timed loop: same as the warm-up autocast"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises on an NPU host; without a sync the NPU timer is read too early"),
    C('device = torch.device(f"cuda:{args.gpu}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{args.gpu}")', "CUDA device string"),
    C("major, _ = torch.cuda.get_device_capability(device)", "device_capability_check", "replace", True,
      "major = 8  # torch.npu.get_device_capability() returns None; Ascend cube units always run fp16",
      "raises without CUDA; the NPU form returns None, so the tensor-core check has to go"),
    C("model = model.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "replace", False,
      "model = model.contiguous()  # channels_last is not supported on NPU",
      "msFmkTransplt lists channel_last as unsupported; unconfirmed whether it errors or only loses speed"),
    C("model = torch.compile(model, mode=\"max-autotune\")", "compile_mode", "replace", False,
      "model = torch.compile(model, backend=\"npugraphs\")",
      "max-autotune relies on Triton/CUDA graphs; NPU graph mode availability depends on the torch_npu version (unconfirmed)"),
    C("x = x.contiguous(memory_format=torch.channels_last)", "unsupported_op_workaround", "replace", False,
      "x = x.contiguous()", "channels_last unsupported on NPU (unconfirmed impact)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(device)", "resolves the CUDA device and raises on an NPU host"),
    C("peak_mem = torch.cuda.max_memory_allocated(device) / 1024 ** 2", "torch_cuda_api", "replace", True,
      "peak_mem = torch.npu.max_memory_allocated(device) / 1024 ** 2",
      "silently 0 on an NPU host, and peak memory is a reported result of this tool"),
    C("with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:", "torch_cuda_api", "replace", False,
      "with torch_npu.profiler.profile(activities=[torch_npu.profiler.ProfilerActivity.CPU, torch_npu.profiler.ProfilerActivity.NPU], record_shapes=True) as prof:",
      "CUDA activity is dropped with a warning; the kernel table silently lacks device time (--profile only)"),
])

E("vpr-dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Dockerfile of a VPR training repo (nvidia/cuda base, cu118 wheels, faiss-gpu, xformers)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "custom_cuda_extension", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA base image has no CANN toolkit / driver user libraries for torch_npu"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "read by the NVIDIA container runtime only; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES (devices can also be passed with --device)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "NVIDIA runtime only"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6;8.9+PTX"', "env_var", "removal", False, None,
      "only read by nvcc extension builds"),
    C("RUN pip install torch==2.1.2 torchvision==0.16.2 --index-url https://download.pytorch.org/whl/cu118",
      "custom_cuda_extension", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu",
      "cu118 wheels; torch_npu pairs with an exact torch version (2.1.0)"),
    C("RUN pip install faiss-gpu==1.7.2", "custom_cuda_extension", "replace", True, "RUN pip install faiss-cpu==1.7.2",
      "CUDA build of faiss"),
    C("RUN pip install xformers==0.0.23.post1 --index-url https://download.pytorch.org/whl/cu118", "attention_kernel", "removal", True, None,
      "xFormers has no NPU backend; the cu118 wheel does not install"),
    C("RUN pip install -r requirements.txt", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install torch-npu==2.1.0.post12", "torch-npu must be installed in the image"),
])

E("netvlad-env", "environment.yml", "explicit_replacement",
  "conda environment.yml for the NetVLAD / Patch-NetVLAD experiments", [
    C("=- nvidia", "custom_cuda_extension", "removal", False, None, "NVIDIA conda channel, harmless but useless on Ascend"),
    C("- cudatoolkit=11.3", "custom_cuda_extension", "removal", False, None,
      "CUDA runtime libraries; dead weight once torch comes from pip (aarch64 availability unconfirmed)"),
    C("- pytorch=1.11.0", "custom_cuda_extension", "replace", True, "- pip: [torch==1.11.0]",
      "conda pytorch channel builds are CUDA/x86 builds; torch_npu 1.11 pairs with the pip torch==1.11.0"),
    C("- torchvision=0.12.0", "custom_cuda_extension", "replace", True, "- pip: [torchvision==0.12.0]",
      "conda torchvision pulls the conda (CUDA) pytorch back in"),
    C("- faiss-gpu=1.7.2", "custom_cuda_extension", "replace", True, "- faiss-cpu=1.7.2", "CUDA build of faiss"),
    C("- patchnetvlad==0.1.6", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==1.11.0.post14",
      "torch-npu pin for torch 1.11.0"),
    C("- nvidia-ml-py3", "device_capability_check", "removal", False, None, "NVML bindings are useless on Ascend; they import fine"),
])

E("sfxl-knn", "tools/large_scale_knn.py", "explicit_replacement",
  "city-scale (SF-XL) k-NN search tool: faiss multi-GPU sharding or chunked torch search over all GPUs", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, ENTRY_NOTE),
    C("gpu_index = faiss.index_cpu_to_all_gpus(cpu_index, co=co, ngpu=ngpus)", "unsupported_op_workaround", "replace", False,
      "gpu_index = cpu_index  # no faiss GPU build on Ascend; use --backend torch",
      "only with --backend faiss, which already refuses to run without faiss-gpu"),
    C("self.num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "self.num_gpus = torch.npu.device_count()", "0 on an NPU host: raises 'needs at least one GPU'"),
    C('device = torch.device("cuda", c % self.num_gpus)', "device_type", "replace", True,
      'device = torch.device("npu", c % self.num_gpus)', "CUDA device type"),
    C("block = torch.from_numpy(database[start:start + chunk_size]).pin_memory()", "pin_memory", "replace", False,
      "block = torch.from_numpy(database[start:start + chunk_size]).pin_memory(\"npu\")",
      "default pinning targets CUDA; whether it errors or pins for NPU depends on the torch version (unconfirmed)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "initialises CUDA and raises"),
    C("sum(torch.cuda.memory_allocated(i) for i in range(self.num_gpus))", "torch_cuda_api", "replace", False,
      'f"{sum(torch.npu.memory_allocated(i) for i in range(self.num_gpus)) / 2**30:.1f} GB allocated")', LOG_MEM_NOTE),
    C("self.streams = [torch.cuda.Stream(device=i) for i in range(self.num_gpus)]", "torch_cuda_api", "replace", True,
      "self.streams = [torch.npu.Stream(device=i) for i in range(self.num_gpus)]", "CUDA streams cannot be created"),
    C("with torch.cuda.stream(stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(stream):",
      "CUDA stream context resolves the current CUDA device and fails"),
])

E("boq-train", "train.py", "explicit_replacement",
  "amaralibey/Bag-of-Queries style Lightning 2.x training script (all visible GPUs, bf16, optional torch.compile)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, ENTRY_NOTE),
    C("backbone = torch.compile(backbone)", "compile_mode", "replace", False,
      "backbone = torch.compile(backbone, backend=\"npugraphs\")",
      "default Inductor backend generates Triton/CUDA code; NPU graph mode depends on the torch_npu version (unconfirmed)"),
    C("num_devices = args.devices if args.devices is not None else torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_devices = args.devices if args.devices is not None else torch.npu.device_count()",
      "0 on an NPU host: Lightning rejects devices=0"),
    C('strategy = "ddp_find_unused_parameters_true" if num_devices > 1 else "auto"', "dist_backend", "replace", False,
      'strategy = DDPStrategy(process_group_backend="hccl", find_unused_parameters=True) if num_devices > 1 else "auto"',
      "Lightning picks nccl only for CUDA devices and gloo otherwise; hccl must be requested (unconfirmed in knowledge)"),
    C('accelerator="cuda",', "device_type", "replace", True, 'accelerator="npu",',
      "Lightning refuses accelerator='cuda' without CUDA; needs an NPU accelerator plugin (unconfirmed)"),
    C('precision="bf16-mixed",', "amp", "replace", False, 'precision="bf16-mixed",  # NPU autocast via plugin',
      "autocast device follows the accelerator; unconfirmed for a custom NPU accelerator"),
])
