"""Word-level timestamps via cross-attention DTW, in the style of openai-whisper's timing.py / triton_ops.py."""
import argparse
import itertools
from functools import lru_cache
from typing import List

import numba
import numpy as np
import torch
import torch.nn.functional as F

try:
    import triton
    import triton.language as tl
except ImportError:
    triton = None


if triton is not None:

    @triton.jit
    def dtw_kernel(cost, trace, x, x_stride, cost_stride, trace_stride, N, M, BLOCK_SIZE: tl.constexpr):
        offsets = tl.arange(0, BLOCK_SIZE)
        mask = offsets < M

        for k in range(1, N + M + 1):  # k = i + j
            tl.debug_barrier()

            p0 = cost + (k - 1) * cost_stride
            p1 = cost + k * cost_stride
            p2 = cost + k * cost_stride + 1

            c0 = tl.load(p0 + offsets, mask=mask)
            c1 = tl.load(p1 + offsets, mask=mask)
            c2 = tl.load(p2 + offsets, mask=mask)

            x_row = tl.load(x + (k - 1) * x_stride + offsets, mask=mask, other=0)
            cost_row = x_row + tl.minimum(tl.minimum(c0, c1), c2)

            cost_ptr = cost + (k + 1) * cost_stride + 1
            tl.store(cost_ptr + offsets, cost_row, mask=mask)

            trace_ptr = trace + (k + 1) * trace_stride + 1
            tl.store(trace_ptr + offsets, 2, mask=mask & (c2 <= c0) & (c2 <= c1))
            tl.store(trace_ptr + offsets, 1, mask=mask & (c1 <= c0) & (c1 <= c2))
            tl.store(trace_ptr + offsets, 0, mask=mask & (c0 <= c1) & (c0 <= c2))


