ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


E("mm01", "comfy/model_management.py", "device_branch_or_abstraction",
  "ComfyUI comfy/model_management.py (device selection, free-memory accounting, dtype heuristics)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401  (then npu_available = torch.npu.is_available())",
      "the module needs torch.npu to exist before get_torch_device() runs at import time; the NPU branches below use it"),
    C("return torch.device(torch.cuda.current_device())", "device_type", "add_branch", True,
      "elif is_ascend_npu(): return torch.device('npu', torch.npu.current_device())",
      "torch.cuda.current_device() raises on a host without CUDA; default device must become npu:N"),
    C("stats = torch.cuda.memory_stats(device=dev)", "torch_cuda_api", "add_branch", True,
      "stats = torch.npu.memory_stats(dev)",
      "get_total_memory runs at import; torch.cuda.memory_stats fails without CUDA — NPU branch uses torch.npu.memory_stats (same keys)"),
    C("_, mem_total_cuda = torch.cuda.mem_get_info(dev)", "torch_cuda_api", "add_branch", True,
      "_, mem_total_npu = torch.npu.mem_get_info(dev)",
      "torch.npu.mem_get_info is supported (2.7.1 list)"),
    C("OOM_EXCEPTION = torch.cuda.OutOfMemoryError", "torch_cuda_api", "replace", False,
      "OOM_EXCEPTION = (torch.cuda.OutOfMemoryError, RuntimeError)",
      "unconfirmed whether NPU allocator failures derive from torch.OutOfMemoryError; if not, the tiled-VAE / OOM retry paths never trigger"),
    C("if ENABLE_PYTORCH_ATTENTION == False and args.use_split_cross_attention == False and args.use_quad_cross_attention == False:",
      "attention_kernel", "add_branch", False,
      "if is_ascend_npu() and not args.use_split_cross_attention and not args.use_quad_cross_attention: ENABLE_PYTORCH_ATTENTION = True",
      "default only turns SDPA on for NVIDIA; on NPU it stays on split attention (works, slow) — SDPA dispatches to NPU flash attention"),
    C("stats = torch.cuda.memory_stats(dev)", "torch_cuda_api", "add_branch", True,
      "elif is_ascend_npu(): stats = torch.npu.memory_stats(dev)",
      "get_free_memory is called on every model load; CUDA call fails on NPU host"),
    C("mem_free_cuda, _ = torch.cuda.mem_get_info(dev)", "torch_cuda_api", "add_branch", True,
      "mem_free_npu, _ = torch.npu.mem_get_info(dev)",
      "free device memory must come from the NPU runtime"),
    C("props = torch.cuda.get_device_properties(device)", "device_capability_check", "add_branch", True,
      "if is_ascend_npu(): return True",
      "torch.npu.get_device_properties has no major/minor (knowledge §2.8); fp16 is fine on Ascend so short-circuit before the CUDA capability check"),
    C("props = torch.cuda.get_device_properties(device or get_torch_device())", "device_capability_check", "add_branch", True,
      "if is_ascend_npu(): return True",
      "same: bf16 supported on Atlas A2/A3; props.major missing on NPU"),
    C("elif torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
      "elif is_ascend_npu(): torch.npu.empty_cache()",
      "on NPU torch.cuda.is_available() is False so the cache is never released between model swaps; the caching allocator still reuses its blocks, so this is fragmentation/headroom, not a failure"),
]),

E("cli02", "comfy/cli_args.py", "device_branch_or_abstraction",
  "ComfyUI comfy/cli_args.py (argparse flags: --cuda-device, --lowvram/--highvram/--gpu-only, attention selectors)", [])

