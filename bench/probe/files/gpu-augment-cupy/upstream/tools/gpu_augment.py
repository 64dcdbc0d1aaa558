"""GPU-side data augmentation and device monitoring helpers.

Augmentations run on the GPU with CuPy / Numba so the dataloader workers
only decode JPEGs. Tensors are exchanged with PyTorch through DLPack.
"""
import logging
import math
import os
import threading
import time
from typing import Dict, List, Optional

import numpy as np
import torch
from torch.utils.dlpack import from_dlpack, to_dlpack

import cupy as cp
import pynvml
from numba import cuda

logger = logging.getLogger(__name__)


@cuda.jit
def _gaussian_noise_kernel(img, noise, sigma, out):
    i, j = cuda.grid(2)
    if i < img.shape[0] and j < img.shape[1]:
        v = img[i, j] + sigma * noise[i, j]
        out[i, j] = min(max(v, 0.0), 1.0)


def add_gaussian_noise(img: torch.Tensor, sigma: float = 0.05) -> torch.Tensor:
    """img: (H, W) float32 CUDA tensor in [0, 1]."""
    d_img = cuda.as_cuda_array(img)
    noise = torch.randn_like(img)
    d_noise = cuda.as_cuda_array(noise)
    out = torch.empty_like(img)
    d_out = cuda.as_cuda_array(out)
    threads = (16, 16)
    blocks = (math.ceil(img.shape[0] / threads[0]), math.ceil(img.shape[1] / threads[1]))
    _gaussian_noise_kernel[blocks, threads](d_img, d_noise, sigma, d_out)
    return out


def random_gamma(batch: torch.Tensor, low: float = 0.7, high: float = 1.5) -> torch.Tensor:
    """Per-image gamma correction computed with CuPy on the same device."""
    x = cp.from_dlpack(to_dlpack(batch.contiguous()))
    gammas = cp.random.uniform(low, high, size=(x.shape[0],) + (1,) * (x.ndim - 1)).astype(x.dtype)
    y = cp.power(cp.clip(x, 0, 1), gammas)
    return from_dlpack(y.toDlpack())


def hsv_jitter(batch: torch.Tensor, hue: float = 0.05) -> torch.Tensor:
    # simple hue rotation in YIQ space, vectorised in torch
    theta = (torch.rand(batch.shape[0], device=batch.device) * 2 - 1) * hue * 2 * math.pi
    cos, sin = torch.cos(theta), torch.sin(theta)
    t_yiq = torch.tensor([[0.299, 0.587, 0.114], [0.596, -0.274, -0.322], [0.211, -0.523, 0.312]],
                         device=batch.device)
    t_rgb = torch.linalg.inv(t_yiq)
    rot = torch.zeros(batch.shape[0], 3, 3, device=batch.device)
    rot[:, 0, 0] = 1
    rot[:, 1, 1], rot[:, 1, 2] = cos, -sin
    rot[:, 2, 1], rot[:, 2, 2] = sin, cos
    m = t_rgb @ rot @ t_yiq
    return torch.einsum("bij,bjhw->bihw", m, batch).clamp_(0, 1)


class GPUAugment:
    def __init__(self, device: Optional[str] = None, sigma: float = 0.05):
        self.device = torch.device(device or f"cuda:{torch.cuda.current_device()}")
        self.sigma = sigma
        self.stream = torch.cuda.Stream(device=self.device)

    def __call__(self, batch: torch.Tensor) -> torch.Tensor:
        with torch.cuda.stream(self.stream):
            batch = batch.to(self.device, non_blocking=True).float().div_(255.0)
            batch = random_gamma(batch)
            batch = hsv_jitter(batch)
            gray = batch.mean(dim=1)
            noisy = torch.stack([add_gaussian_noise(g, self.sigma) for g in gray])
            batch = batch * (noisy / gray.clamp_min(1e-6)).unsqueeze(1)
        torch.cuda.current_stream(self.device).wait_stream(self.stream)
        return batch


class DeviceMonitor(threading.Thread):
    """Samples utilisation / memory / power of every visible GPU with NVML."""

    def __init__(self, interval: float = 5.0):
        super().__init__(daemon=True)
        self.interval = interval
        self.samples: List[Dict[str, float]] = []
        self._stop_event = threading.Event()
        pynvml.nvmlInit()
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        if visible:
            self.indices = [int(x) for x in visible.split(",") if x.strip()]
        else:
            self.indices = list(range(pynvml.nvmlDeviceGetCount()))
        self.handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in self.indices]

    def run(self):
        while not self._stop_event.is_set():
            for idx, h in zip(self.indices, self.handles):
                util = pynvml.nvmlDeviceGetUtilizationRates(h)
                mem = pynvml.nvmlDeviceGetMemoryInfo(h)
                power = pynvml.nvmlDeviceGetPowerUsage(h) / 1000.0
                self.samples.append({
                    "t": time.time(), "gpu": idx, "util": util.gpu,
                    "mem_used_gb": mem.used / 2 ** 30, "power_w": power,
                })
            time.sleep(self.interval)

    def stop(self):
        self._stop_event.set()
        pynvml.nvmlShutdown()

    def summary(self) -> Dict[str, float]:
        if not self.samples:
            return {}
        utils = [s["util"] for s in self.samples]
        return {"mean_util": float(np.mean(utils)), "max_mem_gb": max(s["mem_used_gb"] for s in self.samples)}
