# Labels for probe392 (feed-forward 3-D reconstruction: DUSt3R/CroCo, MASt3R, VGGT, Spann3R, CUT3R).
# One C(...) per upstream line a careful porter edits for Ascend NPU + torch_npu (explicit port).
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("explicit port: load torch_npu in the entry module before any 'npu' device string is used "
               "(mandatory before torch_npu 2.5.1, recommended after)")

# ----------------------------------------------------------------------------------------------------------
# DUSt3R / CroCo
# ----------------------------------------------------------------------------------------------------------
E("dust3r_training", "dust3r/training.py", "explicit_replacement",
  "naver/dust3r dust3r/training.py (MAE-style train loop, --amp, DDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NOTE),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "left as is the whole training silently runs on the CPU of an NPU host"),
])

E("croco_misc", "croco/utils/misc.py", "explicit_replacement",
  "naver/croco utils/misc.py (MetricLogger, init_distributed_mode, NativeScalerWithGradNormCount)", [
    C("dtype=torch.float64, device='cuda')", "device_type", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "metric all-reduce tensor must live on the NPU for HCCL; fp64 all-reduce on HCCL not confirmed in knowledge"),
    C("if torch.cuda.is_available():  # report the peak GPU memory", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():  # report the peak NPU memory in each log line",
      "logging only: unchanged guard is False on NPU and the column is silently dropped"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():", "logging-only branch selection (see above)"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))", "logging only; only reached when the guard is ported"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)", "torch.cuda.set_device raises on a CUDA-less torch build"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True,
      "args.dist_backend = 'hccl'", "NCCL is not available on Ascend; HCCL is the collective backend"),
    C("self._scaler = torch.cuda.amp.GradScaler(enabled=enabled)", "amp", "replace", True,
      "self._scaler = torch.npu.amp.GradScaler(enabled=enabled)",
      "the CUDA scaler disables itself without CUDA, so fp16 --amp training runs without loss scaling"),
    C("x_reduce = torch.tensor(x).cuda()", "tensor_to_device", "replace", True,
      "x_reduce = torch.tensor(x).npu()", ".cuda() fails on an NPU host; HCCL needs an NPU tensor"),
])

E("dust3r_inference", "dust3r/inference.py", "explicit_replacement",
  "naver/dust3r dust3r/inference.py (loss_of_one_batch, inference)", [
    C("with torch.cuda.amp.autocast(enabled=bool(use_amp)):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=bool(use_amp)):",
      "with --amp 1 the CUDA autocast is a no-op on NPU: mixed precision silently not applied"),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=False):",
      "once the outer context is an NPU autocast, only an NPU-typed disable keeps the loss in fp32"),
])

E("dust3r_demo", "dust3r/demo.py", "explicit_replacement",
  "naver/dust3r dust3r/demo.py (gradio demo helpers, get_args_parser)", [
    C("""parser.add_argument("--device", type=str, default='cuda', help="pytorch device")""", "device_type", "replace", True,
      """parser.add_argument("--device", type=str, default='npu', help="pytorch device")""",
      "default device of the dust3r and mast3r demos (mast3r reuses this parser)"),
])

E("dust3r_demo_entry", "demo.py", "explicit_replacement",
  "naver/dust3r demo.py (gradio demo executable)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
])

E("dust3r_base_opt", "dust3r/cloud_opt/base_opt.py", "explicit_replacement",
  "naver/dust3r dust3r/cloud_opt/base_opt.py (BasePCOptimizer, global alignment loop)", [
    C("@torch.cuda.amp.autocast(enabled=False)", "amp", "replace", False,
      "@torch.npu.amp.autocast(enabled=False)",
      "global alignment is never called inside an autocast region in these repos: inert, ported for fidelity"),
])

E("croco_pos_embed", "croco/models/pos_embed.py", "explicit_replacement",
  "naver/croco models/pos_embed.py (cuRoPE2D import with PyTorch RoPE2D fallback)", [])

E("croco_curope_setup", "croco/models/curope/setup.py", "explicit_replacement",
  "naver/croco models/curope/setup.py (optional CUDA RoPE extension)", [
    C("CUDAExtension(", "custom_cuda_extension", "replace", False,
      "NpuExtension(  # torch_npu.utils.cpp_extension; needs an Ascend C port of kernels.cu (or skip the build)",
      "optional build step; without it pos_embed.py already uses the PyTorch RoPE2D (works on NPU, slower)"),
])