E("att03", "comfy/ldm/modules/attention.py", "device_branch_or_abstraction",
  "ComfyUI comfy/ldm/modules/attention.py (split / sub-quad / xformers / pytorch / sage / flash attention dispatch)", [
    C("with torch.autocast(enabled=False, device_type='cuda'):", "amp", "replace", False,
      "with torch.autocast(enabled=False, device_type=q.device.type):",
      "fp32 upcast guard names the cuda autocast; on NPU it does not disable an active npu autocast (ComfyUI normally runs without autocast, so rarely matters)"),
    C('with torch.autocast(enabled=False, device_type="cuda"):', "amp", "replace", False,
      "with torch.autocast(enabled=False, device_type=q.device.type):",
      "same upcast guard in attention_split"),
    C('@torch.library.custom_op("flash_attention::flash_attn", mutates_args=(), device_types="cuda")', "attention_kernel", "replace", False,
      '@torch.library.custom_op("flash_attention::flash_attn", mutates_args=(), device_types="npu")',
      "only used behind --use-flash-attention; the flash-attn package cannot be installed on NPU, the wrapper would call npu_fusion_attention instead"),
    C("return flash_attn_func(q, k, v, dropout_p=dropout_p, causal=causal)", "attention_kernel", "replace", False,
      'return torch_npu.npu_fusion_attention(q, k, v, q.shape[2], "BSND", keep_prob=1.0 - dropout_p, scale=q.shape[-1] ** -0.5)[0]',
      "flash_attn_func -> npu_fusion_attention (BSND layout matches flash-attn's [B,S,N,D]); opt-in path, default SDPA path already works"),
]),

E("mn04", "main.py", "explicit_replacement",
  "ComfyUI main.py (startup: --cuda-device -> CUDA_VISIBLE_DEVICES, prestartup scripts, prompt worker)", [
    C("os.environ['CUDA_VISIBLE_DEVICES'] = str(args.cuda_device)", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(args.cuda_device)",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; --cuda-device would silently pick NPU 0"),
]),

E("cm05", "cuda_malloc.py", "explicit_replacement",
  "ComfyUI cuda_malloc.py (nvidia-smi probe, PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync)", [
    C("os.environ['PYTORCH_CUDA_ALLOC_CONF'] = env_var", "env_var", "replace", False,
      "os.environ['PYTORCH_NPU_ALLOC_CONF'] = 'expandable_segments:True'",
      "only reached with an explicit --cuda-malloc; the NPU caching allocator reads PYTORCH_NPU_ALLOC_CONF and has no cudaMallocAsync backend — otherwise a silent no-op"),
]),

E("mp06", "comfy/model_patcher.py", "device_branch_or_abstraction",
  "ComfyUI comfy/model_patcher.py (lowvram partial load/unload, LoRA weight patching)", [])

