# Labels for probe258 (speech anti-spoofing / audio deepfake detection, CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
SET_ENV_NOTE = ("CANN environment (LD_LIBRARY_PATH, ASCEND_OPP_PATH, ...) must be sourced before torch_npu loads; "
                "not required when the login shell / container image already exports it")

# ---------------------------------------------------------------- AASIST
E("aasist_main", "main.py", "explicit_replacement",
  "clovaai/aasist main.py (train/eval entry, JSON .conf, SWA)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script: registers the npu device type and torch.npu (explicit import still needed before torch_npu 2.5.1 autoload)"),
      C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'device = "npu" if torch.npu.is_available() else "cpu"',
        "torch.cuda.is_available() is False on an NPU host -> device='cpu' -> the next line raises 'GPU not detected!'"),
  ])

E("aasist_utils", "utils.py", "explicit_replacement",
  "clovaai/aasist utils.py (optimizer/scheduler factory, set_seed)",
  [
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "guard is False on NPU so the whole reproducibility block is silently skipped; torch.manual_seed above still seeds the NPU generator"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "lazy no-op without CUDA; redundant with torch.manual_seed but kept for intent"),
      C("torch.backends.cudnn.deterministic = str_to_bool(", "torch_cuda_api", "replace", False,
        "torch.use_deterministic_algorithms(str_to_bool(",
        "cudnn flag is accepted but meaningless on NPU (silent no-op); NPU determinism goes through torch.use_deterministic_algorithms"),
  ])

E("aasist_model", "models/AASIST.py", "device_branch_or_abstraction",
  "clovaai/aasist models/AASIST.py (sinc conv front-end + heterogeneous graph attention)",
  [])

E("aasist_run", "scripts/run_all.sh", "explicit_replacement",
  "fork-style launcher for AASIST / AASIST-L training over several seeds",
  [
      C("set -euo pipefail", "env_var", "npu_only_addition", False, SET_ENV, SET_ENV_NOTE),
      C("export CUDA_VISIBLE_DEVICES=${GPU_ID}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${GPU_ID}",
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: every run would land on NPU 0"),
      C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "device_capability_check", "replace", True,
        "npu-smi info",
        "nvidia-smi does not exist on an Ascend host; with set -e the script aborts here"),
  ])

# ---------------------------------------------------------------- RawNet2 / RawGAT-ST
E("rawnet2_main", "LA/Baseline-RawNet2/main.py", "explicit_replacement",
  "ASVspoof 2021 LA Baseline-RawNet2 main.py",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script needs torch_npu for the npu device"),
      C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
        "device = 'npu' if torch.npu.is_available() else 'cpu'",
        "falls back to CPU silently on an NPU host (training would crawl on CPU)"),
  ])

E("rawnet2_model", "LA/Baseline-RawNet2/model.py", "device_branch_or_abstraction",
  "ASVspoof 2021 Baseline-RawNet2 model.py (SincConv, FMS residual blocks, GRU, torchsummary-style helper)",
  [
      C("self.mp = nn.MaxPool1d(3)", "unsupported_op_workaround", "replace", False,
        "self.mp = nn.MaxPool2d((1, 3))  # on (B, C, 1, T) via unsqueeze, or F.max_pool1d",
        "Ascend's 2.7.1 API table marks nn.MaxPool1d as unsupported while F.max_pool1d is supported and aten max_pool1d "
        "decomposes to max_pool2d_with_indices (NPU kernel) - probably fine; unconfirmed"),
      C('def summary(self, input_size, batch_size=-1, device="cuda", print_fn=None):', "device_type", "replace", False,
        'def summary(self, input_size, batch_size=-1, device="npu", print_fn=None):',
        "debug helper only (not on the train/eval path)"),
      C('="cuda",', "device_type", "replace", False, '"npu",',
        "assert list must accept the new default"),
      C('if device == "cuda" and torch.cuda.is_available():', "torch_cuda_api", "replace", False,
        'if device == "npu" and torch.npu.is_available():',
        "guard is False on NPU -> CPU dummy input fed to an NPU model if the helper is called"),
      C("dtype = torch.cuda.FloatTensor", "torch_cuda_api", "replace", False, "dtype = torch.npu.FloatTensor",
        "legacy CUDA tensor type; debug helper only"),
  ])

