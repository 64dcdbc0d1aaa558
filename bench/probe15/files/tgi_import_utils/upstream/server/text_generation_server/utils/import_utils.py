import subprocess

import torch
from loguru import logger


def is_ipex_available():
    try:
        import intel_extension_for_pytorch  # noqa: F401
    except ImportError:
        return False
    return True


def get_cuda_free_memory(device, memory_fraction):
    total_free_memory, _ = torch.cuda.mem_get_info(device)
    total_gpu_memory = torch.cuda.get_device_properties(device).total_memory
    free_memory = max(0, total_free_memory - (1 - memory_fraction) * total_gpu_memory)
    return free_memory


def get_xpu_free_memory(device, memory_fraction):
    total_memory = torch.xpu.get_device_properties(device).total_memory
    device_id = device.index
    memory_fraction = float(__import__("os").getenv("XPU_MEMORY_FRACTION", "1.0"))
    free_memory = max(0, int(total_memory * 0.9 * memory_fraction - torch.xpu.memory_reserved(device_id)))
    return free_memory


def get_cpu_free_memory(device, memory_fraction):
    import psutil
    from text_generation_server.utils.dist import WORLD_SIZE

    mem = psutil.virtual_memory()
    free_memory = int(mem.available * 0.95 / WORLD_SIZE)
    return free_memory


def noop(*args, **kwargs):
    pass


def cuda_arch_list():
    try:
        out = subprocess.check_output(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"], text=True)
    except (FileNotFoundError, subprocess.CalledProcessError):
        return []
    return sorted({line.strip() for line in out.splitlines() if line.strip()})


SYSTEM = None
if torch.version.hip is not None:
    SYSTEM = "rocm"
    empty_cache = torch.cuda.empty_cache
    synchronize = torch.cuda.synchronize
    get_free_memory = get_cuda_free_memory
elif torch.version.cuda is not None and torch.cuda.is_available():
    SYSTEM = "cuda"
    empty_cache = torch.cuda.empty_cache
    synchronize = torch.cuda.synchronize
    get_free_memory = get_cuda_free_memory
elif is_ipex_available():
    SYSTEM = "ipex"
    import intel_extension_for_pytorch  # noqa: F401

    if hasattr(torch, "xpu") and torch.xpu.is_available():
        empty_cache = torch.xpu.empty_cache
        synchronize = torch.xpu.synchronize
        get_free_memory = get_xpu_free_memory
    else:
        empty_cache = noop
        synchronize = noop
        get_free_memory = get_cpu_free_memory
else:
    SYSTEM = "cpu"

    empty_cache = noop
    synchronize = noop
    get_free_memory = get_cpu_free_memory

logger.info(f"Detected system {SYSTEM}")

# capability is used by the kernel selection code (flash attention v2 needs sm80+, marlin sm80+, fp8 sm89+)
if SYSTEM == "cuda":
    major, minor = torch.cuda.get_device_capability()
    CUDA_CAPABILITY = major * 10 + minor
    HAS_FLASH_ATTN_V2 = major >= 8
    HAS_FP8 = CUDA_CAPABILITY >= 89
else:
    CUDA_CAPABILITY = None
    HAS_FLASH_ATTN_V2 = SYSTEM == "rocm"
    HAS_FP8 = False


def device_for_rank(rank):
    if SYSTEM in {"cuda", "rocm"}:
        return torch.device(f"cuda:{rank}")
    if SYSTEM == "ipex" and hasattr(torch, "xpu") and torch.xpu.is_available():
        return torch.device(f"xpu:{rank}")
    return torch.device("cpu")


def default_dtype():
    if SYSTEM == "cpu":
        return torch.bfloat16 if torch.backends.mkldnn.is_available() else torch.float32
    if SYSTEM == "cuda" and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float16
