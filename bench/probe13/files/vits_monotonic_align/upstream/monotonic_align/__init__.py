"""Monotonic alignment search (MAS) used by VITS / Glow-TTS.

The dynamic programme runs on the CPU in Cython (core.pyx); the tensors are moved
back to the device they came from (GPU during training) at the end.
Build the extension once with:  cd monotonic_align && python setup.py build_ext --inplace
"""
import numpy as np
import torch

from .monotonic_align.core import maximum_path_c


def maximum_path(neg_cent, mask):
    """Cython optimized version.
    neg_cent: [b, t_t, t_s]
    mask: [b, t_t, t_s]
    """
    device = neg_cent.device
    dtype = neg_cent.dtype
    neg_cent = neg_cent.data.cpu().numpy().astype(np.float32)
    path = np.zeros(neg_cent.shape, dtype=np.int32)

    t_t_max = mask.sum(1)[:, 0].data.cpu().numpy().astype(np.int32)
    t_s_max = mask.sum(2)[:, 0].data.cpu().numpy().astype(np.int32)
    maximum_path_c(path, neg_cent, t_t_max, t_s_max)
    return torch.from_numpy(path).to(device=device, dtype=dtype)


def maximum_path_numpy(neg_cent, mask, max_neg_val=-1e9):
    """Reference implementation in pure numpy (slow, used for testing the Cython one).
    Works on any device: inputs are copied to host memory first.
    """
    device = neg_cent.device
    dtype = neg_cent.dtype
    value = (neg_cent * mask).detach().cpu().numpy()
    mask_np = mask.detach().cpu().numpy().astype(bool)
    b, t_x, t_y = value.shape
    direction = np.zeros(value.shape, dtype=np.int64)
    v = np.zeros((b, t_x), dtype=np.float32)
    x_range = np.arange(t_x, dtype=np.float32).reshape(1, -1)
    for j in range(t_y):
        v0 = np.pad(v, [[0, 0], [1, 0]], mode="constant", constant_values=max_neg_val)[:, :-1]
        v1 = v
        max_mask = v1 >= v0
        v_max = np.where(max_mask, v1, v0)
        direction[:, :, j] = max_mask
        index_mask = x_range <= j
        v = np.where(index_mask, v_max + value[:, :, j], max_neg_val)
    direction = np.where(mask_np, direction, 1)

    path = np.zeros(value.shape, dtype=np.float32)
    index = mask_np[:, :, 0].sum(1).astype(np.int64) - 1
    index_range = np.arange(b)
    for j in reversed(range(t_y)):
        path[index_range, index, j] = 1
        index = index + direction[index_range, index, j] - 1
    path = path * mask_np.astype(np.float32)
    return torch.from_numpy(path).to(device=device, dtype=dtype)


def generate_path(duration, mask):
    """Expand durations into a hard alignment path (device agnostic torch ops).
    duration: [b, 1, t_x]
    mask: [b, 1, t_y, t_x]
    """
    b, _, t_y, t_x = mask.shape
    cum_duration = torch.cumsum(duration, -1)
    cum_duration_flat = cum_duration.view(b * t_x)
    path = sequence_mask(cum_duration_flat, t_y).to(mask.dtype)
    path = path.view(b, t_x, t_y)
    path = path - torch.nn.functional.pad(path, [0, 0, 1, 0, 0, 0])[:, :-1]
    path = path.unsqueeze(1).transpose(2, 3) * mask
    return path


def sequence_mask(length, max_length=None):
    if max_length is None:
        max_length = length.max()
    x = torch.arange(max_length, dtype=length.dtype, device=length.device)
    return x.unsqueeze(0) < length.unsqueeze(1)


if __name__ == "__main__":
    # quick self-check of the numpy reference on host tensors
    neg = torch.randn(2, 7, 5)
    m = torch.ones(2, 7, 5)
    a = maximum_path_numpy(neg, m)
    print("path sums:", a.sum(dim=(1, 2)).tolist())
