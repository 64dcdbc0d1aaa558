"""Small helpers shared by the active-learning benchmark scripts.

Most of our runs are launched many-at-a-time on shared 4/8-GPU boxes, so
`get_device()` picks the GPU with the most free memory unless one is given.
"""
import os
import random
import subprocess
import time
from contextlib import contextmanager

import numpy as np
import torch


def get_free_gpu():
    """Index of the GPU with the most free memory (as reported by nvidia-smi)."""
    try:
        out = subprocess.check_output(
            ["nvidia-smi", "--query-gpu=memory.free", "--format=csv,nounits,noheader"],
            encoding="utf-8")
    except (FileNotFoundError, subprocess.CalledProcessError):
        return 0
    free = [int(x) for x in out.strip().split("\n") if x.strip()]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible:
        ids = [int(v) for v in visible.split(",") if v.strip()]
        free = [free[i] for i in ids]
    return int(np.argmax(free))


def get_device(gpu=None, verbose=True):
    """torch.device to run on.

    gpu: None -> pick the freest GPU, -1 -> CPU, int -> that GPU.
    """
    if gpu == -1 or not torch.cuda.is_available():
        dev = torch.device("cpu")
    else:
        if gpu is None:
            gpu = get_free_gpu()
        dev = torch.device(f"cuda:{gpu}")
        torch.cuda.set_device(dev)
    if verbose:
        print(f"[utils] using {dev}" + (f" ({torch.cuda.get_device_name(dev)})" if dev.type == "cuda" else ""))
    return dev


def set_seed(seed, deterministic=False):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    if deterministic:
        # needed for bit-exact reruns of the query step (cuBLAS workspace)
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
        torch.use_deterministic_algorithms(True, warn_only=True)


def move_to(obj, device):
    """Recursively move tensors in lists / tuples / dicts to `device`."""
    if torch.is_tensor(obj):
        return obj.to(device, non_blocking=True)
    if isinstance(obj, dict):
        return {k: move_to(v, device) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(move_to(v, device) for v in obj)
    return obj


def gpu_mem_str(device=None):
    if not torch.cuda.is_available():
        return "n/a"
    alloc = torch.cuda.memory_allocated(device) / 2 ** 20
    reserved = torch.cuda.memory_reserved(device) / 2 ** 20
    peak = torch.cuda.max_memory_allocated(device) / 2 ** 20
    return f"alloc {alloc:.0f}MB / reserved {reserved:.0f}MB / peak {peak:.0f}MB"


def free_gpu_memory(*objs):
    """Drop references and return cached blocks to the driver between AL rounds."""
    for o in objs:
        del o
    import gc
    gc.collect()
    torch.cuda.empty_cache()


@contextmanager
def cuda_timer(name, enabled=True, log=print):
    """Times a block with CUDA events (wall-clock on CPU)."""
    if not enabled:
        yield
        return
    if torch.cuda.is_available():
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        yield
        end.record()
        torch.cuda.synchronize()
        log(f"[timer] {name}: {start.elapsed_time(end) / 1000:.2f}s")
    else:
        t0 = time.time()
        yield
        log(f"[timer] {name}: {time.time() - t0:.2f}s")


def num_workers_default():
    n_cpu = os.cpu_count() or 4
    n_gpu = max(torch.cuda.device_count(), 1)
    return max(2, min(16, n_cpu // n_gpu))


def env_report():
    """One-line-per-device summary written at the top of every run log."""
    lines = [f"torch {torch.__version__} | CUDA {torch.version.cuda} | cuDNN {torch.backends.cudnn.version()}"]
    for i in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(i)
        lines.append(f"  gpu{i}: {props.name} sm_{props.major}{props.minor} "
                     f"{props.total_memory / 2 ** 30:.0f}GiB {props.multi_processor_count} SMs")
    return "\n".join(lines)


def supports_bf16(device=None):
    """bf16 autocast is only worth it on Ampere or newer."""
    if not torch.cuda.is_available():  # CPU runs stay in fp32
        return False
    major, _ = torch.cuda.get_device_capability(device)
    return major >= 8