E("dust3r_dockerfile", "docker/files/cuda.Dockerfile", "explicit_replacement",
  "naver/dust3r docker/files/cuda.Dockerfile", [
    C("FROM nvcr.io/nvidia/pytorch:24.01-py3", "import_torch_npu", "replace", True,
      "FROM ascendai/pytorch:2.1.0  # any image with CANN + torch_npu matching the host driver",
      "the NGC CUDA image has neither CANN nor torch_npu; image tag is illustrative"),
    C('ENV DEVICE="cuda"', "device_type", "replace", True, 'ENV DEVICE="npu"',
      "entrypoint passes $DEVICE to demo.py --device"),
    C("RUN python setup.py build_ext --inplace", "custom_cuda_extension", "removal", True, None,
      "nvcc/CUDAExtension build fails in an Ascend image and aborts the docker build"),
])

E("dust3r_requirements", "requirements.txt", "explicit_replacement",
  "naver/dust3r requirements.txt", [
    C("=torch", "import_torch_npu", "npu_only_addition", False,
      "torch-npu  # same x.y.z as torch, plus a matching CANN toolkit",
      "may equally be installed out of band (base image); version must match torch"),
])

# ----------------------------------------------------------------------------------------------------------
# MASt3R
# ----------------------------------------------------------------------------------------------------------
E("mast3r_fast_nn", "mast3r/fast_nn.py", "explicit_replacement",
  "naver/mast3r mast3r/fast_nn.py (reciprocal nearest neighbours, cdist on device or scipy KDTree)", [
    C("def bruteforce_reciprocal_nns(A, B, device='cuda'", "device_type", "replace", False,
      "def bruteforce_reciprocal_nns(A, B, device='npu', block_size=None, dist='l2'):",
      "default never used inside the repo (cdistMatcher always passes device)"),
    C("def __init__(self, db_pts, device='cuda'):", "device_type", "replace", False,
      "def __init__(self, db_pts, device='npu'):", "default never used (fast_reciprocal_NNs passes device)"),
    C("or (isinstance(device, str) and device.startswith('cuda'))", "device_type", "replace", False,
      "or (isinstance(device, str) and device.startswith('npu')) \\",
      "without it calls lacking dist/block_size fall back to scipy KDTree on the CPU (same result, slower)"),
    C("or (isinstance(device, torch.device) and device.type.startswith('cuda'))", "device_type", "replace", False,
      "or (isinstance(device, torch.device) and device.type.startswith('npu')):", "same as above, torch.device form"),
])

E("mast3r_sparse_ga", "mast3r/cloud_opt/sparse_ga.py", "explicit_replacement",
  "naver/mast3r mast3r/cloud_opt/sparse_ga.py (forward_mast3r, canonical views, sparse GA)", [
    C("kinematic_mode='hclust-ward', device='cuda'", "device_type", "replace", False,
      "kinematic_mode='hclust-ward', device='npu', dtype=torch.float32, shared_intrinsics=False, **kw):",
      "callers (demo) pass device explicitly; default kept consistent"),
    C("def make_dense_pts3d(", "device_type", "replace", False,
      "def make_dense_pts3d(intrinsics, cam2w, depthmaps, canonical_paths, subsample, device='npu'):",
      "default; callers pass the scene device"),
    C("device='cuda', subsample=8, **matching_kw):", "device_type", "replace", False,
      "device='npu', subsample=8, **matching_kw):", "default; sparse_global_alignment passes device"),
    C("cache_path=None, device='cuda', **kw):", "device_type", "replace", False,
      "cache_path=None, device='npu', **kw):", "default; sparse_global_alignment passes device"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "no-op without CUDA (guarded by is_initialized); only memory headroom"),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=False):",
      "symmetric_inference is not run under autocast in MASt3R: inert, ported for fidelity"),
])

E("mast3r_demo_entry", "demo.py", "explicit_replacement",
  "naver/mast3r demo.py (gradio demo executable)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
])

E("mast3r_visloc", "visloc.py", "explicit_replacement",
  "naver/mast3r visloc.py (visual localization benchmark)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('parser.add_argument("--device", type=str, default="cuda", help="pytorch device")', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu", help="pytorch device")',
      "default device of the script; also selects the cdist matcher path in fast_nn"),
])

