import os
import subprocess

import psutil
from loguru import logger

from data_juicer.utils.lazy_loader import LazyLoader

torch = LazyLoader("torch")

NVSMI_REPORT = True


def query_cuda_info(query_key):
    global NVSMI_REPORT
    # get cuda info using "nvidia-smi" command in MB
    try:
        nvidia_smi_output = subprocess.check_output(
            ["nvidia-smi", f"--query-gpu={query_key}", "--format=csv,noheader,nounits"]
        ).decode("utf-8")
    except Exception as e:
        if "non-zero exit status 2" in str(e):
            err_msg = (
                f"The specified query_key [{query_key}] might not be "
                f"supported by command nvidia-smi. Please check and retry!"
            )
        elif "No such file or directory" in str(e):
            err_msg = "Command nvidia-smi is not found. There might be no GPUs on this machine."
        else:
            err_msg = str(e)
        if NVSMI_REPORT:
            logger.warning(err_msg)
            NVSMI_REPORT = False
        return None
    cuda_info_list = []
    for line in nvidia_smi_output.strip().split("\n"):
        cuda_info_list.append(int(line))
    return cuda_info_list


def get_cpu_count():
    return psutil.cpu_count()


def get_cpu_utilization():
    return psutil.cpu_percent()


def query_mem_info(query_key):
    mem = psutil.virtual_memory()
    if query_key not in mem._fields:
        logger.warning(f"No such query key [{query_key}] for memory info. Should be one of {mem._fields}")
        return None
    val = round(mem.__getattribute__(query_key) / (2**20), 2)  # in MB
    return val


def cuda_device_count():
    try:
        return torch.cuda.device_count()
    except Exception:
        return 0


def is_cuda_available():
    try:
        return torch.cuda.is_available()
    except Exception:
        return False


def available_memories():
    """Available memory for each node in MB."""
    ray_nodes_info = _ray_nodes_info()
    if ray_nodes_info is not None:
        return [int(n["free_memory"]) for n in ray_nodes_info.values()]
    return [int(query_mem_info("free"))]


def available_gpu_memories():
    """Available gpu memory of each gpu card for each alive node in MB."""
    ray_nodes_info = _ray_nodes_info()
    if ray_nodes_info is not None:
        memories = []
        for n in ray_nodes_info.values():
            memories.extend(n["free_gpus_memory"])
        return memories
    free_gpus_memory = query_cuda_info("memory.free")
    return free_gpus_memory or []


def _ray_nodes_info():
    if not _is_ray_mode():
        return None
    from data_juicer.core.ray_data import get_ray_nodes_info

    return get_ray_nodes_info()


def _is_ray_mode():
    return os.environ.get("DATA_JUICER_EXECUTOR", "default") == "ray"


def gpu_utilization(device_index: int = 0) -> float:
    """Current utilisation (0-100) of one GPU, used by the monitor thread."""
    values = query_cuda_info("utilization.gpu")
    if not values or device_index >= len(values):
        return 0.0
    return float(values[device_index])


def calculate_np(name, mem_required, cpu_required, num_proc=None, use_cuda=False):
    """Calculate the optimum number of processes for the given OP"""
    eps = 1e-9  # about 1 byte

    if use_cuda:
        auto_num_proc = None
        cuda_mem_available = min(available_gpu_memories() or [0]) / 1024
        if mem_required == 0:
            logger.warning(
                f"The required cuda memory of Op[{name}] "
                f"has not been specified. "
                f"Please specify the mem_required field in the "
                f"config file, or you might encounter CUDA "
                f"out of memory error. You can reference "
                f"the mem_required field in the "
                f"config_all.yaml file."
            )
        else:
            auto_num_proc = math_floor(cuda_mem_available / mem_required) * cuda_device_count()
            if cuda_mem_available / mem_required < 1.0:
                logger.warning(
                    f"The required cuda memory:{mem_required}GB might "
                    f"be more than the available cuda memory:"
                    f"{cuda_mem_available}GB."
                    f"This Op[{name}] might "
                    f"require more resource to run."
                )

        if auto_num_proc and num_proc:
            op_proc = min(auto_num_proc, num_proc)
            if num_proc > auto_num_proc:
                logger.warning(
                    f"The given num_proc: {num_proc} is greater than "
                    f"the value {auto_num_proc} auto calculated based "
                    f"on the mem_required of Op[{name}]. "
                    f"Set the `num_proc` to {auto_num_proc}."
                )
        elif not auto_num_proc and not num_proc:
            op_proc = cuda_device_count()
            logger.warning(
                f"Both mem_required and num_proc of Op[{name}] are not set."
                f"Set the `num_proc` to number of GPUs {op_proc}."
            )
        else:
            op_proc = auto_num_proc if auto_num_proc else num_proc

        op_proc = max(op_proc, 1)
        return op_proc
    else:
        if num_proc is None:
            num_proc = psutil.cpu_count()

        op_proc = num_proc
        cpu_available = psutil.cpu_count()
        mem_available = available_memories()
        mem_available = min(mem_available) / 1024 if mem_available else 0
        op_proc = min(op_proc, math_floor(cpu_available / cpu_required + eps))
        op_proc = min(op_proc, math_floor(mem_available / mem_required + eps)) if mem_required else op_proc
        if op_proc < 1.0:
            logger.warning(
                f"The required CPU number:{cpu_required} "
                f"and memory:{mem_required}GB might "
                f"be more than the available CPU:{cpu_available} "
                f"and memory :{mem_available}GB."
                f"This Op [{name}] might "
                f"require more resource to run."
            )
        op_proc = max(op_proc, 1)
        return op_proc


def math_floor(x):
    import math

    return int(math.floor(x))
