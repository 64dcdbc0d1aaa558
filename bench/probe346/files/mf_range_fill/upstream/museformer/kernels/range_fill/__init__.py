"""
range_fill: write value[i] into out[start[i]:end[i]] for a batch of (start, end) ranges.

Used to build the token -> bar (summary) index maps of Museformer for every sample. The
Python version below is a correct but slow reference (one slice assignment per bar,
thousands of bars per batch); training uses the CUDA kernel, which is built ahead of time
by setup.py or, failing that, JIT-compiled on first use.
"""
import os
import logging

import torch

logger = logging.getLogger(__name__)

_this_dir = os.path.dirname(os.path.abspath(__file__))
_ext = None

try:
    from . import range_fill_cuda as _prebuilt
except ImportError:
    _prebuilt = None


def _get_ext():
    global _ext
    if _ext is not None:
        return _ext
    if _prebuilt is not None:
        _ext = _prebuilt
        return _ext
    from torch.utils.cpp_extension import load
    logger.info("range_fill_cuda not prebuilt; JIT compiling (takes ~1 min the first time)")
    _ext = load(
        name="range_fill_cuda",
        sources=[
            os.path.join(_this_dir, "range_fill.cpp"),
            os.path.join(_this_dir, "range_fill_kernel.cu"),
        ],
        extra_cuda_cflags=["-O3", "--use_fast_math"],
        verbose=False,
    )
    return _ext


def range_fill_torch(ranges, values, out):
    """
    Reference implementation.
    ranges: (N, 2) long tensor of [start, end) positions
    values: (N,) tensor
    out:    1-D tensor, filled in place
    """
    for (start, end), v in zip(ranges.tolist(), values.tolist()):
        out[start:end] = v
    return out


def range_fill(ranges, values, seq_len, pad_value=-1, dtype=torch.long):
    """
    Returns a (seq_len,) tensor where positions covered by ranges[i] hold values[i]
    and everything else holds pad_value.
    """
    out = torch.full((seq_len,), pad_value, dtype=dtype, device=ranges.device)
    if ranges.numel() == 0:
        return out
    if not ranges.is_cuda:
        return range_fill_torch(ranges, values, out)
    ranges = ranges.contiguous().long()
    values = values.to(dtype).contiguous()
    _get_ext().range_fill(ranges, values, out)
    return out


def batched_range_fill(ranges_list, values_list, seq_len, pad_value=-1, dtype=torch.long):
    """Stack range_fill over a batch; all ranges tensors must live on the same device."""
    outs = [range_fill(r, v, seq_len, pad_value, dtype) for r, v in zip(ranges_list, values_list)]
    return torch.stack(outs, dim=0)
