import os
import subprocess
from functools import lru_cache

import torch

from lightllm.utils.log_utils import init_logger

logger = init_logger(__name__)


@lru_cache(maxsize=None)
def get_device_sm_count():
    import triton
    from triton.runtime import driver

    properties = driver.active.utils.get_device_properties(0)
    sm_count = properties["multiprocessor_count"]
    return sm_count


@lru_cache(maxsize=None)
def get_device_sm_regs_num():
    import triton
    from triton.runtime import driver

    properties = driver.active.utils.get_device_properties(0)
    return properties["max_num_regs"]


@lru_cache(maxsize=None)
def get_device_sm_shared_mem_num():
    import triton
    from triton.runtime import driver

    properties = driver.active.utils.get_device_properties(0)
    return properties["max_shared_mem"]


@lru_cache(maxsize=None)
def get_device_warp_size():
    import triton
    from triton.runtime import driver

    properties = driver.active.utils.get_device_properties(0)
    return properties["warpSize"]


def calcu_kernel_best_vsm_count(kernel, num_warps):
    """
    Number of "virtual SMs" (SM count x resident blocks per SM) for a compiled
    triton kernel. Persistent kernels launch exactly this many programs.
    """
    n_regs = kernel.n_regs
    size_smem = kernel.metadata.shared

    sm_count = get_device_sm_count()
    max_regs = get_device_sm_regs_num()
    shared_mem_max = get_device_sm_shared_mem_num()
    warp_size = get_device_warp_size()

    occupancy = max_regs // (n_regs * warp_size * num_warps)
    if size_smem > 0:
        occupancy = min(occupancy, shared_mem_max // size_smem)
    num_sm = sm_count * occupancy
    return num_sm


@lru_cache(maxsize=None)
def get_current_device_name():
    if torch.cuda.is_available():
        device = torch.cuda.current_device()
        gpu_name = torch.cuda.get_device_name(device)
        # 4090 trans to 4090 D
        if "4090" in gpu_name and "4090 D" not in gpu_name:
            gpu_name = gpu_name.replace("4090", "4090 D")
        gpu_name = gpu_name.replace(" ", "_")
        return gpu_name
    else:
        return None


@lru_cache(maxsize=None)
def init_p2p(device_index):
    """
    torch 调用跨卡的to操作后，triton编译的算子便能自动操作跨卡tensor。
    """
    num_gpus = torch.cuda.device_count()
    tensor = torch.zeros((1,))
    tensor = tensor.to(f"cuda:{device_index}")
    for j in range(num_gpus):
        tensor.to(f"cuda:{j}")

    torch.cuda.empty_cache()
    return


@lru_cache(maxsize=None)
def kv_trans_use_p2p():
    return os.getenv("KV_TRANS_USE_P2P", "False").upper() in ["1", "TRUE", "ON"]


def has_nvlink():
    try:
        # Call nvidia-smi to get the topology matrix
        result = subprocess.check_output(["nvidia-smi", "topo", "--matrix"])
        result = result.decode("utf-8")

        # Check if the output contains 'NVLink'
        if "NV" in result:
            return True
        else:
            return False
    except subprocess.CalledProcessError:
        # If there's an error (e.g., nvidia-smi is not installed or another issue), assume no NVLink
        return False


@lru_cache(maxsize=None)
def is_hopper():
    name = torch.cuda.get_device_name()
    return "H100" in name or "H800" in name or "H200" in name or "H20" in name


@lru_cache(maxsize=None)
def is_sm90_or_later():
    major, _ = torch.cuda.get_device_capability()
    return major >= 9


@lru_cache(maxsize=None)
def get_current_device_id():
    return torch.cuda.current_device()


@lru_cache(maxsize=None)
def get_gpu_count_in_node():
    # CUDA_VISIBLE_DEVICES may hide some of the physical cards from this process
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible:
        return len([d for d in visible.split(",") if d.strip() != ""])
    return torch.cuda.device_count()


def log_device_summary():
    # purely informational, printed once per rank at startup
    logger.info(
        f"device_name={get_current_device_name()} sm_count={get_device_sm_count()} "
        f"hopper={is_hopper()} nvlink={has_nvlink()} gpus_in_node={get_gpu_count_in_node()}"
    )