E("rq08", "requirements.txt", "explicit_replacement",
  "ComfyUI requirements.txt with a CUDA 12.4 extra index", [
    C("--extra-index-url https://download.pytorch.org/whl/cu124", "torch_cuda_api", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu pairs with the CPU torch wheel (x86) / plain PyPI torch (aarch64); the cu124 index pulls a CUDA build"),
    C("=torch", "torch_cuda_api", "replace", True, "torch==2.5.1",
      "torch must equal the torch_npu wheel's torch version exactly; an unpinned torch drifts past it"),
    C("=torchaudio", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.5.1",
      "the Ascend adapter itself must be installed next to torch"),
]),

E("dk09", "Dockerfile", "explicit_replacement",
  "community ComfyUI Dockerfile on nvidia/cuda base with cu124 torch, xformers and TensorRT node", [
    C("FROM nvidia/cuda:${CUDA_VERSION}-cudnn-runtime-ubuntu22.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.11",
      "the image must carry the CANN toolkit/runtime that torch_npu links against; the CUDA base has none"),
    C("NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "replace", False,
      "ASCEND_VISIBLE_DEVICES=0 \\",
      "NVIDIA container-toolkit variable is ignored; Ascend docker runtime uses ASCEND_VISIBLE_DEVICES (unconfirmed in knowledge; devices may instead be passed with --device)"),
    C("RUN pip install --no-cache-dir torch==2.5.1 torchvision==0.20.1 torchaudio==2.5.1 \\", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install --no-cache-dir torch-npu==2.5.1",
      "torch_npu wheel matching torch 2.5.1"),
    C("=--index-url https://download.pytorch.org/whl/cu124", "torch_cuda_api", "replace", True,
      "--index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index -> CPU wheels (x86) for use with torch_npu"),
    C("&& pip install --no-cache-dir xformers==0.0.28.post3 --index-url https://download.pytorch.org/whl/cu124", "attention_kernel", "removal", True, None,
      "xformers has no NPU backend and the cu124 wheel drags CUDA torch back in"),
    C("&& git clone https://github.com/comfyanonymous/ComfyUI_TensorRT.git \\", "custom_cuda_extension", "removal", False, None,
      "TensorRT node only works on NVIDIA; cloning is harmless but the node is dead weight (its requirements install tensorrt)"),
]),

E("sh10", "entrypoint.sh", "explicit_replacement",
  "container entrypoint for ComfyUI (GPU pinning, nvidia-smi banner, allocator env, custom-node requirements)", [
    C("=cd /opt/ComfyUI", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (LD_LIBRARY_PATH, ASCEND_*) must be sourced before python imports torch_npu"),
    C('export CUDA_VISIBLE_DEVICES="${GPU_ID}"', "env_var", "replace", True,
      'export ASCEND_RT_VISIBLE_DEVICES="${GPU_ID}"',
      "per-replica device pinning is silently ignored by the Ascend runtime"),
    C("nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader", "torch_cuda_api", "replace", False,
      "npu-smi info",
      "banner only, guarded by command -v; npu-smi is the Ascend tool"),
    C('print("cuda available:", torch.cuda.is_available(), "devices:", torch.cuda.device_count())', "torch_cuda_api", "replace", False,
      'print("npu available:", torch.npu.is_available(), "devices:", torch.npu.device_count())',
      "diagnostic print; reports False/0 on NPU host but does not fail"),
    C('export PYTORCH_CUDA_ALLOC_CONF="${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True}"', "env_var", "replace", False,
      'export PYTORCH_NPU_ALLOC_CONF="${PYTORCH_NPU_ALLOC_CONF:-expandable_segments:True}"',
      "fragmentation tuning; NPU allocator reads PYTORCH_NPU_ALLOC_CONF (expandable_segments needs HDK >= 23.0.0)"),
]),

E("env11", "environment.yml", "explicit_replacement",
  "conda environment for ComfyUI with pytorch-cuda and xformers", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None, "NVIDIA conda channel only serves CUDA runtime packages"),
    C("=- pytorch=2.4.1", "torch_cuda_api", "replace", True, "- pytorch=2.4.0=*cpu*",
      "torch_npu 2.4.0.postN needs exactly torch 2.4.0 (CPU build)"),
    C("=- pytorch-cuda=12.1", "torch_cuda_api", "removal", True, None,
      "selects the CUDA build of pytorch; not resolvable / wrong on an Ascend host"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.4.0.post2",
      "torch_npu is pip-only; add it to the pip section"),
    C("=- xformers==0.0.28.post1", "attention_kernel", "removal", True, None,
      "xformers has no NPU build"),
]),

E("pp12", "custom_nodes/ComfyUI_TensorRT/pyproject.toml", "explicit_replacement",
  "comfyanonymous/ComfyUI_TensorRT pyproject.toml", [
    C('"tensorrt>=10.0.1",', "custom_cuda_extension", "removal", True, None,
      "TensorRT is NVIDIA-only; on Ascend the node has no backend (nearest analogue: torchair / ATB, a rewrite, not a dependency swap)"),
]),

E("trt13", "custom_nodes/ComfyUI_TensorRT/tensorrt_loader.py", "kernel_rewrite",
  "comfyanonymous/ComfyUI_TensorRT tensorrt_loader.py (TrTUnet running a serialized engine on the torch CUDA stream)", [
    C("=import tensorrt as trt", "custom_cuda_extension", "replace", True,
      "try: import tensorrt as trt\nexcept ImportError: trt = None  # no TensorRT on Ascend; node disabled",
      "TensorRT is NVIDIA-only; the import fails on an NPU host and the node pack fails to load"),
    C("stream = torch.cuda.default_stream(x.device)", "torch_cuda_api", "replace", True,
      "stream = torch.npu.default_stream(x.device)",
      "x lives on npu; torch.cuda.default_stream fails there — and the engine execution itself would need an Ascend runtime (ACL/ATB om model), i.e. a rewrite"),
]),

E("ipa14", "custom_nodes/ComfyUI_IPAdapter_plus/utils.py", "device_branch_or_abstraction",
  "cubiq/ComfyUI_IPAdapter_plus utils.py (preset file lookup, insightface loader, masked CLIP-vision encode)", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "model_management.soft_empty_cache()",
      "on an NPU host torch.cuda.empty_cache() is a silent no-op (CUDA never initialised) so the NPU cache is not released; go through ComfyUI's device-aware helper"),
]),