E("rawgat_main", "main_RawGAT_ST.py", "explicit_replacement",
  "eurecom-asv/RawGAT-ST-antispoofing main_RawGAT_ST.py with a multi-GPU DataParallel fork",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpus", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpus",
        "device restriction silently ignored on Ascend; set before the NPU runtime initialises (lazy, so still in time here)"),
      C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
        "device = 'npu' if torch.npu.is_available() else 'cpu'",
        "silently trains on CPU otherwise"),
      C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
        "n_gpu = 1  # no DataParallel on NPU: one card per process",
        "returns 0 on NPU; max(n_gpu, 1) already gives the single-card batch size, so only the log line is wrong"),
      C("model = nn.DataParallel(model).to(device)", "distributed_framework", "replace", True,
        "model = model.to(device)  # nn.DataParallel is unsupported on Ascend; use DDP (torchrun + hccl) for multi-card",
        "nn.DataParallel is marked unsupported in Ascend's API table and by msFmkTransplt; at best it degrades to a single-card pass-through"),
      C("model.module.load_state_dict(strip_module_prefix(state))", "distributed_framework", "replace", True,
        "model.load_state_dict(strip_module_prefix(state))",
        "consequence of dropping the DataParallel wrapper (.module no longer exists)"),
      C("pin_memory=torch.cuda.is_available())", "pin_memory", "replace", False,
        "pin_memory=torch.npu.is_available())",
        "evaluates False on NPU -> host->device copies are not pinned (performance only)"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA; the NPU caching allocator is not trimmed"),
      C("torch.save(model.module.state_dict(),", "distributed_framework", "replace", True,
        "torch.save(model.state_dict(),",
        "consequence of dropping the DataParallel wrapper"),
  ])

# ---------------------------------------------------------------- SSL_Anti-spoofing / SLS
E("ssl_main", "SSL_Anti-spoofing/main_SSL_DF.py", "explicit_replacement",
  "TakHemlata/SSL_Anti-spoofing main_SSL_DF.py (XLS-R + AASIST, RawBoost args) with a --gpu fork",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on NPU -> silently trains on CPU"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "raises without CUDA once the guard selects the accelerator branch"),
      C("device = torch.device('cuda:{}'.format(args.gpu))", "device_type", "replace", True,
        "device = torch.device('npu:{}'.format(args.gpu))", "cuda device string"),
  ])

E("ssl_model", "SLSforADD/model.py", "explicit_replacement",
  "XLS-R (fairseq) + Sensitive Layer Selection classifier (SLSforADD-style model.py)",
  [
      C("self.ssl_model.cuda()", "tensor_to_device", "replace", True, "self.ssl_model.to(self.device)",
        "Module.cuda() fails on a host without CUDA; use the device handed in by main"),
  ])

E("ssl_env", "SSL_Anti-spoofing/environment.yml", "explicit_replacement",
  "conda environment for SSL_Anti-spoofing (pytorch 1.8.1 + cudatoolkit 11.1 + fairseq pin)",
  [
      C("=- nvidia", "torch_cuda_api", "removal", False, None,
        "NVIDIA conda channel only serves CUDA packages"),
      C("=- cudatoolkit=11.1", "torch_cuda_api", "removal", True, None,
        "CUDA runtime package; not available for aarch64 Ascend hosts and useless next to CANN"),
      C("=- cudnn=8.0.5", "torch_cuda_api", "removal", True, None, "CUDA-only library"),
      C("=- pytorch=1.8.1", "torch_cuda_api", "removal", True, None,
        "CUDA build from the pytorch channel; torch must come from pip at a version torch-npu pairs with"),
      C("=- torchaudio=0.8.1", "torch_cuda_api", "removal", True, None,
        "pins pytorch 1.8.1; reinstalled from pip to match the new torch"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch==2.1.0",
        "CPU/aarch64 torch wheel that torch-npu 2.1.0.postN is built against"),
      C("- git+https://github.com/facebookresearch/fairseq.git@", "import_torch_npu", "npu_only_addition", True,
        "- torch-npu==2.1.0.post12",
        "the torch_npu adapter itself (pairs with torch 2.1.0, Python 3.8-3.11)"),
      C("=- torchcontrib==0.0.2", "import_torch_npu", "npu_only_addition", True, "- torchaudio==2.1.0",
        "torchaudio matching the new torch"),
      C("=- nvidia-ml-py3==7.352.0", "torch_cuda_api", "removal", False, None,
        "NVML bindings install fine but have no NVML to talk to on Ascend"),
  ])

