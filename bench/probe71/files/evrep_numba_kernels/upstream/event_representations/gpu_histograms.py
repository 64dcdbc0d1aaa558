"""
Event-camera input representations computed where the events already live.

Events are an [N, 4] tensor with columns (t [us], x, y, p in {0, 1}). On the GPU the representations are
built with numba CUDA kernels that write straight into torch-owned memory (``__cuda_array_interface__``),
on the CPU with parallel njit loops. Used by the detection data pipeline (stacked histograms, RVT-style)
and by the flow pipeline (time surfaces).
"""
import math

import numpy as np
import torch
from numba import cuda, njit, prange

THREADS_PER_BLOCK = 256


@cuda.jit
def _histogram_kernel(x, y, p, hist, width, height):
    i = cuda.grid(1)
    if i < x.shape[0]:
        xi = x[i]
        yi = y[i]
        if 0 <= xi < width and 0 <= yi < height:
            cuda.atomic.add(hist, (p[i], yi, xi), 1)


@cuda.jit
def _time_surface_kernel(x, y, t, p, surface, t_ref, tau):
    i = cuda.grid(1)
    if i < x.shape[0]:
        dt = t_ref - t[i]
        if dt >= 0:
            val = math.exp(-dt / tau)
            cuda.atomic.max(surface, (p[i], y[i], x[i]), val)


@njit(parallel=True, cache=True)
def _histogram_cpu(x, y, p, hist):
    # per-thread private histograms avoid races, then reduce
    n_threads = 8
    chunk = (x.shape[0] + n_threads - 1) // n_threads
    partial = np.zeros((n_threads,) + hist.shape, dtype=hist.dtype)
    for k in prange(n_threads):
        for i in range(k * chunk, min((k + 1) * chunk, x.shape[0])):
            if 0 <= x[i] < hist.shape[2] and 0 <= y[i] < hist.shape[1]:
                partial[k, p[i], y[i], x[i]] += 1
    for k in range(n_threads):
        hist += partial[k]


@njit(cache=True)
def _time_surface_cpu(x, y, t, p, surface, t_ref, tau):
    for i in range(x.shape[0]):
        dt = t_ref - t[i]
        if dt >= 0:
            val = math.exp(-dt / tau)
            if val > surface[p[i], y[i], x[i]]:
                surface[p[i], y[i], x[i]] = val


def _split_columns(events: torch.Tensor):
    return (events[:, 1].to(torch.int32).contiguous(), events[:, 2].to(torch.int32).contiguous(),
            events[:, 3].to(torch.int32).contiguous())


def event_histogram(events: torch.Tensor, height: int, width: int) -> torch.Tensor:
    """2-channel (OFF, ON) event count image [2, H, W] (int32) on the device of ``events``."""
    n = events.shape[0]
    if events.is_cuda:
        hist = torch.zeros((2, height, width), dtype=torch.int32, device=events.device)
        if n == 0:
            return hist
        x, y, p = _split_columns(events)
        blocks = (n + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
        _histogram_kernel[blocks, THREADS_PER_BLOCK](cuda.as_cuda_array(x), cuda.as_cuda_array(y),
                                                    cuda.as_cuda_array(p), cuda.as_cuda_array(hist), width, height)
        cuda.synchronize()
        return hist
    ev = events.numpy()
    hist = np.zeros((2, height, width), dtype=np.int32)
    _histogram_cpu(ev[:, 1].astype(np.int32), ev[:, 2].astype(np.int32), ev[:, 3].astype(np.int32), hist)
    return torch.from_numpy(hist)


def stacked_histogram(events: torch.Tensor, height: int, width: int, bins: int, count_cutoff: int = 10) -> torch.Tensor:
    """[2 * bins, H, W] uint8 stack of per-time-bin histograms (RVT's input), counts clipped to ``count_cutoff``."""
    if events.shape[0] == 0:
        return torch.zeros((2 * bins, height, width), dtype=torch.uint8, device=events.device)
    t = events[:, 0]
    t0, t1 = t[0].item(), t[-1].item()
    edges = torch.linspace(t0, t1 + 1, bins + 1, device=events.device)
    out = []
    for b in range(bins):
        mask = (t >= edges[b]) & (t < edges[b + 1])
        out.append(event_histogram(events[mask], height, width).clamp_(max=count_cutoff))
    return torch.cat(out, 0).to(torch.uint8)


def time_surface(ev_tensor: torch.Tensor, height: int, width: int, tau_us: float = 50e3) -> torch.Tensor:
    """Exponentially decaying time surface [2, H, W] (float32) referenced to the last event's timestamp."""
    n = ev_tensor.shape[0]
    if ev_tensor.is_cuda:
        surface = torch.zeros((2, height, width), dtype=torch.float32, device=ev_tensor.device)
        if n == 0:
            return surface
        t_ref = float(ev_tensor[-1, 0].item())
        x, y, p = _split_columns(ev_tensor)
        t = ev_tensor[:, 0].to(torch.float64).contiguous()
        blocks = (n + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
        _time_surface_kernel[blocks, THREADS_PER_BLOCK](cuda.as_cuda_array(x), cuda.as_cuda_array(y),
                                                       cuda.as_cuda_array(t), cuda.as_cuda_array(p),
                                                       cuda.as_cuda_array(surface), t_ref, tau_us)
        cuda.synchronize()
        return surface
    ev = ev_tensor.numpy()
    surface = np.zeros((2, height, width), dtype=np.float32)
    if n:
        _time_surface_cpu(ev[:, 1].astype(np.int32), ev[:, 2].astype(np.int32), ev[:, 0].astype(np.float64),
                          ev[:, 3].astype(np.int32), surface, float(ev[-1, 0]), tau_us)
    return torch.from_numpy(surface)


class StackedHistogram:
    """Callable transform used in the dataset: events (torch, any device) -> stacked histogram tensor."""

    def __init__(self, height: int, width: int, bins: int = 10, count_cutoff: int = 10, downsample: bool = False):
        self.height = height
        self.width = width
        self.bins = bins
        self.count_cutoff = count_cutoff
        self.downsample = downsample

    def __call__(self, events: torch.Tensor) -> torch.Tensor:
        if self.downsample:
            events = events.clone()
            events[:, 1:3] = torch.div(events[:, 1:3], 2, rounding_mode='floor')
            h, w = self.height // 2, self.width // 2
        else:
            h, w = self.height, self.width
        return stacked_histogram(events, h, w, self.bins, self.count_cutoff)