E("ad15", "custom_nodes/ComfyUI-AnimateDiff-Evolved/animatediff/motion_module_ad.py", "device_branch_or_abstraction",
  "Kosinkadink/ComfyUI-AnimateDiff-Evolved motion_module_ad.py (temporal VersatileAttention reusing ComfyUI attention choice)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "debug-only memory log; silently skipped on NPU"),
    C("alloc = torch.cuda.memory_allocated() / 2**20", "torch_cuda_api", "replace", False,
      "alloc = torch.npu.memory_allocated() / 2**20", "debug-only"),
    C("peak = torch.cuda.max_memory_allocated() / 2**20", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / 2**20", "debug-only"),
]),

E("kj16", "custom_nodes/ComfyUI-KJNodes/nodes/model_optimization_nodes.py", "device_branch_or_abstraction",
  "kijai/ComfyUI-KJNodes model_optimization_nodes.py (sage attention patching, cublas linear, torch.compile, VRAM debug)", [
    C("=from sageattention import sageattn", "attention_kernel", "replace", False,
      "from comfy.ldm.modules.attention import attention_pytorch  # SDPA -> NPU FA; sageattention has CUDA/Triton kernels only",
      "opt-in (default 'disabled'); SageAttention kernels are CUDA/Triton-only, selecting a sage mode on NPU raises ImportError"),
    C("from cublas_ops import CublasLinear", "custom_cuda_extension", "removal", False, None,
      "torch-cublas-hgemm is an nvcc extension; only reached when patch_cublaslinear is enabled"),
    C('"backend": (["inductor", "cudagraphs"],),', "compile_mode", "replace", False,
      '"backend": (["inductor", "npugraphs"],),',
      "cudagraphs backend has no NPU meaning; torch_npu offers npugraphs / inductor (>=2.6). User-selected"),
    C("peak = torch.cuda.max_memory_allocated() / 1024**3", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / 1024**3",
      "reports 0 on an NPU host (CUDA never initialised) — wrong diagnostic, not a failure"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "with no device argument this calls torch.cuda.current_device() -> lazy CUDA init raises on an NPU host"),
]),

E("cry17", "custom_nodes/ComfyUI-Crystools/general/gpu.py", "device_branch_or_abstraction",
  "crystian/ComfyUI-Crystools general/gpu.py (pynvml / jtop GPU monitor)", [
    C("self.pynvml.nvmlInit()", "torch_cuda_api", "add_branch", False,
      "elif torch.npu.is_available(): self.npuLoaded = True  # use torch.npu.mem_get_info / torch.npu.utilization",
      "NVML init fails and is caught; monitoring silently disabled on NPU — needs an NPU data source (pynvml has no Ascend equivalent)"),
    C("self.cudaDevice = 'cpu' if self.torchDevice == 'cpu' else 'cuda'", "device_type", "replace", False,
      "self.cudaDevice = 'cpu' if self.torchDevice == 'cpu' else ('npu' if 'npu' in self.torchDevice else 'cuda')",
      "label shown in the UI only"),
    C("self.cudaAvailable = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "self.cudaAvailable = torch.cuda.is_available() or (hasattr(torch, 'npu') and torch.npu.is_available())",
      "gates the status loop; False on NPU -> monitor empty, no crash"),
]),

E("ut18", "comfy/utils.py", "device_branch_or_abstraction",
  "ComfyUI comfy/utils.py (load_torch_file, state-dict helpers, bislerp/common_upscale)", []),

E("kd19", "comfy/k_diffusion/sampling.py", "device_branch_or_abstraction",
  "ComfyUI comfy/k_diffusion/sampling.py (Karras schedules, BrownianTree noise, euler / dpmpp_2m_sde(_gpu))", []),

