# -*- coding: utf-8 -*-

import os

import torch
import torch.nn.functional as F
import triton
from torch.nn.attention import SDPBackend, sdpa_kernel

from fla.ops.gla import chunk_gla, fused_recurrent_gla
from fla.ops.retention import chunk_retention

try:
    from flash_attn import flash_attn_func
    HAS_FLASH = True
except BaseException:
    HAS_FLASH = False

os.environ.setdefault("TRITON_PRINT_AUTOTUNING", "0")


@triton.testing.perf_report(
    triton.testing.Benchmark(
        # argument names to use as an x-axis for the plot
        x_names=['T'],
        # different possible values for `x_name`
        x_vals=[128 * 2 ** i for i in range(0, 8)],
        # argument name whose value corresponds to a different line in the plot
        line_arg='provider',
        # possible values for `line_arg``
        line_vals=['chunk_gla', 'recurrent_gla', 'retention', 'sdpa', 'flash'] if HAS_FLASH else ['chunk_gla', 'recurrent_gla', 'retention', 'sdpa'],
        # label name for the lines
        line_names=['chunk_gla', 'recurrent_gla', 'retention', 'sdpa', 'flash'] if HAS_FLASH else ['chunk_gla', 'recurrent_gla', 'retention', 'sdpa'],
        # line styles
        styles=[('green', '-'), ('blue', '--'), ('red', '-.'), ('cyan', ':'), ('yellow', 'dotted')],
        ylabel="Execution Time (ms)",  # label name for the y-axis
        # name for the plot. Used also as a file name for saving the plot.
        plot_name="Performance",
        args={},
    )
)
def benchmark(T, provider):
    device = 'cuda'
    dtype = torch.bfloat16
    requires_grad = True
    B, H, D = 16, 8, 128

    q = torch.randn(B, T, H, D, device=device, requires_grad=requires_grad, dtype=dtype)
    k = torch.randn(B, T, H, D, device=device, requires_grad=requires_grad, dtype=dtype)
    v = torch.randn(B, T, H, D, device=device, requires_grad=requires_grad, dtype=dtype)
    g = F.logsigmoid(torch.randn(B, T, H, D, device=device, dtype=dtype)).clamp_min(-5).requires_grad_(True)
    do = torch.ones_like(v, dtype=dtype)

    quantiles = [0.5, 0.2, 0.8]
    results = 0, 0, 0
    if provider == 'chunk_gla':
        results = triton.testing.do_bench(
            lambda: chunk_gla(q, k, v, g, head_first=False)[0].backward(do),
            quantiles=quantiles
        )
    elif provider == 'recurrent_gla':
        results = triton.testing.do_bench(
            lambda: fused_recurrent_gla(q, k, v, g, head_first=False)[0].backward(do),
            quantiles=quantiles
        )
    elif provider == 'retention':
        results = triton.testing.do_bench(
            lambda: chunk_retention(q, k, v, head_first=False)[0].backward(do),
            quantiles=quantiles
        )
    elif provider == 'sdpa':
        qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            results = triton.testing.do_bench(
                lambda: F.scaled_dot_product_attention(qt, kt, vt, is_causal=True).backward(do.transpose(1, 2)),
                quantiles=quantiles
            )
    elif provider == 'flash':
        results = triton.testing.do_bench(
            lambda: flash_attn_func(q, k, v, causal=True).backward(do),
            quantiles=quantiles
        )
    return results


if __name__ == '__main__':
    torch.backends.cuda.matmul.allow_tf32 = True
    print(f"Running on {torch.cuda.get_device_name()} with torch {torch.__version__}")
    benchmark.run(print_data=True, save_path='.')
