"""Labels for probe34 (hand-written synthetic upstream files; see ../README.md).

C(sub, kind, change_type, required, ported, note) -> one labelled change; `sub` must match exactly one line
("=text": the stripped line equals text).
E(id, path, style, imitates, changes) -> one file entry.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required,
            "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


R, A, B, X = "replace", "npu_only_addition", "add_branch", "removal"

T, F = True, False

# ----------------------------------------------------------------------------------------------------------
# AUTOMATIC1111 stable-diffusion-webui
# ----------------------------------------------------------------------------------------------------------

E("a1111_devices", "modules/devices.py", "device_branch_or_abstraction",
  "AUTOMATIC1111/stable-diffusion-webui modules/devices.py (device pick, torch_gc, autocast helpers)", [
    C("=import torch", "import_torch_npu", A, T, "import torch_npu  # noqa: F401",
      "module becomes the place that picks and queries the npu device (torch.npu.*); explicit import recommended even with autoload"),
    C(") or torch.cuda.current_device()", "torch_cuda_api", R, T, ") or torch.npu.current_device()",
      "reached from autocast() -> cuda_no_autocast() whenever --device-id is unset; raises 'Torch not compiled with CUDA' on an NPU host"),
    C('return f"cuda:{shared.cmd_opts.device_id}"', "device_type", R, T,
      'return f"npu:{shared.cmd_opts.device_id}"', "device string for --device-id must name the npu device"),
    C('=return "cuda"', "device_type", R, T, 'return "npu"', "default accelerator device string"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", B, T,
      "if torch.npu.is_available():\n        return get_npu_device_string()\n    if torch.cuda.is_available():",
      "without an npu branch get_optimal_device_name() returns 'cpu' on an NPU host: the whole UI silently runs on the CPU"),
    C("=elif torch.cuda.is_available():", "torch_cuda_api", B, F,
      "elif torch.npu.is_available():\n        torch.npu.empty_cache()\n    elif torch.cuda.is_available():",
      "torch_gc() does nothing on NPU; cached blocks are not returned between jobs (memory housekeeping only)"),
    C('return torch.autocast("cuda")', "amp", R, T, "return torch.autocast(device.type)",
      "CUDA autocast is inactive for npu tensors: fp16 UNet runs with no autocast, mixed-dtype matmuls fail or lose the fp32 upcasts"),
    C('return torch.autocast("cuda", enabled=False) if torch.is_autocast_enabled()', "amp", R, T,
      "return torch.autocast(device.type, enabled=False) if torch.is_autocast_enabled(device.type) and not disable else contextlib.nullcontext()",
      "torch.is_autocast_enabled() without a device reads the CUDA state (False on NPU), so the 'upcast attention' block is not protected from npu autocast"),
    C("torch.cuda.get_device_capability(device_id) == (7, 5)", "device_capability_check", B, T,
      "device.type == 'cuda' and torch.cuda.get_device_capability(device_id) == (7, 5)",
      "GTX-16xx probe is called from autocast() for every device; get_device_capability/get_device_name need CUDA (NPU returns None)"),
  ])

E("a1111_sd_hijack_optimizations", "modules/sd_hijack_optimizations.py", "device_branch_or_abstraction",
  "AUTOMATIC1111/stable-diffusion-webui modules/sd_hijack_optimizations.py (xformers / SDP / Doggettx cross-attention)", [
    C("if shared.device.type == 'cuda':", "device_type", B, T,
      "if shared.device.type == 'npu':\n        stats = torch.npu.memory_stats(shared.device)\n        ...\n    if shared.device.type == 'cuda':",
      "Doggettx (highest available priority once xformers is missing) sizes its slices from get_available_vram(); on NPU it silently uses host RAM as the free-VRAM budget and can OOM"),
    C("=with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=False):", "attention_kernel", R, T,
      "with contextlib.nullcontext():",
      "torch.backends.cuda.sdp_kernel is marked unsupported (✘) in Ascend's 2.7.1 API list and by msFmkTransplt"),
    C("enable_mem_efficient=False):  # VAE", "attention_kernel", R, T, "with contextlib.nullcontext():  # VAE",
      "same sdp_kernel context around the VAE attention block"),
  ])

E("a1111_launch_utils", "modules/launch_utils.py", "explicit_replacement",
  "AUTOMATIC1111/stable-diffusion-webui modules/launch_utils.py (torch/xformers install, CUDA smoke test)", [
    C('"https://download.pytorch.org/whl/cu121")', "torch_cuda_api", R, T,
      'torch_index_url = os.environ.get(\'TORCH_INDEX_URL\', "https://download.pytorch.org/whl/cpu")',
      "CUDA 12.1 wheel index; torch_npu pairs with the CPU torch wheel on x86 (whl/cpu) and plain PyPI torch on aarch64"),
    C('pip install torch==2.1.2 torchvision==0.16.2 --extra-index-url', "import_torch_npu", R, T,
      'f"pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12 --extra-index-url {torch_index_url}"',
      "torch_npu must be installed and its version must equal torch's (2.1.2 has no torch_npu wheel; 2.1.0.postN does)"),
    C('if (not is_installed("xformers") or args.reinstall_xformers) and args.xformers:', "attention_kernel", R, F,
      'if (not is_installed("xformers") or args.reinstall_xformers) and args.xformers and not is_npu_host():',
      "xformers has no NPU backend; with --xformers the launcher pip-installs it anyway (wheel availability on aarch64 unconfirmed)"),
    C('check_run_python("import torch; assert torch.cuda.is_available()")', "torch_cuda_api", R, T,
      'check_run_python("import torch, torch_npu; assert torch.npu.is_available()")',
      "the GPU smoke test raises 'Torch is not able to use GPU' on an NPU host unless --skip-torch-cuda-test is passed"),
  ])

E("a1111_memmon", "modules/memmon.py", "explicit_replacement",
  "AUTOMATIC1111/stable-diffusion-webui modules/memmon.py (VRAM monitor thread)", [
    C("=import torch", "import_torch_npu", A, T, "import torch_npu  # noqa: F401",
      "ported monitor calls torch.npu.* itself"),
    C("else torch.cuda.current_device()", "torch_cuda_api", R, T,
      "index = self.device.index if self.device.index is not None else torch.npu.current_device()",
      "raises without CUDA; the exception is caught in __init__ and the VRAM monitor disables itself"),
    C("return torch.cuda.mem_get_info(index)", "torch_cuda_api", R, T, "return torch.npu.mem_get_info(index)",
      "torch.npu.mem_get_info is the NPU form (Ascend 2.7.1 list)"),
    C("=torch.cuda.memory_stats(self.device)", "torch_cuda_api", R, F, "torch.npu.memory_stats(self.device)",
      "probe in __init__; not reached unchanged (previous line already raised)"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, F, "torch.npu.reset_peak_memory_stats()",
      "only runs once the monitor is enabled"),
    C("tm = torch.cuda.memory_stats(self.device)", "torch_cuda_api", R, F, "tm = torch.npu.memory_stats(self.device)",
      "debug dump; only reached with the monitor enabled"),
    C("print(torch.cuda.memory_summary())", "torch_cuda_api", R, F, "print(torch.npu.memory_summary())",
      "debug dump; only reached with the monitor enabled"),
    C("torch_stats = torch.cuda.memory_stats(self.device)", "torch_cuda_api", R, F,
      "torch_stats = torch.npu.memory_stats(self.device)", "only reached with the monitor enabled"),
  ])

E("a1111_cmd_args", "modules/cmd_args.py", "device_branch_or_abstraction",
  "AUTOMATIC1111/stable-diffusion-webui modules/cmd_args.py (argparse only; CUDA appears in help text)", [])

E("a1111_textual_inversion", "modules/textual_inversion/textual_inversion.py", "device_branch_or_abstraction",
  "AUTOMATIC1111/stable-diffusion-webui textual_inversion.train_embedding (GradScaler + devices.autocast)", [
    C("scaler = torch.cuda.amp.GradScaler()", "amp", R, T, "scaler = torch.amp.GradScaler(devices.device.type)",
      "torch.cuda.amp.GradScaler disables itself without CUDA: fp16 embedding training on NPU runs without loss scaling"),
  ])

E("a1111_webui_user_sh", "webui-user.sh", "explicit_replacement",
  "AUTOMATIC1111/stable-diffusion-webui webui-user.sh (user launch settings)", [
    C("export CUDA_VISIBLE_DEVICES=0", "env_var", R, T, "export ASCEND_RT_VISIBLE_DEVICES=0",
      "device selection on Ascend is ASCEND_RT_VISIBLE_DEVICES; CUDA_VISIBLE_DEVICES is not read by the NPU runtime (knowledge documents only the Ascend variables)"),
    C('export COMMANDLINE_ARGS="--xformers', "attention_kernel", R, F,
      'export COMMANDLINE_ARGS="--opt-sdp-attention --listen --port 7860 --api --enable-insecure-extension-access"',
      "xformers has no NPU backend; the import fails and another optimisation is used, but the launcher tries to pip-install it first"),
    C("export TORCH_COMMAND=", "torch_cuda_api", R, T,
      'export TORCH_COMMAND="pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12 --extra-index-url https://download.pytorch.org/whl/cpu"',
      "cu121 wheels; torch_npu needs a matching torch version (no 2.1.2 torch_npu) and the CPU torch build on x86"),
    C('export XFORMERS_PACKAGE="xformers==0.0.23.post1"', "attention_kernel", X, F, None,
      "only used with --xformers"),
    C("export PYTORCH_CUDA_ALLOC_CONF=", "env_var", R, F,
      'export PYTORCH_NPU_ALLOC_CONF="expandable_segments:True"',
      "ignored on NPU; the NPU caching allocator reads PYTORCH_NPU_ALLOC_CONF (fragmentation tuning only)"),
    C("nvidia-smi --query-gpu=", "torch_cuda_api", R, F, "npu-smi info",
      "informational; nvidia-smi is absent on an Ascend host and the sourced script just prints 'command not found'"),
  ])

# ----------------------------------------------------------------------------------------------------------
# ComfyUI core
# ----------------------------------------------------------------------------------------------------------

E("comfy_model_management", "comfy/model_management.py", "device_branch_or_abstraction",
  "comfyanonymous/ComfyUI comfy/model_management.py (VRAM states, device pick, fp16/bf16 choice)", [
    C("=import torch", "import_torch_npu", A, T, "import torch_npu  # noqa: F401",
      "module becomes the place that detects and queries the npu device"),
    C("return torch.device(torch.cuda.current_device())", "torch_cuda_api", B, T,
      'if is_ascend_npu():\n                return torch.device("npu", torch.npu.current_device())\n            return torch.device(torch.cuda.current_device())',
      "get_torch_device() is called at import time (total_vram); without CUDA it raises and ComfyUI does not start"),
    C("=stats = torch.cuda.memory_stats(dev)", "torch_cuda_api", R, T, "stats = torch.npu.memory_stats(dev)",
      "the catch-all else branch is taken for an npu device; torch.cuda.memory_stats returns {} without CUDA and the next line raises KeyError"),
    C("_, mem_total_cuda = torch.cuda.mem_get_info(dev)", "torch_cuda_api", R, T,
      "_, mem_total_npu = torch.npu.mem_get_info(dev)", "total VRAM for the npu device"),
    C("OOM_EXCEPTION = torch.cuda.OutOfMemoryError", "torch_cuda_api", R, F,
      "OOM_EXCEPTION = (torch.cuda.OutOfMemoryError, RuntimeError)",
      "unconfirmed which exception type torch_npu raises on device OOM; the tiled-upscale retry depends on catching it"),
    C("=if is_nvidia():", "device_type", B, F,
      "if is_nvidia() or is_ascend_npu():",
      "on NPU the default attention stays sub-quadratic and the VAE stays fp32: correct but slower (SDPA is supported on NPU)"),
    C("torch.backends.cuda.enable_math_sdp(True)", "attention_kernel", R, F,
      "if is_nvidia(): torch.backends.cuda.enable_math_sdp(True)",
      "✘ in Ascend's 2.7.1 list; a global flag setter, harmless no-op for NPU SDPA (unconfirmed)"),
    C("torch.backends.cuda.enable_flash_sdp(True)", "attention_kernel", R, F,
      "if is_nvidia(): torch.backends.cuda.enable_flash_sdp(True)", "same as above"),
    C("torch.backends.cuda.enable_mem_efficient_sdp(True)", "attention_kernel", R, F,
      "if is_nvidia(): torch.backends.cuda.enable_mem_efficient_sdp(True)", "same as above"),
    C("stats = torch.cuda.memory_stats(dev)  # caching allocator view", "torch_cuda_api", R, T,
      "stats = torch.npu.memory_stats(dev)  # caching allocator view",
      "get_free_memory() drives every load/offload decision; {} without CUDA -> KeyError"),
    C("mem_free_cuda, _ = torch.cuda.mem_get_info(dev)", "torch_cuda_api", R, T,
      "mem_free_npu, _ = torch.npu.mem_get_info(dev)", "free device memory for the npu device"),
    C('props = torch.cuda.get_device_properties("cuda")', "device_capability_check", B, T,
      'if is_ascend_npu():\n        return True\n    props = torch.cuda.get_device_properties("cuda")',
      "should_use_fp16() reaches this on NPU and raises; NPU properties also have no major/minor"),
    C("=props = torch.cuda.get_device_properties(device)", "device_capability_check", B, T,
      "if is_ascend_npu():\n        return True\n    props = torch.cuda.get_device_properties(device)",
      "should_use_bf16(): same failure; Atlas A2 supports bf16"),
    C("elif torch.cuda.is_available():", "torch_cuda_api", B, F,
      "elif is_ascend_npu():\n        torch.npu.empty_cache()\n    elif torch.cuda.is_available():",
      "soft_empty_cache() is a no-op on NPU; memory housekeeping only"),
  ])

E("comfy_main", "main.py", "explicit_replacement",
  "comfyanonymous/ComfyUI main.py (entry point, --cuda-device, cuda_malloc)", [
    C("=import comfy.utils", "import_torch_npu", A, F, "import torch_npu  # noqa: F401",
      "entry script; the ported model_management imports torch_npu itself, so this one is recommended rather than needed"),
    C("=import comfy.model_management", "compile_mode", A, F,
      "torch_npu.npu.set_compile_mode(jit_compile=False)",
      "performance: prompt resolution and batch change between jobs, so binary (non-JIT) kernels avoid per-shape recompiles (msFmkTransplt performance advice)"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = str(args.cuda_device)", "env_var", R, T,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(args.cuda_device)",
      "--cuda-device is silently ignored on NPU (device selection is ASCEND_RT_VISIBLE_DEVICES)"),
  ])

E("comfy_cuda_malloc", "cuda_malloc.py", "explicit_replacement",
  "comfyanonymous/ComfyUI cuda_malloc.py (cudaMallocAsync opt-in before torch import)", [
    C("out = subprocess.check_output(['nvidia-smi', '-L'])", "torch_cuda_api", R, F,
      "out = subprocess.check_output(['npu-smi', 'info', '-l'])",
      "FileNotFoundError is swallowed by cuda_malloc_supported(); harmless"),
    C("env_var = os.environ.get('PYTORCH_CUDA_ALLOC_CONF', None)", "env_var", R, F,
      "env_var = os.environ.get('PYTORCH_NPU_ALLOC_CONF', None)",
      "the NPU allocator reads PYTORCH_NPU_ALLOC_CONF; the CUDA variable is ignored (tuning only)"),
    C('env_var = "backend:cudaMallocAsync"', "env_var", R, F, 'env_var = "expandable_segments:True"',
      "cudaMallocAsync has no NPU counterpart; expandable segments is the NPU allocator option"),
    C("os.environ['PYTORCH_CUDA_ALLOC_CONF'] = env_var", "env_var", R, F,
      "os.environ['PYTORCH_NPU_ALLOC_CONF'] = env_var", "see above"),
  ])

E("comfy_attention", "comfy/ldm/modules/attention.py", "device_branch_or_abstraction",
  "comfyanonymous/ComfyUI comfy/ldm/modules/attention.py (basic / sub-quad / xformers / SDPA attention)", [
    C("=import torch.nn.functional as F", "import_torch_npu", A, F, "import torch_npu",
      "only needed for the optional fused GEGLU below"),
    C("return x * F.gelu(gate)", "npu_fused_op", R, F,
      "return torch_npu.npu_geglu(self.proj(x), dim=-1, approximate=0)[0]",
      "performance: torch_npu.npu_geglu fuses chunk+gelu+mul (used by diffusers on NPU); approximate convention unconfirmed"),
  ])

E("comfy_upscale_node", "comfy_extras/nodes_upscale_model.py", "device_branch_or_abstraction",
  "comfyanonymous/ComfyUI comfy_extras/nodes_upscale_model.py (spandrel tiled upscale, device from model_management)", [])

E("comfy_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "community ComfyUI Dockerfile (nvidia/cuda base, cu121 torch, xformers, onnxruntime-gpu)", [
    C("FROM nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04", "torch_cuda_api", R, T,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.11",
      "the image needs the CANN toolkit (libascendcl/libhccl) for torch_npu to import; CUDA runtime is useless there"),
    C("NVIDIA_VISIBLE_DEVICES=all \\", "env_var", R, F, "ASCEND_VISIBLE_DEVICES=0 \\",
      "Ascend Docker Runtime selects devices with ASCEND_VISIBLE_DEVICES (or mount /dev/davinciN explicitly); whether an image ENV is honoured is unconfirmed"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, F, None,
      "NVIDIA container toolkit setting; meaningless on Ascend"),
    C("RUN pip install torch==${TORCH_VERSION} torchvision==${TORCHVISION_VERSION} torchaudio \\", "import_torch_npu", A, T,
      "RUN pip install torch==${TORCH_VERSION} torchvision==${TORCHVISION_VERSION} torch-npu==${TORCH_VERSION}.post4 \\",
      "torch_npu (same version as torch) is what makes the npu device exist"),
    C("=--index-url https://download.pytorch.org/whl/cu121", "torch_cuda_api", R, T,
      "--index-url https://download.pytorch.org/whl/cpu",
      "CUDA torch build; torch_npu pairs with the CPU wheel on x86 and plain PyPI torch on aarch64"),
    C("RUN pip install xformers==${XFORMERS_VERSION}", "attention_kernel", X, T, None,
      "xformers has no NPU backend and its cu121 wheel pins/pulls the CUDA torch build"),
    C("RUN pip install insightface==0.7.3 onnxruntime-gpu==1.18.1", "custom_cuda_extension", R, F,
      "RUN pip install insightface==0.7.3 onnxruntime==1.18.1",
      "CUDA build of onnxruntime; CPU onnxruntime (or a CANN EP build) on Ascend; aarch64 wheel availability unconfirmed"),
    C('RUN python -c "import torch; print(torch.__version__, torch.version.cuda', "torch_cuda_api", R, F,
      'RUN python -c "import torch, torch_npu; print(torch.__version__, torch_npu.__version__)"',
      "prints None for the CUDA/cuDNN versions on an NPU build; does not fail"),
    C('"--cuda-malloc", "--use-pytorch-cross-attention"]', "env_var", R, F,
      'CMD ["python", "main.py", "--listen", "0.0.0.0", "--port", "8188", "--use-pytorch-cross-attention"]',
      "--cuda-malloc only sets PYTORCH_CUDA_ALLOC_CONF, which the NPU ignores"),
  ])

E("comfy_workflow_requirements", "requirements.txt", "explicit_replacement",
  "ComfyUI + custom-node bundle requirements.txt pinned to cu121 wheels", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "torch_cuda_api", R, T,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu pairs with CPU torch on x86"),
    C("torch==2.3.1+cu121", "torch_cuda_api", R, T, "torch==2.3.1\ntorch-npu==2.3.1.post4",
      "+cu121 local version does not exist for the NPU stack; add torch-npu of the same torch version"),
    C("torchvision==0.18.1+cu121", "torch_cuda_api", R, T, "torchvision==0.18.1", "CUDA build pin"),
    C("torchaudio==2.3.1+cu121", "torch_cuda_api", R, T, "torchaudio==2.3.1", "CUDA build pin"),
    C("=xformers==0.0.27", "attention_kernel", X, T, None,
      "no NPU backend; the wheel pins the CUDA torch build"),
    C('triton==2.3.1; platform_system == "Linux"', "triton_kernel_tuning", R, F,
      'triton-ascend; platform_system == "Linux"',
      "only SageAttention-style Triton kernels use it; triton-ascend is the NPU Triton (kernels need porting; unconfirmed for these)"),
    C("onnxruntime-gpu==1.18.1", "custom_cuda_extension", R, F, "onnxruntime==1.18.1",
      "CUDA build of onnxruntime for insightface/DWPose; CPU build on Ascend (CANN EP not covered by the knowledge)"),
    C("sageattention==1.0.6", "attention_kernel", X, F, None,
      "Triton/CUDA attention kernels with no NPU path; ComfyUI falls back to SDPA when it is absent (unconfirmed for every node)"),
    C("bitsandbytes>=0.43.0", "custom_cuda_extension", X, F, None,
      "CUDA build; NPU support only in the multi-backend branch (NF4), unconfirmed for this version"),
    C("nvidia-ml-py>=12.535.133", "torch_cuda_api", X, F, None,
      "NVML has no NPU counterpart (use torch.npu.mem_get_info / npu-smi); import works, queries fail"),
    C("=gpustat", "torch_cuda_api", X, F, None, "NVIDIA-only monitoring tool"),
  ])

# ----------------------------------------------------------------------------------------------------------
# ComfyUI custom nodes
# ----------------------------------------------------------------------------------------------------------

E("comfy_ipadapter_node", "custom_nodes/ComfyUI_IPAdapter_plus/utils.py", "device_branch_or_abstraction",
  "cubiq/ComfyUI_IPAdapter_plus utils.py (insightface loader, masked CLIP-vision encode)", [
    C('"provider": (INSIGHTFACE_PROVIDERS, {"default": "CUDA"}),', "device_type", R, F,
      '"provider": (INSIGHTFACE_PROVIDERS, {"default": "CPU"}),',
      "onnxruntime skips an unavailable CUDAExecutionProvider with a warning and runs on CPU (unconfirmed for every ORT version)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, F, "model_management.soft_empty_cache()",
      "no-op without CUDA; memory housekeeping only"),
  ])

E("comfy_controlnet_aux_util", "custom_nodes/comfyui_controlnet_aux/utils.py", "device_branch_or_abstraction",
  "Fannovel16/comfyui_controlnet_aux utils.py (annotator call, ORT providers, TorchScript device)", [
    C('ORT_PROVIDERS = ["CUDAExecutionProvider"', "device_type", R, F,
      'ORT_PROVIDERS = ["CPUExecutionProvider", "CoreMLExecutionProvider"]',
      "ORT falls back to CPU when CUDA EP is unavailable; a CANN EP build is not covered by the knowledge (unconfirmed)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, F, "torch.npu.manual_seed_all(seed)",
      "lazily queued and harmless without CUDA; torch.manual_seed above already seeds the default generator"),
  ])

E("comfy_multigpu_node", "custom_nodes/ComfyUI-MultiGPU/__init__.py", "device_branch_or_abstraction",
  "ComfyUI-MultiGPU-style custom node (per-loader device pinning by monkey-patching model_management)", [
    C("=import torch", "import_torch_npu", A, T, "import torch_npu  # noqa: F401",
      "node enumerates and selects npu devices itself"),
    C('devs += [f"cuda:{i}" for i in range(torch.cuda.device_count())]', "device_type", R, T,
      'devs += [f"npu:{i}" for i in range(torch.npu.device_count())]',
      "device list is just ['cpu'] on an NPU host"),
    C('"cpu" in str(current_device).lower():', "torch_cuda_api", R, T,
      'if not torch.npu.is_available() or mm.cpu_state == mm.CPUState.CPU or "cpu" in str(current_device).lower():',
      "patched get_torch_device() returns cpu on an NPU host: every model silently loads and samples on the CPU"),
    C('"cpu" in str(current_text_encoder_device).lower():', "torch_cuda_api", R, T,
      'if not torch.npu.is_available() or mm.cpu_state == mm.CPUState.CPU or "cpu" in str(current_text_encoder_device).lower():',
      "same for the text encoder"),
    C("for i in range(torch.cuda.device_count()):", "torch_cuda_api", R, F,
      "for i in range(torch.npu.device_count()):", "info node lists nothing on NPU (diagnostic only)"),
    C("props = torch.cuda.get_device_properties(i)", "torch_cuda_api", R, F,
      "props = torch.npu.get_device_properties(i)", "not reached unchanged (empty loop)"),
    C("free, total = torch.cuda.mem_get_info(i)", "torch_cuda_api", R, F,
      "free, total = torch.npu.mem_get_info(i)", "not reached unchanged (empty loop)"),
    C('lines.append(f"cuda:{i} {props.name} sm_{props.major}{props.minor}', "device_capability_check", R, F,
      'lines.append(f"npu:{i} {props.name} {free / 1024**3:.1f}/{total / 1024**3:.1f} GiB free")',
      "NPU device properties carry only name/total_memory/L2_cache_size/cube_core_num/vector_core_num (no major/minor)"),
    C('if device.startswith("cuda"):', "device_type", B, F,
      'if device.startswith("npu"):\n            torch.npu.set_device(torch.device(device))\n        elif device.startswith("cuda"):',
      "selector would skip set_device for npu entries; only matters once the list offers them"),
    C("torch.cuda.set_device(torch.device(device))", "torch_cuda_api", R, F,
      "torch.npu.set_device(torch.device(device))", "not reached unchanged"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, T, "torch.npu.synchronize()",
      "raises without CUDA; the info node fails"),
  ])

# ----------------------------------------------------------------------------------------------------------
# AnimateDiff, ControlNet, latent-diffusion internals
# ----------------------------------------------------------------------------------------------------------

E("animatediff_animate", "scripts/animate.py", "explicit_replacement",
  "guoyww/AnimateDiff scripts/animate.py (hard-coded .cuda(), xformers required)", [
    C("=import torch", "import_torch_npu", A, T, "import torch_npu", "entry script"),
    C('subfolder="text_encoder").cuda()', "tensor_to_device", R, T,
      'text_encoder = CLIPTextModel.from_pretrained(args.pretrained_model_path, subfolder="text_encoder").npu()',
      ".cuda() fails on an NPU host"),
    C('subfolder="vae").cuda()', "tensor_to_device", R, T,
      'vae = AutoencoderKL.from_pretrained(args.pretrained_model_path, subfolder="vae").npu()', "see above"),
    C("unet_additional_kwargs=OmegaConf.to_container(inference_config.unet_additional_kwargs)).cuda()", "tensor_to_device", R, T,
      "unet = UNet3DConditionModel.from_pretrained_2d(..., unet_additional_kwargs=...).npu()", "see above"),
    C("=controlnet.cuda()", "tensor_to_device", R, T, "controlnet.npu()", "see above"),
    C("controlnet_images = torch.stack(controlnet_images).unsqueeze(0).cuda()", "tensor_to_device", R, T,
      "controlnet_images = torch.stack(controlnet_images).unsqueeze(0).npu()", "see above"),
    C("=assert False", "attention_kernel", X, T, None,
      "xformers is never available on NPU, so the script always dies here; diffusers' default attention (SDPA) works on NPU"),
    C('=).to("cuda")', "tensor_to_device", R, T, ').to("npu")', "pipeline placement"),
    C(').to("cuda")  # load_weights merges on CPU', "tensor_to_device", R, T,
      ').to("npu")  # load_weights merges on CPU', "pipeline placement after weight merge"),
  ])

E("controlnet_gradio_canny", "gradio_canny2image.py", "explicit_replacement",
  "lllyasviel/ControlNet gradio_canny2image.py (demo script, .cuda() everywhere)", [
    C("=import torch", "import_torch_npu", A, T, "import torch_npu", "entry script"),
    C("location='cuda'", "device_type", R, T,
      "model.load_state_dict(load_state_dict('./models/control_sd15_canny.pth', location='npu'))",
      "load_state_dict maps storages to torch.device('cuda'): deserialisation fails without CUDA"),
    C("=model = model.cuda()", "tensor_to_device", R, T, "model = model.npu()", ".cuda() fails on an NPU host"),
    C("control = torch.from_numpy(detected_map.copy()).float().cuda() / 255.0", "tensor_to_device", R, T,
      "control = torch.from_numpy(detected_map.copy()).float().npu() / 255.0", "see above"),
  ])

E("controlnet_hed_annotator", "annotator/hed/__init__.py", "explicit_replacement",
  "lllyasviel/ControlNet annotator/hed (HED edge detector with hard-coded .cuda())", [
    C("=import torch", "import_torch_npu", A, F, "import torch_npu  # noqa: F401",
      "the gradio entry script already imports torch_npu; harmless here"),
    C("self.netNetwork = ControlNetHED_Apache2().float().cuda().eval()", "tensor_to_device", R, T,
      "self.netNetwork = ControlNetHED_Apache2().float().npu().eval()", ".cuda() fails on an NPU host"),
    C("self.netNetwork.load_state_dict(torch.load(modelpath))", "tensor_to_device", R, F,
      "self.netNetwork.load_state_dict(torch.load(modelpath, map_location='cpu'))",
      "fails only if the checkpoint stores CUDA tensors (unconfirmed for ControlNetHED.pth)"),
    C("image_hed = torch.from_numpy(input_image.copy()).float().cuda()", "tensor_to_device", R, T,
      "image_hed = torch.from_numpy(input_image.copy()).float().npu()", "see above"),
  ])

E("ldm_ddim_sampler", "ldm/models/diffusion/ddim.py", "device_branch_or_abstraction",
  "CompVis/stable-diffusion ldm/models/diffusion/ddim.py (register_buffer forced to cuda)", [
    C('if attr.device != torch.device("cuda"):', "device_type", R, T,
      "if attr.device != self.model.device:",
      "every schedule buffer is moved to torch.device('cuda'): fails without CUDA"),
    C('attr = attr.to(torch.device("cuda"))', "device_type", R, T, "attr = attr.to(self.model.device)",
      "see above"),
  ])

E("ldm_diffusion_util", "ldm/modules/diffusionmodules/util.py", "device_branch_or_abstraction",
  "CompVis/Stability ldm diffusionmodules/util.py (CheckpointFunction custom autograd with CUDA autocast state)", [
    C('ctx.gpu_autocast_kwargs = {"enabled": torch.is_autocast_enabled(),', "amp", R, T,
      'ctx.gpu_autocast_kwargs = {"enabled": torch.is_autocast_enabled("npu"),',
      "reads the CUDA autocast state; under npu autocast it records enabled=False, so the backward recompute runs in a different precision"),
    C('"dtype": torch.get_autocast_gpu_dtype(),', "amp", R, T, '"dtype": torch.get_autocast_dtype("npu"),',
      "CUDA autocast dtype, not the NPU one"),
    C("torch.cuda.amp.autocast(**ctx.gpu_autocast_kwargs):", "amp", R, T,
      'torch.autocast("npu", **ctx.gpu_autocast_kwargs):',
      "CUDA autocast is inactive for npu tensors in the checkpointed recompute"),
  ])

# ----------------------------------------------------------------------------------------------------------
# Fooocus
# ----------------------------------------------------------------------------------------------------------

E("fooocus_launch", "launch.py", "explicit_replacement",
  "lllyasviel/Fooocus launch.py (torch install, --gpu-device-id)", [
    C('torch_index_url = os.environ.get(\'TORCH_INDEX_URL\', "https://download.pytorch.org/whl/cu121")', "torch_cuda_api", R, T,
      'torch_index_url = os.environ.get(\'TORCH_INDEX_URL\', "https://download.pytorch.org/whl/cpu")',
      "CUDA wheel index; torch_npu pairs with CPU torch on x86"),
    C('f"pip install torch==2.1.0 torchvision==0.16.0 --extra-index-url {torch_index_url}")', "import_torch_npu", A, T,
      'f"pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12 --extra-index-url {torch_index_url}")',
      "torch_npu must be installed next to the matching torch"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = str(args.gpu_device_id)", "env_var", R, T,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(args.gpu_device_id)",
      "--gpu-device-id is silently ignored on NPU"),
    C("=from modules import config", "import_torch_npu", A, F, "import torch_npu  # noqa: F401",
      "entry script, after the visible-devices variable is set; the ported ldm_patched model_management imports it too"),
  ])

E("fooocus_core", "modules/core.py", "device_branch_or_abstraction",
  "lllyasviel/Fooocus modules/core.py (LoRA refresh, VAE helpers, ksampler; device from model_management)", [])

# ----------------------------------------------------------------------------------------------------------
# InvokeAI
# ----------------------------------------------------------------------------------------------------------

E("invokeai_devices", "invokeai/backend/util/devices.py", "device_branch_or_abstraction",
  "invoke-ai/InvokeAI invokeai/backend/util/devices.py (TorchDevice)", [
    C("=import torch", "import_torch_npu", A, T, "import torch_npu  # noqa: F401",
      "TorchDevice queries torch.npu itself"),
    C("elif torch.cuda.is_available():", "torch_cuda_api", B, T,
      'elif hasattr(torch, "npu") and torch.npu.is_available():\n            device = torch.device("npu")\n        elif torch.cuda.is_available():',
      "device: auto resolves to CPU on an NPU host"),
    C('if device.type == "cuda" and torch.cuda.is_available():', "device_type", B, F,
      'if device.type == "npu":\n            return cls._to_dtype("float16" if config.precision == "auto" else config.precision)\n        if device.type == "cuda" and torch.cuda.is_available():',
      "npu falls through to float32: correct but slower and twice the memory"),
    C('if device.index is None and device.type == "cuda" and torch.cuda.is_available():', "device_type", B, F,
      'if device.index is None and device.type == "npu":\n            device = torch.device("npu", torch.npu.current_device())',
      "npu and npu:0 compare unequal in the model cache; unconfirmed whether this causes extra moves"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", B, F,
      "if hasattr(torch, \"npu\") and torch.npu.is_available():\n            torch.npu.empty_cache()",
      "empty_cache() is a no-op on NPU (housekeeping only)"),
  ])

E("invokeai_pyproject", "pyproject.toml", "explicit_replacement",
  "invoke-ai/InvokeAI pyproject.toml (pinned torch, xformers / cuda extras, uv cu121 index)", [
    C("\"bitsandbytes==0.43.3; sys_platform!='darwin'\",", "custom_cuda_extension", R, F,
      "\"bitsandbytes==0.43.3; sys_platform!='darwin' and platform_machine=='x86_64'\",",
      "CUDA build; imported lazily for quantised models; NPU support only in the multi-backend branch (unconfirmed)"),
    C('"torch==2.2.2",', "import_torch_npu", R, T, '"torch==2.1.0",\n  "torch-npu==2.1.0.post12",',
      "torch_npu must be added and pinned to the same torch version (no torch_npu for 2.2.2)"),
    C("\"xformers==0.0.25.post1; sys_platform!='darwin'\",", "attention_kernel", X, F, None,
      "optional extra; no NPU backend"),
    C("\"triton; sys_platform=='linux'\",", "triton_kernel_tuning", R, F,
      "\"triton-ascend; sys_platform=='linux'\",", "optional extra; triton-ascend is the NPU Triton (unconfirmed need)"),
    C('"onnx-cuda" = ["onnxruntime-gpu"]', "custom_cuda_extension", R, F,
      '"onnx-cann" = ["onnxruntime"]', "optional extra; CUDA build of onnxruntime"),
    C('"nvidia-ml-py",', "torch_cuda_api", X, F, None, "NVML has no NPU counterpart; optional extra"),
    C('"torch==2.2.2+cu121",', "torch_cuda_api", R, F, '"torch==2.1.0",',
      "the cuda extra is not installed on an NPU host; an npu extra replaces it"),
    C('extra-index-url = ["https://download.pytorch.org/whl/cu121"]', "torch_cuda_api", R, T,
      'extra-index-url = ["https://download.pytorch.org/whl/cpu"]',
      "with unsafe-best-match the cu121 index makes uv resolve CUDA torch builds"),
  ])

E("invokeai_yaml", "invokeai.yaml", "explicit_replacement",
  "InvokeAI invokeai.yaml user configuration", [
    C("device: cuda:0", "device_type", R, T, "device: npu:0",
      "explicit cuda device fails on an NPU host (the device setting also needs the code-side npu support)"),
    C("attention_type: xformers", "attention_kernel", R, T, "attention_type: torch-sdp",
      "xformers is not installable/usable on NPU; SDPA is supported there"),
  ])

E("sdwebui_docker_compose", "docker-compose.yml", "explicit_replacement",
  "AbdBarho/stable-diffusion-webui-docker docker-compose.yml (A1111 / ComfyUI / InvokeAI services)", [
    C("- driver: nvidia", "device_type", R, T,
      "- /dev/davinci0:/dev/davinci0  # devices: plus davinci_manager, devmm_svm, hisi_hdc",
      "compose refuses to start without the NVIDIA container runtime; Ascend containers mount /dev/davinciN and the management devices"),
    C("device_ids: ['0']", "device_type", X, T, None, "part of the NVIDIA device reservation"),
    C("capabilities: [compute, utility]", "device_type", X, T, None, "part of the NVIDIA device reservation"),
    C("- CLI_ARGS=--allow-code --medvram --xformers", "attention_kernel", R, F,
      "- CLI_ARGS=--allow-code --medvram --opt-sdp-attention --enable-insecure-extension-access --api",
      "xformers has no NPU backend (A1111 falls back after an import error)"),
    C("- NVIDIA_VISIBLE_DEVICES=0", "env_var", R, F, "- ASCEND_VISIBLE_DEVICES=0",
      "Ascend Docker Runtime device selection; with explicit /dev mounts it can simply go"),
    C("- PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512", "env_var", R, F,
      "- PYTORCH_NPU_ALLOC_CONF=expandable_segments:True", "ignored on NPU (tuning only)"),
    C("- CLI_ARGS=--cuda-device 0 --preview-method auto", "env_var", R, F,
      "- CLI_ARGS=--preview-method auto",
      "--cuda-device only sets CUDA_VISIBLE_DEVICES, which the NPU runtime ignores"),
    C("=- CLI_ARGS=--xformers", "attention_kernel", X, F, None, "InvokeAI service flag; no NPU backend"),
    C("- INVOKEAI_DEVICE=cuda", "device_type", R, T, "- INVOKEAI_DEVICE=npu",
      "forces torch.device('cuda') in InvokeAI"),
  ])

# ----------------------------------------------------------------------------------------------------------
# Acceleration libraries used by the front-ends
# ----------------------------------------------------------------------------------------------------------

E("sageattention_core", "sageattention/core.py", "kernel_rewrite",
  "thu-ml/SageAttention sageattention/core.py (arch dispatch over nvcc-built int8 attention kernels)", [
    C("=import torch", "import_torch_npu", A, T, "import torch_npu",
      "NPU branch calls torch_npu.npu_fusion_attention"),
    C("=from . import _qattn_sm80", "custom_cuda_extension", R, T,
      "try:\n    from . import _qattn_sm80\nexcept ImportError:\n    _qattn_sm80 = None",
      "nvcc-built extension: cannot be built or imported on an NPU host, so the package import fails"),
    C("=from . import _fused", "custom_cuda_extension", R, T,
      "try:\n    from . import _fused\nexcept ImportError:\n    _fused = None", "same"),
    C("arch = get_cuda_arch_versions()[q.device.index]", "attention_kernel", B, T,
      'if q.device.type == "npu":\n        return sdpa_npu(q, k, v, tensor_layout=tensor_layout, is_causal=is_causal, sm_scale=sm_scale)\n    arch = get_cuda_arch_versions()[q.device.index]',
      "device_count() is 0 without CUDA, so the arch lookup raises IndexError; NPU needs npu_fusion_attention / SDPA"),
    C("major, minor = torch.cuda.get_device_capability(i)", "device_capability_check", R, F,
      "major, minor = torch.cuda.get_device_capability(i) if torch.cuda.is_available() else (0, 0)",
      "not reached once sageattn dispatches npu tensors first; NPU returns None for the capability"),
    C('assert q.is_cuda, "Input tensors must be on cuda."', "device_type", R, F,
      'assert q.is_cuda or q.device.type == "npu", "Input tensors must be on cuda or npu."',
      "only if the NPU branch routes to the Triton kernels via triton-ascend (unconfirmed)"),
    C("=torch.cuda.set_device(v.device)", "torch_cuda_api", R, F,
      "torch.npu.set_device(v.device) if v.device.type == 'npu' else torch.cuda.set_device(v.device)",
      "same condition as above"),
  ])

E("sfast_triton_group_norm", "sfast/triton/ops/group_norm.py", "kernel_rewrite",
  "chengzeyi/stable-fast sfast/triton/ops/group_norm.py (Triton GroupNorm(+SiLU) for SD UNets)", [
    C("=import torch", "import_torch_npu", A, T, "import torch_npu",
      "the op calls torch.npu / torch_npu after the port"),
    C(".multi_processor_count", "device_capability_check", R, F,
      "return torch.npu.get_device_properties(torch.npu.current_device()).vector_core_num",
      "NPU device properties have no multi_processor_count (vector_core_num/cube_core_num instead); helper unused here"),
    C("lambda kwargs: max(1, min(16, kwargs['ROW_SIZE'] * kwargs['BLOCK_SIZE'] // 128)),", "triton_kernel_tuning", R, F,
      "lambda kwargs: 1,", "warp heuristics are GPU-specific; their meaning on triton-ascend is unconfirmed"),
    C("eviction_policy='evict_last'", "triton_kernel_tuning", R, F,
      "x = tl.load(X + (r * C)[:, None] + row[None, :], mask=mask).to(tl.float32)",
      "GPU cache-eviction hint; support on triton-ascend unconfirmed"),
    C("lambda kwargs: max(1, min(16, triton.next_power_of_2(kwargs['HxW'] // 128))),", "triton_kernel_tuning", R, F,
      "lambda kwargs: 1,", "same as the other num_warps heuristic"),
    C("cache_modifier='.cg'", "triton_kernel_tuning", R, F,
      "x = tl.load(X + c * HxW + r, mask=r < HxW, other=0.).to(tl.float32)",
      "PTX cache modifier; unconfirmed on triton-ascend"),
    C("assert input.device.type == 'cuda'", "device_type", R, T,
      "assert input.device.type in ('cuda', 'npu')", "rejects npu tensors"),
    C("assert weight.device.type == 'cuda'", "device_type", R, T,
      "assert weight.device.type == input.device.type", "rejects npu tensors"),
    C("assert bias.device.type == 'cuda'", "device_type", R, T,
      "assert bias.device.type == input.device.type", "rejects npu tensors"),
    C("with torch.cuda.device(input.device):", "torch_cuda_api", R, T,
      "with torch.npu.device(input.device):", "torch.cuda.device rejects an npu device"),
    C("with torch.cuda.device(input.device.index):", "torch_cuda_api", R, T,
      "with torch.npu.device(input.device.index):", "entering torch.cuda.device needs a CUDA build"),
    C('x = torch.randn(2, 320, 64, 64, device="cuda", dtype=torch.float16)', "tensor_to_device", R, T,
      'x = torch.randn(2, 320, 64, 64, device="npu", dtype=torch.float16)', "self-test on the CUDA device"),
    C('w = torch.randn(320, device="cuda", dtype=torch.float16)', "tensor_to_device", R, T,
      'w = torch.randn(320, device="npu", dtype=torch.float16)', "see above"),
    C('b = torch.randn(320, device="cuda", dtype=torch.float16)', "tensor_to_device", R, T,
      'b = torch.randn(320, device="npu", dtype=torch.float16)', "see above"),
  ])

E("distrifuser_utils", "distrifuser/utils.py", "explicit_replacement",
  "mit-han-lab/distrifuser distrifuser/utils.py (torchrun + NCCL patch parallelism, CUDA-graph UNet runner)", [
    C("=import torch", "import_torch_npu", A, T, "import torch_npu", "hccl backend and torch.npu.* need torch_npu"),
    C('if version.parse(torch.version.cuda) < version.parse("11.3"):', "device_capability_check", R, T,
      'if torch.version.cuda is not None and version.parse(torch.version.cuda) < version.parse("11.3"):',
      "torch.version.cuda is None on the NPU build: version.parse(None) raises TypeError"),
    C('dist.init_process_group("nccl")', "dist_backend", R, T, 'dist.init_process_group("hccl")',
      "NCCL is unavailable; the except clause silently falls back to a single device"),
    C('device = torch.device(f"cuda:{rank}")', "device_type", R, T, 'device = torch.device(f"npu:{rank}")',
      "per-rank device"),
    C("=torch.cuda.set_device(device)", "torch_cuda_api", R, T, "torch.npu.set_device(device)",
      "raises without CUDA"),
    C("use_cuda_graph: bool = True,", "compile_mode", R, F, "use_cuda_graph: bool = False,",
      "NPUGraph is inference-only; capturing HCCL all_gather inside it is unconfirmed, so default it off"),
    C("s = torch.cuda.Stream()", "torch_cuda_api", R, T, "s = torch.npu.Stream()", "graph warm-up side stream"),
    C("s.wait_stream(torch.cuda.current_stream())", "torch_cuda_api", R, T,
      "s.wait_stream(torch.npu.current_stream())", "see above"),
    C("with torch.cuda.stream(s):", "torch_cuda_api", R, T, "with torch.npu.stream(s):", "see above"),
    C("torch.cuda.current_stream().wait_stream(s)", "torch_cuda_api", R, T,
      "torch.npu.current_stream().wait_stream(s)", "see above"),
    C("graph = torch.cuda.CUDAGraph()", "torch_cuda_api", R, T, "graph = torch.npu.NPUGraph()",
      "torch.npu.NPUGraph is the NPU form (inference only)"),
    C("with torch.cuda.graph(graph):", "torch_cuda_api", R, T, "with torch.npu.graph(graph):", "see above"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, T, "torch.npu.synchronize()", "benchmark timing"),
    C("torch.cuda.synchronize()  # wait for the timed iterations", "torch_cuda_api", R, T,
      "torch.npu.synchronize()  # wait for the timed iterations", "benchmark timing"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, T,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events need a CUDA build"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, T,
      "end = torch.npu.Event(enable_timing=True)", "see above"),
  ])
