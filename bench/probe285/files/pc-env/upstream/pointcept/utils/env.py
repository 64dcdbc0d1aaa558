"""
Environment Utils

Author: Xiaoyang Wu (xiaoyang.wu.cs@gmail.com)
Please cite our work if the code is helpful to you.
"""

import os
import random
import subprocess
import sys
from collections import defaultdict
from datetime import datetime

import numpy as np
import torch
import torch.backends.cudnn as cudnn


def get_random_seed():
    seed = (
        os.getpid()
        + int(datetime.now().strftime("%S%f"))
        + int.from_bytes(os.urandom(2), "big")
    )
    return seed


def set_seed(seed=None):
    if seed is None:
        seed = get_random_seed()
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    cudnn.benchmark = False
    cudnn.deterministic = True
    os.environ["PYTHONHASHSEED"] = str(seed)


def _get_nvcc_version(cuda_home):
    try:
        nvcc = os.path.join(cuda_home, "bin", "nvcc")
        out = subprocess.check_output(f'"{nvcc}" -V', shell=True)
        return out.decode("utf-8").strip().split("\n")[-1]
    except (subprocess.SubprocessError, OSError):
        return "Not Available"


def collect_env_info():
    """Collect the information of the running environments (printed in the train log)."""
    env_info = defaultdict(str)
    env_info["sys.platform"] = sys.platform
    env_info["Python"] = sys.version.replace("\n", "")
    env_info["numpy"] = np.__version__
    env_info["PyTorch"] = torch.__version__
    env_info["PyTorch debug build"] = str(torch.version.debug)

    cuda_available = torch.cuda.is_available()
    env_info["GPU available"] = str(cuda_available)
    if cuda_available:
        devices = defaultdict(list)
        for k in range(torch.cuda.device_count()):
            devices[torch.cuda.get_device_name(k)].append(str(k))
        for name, device_ids in devices.items():
            env_info["GPU " + ",".join(device_ids)] = name

        from torch.utils.cpp_extension import CUDA_HOME

        env_info["CUDA_HOME"] = str(CUDA_HOME)
        if CUDA_HOME is not None and os.path.isdir(CUDA_HOME):
            env_info["NVCC"] = _get_nvcc_version(CUDA_HOME)
        env_info["CUDA_VISIBLE_DEVICES"] = os.environ.get("CUDA_VISIBLE_DEVICES", "")
        env_info["cuDNN"] = str(torch.backends.cudnn.version())

    for pkg in ("spconv", "torch_scatter", "pointops", "flash_attn"):
        try:
            mod = __import__(pkg)
            env_info[pkg] = getattr(mod, "__version__", "unknown")
        except ImportError:
            env_info[pkg] = "not installed"

    env_info["OpenCV"] = _opencv_version()
    return "\n".join(f"{k:<22}{v}" for k, v in env_info.items())


def _opencv_version():
    try:
        import cv2

        return cv2.__version__
    except ImportError:
        return "not installed"