E("ssl_install", "SSL_Anti-spoofing/install.sh", "explicit_replacement",
  "SSL_Anti-spoofing README install steps turned into a script (torch 1.8.1+cu111 -f torch_stable)",
  [
      C("=set -e", "env_var", "npu_only_addition", False, SET_ENV, SET_ENV_NOTE),
      C("pip install torch==1.8.1+cu111", "torch_cuda_api", "replace", True,
        "pip install torch==2.1.0 torchaudio==2.1.0 --index-url https://download.pytorch.org/whl/cpu",
        "+cu111 wheels from the CUDA index; torch-npu needs the matching CPU (x86) / PyPI (aarch64) torch"),
      C("=pip install -r requirements.txt", "import_torch_npu", "npu_only_addition", True,
        "pip install torch-npu==2.1.0.post12",
        "install the adapter"),
      C("python -c \"import torch; assert torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "python -c \"import torch, torch_npu; assert torch.npu.is_available(), 'no NPU'; print(torch.__version__, torch_npu.__version__, torch.npu.get_device_name(0))\"",
        "assert fails on an NPU host and set -e makes the script exit non-zero"),
  ])

E("sls_ddp", "train_ddp.py", "explicit_replacement",
  "torchrun/DDP + AMP fine-tuning script for XLS-R + SLS/AASIST back-ends",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C('p.add_argument("--dist-backend"', "dist_backend", "replace", True,
        'p.add_argument("--dist-backend", dest="dist_backend", type=str, default="hccl")',
        "NCCL is not available on Ascend; HCCL is the collective backend"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
      C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
        'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
        "NCCL variable is ignored; HCCL_ASYNC_ERROR_HANDLING already defaults to 1 per MindCluster docs"),
      C('return torch.device("cuda", args.local_rank)', "device_type", "replace", True,
        'return torch.device("npu", args.local_rank)', "cuda device"),
      C("torch.cuda.manual_seed(s)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(s)",
        "lazy no-op without CUDA; torch.manual_seed already seeds the NPU"),
      C("=with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=args.amp):",
        "CUDA autocast is disabled (with a warning) on a host without CUDA: --amp silently trains in fp32"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA (lazy init)"),
      C("mem = torch.cuda.max_memory_allocated() / 2 ** 30", "torch_cuda_api", "replace", False,
        "mem = torch.npu.max_memory_allocated() / 2 ** 30",
        "returns 0 when CUDA is not initialised: log-only"),
      C("with torch.cuda.amp.autocast(enabled=args.amp):  # same precision as training", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=args.amp):  # same precision as training",
        "validation would silently run fp32"),
      C("stats = torch.tensor([tot_loss, tot_n, correct], dtype=torch.float64, device=device)",
        "unsupported_op_workaround", "replace", True,
        "stats = torch.tensor([tot_loss, tot_n, correct], dtype=torch.float32, device=device)",
        "HCCL all_reduce supports bf16/fp16/fp32/int32/int64/bool only (Ascend 2.7.1 table): the fp64 reduction fails on multi-card runs"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
        "CUDA GradScaler disables itself without CUDA: no loss scaling once autocast is NPU fp16"),
  ])

E("sls_launch", "scripts/launch_ddp.sh", "explicit_replacement",
  "torchrun multi-node launcher with NCCL env tuning",
  [
      C("=set -eo pipefail", "env_var", "npu_only_addition", False, SET_ENV, SET_ENV_NOTE),
      C("export CUDA_VISIBLE_DEVICES=${GPUS}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${GPUS}", "device list ignored by the Ascend runtime"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "logging only; level mapping unconfirmed"),
      C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=eth0",
        "NIC choice for the root-info handshake; HCCL otherwise picks by its own order and multi-node link setup can fail"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
        "no HCCL counterpart; ignored on Ascend"),
      C("--dist-backend nccl", "dist_backend", "replace", True, "--dist-backend hccl \\",
        "overrides the script default; NCCL unavailable"),
  ])