@lru_cache(maxsize=None)
def median_kernel(filter_width: int):
    @triton.jit
    def kernel(y, x, x_stride, y_stride, BLOCK_SIZE: tl.constexpr):  # x.shape[-1] == filter_width
        row_idx = tl.program_id(0)
        offsets = tl.arange(0, BLOCK_SIZE)
        mask = offsets < y_stride

        x_ptr = x + row_idx * x_stride  # noqa: F841
        y_ptr = y + row_idx * y_stride

        LOAD_ALL_ROWS_HERE  # noqa: F821

        BUBBLESORT_HERE  # noqa: F821

        tl.store(y_ptr + offsets, MIDDLE_ROW_HERE, mask=mask)  # noqa: F821

    kernel = triton.JITFunction(kernel.fn)
    new_kernel = kernel.src.replace(
        "    LOAD_ALL_ROWS_HERE",
        "\n".join([f"    row{i} = tl.load(x_ptr + offsets + {i}, mask=mask)" for i in range(filter_width)]),
    )
    new_kernel = new_kernel.replace(
        "    BUBBLESORT_HERE",
        "\n\n".join(["\n\n".join([
            "\n".join([
                f"    smaller = tl.where(row{j} < row{j + 1}, row{j}, row{j + 1})",
                f"    larger = tl.where(row{j} > row{j + 1}, row{j}, row{j + 1})",
                f"    row{j} = smaller",
                f"    row{j + 1} = larger",
            ]) for j in range(filter_width - i - 1)
        ]) for i in range(filter_width // 2 + 1)]),
    )
    new_kernel = new_kernel.replace("MIDDLE_ROW_HERE", f"row{filter_width // 2}")
    kernel._unsafe_update_src(new_kernel)
    kernel.hash = None
    return kernel


def median_filter_cuda(x: torch.Tensor, filter_width: int):
    """Apply a median filter of given width along the last dimension of x"""
    slices = x.contiguous().unfold(-1, filter_width, 1)
    grid = np.prod(slices.shape[:-2])

    kernel = median_kernel(filter_width)
    y = torch.empty_like(slices[..., 0])

    BLOCK_SIZE = 1 << (y.stride(-2) - 1).bit_length()
    kernel[(grid,)](y, x, x.stride(-2), y.stride(-2), BLOCK_SIZE=BLOCK_SIZE)

    return y


def median_filter(x: torch.Tensor, filter_width: int):
    """Apply a median filter of width `filter_width` along the last dimension of `x`"""
    pad_width = filter_width // 2
    if x.shape[-1] <= pad_width:
        # F.pad requires the padding width to be smaller than the input dimension
        return x

    if (ndim := x.ndim) <= 2:
        # `F.pad` does not support reflect padding for 1D or 2D inputs
        x = x[None, None, :]

    assert filter_width > 0 and filter_width % 2 == 1, "`filter_width` should be an odd number"

    result = None
    x = F.pad(x, (filter_width // 2, filter_width // 2, 0, 0), mode="reflect")
    if x.is_cuda:
        try:
            result = median_filter_cuda(x, filter_width)
        except (RuntimeError, AttributeError):
            print("Failed to launch Triton kernels, likely due to missing CUDA toolkit; "
                  "falling back to a slower median kernel implementation...")

    if result is None:
        # sort() is faster than torch.median (https://github.com/pytorch/pytorch/issues/51450)
        result = x.unfold(-1, filter_width, 1).sort()[0][..., filter_width // 2]

    if ndim <= 2:
        result = result[0, 0]

    return result


@numba.jit(nopython=True)
def backtrace(trace: np.ndarray):
    i = trace.shape[0] - 1
    j = trace.shape[1] - 1
    trace[0, :] = 2
    trace[:, 0] = 1

    result = []
    while i > 0 or j > 0:
        result.append((i - 1, j - 1))

        if trace[i, j] == 0:
            i -= 1
            j -= 1
        elif trace[i, j] == 1:
            i -= 1
        elif trace[i, j] == 2:
            j -= 1
        else:
            raise ValueError("Unexpected trace[i, j]")

    result = np.array(result)
    return result[::-1, :].T


@numba.jit(nopython=True, parallel=True)
def dtw_cpu(x: np.ndarray):
    N, M = x.shape
    cost = np.ones((N + 1, M + 1), dtype=np.float32) * np.inf
    trace = -np.ones((N + 1, M + 1), dtype=np.float32)

    cost[0, 0] = 0
    for j in range(1, M + 1):
        for i in range(1, N + 1):
            c0 = cost[i - 1, j - 1]
            c1 = cost[i - 1, j]
            c2 = cost[i, j - 1]

            if c0 < c1 and c0 < c2:
                c, t = c0, 0
            elif c1 < c0 and c1 < c2:
                c, t = c1, 1
            else:
                c, t = c2, 2

            cost[i, j] = x[i - 1, j - 1] + c
            trace[i, j] = t

    return backtrace(trace)


def dtw_cuda(x, BLOCK_SIZE=1024):
    M, N = x.shape
    assert M < BLOCK_SIZE, f"M should be smaller than {BLOCK_SIZE=}"

    x_skew = F.pad(x, (0, M + 1), value=np.inf).flatten()[: M * (N + M)].reshape(M, N + M)
    x_skew = x_skew.T.contiguous()
    cost = torch.ones(N + M + 2, M + 2) * np.inf
    cost[0, 0] = 0
    cost = cost.to(x.device)
    trace = torch.zeros_like(cost, dtype=torch.int32)

    dtw_kernel[(1,)](cost, trace, x_skew, x_skew.stride(0), cost.stride(0), trace.stride(0), N, M,
                     BLOCK_SIZE=BLOCK_SIZE)

    trace = trace.T.flatten()[: (M + 1) * (M + N + 3)].reshape(M + 1, M + N + 3)[:, : N + 1]
    return backtrace(trace.cpu().numpy())


def dtw(x: torch.Tensor) -> np.ndarray:
    if x.is_cuda:
        try:
            return dtw_cuda(x)
        except (RuntimeError, AttributeError):
            print("Failed to launch Triton kernels, likely due to missing CUDA toolkit; "
                  "falling back to a slower DTW implementation...")

    return dtw_cpu(x.double().cpu().numpy())


def merge_punctuations(alignment: List[dict], prepended: str, appended: str):
    """Glue leading/trailing punctuation tokens onto their neighbouring words (pure Python)."""
    i = len(alignment) - 2
    j = len(alignment) - 1
    while i >= 0:
        previous, following = alignment[i], alignment[j]
        if previous["word"].startswith(" ") and previous["word"].strip() in prepended:
            following["word"] = previous["word"] + following["word"]
            previous["word"] = ""
        else:
            j = i
        i -= 1
    return [a for a in alignment if a["word"]]


def build_cli_parser():
    parser = argparse.ArgumentParser(formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("audio", nargs="+", type=str, help="audio file(s) to transcribe")
    parser.add_argument("--model", default="small", help="name of the Whisper model to use")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu",
                        help="device to use for PyTorch inference")
    parser.add_argument("--fp16", type=bool, default=True, help="whether to perform inference in fp16")
    parser.add_argument("--word_timestamps", action="store_true", help="extract word-level timestamps (DTW)")
    parser.add_argument("--medfilt_width", type=int, default=7, help="median filter width for attention weights")
    return parser


def pairwise(iterable):
    a, b = itertools.tee(iterable)
    next(b, None)
    return zip(a, b)