E("mast3r_retrieval", "mast3r/retrieval/processor.py", "explicit_replacement",
  "naver/mast3r mast3r/retrieval/processor.py (Retriever, ASMK with faiss CPU fallback)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "module has a __main__ entry point; " + IMPORT_NOTE),
    C("def __init__(self, modelname, backbone=None, device='cuda'):", "device_type", "replace", True,
      "def __init__(self, modelname, backbone=None, device='npu'):",
      "the __main__ path constructs Retriever(args.model) and relies on this default"),
])

E("mast3r_requirements", "requirements.txt", "explicit_replacement",
  "naver/mast3r requirements.txt (+ optional retrieval deps)", [
    C("=faiss-gpu", "unsupported_op_workaround", "replace", True, "faiss-cpu",
      "no faiss-gpu wheel for Ascend (aarch64) hosts; processor.py already patches ASMK to the CPU index"),
])

# ----------------------------------------------------------------------------------------------------------
# VGGT
# ----------------------------------------------------------------------------------------------------------
E("vggt_demo_colmap", "demo_colmap.py", "explicit_replacement",
  "facebookresearch/vggt demo_colmap.py (VGGT -> COLMAP export, optional BA)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "VGGT pins torch==2.3.1, where torch_npu is not auto-loaded"),
    C("with torch.cuda.amp.autocast(dtype=dtype):  # bf16", "amp", "replace", True,
      "with torch.npu.amp.autocast(dtype=dtype):  # bf16 when supported, fp16 otherwise",
      "aggregator would silently run in fp32 (memory/speed, and different numerics from the release)"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "torch.manual_seed already seeds registered custom (privateuse1) devices; guard only affects extra seeding (not confirmed in knowledge)"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
      "see guard"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)  # for multi-NPU", "see guard"),
    C("dtype = torch.bfloat16 if torch.cuda.get_device_capability()[0] >= 8 else torch.float16",
      "device_capability_check", "replace", True,
      "dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
      "get_device_capability raises without CUDA; on NPU it returns None/config value, not an SM version"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"', "otherwise runs on CPU"),
    C("=with torch.cuda.amp.autocast(dtype=dtype):", "amp", "replace", True,
      "with torch.npu.amp.autocast(dtype=dtype):", "VGGSfM tracker under mixed precision, as upstream"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA; memory headroom only"),
])

E("vggt_demo_gradio", "demo_gradio.py", "explicit_replacement",
  "facebookresearch/vggt demo_gradio.py (gradio demo, module-level model)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "VGGT pins torch==2.3.1"),
    C('=device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"', "module-level model placement"),
    C("the gradio worker may run in another process", "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"  # the gradio worker may run in another process',
      "run_model moves the model again; unchanged it pulls the model back to the CPU"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available():", "raises on every request on an NPU host"),
    C("dtype = torch.bfloat16 if torch.cuda.get_device_capability()[0] >= 8 else torch.float16",
      "device_capability_check", "replace", True,
      "dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
      "get_device_capability raises without CUDA"),
    C("with torch.cuda.amp.autocast(dtype=dtype):", "amp", "replace", True,
      "with torch.npu.amp.autocast(dtype=dtype):", "VGGT-1B forward would silently run in fp32"),
    C("release cached blocks held by the forward pass", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # release cached blocks held by the forward pass", "memory headroom only"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "memory headroom only"),
    C("cleanup after the GLB export", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # cleanup after the GLB export", "memory headroom only"),
])

E("vggt_attention", "vggt/layers/attention.py", "explicit_replacement",
  "facebookresearch/vggt vggt/layers/attention.py (SDPA attention, MemEffAttention stub)", [])

E("vggt_trainer", "training/trainer.py", "explicit_replacement",
  "facebookresearch/vggt training/trainer.py (hydra Trainer, DDP, AMP)", [
    C('os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"', "env_var", "replace", False,
      'os.environ["PYTORCH_NPU_ALLOC_CONF"] = "expandable_segments:True"',
      "fragmentation only; NPU allocator reads PYTORCH_NPU_ALLOC_CONF (expandable_segments needs HDK >= 23.0.0)"),
    C('os.environ["NCCL_ASYNC_ERROR_HANDLING"] = "1"', "env_var", "replace", False,
      'os.environ["HCCL_ASYNC_ERROR_HANDLING"] = "1"', "torch_npu watchdog variable; documented default is already 1"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "trainer is the first torch import of launch.py; VGGT pins torch==2.3.1"),
    C('device: str = "cuda",', "device_type", "replace", True, 'device: str = "npu",',
      "default.yaml does not set device, so this default selects the branch in _setup_device"),
    C('if device == "cuda":', "device_type", "replace", True, 'if device == "npu":',
      "otherwise _setup_device raises 'Unsupported device'"),
    C('self.device = torch.device("cuda", self.local_rank)', "device_type", "replace", True,
      'self.device = torch.device("npu", self.local_rank)', ""),
    C("torch.cuda.set_device(self.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(self.local_rank)", "raises without CUDA"),
    C('device_ids=[self.local_rank] if device == "cuda" else [],', "device_type", "replace", False,
      'device_ids=[self.local_rank] if device == "npu" else [],',
      "with [] DDP still works for a single-device module (uses the module's device)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA; memory headroom only"),
    C("=torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "resolves current_device() -> lazy CUDA init -> raises"),
    C("torch.cuda.empty_cache()  # after validation", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # after validation", "memory headroom only"),
    C("torch.cuda.reset_peak_memory_stats()  # measure", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()  # measure the next epoch separately", "raises without CUDA"),
    C("=with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=False):", "batch normalisation runs outside autocast anyway: inert"),
    C('with torch.autocast(device_type="cuda"', "amp", "replace", True,
      'with torch.autocast(device_type="npu", enabled=self.optim_conf.amp.enabled, dtype=amp_type):',
      "validation would silently run in fp32"),
    C("memory stats need a GPU", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():  # memory stats need an accelerator", "logging only"),
    C("=mem.update(torch.cuda.max_memory_allocated() // 1e9)", "torch_cuda_api", "replace", False,
      "mem.update(torch.npu.max_memory_allocated() // 1e9)", "logging only"),
    C("with torch.cuda.amp.autocast(enabled=False):  # keep the normalisation", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=False):  # keep the normalisation in fp32",
      "outside any autocast region: inert"),
    C("# peak GB on this rank", "torch_cuda_api", "replace", False,
      "mem.update(torch.npu.max_memory_allocated() // 1e9)  # peak GB on this rank",
      "unguarded, but returns 0 without CUDA init instead of raising: wrong log value only"),
    C("=with torch.cuda.amp.autocast(", "amp", "replace", True, "with torch.npu.amp.autocast(",
      "training forward would silently run in fp32 (bf16 in the config)"),
])

E("vggt_train_config", "training/config/default.yaml", "explicit_replacement",
  "facebookresearch/vggt training/config/default.yaml (hydra config)", [
    C("=backend: nccl", "dist_backend", "replace", True, "backend: hccl",
      "passed straight to dist.init_process_group"),
])

E("vggt_train_sh", "training/train.sh", "explicit_replacement",
  "launcher in the style of the VGGT training README (torchrun launch.py)", [
    C("=set -e", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be loaded before importing torch_npu (unless the image already exports it)"),
    C("export CUDA_VISIBLE_DEVICES=4,5,6,7", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=4,5,6,7",
      "CUDA_VISIBLE_DEVICES is ignored by the NPU runtime: ranks would land on NPUs 0-3 used by other jobs"),
])

E("vggt_requirements", "requirements.txt", "explicit_replacement",
  "facebookresearch/vggt requirements.txt", [
    C("=torch==2.3.1", "import_torch_npu", "npu_only_addition", False,
      "torch-npu==2.3.1.post6",
      "pairs with torch 2.3.1 (branch v2.3.1-7.0.0, CANN 8.1.RC1); may be installed out of band"),
])

# ----------------------------------------------------------------------------------------------------------
# Spann3R
# ----------------------------------------------------------------------------------------------------------
E("spann3r_train", "train.py", "explicit_replacement",
  "HKUST-SAIL/spann3r train.py (dust3r-derived training with croco misc)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("pin_memory=True,", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu',",
      "performance only; whether plain pin_memory pins for NPU depends on the torch version (unconfirmed)"),
    C('device = torch.device(f"cuda:{args.gpu}" if args.distributed else "cuda")', "device_type", "replace", True,
      'device = torch.device(f"npu:{args.gpu}" if args.distributed else "npu")', ""),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "memory headroom only"),
    C("with torch.cuda.amp.autocast(enabled=bool(args.amp)):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=bool(args.amp)):", "--amp 1 silently ignored otherwise"),
])

E("spann3r_model", "spann3r/model.py", "explicit_replacement",
  "HKUST-SAIL/spann3r spann3r/model.py (SpatialMemory, Spann3R)", [
    C("=with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=False):",
      "input is cast with .float() and softmax is an fp32 op under autocast anyway: numerically inert"),
    C("heads always run in fp32", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=False):  # heads always run in fp32",
      "inside NPU training autocast the head's linear/conv would recast the .float() tokens to fp16"),
])

E("spann3r_demo", "demo.py", "explicit_replacement",
  "HKUST-SAIL/spann3r demo.py (online reconstruction + FPS)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("default='cuda:0'", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default='npu:0', help='device')", ""),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA; the NPU sync is also what makes the FPS number correct"),
])

E("spann3r_eval", "eval.py", "explicit_replacement",
  "HKUST-SAIL/spann3r eval.py (7Scenes/NRGBD/DTU accuracy-completion)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("parser.add_argument('--device', type=str, default='cuda', help='Device')", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default='npu', help='Device')", ""),
    C("start_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_event = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("end_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_event = torch.npu.Event(enable_timing=True)", ""),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA; needed before elapsed_time"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "memory headroom only"),
])