# ---------------------------------------------------------------- XLSR-Mamba
E("mamba_model", "XLSR-Mamba/model.py", "kernel_rewrite",
  "XLSR-Mamba (XLS-R + dual-column bidirectional Mamba) model.py on mamba-ssm",
  [
      C("from mamba_ssm.modules.mamba_simple import Mamba, Block", "custom_cuda_extension", "replace", True,
        "from models.mamba_torch import Mamba, Block  # pure-PyTorch selective scan (no CUDA kernels on NPU)",
        "mamba-ssm imports selective_scan_cuda / causal_conv1d CUDA extensions; cannot be built or imported on Ascend"),
      C("from mamba_ssm.ops.triton.layernorm import RMSNorm, layer_norm_fn, rms_norm_fn", "npu_fused_op", "replace", True,
        "from models.npu_norm import RMSNorm, layer_norm_fn, rms_norm_fn  # RMSNorm via torch_npu.npu_rms_norm",
        "Triton kernels; the guard leaves RMSNorm=None and rms_norm=True is the default -> model construction fails"),
      C("def __init__(self, d_model, n_layer, ssm_cfg=None, rms_norm=True, fused_add_norm=True):",
        "unsupported_op_workaround", "replace", True,
        "def __init__(self, d_model, n_layer, ssm_cfg=None, rms_norm=True, fused_add_norm=False):",
        "fused add+norm is a Triton kernel; MixerModel raises ImportError when it is requested without Triton"),
      C('ssm_cfg = {"d_state": 16, "d_conv": 4, "expand": 2, "use_fast_path": True}', "custom_cuda_extension", "replace", False,
        'ssm_cfg = {"d_state": 16, "d_conv": 4, "expand": 2, "use_fast_path": False}',
        "fast path = fused CUDA kernel; irrelevant for a pure-PyTorch Mamba (may be an unknown kwarg there)"),
      C('m = Model(a, "cuda").cuda()', "tensor_to_device", "replace", True, 'm = Model(a, "npu").npu()',
        "__main__ smoke test"),
      C('wav = torch.randn(2, 64600, device="cuda")', "tensor_to_device", "replace", True,
        'wav = torch.randn(2, 64600, device="npu")', "__main__ smoke test"),
  ])

E("mamba_req", "XLSR-Mamba/requirements.txt", "explicit_replacement",
  "XLSR-Mamba requirements (cu118 index, mamba-ssm, causal-conv1d, triton)",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "with the cu118 index, 'torch==2.1.0' would still resolve to 2.1.0+cu118 on x86"),
      C("=torch==2.1.1+cu118", "torch_cuda_api", "replace", True, "torch==2.1.0",
        "CUDA local-version wheel; torch-npu 2.1.0.postN requires exactly torch 2.1.0"),
      C("=torchaudio==2.1.1+cu118", "torch_cuda_api", "replace", True, "torchaudio==2.1.0",
        "must match torch"),
      C("=numpy==1.24.4", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "the Ascend adapter"),
      C("=triton==2.1.0", "triton_kernel_tuning", "removal", False, None,
        "only needed by mamba-ssm's Triton norms; stock Triton has no Ascend backend (triton-ascend is a separate package); "
        "no aarch64 wheel for 2.1.0 - unconfirmed"),
      C("=causal-conv1d==1.1.3.post1", "custom_cuda_extension", "removal", True, None,
        "builds a CUDA extension with nvcc at install time: pip install fails on Ascend"),
      C("=mamba-ssm==1.1.1", "custom_cuda_extension", "removal", True, None,
        "selective-scan CUDA extension; replaced by the vendored pure-PyTorch Mamba"),
  ])

# ---------------------------------------------------------------- Conformer back-end
E("conformer_model", "models/conformer_tcm.py", "device_branch_or_abstraction",
  "XLS-R + Conformer/TCM back-end with optional FlashAttention-2",
  [
      C("import torch.nn.functional as F", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "only needed for the optional npu_fusion_attention branch"),
      C("if (self.use_flash and HAS_FLASH_ATTN and key_padding_mask is None", "attention_kernel", "add_branch", False,
        'elif self.use_flash and key_padding_mask is None and q.device.type == "npu": out = torch_npu.npu_fusion_attention(q, k, v, self.heads, "BSND", keep_prob=1.0 - p, scale=1.0 / math.sqrt(self.head_dim))[0]',
        "flash-attn cannot be installed on Ascend; the SDPA fallback already works, a fused NPU branch is performance only"),
      C("with torch.backends.cuda.sdp_kernel(enable_flash=True", "attention_kernel", "replace", False,
        "with contextlib.nullcontext():  # torch.backends.cuda.sdp_kernel is CUDA-only",
        "sdp_kernel is marked unsupported on Ascend; it only toggles CUDA backend flags (silent no-op for NPU SDPA) - unconfirmed"),
  ])

