"""Monotonic alignment search (MAS) for Glow-TTS / VITS / StyleTTS style aligners.

Three implementations, fastest first:

* ``maximum_path_cuda``  - numba CUDA kernel, one thread per batch item, works on the torch tensors in place
                           (no device->host copy). Used whenever the scores live on a GPU.
* ``maximum_path_c``     - the Cython extension built by ``python setup.py build_ext --inplace``.
* ``maximum_path_jit``   - numba CPU fallback when the Cython extension has not been built.
"""
import warnings

import numba
import numpy as np
import torch
from numba import cuda

try:
    from .core import maximum_path_c

    HAS_CYTHON_MAS = True
except ImportError:  # pragma: no cover - extension not built
    warnings.warn("monotonic_align.core not built, falling back to numba (run `python setup.py build_ext --inplace`).")
    HAS_CYTHON_MAS = False

MAX_NEG_VAL = -1e9


@numba.jit(
    numba.void(numba.int32[:, :, ::1], numba.float32[:, :, ::1], numba.int32[::1], numba.int32[::1]),
    nopython=True,
    nogil=True,
)
def maximum_path_jit(paths, values, t_ys, t_xs):
    b = paths.shape[0]
    max_neg_val = -1e9
    for i in range(int(b)):
        path = paths[i]
        value = values[i]
        t_y = t_ys[i]
        t_x = t_xs[i]

        v_prev = v_cur = 0.0
        index = t_x - 1

        for y in range(t_y):
            for x in range(max(0, t_x + y - t_y), min(t_x, y + 1)):
                if x == y:
                    v_cur = max_neg_val
                else:
                    v_cur = value[y - 1, x]
                if x == 0:
                    if y == 0:
                        v_prev = 0.0
                    else:
                        v_prev = max_neg_val
                else:
                    v_prev = value[y - 1, x - 1]
                value[y, x] += max(v_prev, v_cur)

        for y in range(t_y - 1, -1, -1):
            path[y, index] = 1
            if index != 0 and (index == y or value[y - 1, index] < value[y - 1, index - 1]):
                index = index - 1


@cuda.jit
def maximum_path_cuda_kernel(paths, values, t_ys, t_xs, max_neg_val):
    """One thread handles one batch element; the DP itself is sequential."""
    i = cuda.grid(1)
    if i >= paths.shape[0]:
        return
    path = paths[i]
    value = values[i]
    t_y = t_ys[i]
    t_x = t_xs[i]

    index = t_x - 1
    for y in range(t_y):
        for x in range(max(0, t_x + y - t_y), min(t_x, y + 1)):
            if x == y:
                v_cur = max_neg_val
            else:
                v_cur = value[y - 1, x]
            if x == 0:
                if y == 0:
                    v_prev = 0.0
                else:
                    v_prev = max_neg_val
            else:
                v_prev = value[y - 1, x - 1]
            value[y, x] += max(v_prev, v_cur)

    for y in range(t_y - 1, -1, -1):
        path[y, index] = 1
        if index != 0 and (index == y or value[y - 1, index] < value[y - 1, index - 1]):
            index = index - 1


def maximum_path_cuda(neg_cent, mask, threads_per_block=64):
    """neg_cent: [b, t_t, t_s] on a CUDA device, mask: [b, t_t, t_s]"""
    dtype = neg_cent.dtype
    values = neg_cent.detach().to(torch.float32).contiguous()
    paths = torch.zeros_like(values, dtype=torch.int32)
    t_t_max = mask.sum(1)[:, 0].to(torch.int32).contiguous()
    t_s_max = mask.sum(2)[:, 0].to(torch.int32).contiguous()

    batch = values.shape[0]
    blocks = (batch + threads_per_block - 1) // threads_per_block
    # numba launches on its own default stream; make sure torch has finished writing the inputs
    torch.cuda.current_stream().synchronize()
    maximum_path_cuda_kernel[blocks, threads_per_block](
        cuda.as_cuda_array(paths),
        cuda.as_cuda_array(values),
        cuda.as_cuda_array(t_t_max),
        cuda.as_cuda_array(t_s_max),
        MAX_NEG_VAL,
    )
    cuda.synchronize()
    return paths.to(dtype=dtype)


def maximum_path_cpu(neg_cent, mask):
    """Cython (or numba) optimized version.
    neg_cent: [b, t_t, t_s]
    mask: [b, t_t, t_s]
    """
    device = neg_cent.device
    dtype = neg_cent.dtype
    neg_cent = neg_cent.data.cpu().numpy().astype(np.float32)
    path = np.zeros(neg_cent.shape, dtype=np.int32)

    t_t_max = mask.sum(1)[:, 0].data.cpu().numpy().astype(np.int32)
    t_s_max = mask.sum(2)[:, 0].data.cpu().numpy().astype(np.int32)
    if HAS_CYTHON_MAS:
        maximum_path_c(path, neg_cent, t_t_max, t_s_max)
    else:
        maximum_path_jit(path, np.ascontiguousarray(neg_cent), t_t_max, t_s_max)
    return torch.from_numpy(path).to(device=device, dtype=dtype)


def maximum_path(neg_cent, mask):
    if neg_cent.is_cuda and cuda.is_available():
        return maximum_path_cuda(neg_cent, mask)
    return maximum_path_cpu(neg_cent, mask)