E("spann3r_scripts", "scripts/train_spann3r.sh", "explicit_replacement",
  "training launcher in the style of the Spann3R README", [
    C("=export OMP_NUM_THREADS=4", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be loaded before importing torch_npu (unless the image already exports it)"),
    C("CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 torchrun", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 torchrun --nnodes=1 --nproc_per_node=8 --master_port=29600 train.py \\",
      "selects all 8 devices, which is also what the NPU runtime exposes by default: inert on an 8-NPU node"),
])

# ----------------------------------------------------------------------------------------------------------
# CUT3R
# ----------------------------------------------------------------------------------------------------------
E("cut3r_demo", "demo.py", "explicit_replacement",
  "CUT3R/CUT3R demo.py (recurrent inference + viser viewer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('=default="cuda",', "device_type", "replace", True, 'default="npu",', "--device default"),
    C('if device == "cuda" and not torch.cuda.is_available():', "torch_cuda_api", "replace", False,
      'if device == "npu" and not torch.npu.is_available():',
      "CPU-fallback check only; with the npu default the unchanged condition is simply False"),
])

E("cut3r_train", "src/train.py", "explicit_replacement",
  "CUT3R/CUT3R src/train.py (accelerate-based training)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "accelerate imports torch_npu itself when it detects an NPU, and Accelerator supplies the device"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "memory headroom only"),
    C('"train_peak_mem_GB", torch.cuda.max_memory_allocated() / 2**30, step', "torch_cuda_api", "replace", False,
      '"train_peak_mem_GB", torch.npu.max_memory_allocated() / 2**30, step', "logs 0 otherwise"),
])

