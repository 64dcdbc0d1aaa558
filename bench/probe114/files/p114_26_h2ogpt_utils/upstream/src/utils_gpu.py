"""GPU helpers shared by gen.py, gradio_runner.py and the embedding loaders."""
import functools
import gc
import os
import random
import subprocess
import sys
import traceback

import numpy as np


def set_seed(seed: int):
    """
    Sets the seed of the entire notebook so results are the same every time we run.
    This is for REPRODUCIBILITY.
    """
    import torch

    np.random.seed(seed)
    random_state = np.random.RandomState(seed)
    random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    os.environ["PYTHONHASHSEED"] = str(seed)
    return random_state


def clear_torch_cache(allow_skip=False):
    if allow_skip and os.getenv("CLEAR_CLEAR_TORCH", "2") == "1" or os.getenv("CLEAR_CLEAR_TORCH", "2") == "0":
        return
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
            torch.cuda.ipc_collect()
            gc.collect()
    except RuntimeError as e:
        print("clear_torch_cache error: %s" % "".join(traceback.format_tb(e.__traceback__)), flush=True)


def get_ngpus_vis(raise_if_exception=True):
    ngpus_vis1 = None

    shell = False
    if shell:
        cmd = "nvidia-smi -L 2> /dev/null"
    else:
        cmd = ["nvidia-smi", "-L"]

    try:
        timeout = 5 * 3
        o = subprocess.check_output(cmd, shell=shell, timeout=timeout)
        lines = o.decode("utf-8").splitlines()
        ngpus_vis1 = 0
        for line in lines:
            if "Failed to initialize NVML" not in line:
                ngpus_vis1 += 1
    except (FileNotFoundError, subprocess.CalledProcessError, OSError):
        # GPU systems might not have nvidia-smi, so can't fail
        pass
    except subprocess.TimeoutExpired as e:
        print("Failed get_ngpus_vis: %s" % str(e))
        if raise_if_exception:
            raise

    if ngpus_vis1 is None:
        import torch

        if get_device() == "cuda":
            ngpus_vis1 = torch.cuda.device_count() if torch.cuda.is_available() else 0
        else:
            ngpus_vis1 = 0

    ngpus_vis1, which_gpus = cuda_vis_check(ngpus_vis1)
    return ngpus_vis1


def cuda_vis_check(total_gpus):
    """Helper function to count GPUs by environment variable
    Stolen from Jon's h2o4gpu utils
    """
    cudavis = os.getenv("CUDA_VISIBLE_DEVICES")
    which_gpus = []
    if cudavis is not None:
        # prune away white-space, non-numerics,
        # except commas for simple checking
        cudavis = "".join(cudavis.split())
        import re

        cudavis = re.sub("[^0-9,]", "", cudavis)

        lencudavis = len(cudavis)
        if lencudavis == 0:
            total_gpus = 0
        else:
            total_gpus = min(total_gpus, os.getenv("CUDA_VISIBLE_DEVICES").count(",") + 1)
            which_gpus = os.getenv("CUDA_VISIBLE_DEVICES").split(",")
            which_gpus = [int(x) for x in which_gpus]
    else:
        which_gpus = list(range(0, total_gpus))

    return total_gpus, which_gpus


def get_device(n_gpus=None):
    import torch

    if torch.cuda.is_available() and n_gpus != 0:
        device = "cuda"
    elif torch.backends.mps.is_built():
        device = "mps"
    else:
        device = "cpu"

    return device


@functools.lru_cache(maxsize=1)
def get_gpu_info():
    """(name, free GiB, total GiB) per visible device, used for the "System info" tab."""
    import torch

    out = []
    for i in range(torch.cuda.device_count()):
        free, total = torch.cuda.mem_get_info(i)
        out.append((torch.cuda.get_device_name(i), free / 2**30, total / 2**30))
    return out


def get_max_memory(n_gpus, reserve_gib=2):
    """max_memory dict for from_pretrained(device_map='auto'), leaving room for the KV cache."""
    import torch

    max_memory = {}
    for i in range(n_gpus):
        total = torch.cuda.get_device_properties(i).total_memory / 2**30
        max_memory[i] = "%dGiB" % max(1, int(total - reserve_gib))
    max_memory["cpu"] = "64GiB"
    return max_memory


def get_torch_allocated():
    import torch

    return torch.cuda.memory_allocated()


def system_info():
    import psutil

    info = {}
    info["cpu_count"] = os.cpu_count()
    info["ram_gib"] = psutil.virtual_memory().total / 2**30
    info["python"] = sys.version.split()[0]
    try:
        import torch

        info["torch"] = torch.__version__
        info["cuda"] = torch.version.cuda
        info["cudnn"] = torch.backends.cudnn.version()
        info["ngpus"] = get_ngpus_vis(raise_if_exception=False)
        for i, (name, free, total) in enumerate(get_gpu_info()):
            info[f"gpu{i}"] = f"{name} ({free:.1f}/{total:.1f} GiB free)"
        info["torch_allocated_gib"] = get_torch_allocated() / 2**30
    except Exception as e:
        info["torch_error"] = str(e)
    return info


def is_bf16_ok():
    """True when the first GPU supports bfloat16 natively (Ampere+)."""
    import torch

    if not torch.cuda.is_available():
        return False
    major, minor = torch.cuda.get_device_capability(0)
    return major >= 8


def get_hf_load_kwargs(n_gpus, load_8bit=False, load_4bit=False, low_bit_mode=1, use_gpu_id=True, gpu_id=0,
                       reserve_gib=2):
    """Keyword arguments for AutoModelForCausalLM.from_pretrained() given the GPU situation.

    low_bit_mode: 1 = fp16 compute, 2 = bf16 compute (4-bit only)
    """
    import torch

    kwargs = dict(low_cpu_mem_usage=True)
    if n_gpus == 0:
        kwargs["torch_dtype"] = torch.float32
        kwargs["device_map"] = {"": "cpu"}
        return kwargs

    if use_gpu_id and gpu_id is not None and gpu_id >= 0:
        # pin the whole model on one card; much faster than splitting across PCIe
        kwargs["device_map"] = {"": gpu_id}
    else:
        kwargs["device_map"] = "auto"
        kwargs["max_memory"] = get_max_memory(n_gpus, reserve_gib=reserve_gib)

    if load_8bit:
        kwargs["load_in_8bit"] = True
    elif load_4bit:
        from transformers import BitsAndBytesConfig

        compute_dtype = torch.bfloat16 if low_bit_mode == 2 and is_bf16_ok() else torch.float16
        kwargs["quantization_config"] = BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_compute_dtype=compute_dtype,
            bnb_4bit_quant_type="nf4",
            bnb_4bit_use_double_quant=False,
        )
    else:
        kwargs["torch_dtype"] = torch.bfloat16 if is_bf16_ok() else torch.float16
    return kwargs
