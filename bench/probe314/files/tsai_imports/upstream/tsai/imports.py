import os
import sys
import gc
import time
import warnings
import platform
import subprocess
import importlib
from pathlib import Path
from functools import partial
from collections import OrderedDict
from typing import Optional, Union, Tuple, List, Any

import numpy as np
import pandas as pd
import matplotlib.pyplot as plt
import sklearn
import psutil
import torch
import torch.nn as nn
import torch.nn.functional as F

from fastai.imports import *
from fastai.data.all import *
from fastai.torch_core import *
from fastai.learner import *
from fastai.metrics import *
from fastai.callback.all import *
from fastai.vision.data import *
from fastai.interpret import *
from fastai.optimizer import *
from fastai.losses import *
from fastai.tabular.all import *
import fastai
import fastcore

PATH = Path(os.getcwd())
cpus = defaults.cpus

warnings.filterwarnings("ignore", category=UserWarning, module="torch.nn.modules.conv")


def is_nb_env():
    "Returns True if run inside a Jupyter/IPython kernel"
    try:
        from IPython import get_ipython
        return get_ipython() is not None and 'IPKernelApp' in get_ipython().config
    except Exception:
        return False


def is_colab():
    "Returns True if run in Google Colab"
    return 'google.colab' in sys.modules


def is_kaggle():
    return os.environ.get('KAGGLE_KERNEL_RUN_TYPE', '') != ''


def is_lab():
    import re
    import psutil
    return any(re.search('jupyter-lab-script', x) for x in psutil.Process().parent().cmdline())


def to_local_time(t, time_format='%Y-%m-%d %H:%M:%S'):
    return time.strftime(time_format, time.localtime(t))


def _save_nb():
    "Save and checkpoints current jupyter notebook."
    from IPython.display import HTML, Javascript, display
    if is_lab():
        script = """
        this.nextElementSibling.focus();
        this.dispatchEvent(new KeyboardEvent('keydown', {key:'s', keyCode: 83, metaKey: true}));
        """
        display(HTML(('<img src onerror="{}" style="display:none">' '<input style="width:0;height:0;border:0">').format(script)))
    else:
        display(Javascript('IPython.notebook.save_checkpoint();'))


def get_gpu_memory():
    "Returns a list with the total memory (GB) of each visible GPU, as reported by nvidia-smi"
    try:
        result = subprocess.check_output(['nvidia-smi', '--query-gpu=memory.total', '--format=csv,nounits,noheader'])
    except (FileNotFoundError, subprocess.CalledProcessError):
        return []
    gpu_memory = [int(x) for x in result.decode('utf-8').strip().split('\n') if x.strip()]
    return [round(m / 1024, 2) for m in gpu_memory]


def get_ram_memory():
    nbytes = psutil.virtual_memory().total
    return round(nbytes / 1024**3, 2)


def get_dir_size(path='.'):
    total = 0
    for entry in os.scandir(path):
        if entry.is_file():
            total += entry.stat().st_size
        elif entry.is_dir():
            total += get_dir_size(entry.path)
    return total


def _get_pkg_version(name):
    try:
        return importlib.import_module(name).__version__
    except Exception:
        return 'N/A'


def computer_setup(*pkgs):
    "Prints OS, python, package versions and the hardware the code will run on"
    try:
        print(f'os              : {platform.platform()}')
    except Exception:
        pass
    try:
        from platform import python_version
        print(f'python          : {python_version()}')
    except Exception:
        pass
    version_dict = {
        'tsai': _get_pkg_version('tsai'),
        'fastai': fastai.__version__,
        'fastcore': fastcore.__version__,
        'torch': torch.__version__,
        'numpy': np.__version__,
        'pandas': pd.__version__,
        'sklearn': sklearn.__version__,
    }
    for pkg in pkgs:
        version_dict[pkg] = _get_pkg_version(pkg)
    for k, v in version_dict.items():
        print(f'{k:16}: {v}')
    try:
        print(f'device          : {default_device()}')
    except Exception:
        pass
    try:
        print(f'cpu cores       : {cpus}')
    except Exception:
        pass
    try:
        print(f'threads per cpu : {psutil.cpu_count(logical=True) // psutil.cpu_count(logical=False)}')
    except Exception:
        pass
    try:
        print(f'RAM             : {get_ram_memory()} GB')
    except Exception:
        pass
    try:
        n_gpus = torch.cuda.device_count()
        print(f'GPU count       : {n_gpus}')
        for i in range(n_gpus):
            print(f'GPU {i}           : {torch.cuda.get_device_name(i)}')
    except Exception:
        pass
    try:
        gpu_memory = get_gpu_memory()
        if len(gpu_memory) > 0:
            print(f'GPU memory      : {gpu_memory} GB')
    except Exception:
        pass
    try:
        print(f'CUDA            : {torch.version.cuda}  cuDNN: {torch.backends.cudnn.version()}')
    except Exception:
        pass


def gpu_mem_report(device=None):
    "Quick one-line report of memory used by the current process on a GPU"
    if not torch.cuda.is_available():
        return 'no GPU available'
    alloc = torch.cuda.memory_allocated(device) / 1024**3
    reserved = torch.cuda.memory_reserved(device) / 1024**3
    return f'allocated: {alloc:.2f} GB | reserved: {reserved:.2f} GB'


def torch_empty_cache():
    "Frees the memory cached by PyTorch's caching allocator"
    gc.collect()
    torch.cuda.empty_cache()


class Timer:
    def start(self, verbose=True):
        self.all_elapsed = 0
        self.n = 0
        self.verbose = verbose
        self.start_dt = time.perf_counter()
        self.start_dt0 = self.start_dt

    def elapsed(self):
        end_dt = time.perf_counter()
        self.n += 1
        assert hasattr(self, "start_dt0"), "You need to first use timer.start()"
        elapsed = end_dt - self.start_dt
        if self.all_elapsed == 0:
            self.all_elapsed = elapsed
        else:
            self.all_elapsed += elapsed
        if self.verbose:
            print(f'Elapsed time ({self.n:3}): {elapsed:.6f}')
        self.start_dt = time.perf_counter()
        return elapsed

    def stop(self):
        end_dt = time.perf_counter()
        self.n += 1
        assert hasattr(self, "start_dt0"), "You need to first use timer.start()"
        elapsed = end_dt - self.start_dt
        if self.all_elapsed == 0:
            self.all_elapsed = elapsed
        else:
            self.all_elapsed += elapsed
        total_elapsed = end_dt - self.start_dt0
        delattr(self, "start_dt0")
        delattr(self, "start_dt")
        if self.verbose:
            if self.n > 1:
                print(f'Elapsed time ({self.n:3}): {elapsed:.6f}')
                print(f'Total time        : {self.all_elapsed:.6f}')
            else:
                print(f'Total time        : {total_elapsed:.6f}')
        return total_elapsed


timer = Timer()
