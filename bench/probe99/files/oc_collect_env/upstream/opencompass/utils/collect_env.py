"""Collect the running environment for bug reports (`python tools/collect_env.py`).

Modelled on mmengine.utils.dl_utils.collect_env, trimmed to what OpenCompass
evaluation runs actually need: python / torch / CUDA / GPU models and the
versions of the inference backends.
"""
import os
import os.path as osp
import subprocess
import sys
from collections import OrderedDict, defaultdict

import numpy as np
import torch

import opencompass


def _get_cuda_home():
    from torch.utils.cpp_extension import CUDA_HOME
    return CUDA_HOME


def _run(cmd: str) -> str:
    try:
        out = subprocess.check_output(cmd, shell=True, stderr=subprocess.STDOUT)
        return out.decode('utf-8').strip()
    except (subprocess.SubprocessError, OSError):
        return 'Not Available'


def _backend_versions() -> dict:
    versions = {}
    for name in ('transformers', 'accelerate', 'vllm', 'lmdeploy', 'flash_attn',
                 'xformers', 'bitsandbytes'):
        try:
            mod = __import__(name)
            versions[name] = getattr(mod, '__version__', 'unknown')
        except Exception:  # noqa: BLE001 - any import error means "absent"
            versions[name] = 'Not Installed'
    return versions


def collect_env() -> dict:
    """Collect the information of the running environments.

    Returns:
        dict: The environment information. The following fields are contained.

            - sys.platform: The variable of ``sys.platform``.
            - Python: Python version.
            - CUDA available: Bool, indicating if CUDA is available.
            - GPU devices: Device type of each GPU.
            - CUDA_HOME (optional): The env var ``CUDA_HOME``.
            - NVCC (optional): NVCC version.
            - PyTorch: PyTorch version.
            - Backends: versions of optional inference libraries.
    """
    env_info = OrderedDict()
    env_info['sys.platform'] = sys.platform
    env_info['Python'] = sys.version.replace('\n', '')

    cuda_available = torch.cuda.is_available()
    env_info['CUDA available'] = cuda_available
    env_info['numpy_random_seed'] = np.random.get_state()[1][0]

    if cuda_available:
        devices = defaultdict(list)
        for k in range(torch.cuda.device_count()):
            devices[torch.cuda.get_device_name(k)].append(str(k))
        for name, device_ids in devices.items():
            env_info['GPU ' + ','.join(device_ids)] = name

        cuda_home = _get_cuda_home()
        env_info['CUDA_HOME'] = cuda_home

        if cuda_home is not None and osp.isdir(cuda_home):
            nvcc = osp.join(cuda_home, 'bin/nvcc')
            env_info['NVCC'] = _run(f'"{nvcc}" -V | tail -n1')

        env_info['GPU driver'] = _run(
            'nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n1')
        env_info['CUDA_VISIBLE_DEVICES'] = os.environ.get('CUDA_VISIBLE_DEVICES', '<unset>')

    env_info['GCC'] = _run('gcc --version | head -n1')
    env_info['PyTorch'] = torch.__version__
    env_info['PyTorch compiling details'] = torch.__config__.show()

    try:
        import torchvision
        env_info['TorchVision'] = torchvision.__version__
    except ModuleNotFoundError:
        pass

    env_info.update(_backend_versions())
    env_info['OpenCompass'] = opencompass.__version__
    try:
        import mmengine
        env_info['MMEngine'] = mmengine.__version__
    except ModuleNotFoundError:
        pass
    return env_info


if __name__ == '__main__':
    for name, val in collect_env().items():
        print(f'{name}: {val}')