# ---------------------------------------------------------------- NII project-NN-Pytorch-scripts
E("nii_main", "project/03-asvspoof-mega/lfcc-lcnn-lstmsum-p2s/main.py", "explicit_replacement",
  "nii-yamagishilab project-NN-Pytorch-scripts project main.py (LFCC-LCNN anti-spoofing)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("use_cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "use_npu = not args.no_cuda and torch.npu.is_available()", "False on NPU -> CPU training"),
      C('device = torch.device("cuda" if use_cuda else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if use_npu else "cpu")', "cuda device string"),
      C("checkpoint = torch.load(args.trained_model)", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(args.trained_model, map_location=device)",
        "resume checkpoints were written from CUDA tensors; without map_location deserialisation fails when CUDA is unavailable"),
  ])

E("nii_startup", "core_scripts/startup_config.py", "explicit_replacement",
  "project-NN-Pytorch-scripts core_scripts/startup_config.py",
  [
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "reproducibility block silently skipped on NPU"),
      C("torch.cuda.manual_seed_all(random_seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(random_seed)", "lazy no-op without CUDA"),
      C("torch.backends.cudnn.deterministic = cudnn_deterministic", "torch_cuda_api", "replace", False,
        "torch.use_deterministic_algorithms(cudnn_deterministic)", "cudnn flag has no effect on NPU kernels"),
  ])

E("nii_nnmanager", "core_scripts/nn_manager/nn_manager.py", "explicit_replacement",
  "project-NN-Pytorch-scripts core_scripts/nn_manager/nn_manager.py (train/inference loop)",
  [
      C("if args.multi_gpu_data_parallel and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
        "if args.multi_gpu_data_parallel and torch.npu.device_count() > 1:",
        "0 on NPU, so the opt-in DataParallel branch is silently skipped (the safe outcome); port together with a DDP rewrite"),
      C('nii_display.f_print("\\nUse %d GPUs\\n" % (torch.cuda.device_count()))', "torch_cuda_api", "replace", False,
        'nii_display.f_print("\\nUse %d NPUs\\n" % (torch.npu.device_count()))',
        "log line inside the opt-in branch"),
      C("pt_model = nn.DataParallel(pt_model)", "distributed_framework", "replace", False,
        "pt_model = torch.nn.parallel.DistributedDataParallel(pt_model, device_ids=[device.index])",
        "nn.DataParallel is unsupported on Ascend; unreachable while the guard counts CUDA devices"),
      C("=(torch.cuda.get_device_name(device)))", "torch_cuda_api", "replace", True,
        "(torch.npu.get_device_name(device)))",
        "raises on an NPU host (no CUDA driver / npu device passed to a CUDA API)"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA"),
      C("if torch.cuda.device_count() > 1 and args.multi_gpu_data_parallel:", "torch_cuda_api", "replace", False,
        "if torch.npu.device_count() > 1 and args.multi_gpu_data_parallel:", "warning only"),
      C('nii_display.f_print("\\nUse single GPU: %s\\n" % (torch.cuda.get_device_name(device)))', "torch_cuda_api", "replace", True,
        'nii_display.f_print("\\nUse single NPU: %s\\n" % (torch.npu.get_device_name(device)))',
        "raises on an NPU host before inference starts"),
  ])

E("nii_wrapper", "project/03-asvspoof-mega/00_demo.sh", "explicit_replacement",
  "project-NN-Pytorch-scripts 03-asvspoof-mega 00_demo.sh (parallel seeds, one GPU each)",
  [
      C("source $PWD/../../env.sh", "env_var", "npu_only_addition", False, SET_ENV, SET_ENV_NOTE),
      C("NUM_GPUS=$(nvidia-smi --list-gpus | wc -l)", "device_capability_check", "replace", False,
        "NUM_GPUS=$(ls /dev/davinci[0-9]* | wc -l)",
        "nvidia-smi missing -> prints 0; the value is only echoed"),
      C("CUDA_VISIBLE_DEVICES=${GPU} python main.py \\", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPU} python main.py \\",
        "ignored on Ascend: all parallel seeds land on NPU 0 (contention / OOM)"),
      C("CUDA_VISIBLE_DEVICES=${GPU_LIST[0]} python main.py --inference \\", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPU_LIST[0]} python main.py --inference \\",
        "device choice ignored on Ascend"),
  ])