E("srv20", "server_stats.py", "explicit_replacement",
  "ComfyUI server.py /system_stats and /free routes plus a per-GPU listing endpoint", [
    C("for i in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", True,
      "for i in range(torch.npu.device_count()):",
      "returns 0 on an NPU host -> endpoint silently lists no devices"),
    C('dev = torch.device("cuda", i)', "device_type", "replace", True, 'dev = torch.device("npu", i)', "device string"),
    C("props = torch.cuda.get_device_properties(i)", "torch_cuda_api", "replace", True,
      "props = torch.npu.get_device_properties(i)", "CUDA query fails without CUDA"),
    C('"compute_capability": f"{props.major}.{props.minor}",', "device_capability_check", "replace", True,
      '"compute_capability": None,',
      "NPU device properties carry no major/minor (knowledge §2.8)"),
    C('"multi_processor_count": props.multi_processor_count,', "device_capability_check", "replace", True,
      '"cube_core_num": props.cube_core_num,',
      "NPU props expose only name/total_memory/L2_cache_size/cube_core_num/vector_core_num"),
    C("free, total = torch.cuda.mem_get_info(i)", "torch_cuda_api", "replace", True,
      "free, total = torch.npu.mem_get_info(i)", "supported NPU counterpart"),
    C('"torch_allocated": torch.cuda.memory_allocated(dev),', "torch_cuda_api", "replace", True,
      '"torch_allocated": torch.npu.memory_allocated(dev),', "CUDA allocator stats for an npu device"),
]),

E("cna21", "custom_nodes/comfyui_controlnet_aux/__init__.py", "device_branch_or_abstraction",
  "Fannovel16/comfyui_controlnet_aux __init__.py (node loading, preprocessor device pick, ORT providers)", [
    C('ORT_PROVIDERS = ["CUDAExecutionProvider",', "device_type", "replace", False,
      'ORT_PROVIDERS = ["CANNExecutionProvider", "CUDAExecutionProvider", "DirectMLExecutionProvider", "OpenVINOExecutionProvider", "ROCMExecutionProvider", "CPUExecutionProvider", "CoreMLExecutionProvider"]',
      "DWPose falls back to CPUExecutionProvider on NPU (works, slow); onnxruntime's CANN provider is unconfirmed in knowledge"),
    C("if torch.cuda.is_available():", "device_type", "add_branch", True,
      'if hasattr(torch, "npu") and torch.npu.is_available(): return "npu"',
      "without it every preprocessor silently runs on CPU on an Ascend host"),
]),

E("trq22", "custom_nodes/ComfyUI_TensorRT/requirements.txt", "explicit_replacement",
  "comfyanonymous/ComfyUI_TensorRT requirements.txt", [
    C("=tensorrt>=10.0.1", "custom_cuda_extension", "removal", True, None,
      "NVIDIA TensorRT; no Ascend build (ComfyUI-Manager / entrypoint loops would try to install it)"),
]),

E("fl23", "comfy/float.py", "device_branch_or_abstraction",
  "ComfyUI comfy/float.py (stochastic rounding to fp8 with a seeded device generator)", []),

E("up24", "comfy_extras/nodes_upscale_model.py", "device_branch_or_abstraction",
  "ComfyUI comfy_extras/nodes_upscale_model.py (spandrel upscale with OOM tile back-off)", []),

E("run25", "run_nvidia_gpu.sh", "explicit_replacement",
  "per-GPU ComfyUI launcher shell script (one instance per card)", [
    C('=cd "$HERE"', "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN env must be sourced before python starts"),
    C("export CUDA_DEVICE_ORDER=PCI_BUS_ID", "env_var", "removal", False, None, "CUDA-runtime-only; no-op on NPU"),
    C("export CUDA_MODULE_LOADING=LAZY", "env_var", "removal", False, None, "CUDA-runtime-only; no-op on NPU"),
    C("export TORCH_CUDNN_V8_API_ENABLED=1", "env_var", "removal", False, None, "cuDNN-only; no-op on NPU"),
    C('nvidia-smi -i "${GPU}" --query-gpu=name,memory.used,memory.total --format=csv,noheader || true', "torch_cuda_api", "replace", False,
      'npu-smi info -t usages -i "${GPU}" || true', "banner only, failure already tolerated"),
]),

E("ins26", "custom_nodes/comfyui-reactor-node/install.py", "explicit_replacement",
  "Gourieff/comfyui-reactor-node install.py (picks onnxruntime-gpu vs onnxruntime from torch.cuda)", [
    C('ort = "onnxruntime-gpu"', "torch_cuda_api", "replace", True,
      'ort = "onnxruntime"',
      "on an NPU host torch.cuda is unavailable but none of the elif checks match, so it still installs onnxruntime-gpu (no aarch64 wheel -> install raises; on x86 a useless CUDA build)"),
]),
