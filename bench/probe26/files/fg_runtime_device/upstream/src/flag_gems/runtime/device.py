import os
import shutil
import subprocess
import threading
from enum import Enum

import torch

from . import backend, error

UNSUPPORTED = "unsupported"


class vendors(Enum):
    NVIDIA = 0
    CAMBRICON = 1
    METAX = 2
    ILUVATAR = 3
    MTHREADS = 4
    KUNLUNXIN = 5
    HYGON = 6
    AMD = 7


# command whose successful execution identifies the vendor
VENDOR_QUERY_CMDS = {
    "nvidia": "nvidia-smi",
    "cambricon": "cnmon",
    "iluvatar": "ixsmi",
    "mthreads": "mthreads-gmi",
    "metax": "mx-smi",
    "kunlunxin": "xpu-smi",
    "hygon": "hy-smi",
    "amd": "rocm-smi",
}


class _DeviceDetector:
    _instance = None
    _lock = threading.Lock()

    def __new__(cls, *args, **kwargs):
        if cls._instance is None:
            with cls._lock:
                if cls._instance is None:
                    cls._instance = super().__new__(cls)
        return cls._instance

    def __init__(self, vendor_name=None):
        if getattr(self, "_initialized", False):
            return
        self.vendor_name = vendor_name or os.environ.get("GEMS_VENDOR") or self._detect_vendor()
        self.info = backend.get_vendor_info(self.vendor_name)
        self.name = self.info.device_name
        self.dispatch_key = self.info.dispatch_key or self.name.upper()
        self.device_count = self._get_device_count()
        self.support_fp64 = self.vendor_name not in ("cambricon",)
        self._initialized = True

    def _detect_vendor(self):
        # fast path: a CUDA build of torch that sees a device is an NVIDIA box
        if torch.cuda.is_available() and torch.version.cuda is not None:
            return "nvidia"
        if torch.cuda.is_available() and torch.version.hip is not None:
            return "amd"
        for vendor, cmd in VENDOR_QUERY_CMDS.items():
            if shutil.which(cmd) is None:
                continue
            try:
                subprocess.run([cmd], capture_output=True, check=True, timeout=10)
                return vendor
            except (subprocess.SubprocessError, OSError):
                continue
        error.device_not_found()

    def _get_device_count(self):
        module = getattr(torch, self.name, None)
        if module is None or not hasattr(module, "device_count"):
            return 0
        return module.device_count()

    def get_torch_device_fn_name(self):
        return self.name

    def get_device_module(self):
        return getattr(torch, self.name)


device = _DeviceDetector()
vendor_module = backend.get_vendor_module(device.vendor_name)
torch_device_fn = device.get_device_module()
support_fp64 = device.support_fp64


def current_device_index():
    return torch_device_fn.current_device()


def empty_cache():
    torch_device_fn.empty_cache()