# ---------------------------------------------------------------- SpeechBrain
E("sb_train", "recipes/ASVspoof2019/CM/train_spoof.py", "explicit_replacement",
  "SpeechBrain-style ASVspoof2019 CM recipe (Brain subclass with custom fp16 fit_batch)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script; SpeechBrain moves modules with .to(run_opts['device'])"),
      C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=False):",
        "once the outer autocast is NPU, a CUDA-disable no longer opts Fbank out: features silently computed under fp16"),
      C("with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
        "--auto_mix_prec silently runs fp32 on NPU"),
      C('run_opts["device"] = "cuda:0" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'run_opts["device"] = "npu:0" if torch.npu.is_available() else "cpu"', "defaults to CPU on NPU"),
  ])

E("sb_infer", "inference/liveness_check.py", "explicit_replacement",
  "SpeechBrain inference: spoofing CM (EncoderClassifier) + ECAPA ASV (SpeakerRecognition) liveness check",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C('DEFAULT_DEVICE = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'DEFAULT_DEVICE = "npu" if torch.npu.is_available() else "cpu"', "CPU fallback on NPU"),
      C('run_opts={"device": "cuda"},', "device_type", "replace", True, 'run_opts={"device": args.device},',
        "hard-coded CUDA for the ASV model: SpeechBrain's .to('cuda') fails"),
      C("with torch.cuda.amp.autocast(dtype=torch.float16, enabled=self.args.fp16):", "amp", "replace", True,
        "with torch.npu.amp.autocast(dtype=torch.float16, enabled=self.args.fp16):", "--fp16 silently ignored"),
      C('if str(self.device).startswith("cuda"): torch.cuda.synchronize()', "torch_cuda_api", "replace", False,
        'if str(self.device).startswith("npu"): torch.npu.synchronize()',
        "latency numbers only: without the sync the async NPU queue makes them too small"),
  ])

E("sb_run", "recipes/ASVspoof2019/CM/run_ddp.sh", "explicit_replacement",
  "SpeechBrain recipe launcher (torchrun DDP + scoring)",
  [
      C("=set -e", "env_var", "npu_only_addition", False, SET_ENV, SET_ENV_NOTE),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
        "device list ignored on Ascend"),
      C("--distributed_backend=nccl", "dist_backend", "replace", True, "--distributed_backend=hccl \\",
        "SpeechBrain passes it to init_process_group"),
      C("--device=cuda:0", "device_type", "replace", True, "--device=npu:0 \\", "CUDA device string"),
  ])

# ---------------------------------------------------------------- HF transformers
E("hf_train", "train_wav2vec2_deepfake.py", "explicit_replacement",
  "Hugging Face Trainer fine-tuning of wav2vec2 / XLS-R for audio deepfake classification",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "transformers' is_torch_npu_available() imports torch_npu itself; explicit import is belt and braces"),
      C("if args.bf16 and not torch.cuda.is_bf16_supported():", "device_capability_check", "replace", True,
        "if args.bf16 and not torch.npu.is_bf16_supported():",
        "queries the current CUDA device: raises without CUDA"),
      C('ddp_backend="nccl",', "dist_backend", "replace", True, 'ddp_backend="hccl",',
        "multi-card runs (torchrun) would init NCCL"),
      C('model = model.to("cuda").eval()', "tensor_to_device", "replace", True, 'model = model.to("npu").eval()',
        "hard-coded cuda"),
      C('inputs = {k: v.to("cuda") for k, v in inputs.items()}', "tensor_to_device", "replace", True,
        'inputs = {k: v.to("npu") for k, v in inputs.items()}', "hard-coded cuda"),
  ])