E("cut3r_accelerate_cfg", "config/accelerate_config.yaml", "explicit_replacement",
  "accelerate config used to launch CUT3R training (accelerate launch --config_file)", [
    C("=distributed_type: MULTI_GPU", "distributed_framework", "replace", False, "distributed_type: MULTI_NPU",
      "accelerate selects hccl/MULTI_NPU by device detection at runtime; launcher-side effect unconfirmed"),
])

E("cut3r_dpt_head", "src/dust3r/heads/dpt_head.py", "explicit_replacement",
  "CUT3R/CUT3R src/dust3r/heads/dpt_head.py (DPTPts3dPose head)", [
    C("=with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=False):",
      "pose head runs inside accelerate's bf16 NPU autocast during training: would silently run in bf16"),
    C("DPT heads + postprocess in fp32", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=False):  # DPT heads + postprocess in fp32",
      "same: DPT heads and exp/conf postprocess would run in bf16"),
])

E("cut3r_inference", "src/dust3r/inference.py", "explicit_replacement",
  "CUT3R/CUT3R src/dust3r/inference.py (loss_of_one_batch, TBPTT, recurrent inference)", [
    C("=with torch.cuda.amp.autocast(enabled=not inference):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=not inference):",
      "the prepared model's forward already runs under accelerate's autocast; region has no other compute"),
    C("=with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=False):",
      "once the outer context is an NPU autocast, only an NPU-typed disable keeps the criterion in fp32"),
    C("# truncated BPTT", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=not inference):  # truncated BPTT",
      "TBPTT calls the unwrapped model, bypassing accelerate's autocast: silently fp32 otherwise"),
    C("# chunked criterion in fp32", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=False):  # chunked criterion in fp32",
      "inside the (ported) TBPTT autocast region"),
    C("# single-step refinement stays in fp32", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=False):  # single-step refinement stays in fp32",
      "inference_step is not called under autocast: inert"),
    C("# recurrent rollout in half precision", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=True):  # recurrent rollout in half precision",
      "rollout would silently run in fp32"),
])
