#
# torchsionna -- a PyTorch port of selected NVIDIA Sionna link-level components.
# SPDX-License-Identifier: Apache-2.0
#
"""Global configuration: precision, random seeds and the compute device.

Everything in torchsionna takes `dtype`/`device` from this object unless they
are passed explicitly, mirroring ``sionna.config`` (``sionna.config.precision``,
``sionna.config.seed``, ``sionna.config.xla_compat``).

>>> from torchsionna import config
>>> config.precision = "double"
>>> config.seed = 42
>>> config.device            # 'cuda:0' on a GPU machine
"""
import os
import random
import warnings

import numpy as np
import torch

__all__ = ["Config", "config"]

_PRECISIONS = {
    "single": (torch.float32, torch.complex64),
    "double": (torch.float64, torch.complex128),
}


def _default_device():
    """Pick the best available backend.

    Order: explicit env override -> CUDA -> Apple MPS -> CPU.
    """
    env = os.environ.get("TORCHSIONNA_DEVICE")
    if env:
        return torch.device(env)
    if torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


class Config:
    """Singleton holding library-wide settings."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            inst = super().__new__(cls)
            inst._precision = "single"
            inst._seed = None
            inst._device = None
            inst._generator = None
            inst._tf32 = True
            cls._instance = inst
        return cls._instance

    # ------------------------------------------------------------------ precision
    @property
    def precision(self):
        return self._precision

    @precision.setter
    def precision(self, v):
        if v not in _PRECISIONS:
            raise ValueError("precision must be 'single' or 'double'")
        dev = self.device
        if v == "double" and dev.type == "mps":
            warnings.warn("MPS does not support float64; falling back to CPU")
            self._device = torch.device("cpu")
        self._precision = v

    @property
    def dtype(self):
        return _PRECISIONS[self._precision][0]

    @property
    def cdtype(self):
        return _PRECISIONS[self._precision][1]

    # ------------------------------------------------------------------ device
    @property
    def device(self):
        if self._device is None:
            self._device = _default_device()
        return self._device

    @device.setter
    def device(self, d):
        d = torch.device(d)
        if d.type == "cuda" and not torch.cuda.is_available():
            raise RuntimeError("CUDA device requested but torch.cuda.is_available() is False")
        self._device = d
        self._generator = None

    @property
    def is_gpu(self):
        return self.device.type == "cuda"

    # ------------------------------------------------------------------ TF32
    @property
    def allow_tf32(self):
        return self._tf32

    @allow_tf32.setter
    def allow_tf32(self, v):
        """TF32 speeds up matmuls on Ampere+ but hurts BER curves at high SNR."""
        self._tf32 = bool(v)
        torch.backends.cuda.matmul.allow_tf32 = self._tf32
        torch.backends.cudnn.allow_tf32 = self._tf32

    # ------------------------------------------------------------------ seeds
    @property
    def seed(self):
        return self._seed

    @seed.setter
    def seed(self, s):
        self._seed = s
        if s is None:
            self._generator = None
            return
        random.seed(s)
        np.random.seed(s)
        torch.manual_seed(s)
        if self.is_gpu:
            torch.cuda.manual_seed_all(s)
        self._generator = None

    @property
    def generator(self):
        """A torch.Generator living on `device`, seeded from `seed` (or random)."""
        if self._generator is None:
            if self.is_gpu:
                g = torch.Generator(device=self.device)
            else:
                g = torch.Generator()
            g.manual_seed(self._seed if self._seed is not None else torch.seed())
            self._generator = g
        return self._generator

    # ------------------------------------------------------------------ misc
    def memory_report(self):
        if not self.is_gpu:
            return "cpu: n/a"
        alloc = torch.cuda.memory_allocated(self.device) / 2 ** 30
        peak = torch.cuda.max_memory_allocated(self.device) / 2 ** 30
        return "%s: %.2f GiB allocated, %.2f GiB peak" % (torch.cuda.get_device_name(self.device), alloc, peak)

    def __repr__(self):
        return "Config(precision=%r, device=%s, seed=%r, tf32=%s)" % (
            self._precision, self.device, self._seed, self._tf32)


config = Config()