# ---------------------------------------------------------------- tools
E("bench_rtf", "tools/benchmark_rtf.py", "explicit_replacement",
  "latency / RTF benchmark with CUDA events and torch.profiler",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler", "torch_cuda_api", "replace", True,
        "from torch_npu.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler",
        "torch.profiler does not see NPU kernels; Ascend maps profile/schedule/tensorboard_trace_handler to torch_npu.profiler"),
      C("torch.cuda.synchronize()  # drain the warm-up launches", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # drain the warm-up launches", "raises without CUDA"),
      C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "starter = torch.npu.Event(enable_timing=True)", "CUDA events"),
      C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "ender = torch.npu.Event(enable_timing=True)", "CUDA events"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C("activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],", "torch_cuda_api", "replace", True,
        "activities=[ProfilerActivity.CPU, ProfilerActivity.NPU],", "no CUDA activity on Ascend"),
      C('print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=15))', "torch_cuda_api", "replace", True,
        'print("trace written to", trace_dir)  # inspect with MindStudio Insight / msprof-analyze',
        "key_averages is unsupported in Ascend's table and there is no cuda_time_total column"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "raises without CUDA"),
      C('device = torch.device("cuda", args.gpu)', "device_type", "replace", True,
        'device = torch.device("npu", args.gpu)', "cuda device"),
      C("gpu_name = torch.cuda.get_device_name(args.gpu)", "torch_cuda_api", "replace", True,
        "gpu_name = torch.npu.get_device_name(args.gpu)", "raises without CUDA"),
      C("total_mem = torch.cuda.get_device_properties(args.gpu).total_memory / 2 ** 30", "torch_cuda_api", "replace", True,
        "total_mem = torch.npu.get_device_properties(args.gpu).total_memory / 2 ** 30",
        "raises without CUDA; total_memory is one of the properties NPU does report"),
      C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
        "model = torch.compile(model)",
        "max-autotune relies on Triton autotuning + CUDA graphs; NPU graph mode differs (backend='npugraphs' ~ cudagraphs) - unconfirmed"),
      C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats(device)", "a CUDA API handed an npu device raises"),
      C("peak = torch.cuda.max_memory_allocated(device) / 2 ** 20", "torch_cuda_api", "replace", True,
        "peak = torch.npu.max_memory_allocated(device) / 2 ** 20",
        "with an explicit npu device the CUDA API raises (not just returns 0)"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA"),
  ])

E("export_onnx", "tools/export_onnx.py", "explicit_replacement",
  "TorchScript / ONNX export of AASIST-L for a serving stack, checked with ONNX Runtime",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "Module.cuda() fails"),
      C("example = torch.randn(args.batch, NB_SAMP).cuda()", "tensor_to_device", "replace", True,
        "example = torch.randn(args.batch, NB_SAMP).npu()", "Tensor.cuda() fails"),
      C('providers = ["CUDAExecutionProvider", "CPUExecutionProvider"]', "device_type", "replace", False,
        'providers = ["CANNExecutionProvider", "CPUExecutionProvider"]',
        "ORT falls back to CPU when the CUDA EP is missing, so the check still passes; CANN EP needs an onnxruntime-cann build - unconfirmed"),
  ])

E("gpu_select", "utils/gpu_select.py", "device_branch_or_abstraction",
  "lab helper picking the emptiest GPU via NVML / nvidia-smi and setting CUDA_VISIBLE_DEVICES",
  [
      C('["nvidia-smi", "--query-gpu=index,memory.free,utilization.gpu",', "device_capability_check", "replace", True,
        '["npu-smi", "info", "-t", "usages", "-i", str(npu_id)],',
        "nvidia-smi missing -> OSError caught upstream -> auto-selection silently disabled, every job on device 0"),
      C('visible = os.environ.get("CUDA_VISIBLE_DEVICES")', "env_var", "replace", True,
        'visible = os.environ.get("ASCEND_RT_VISIBLE_DEVICES")',
        "an existing Ascend restriction (e.g. from the scheduler) would be overridden"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = chosen', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = chosen', "ignored by the Ascend runtime"),
      C("if prefer_gpu and torch.cuda.is_available():", "device_type", "add_branch", True,
        'if prefer_gpu and hasattr(torch, "npu") and torch.npu.is_available(): return torch.device("npu:0")',
        "without an NPU branch get_device() returns cpu"),
  ])

E("augment", "data/gpu_augment.py", "explicit_replacement",
  "batched on-GPU RawBoost-style waveform augmentation (noise, notch, RIR, mu-law)",
  [
      C("white = torch.cuda.FloatTensor(B, T).normal_()", "torch_cuda_api", "replace", True,
        "white = torch.randn(B, T, device=x.device, dtype=x.dtype)", "legacy CUDA tensor constructor fails"),
      C('def __init__(self, rir_paths, max_len=16000, device="cuda"):', "device_type", "replace", False,
        'def __init__(self, rir_paths, max_len=16000, device="npu"):',
        "default unused here (GPUAugment always passes its device)"),
      C('self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'self.device = device or ("npu" if torch.npu.is_available() else "cpu")',
        "RIR bank would stay on CPU while batches are on the NPU -> device mismatch"),
      C("if not x.is_cuda:", "device_type", "replace", True, "if x.device.type != \"npu\":",
        "is_cuda is False for NPU tensors, so the branch always fires"),
      C("x = x.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "x = x.to(self.device, non_blocking=True)",
        "Tensor.cuda() fails"),
  ])

E("dockerfile", "docker/Dockerfile", "explicit_replacement",
  "training/scoring image on nvidia/cuda devel base with fairseq + flash-attn",
  [
      C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        "no CANN toolkit/driver libs in the CUDA image; torch_npu cannot load"),
      C("NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "read only by the NVIDIA container runtime; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES / --device mounts"),
      C("NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "NVIDIA runtime only"),
      C('TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6;9.0"', "env_var", "removal", False, None,
        "only steers nvcc extension builds"),
      C("RUN pip install torch==2.1.2 torchaudio==2.1.2 --index-url https://download.pytorch.org/whl/cu118",
        "torch_cuda_api", "replace", True,
        "RUN pip install torch==2.1.0 torchaudio==2.1.0 --index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheels, and 2.1.2 has no torch-npu pairing"),
      C("=RUN pip install -r requirements.txt", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install torch-npu==2.1.0.post12", "the adapter"),
      C("RUN pip install flash-attn==2.5.8 --no-build-isolation", "attention_kernel", "removal", True, None,
        "flash-attn compiles CUDA kernels: the image build fails"),
      C("HEALTHCHECK CMD nvidia-smi || exit 1", "device_capability_check", "replace", False,
        "HEALTHCHECK CMD npu-smi info || exit 1", "container reported unhealthy, job itself unaffected"),
  ])

E("pyproject", "pyproject.toml", "explicit_replacement",
  "pyproject of a deepfake-detection package with uv CUDA index and GPU extras",
  [
      C('"torch==2.1.2",', "import_torch_npu", "replace", True, '"torch==2.1.0",',
        "torch-npu wheels pair with an exact torch version (2.1.0 here); 2.1.2 has none"),
      C('"torchaudio==2.1.2",', "import_torch_npu", "replace", True, '"torchaudio==2.1.0",', "must match torch"),
      C('"numpy>=1.23,<2",', "import_torch_npu", "npu_only_addition", True, '"torch-npu==2.1.0.post12",',
        "the adapter"),
      C('"onnxruntime-gpu>=1.17",', "torch_cuda_api", "replace", False, '"onnxruntime>=1.17",',
        "optional serve extra; CUDA ORT build has no Ascend use - unconfirmed"),
      C("\"flash-attn>=2.5; platform_system == 'Linux'\",", "attention_kernel", "removal", False, None,
        "optional extra; fails to build without CUDA only if requested"),
      C('"nvidia-ml-py>=12.535",', "torch_cuda_api", "removal", False, None, "NVML has nothing to talk to"),
      C('url = "https://download.pytorch.org/whl/cu121"', "torch_cuda_api", "replace", True,
        'url = "https://download.pytorch.org/whl/cpu"',
        "uv sources torch/torchaudio from the CUDA index (CUDA build on x86, no aarch64 wheels)"),
  ])

E("config_yaml", "configs/wavlm_aasist_df.yaml", "explicit_replacement",
  "OmegaConf experiment config for a WavLM + AASIST trainer",
  [
      C("device: cuda:0", "device_type", "replace", True, "device: npu:0", "consumed as torch.device"),
      C("dist_backend: nccl", "dist_backend", "replace", True, "dist_backend: hccl", "NCCL unavailable"),
      C("=device: cuda", "device_type", "replace", True, "device: npu", "eval device"),
  ])

E("eval_score", "eval/score_eval.py", "explicit_replacement",
  "stand-alone scorer for ASVspoof 2021 LA/DF and In-the-Wild with EER",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
        "hard-coded cuda"),
      C("state = torch.load(args.ckpt)", "tensor_to_device", "replace", True,
        'state = torch.load(args.ckpt, map_location="cpu")',
        "checkpoints saved from CUDA cannot be deserialised without map_location when CUDA is unavailable"),
      C("batch_x = batch_x.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "batch_x = batch_x.to(device, non_blocking=True)", "Tensor.cuda() fails"),
      C('with torch.autocast("cuda", dtype=torch.float16, enabled=args.fp16):', "amp", "replace", True,
        'with torch.autocast("npu", dtype=torch.float16, enabled=args.fp16):',
        "CUDA autocast disabled without CUDA: --fp16 silently ignored"),
  ])
