#!/usr/bin/env python
"""
Forward/backward latency, achieved TFLOP/s and peak memory of the attention implementations
available on this machine, over a sweep of sequence lengths.

    python benchmarks/bench_attention.py --batch 4 --heads 16 --head-dim 64 --seqlens 512 1024 2048 4096 --causal

Rows: naive (matmul + softmax), sdpa-<backend> for each SDPA backend, xformers and flash-attn
when installed. Each measurement is bracketed by CUDA events and tagged with an NVTX range so
that an Nsight Systems capture lines up with the printed table.
"""
import argparse
import csv
import math
import sys
from contextlib import nullcontext

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

try:
    import xformers.ops as xops
    HAS_XFORMERS = True
except ImportError:
    HAS_XFORMERS = False

try:
    from flash_attn import flash_attn_func
    HAS_FLASH = True
except ImportError:
    HAS_FLASH = False


def naive_attention(q, k, v, causal):
    # q, k, v: (B, H, S, D)
    scale = 1.0 / math.sqrt(q.shape[-1])
    scores = torch.matmul(q, k.transpose(-2, -1)) * scale
    if causal:
        S = q.shape[-2]
        mask = torch.ones(S, S, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(mask, float("-inf"))
    return torch.matmul(scores.softmax(dim=-1), v)


def make_impls(causal):
    impls = {"naive": lambda q, k, v: naive_attention(q, k, v, causal)}
    for name, backend in [("sdpa-flash", SDPBackend.FLASH_ATTENTION),
                          ("sdpa-efficient", SDPBackend.EFFICIENT_ATTENTION),
                          ("sdpa-math", SDPBackend.MATH)]:
        def run(q, k, v, _backend=backend):
            with sdpa_kernel(_backend):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        impls[name] = run
    if HAS_XFORMERS:
        bias = xops.LowerTriangularMask() if causal else None
        # xformers wants (B, S, H, D)
        impls["xformers"] = lambda q, k, v: xops.memory_efficient_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), attn_bias=bias).transpose(1, 2)
    if HAS_FLASH:
        impls["flash-attn"] = lambda q, k, v: flash_attn_func(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), causal=causal).transpose(1, 2)
    return impls


def attention_flops(batch, heads, seqlen, head_dim, causal, mode):
    f = 4 * batch * heads * seqlen * seqlen * head_dim
    f = f / 2 if causal else f
    return f if mode == "fwd" else 2.5 * f


def time_fn(fn, warmup, iters, tag):
    for _ in range(warmup):
        fn()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    with torch.cuda.nvtx.range(tag):
        start.record()
        for _ in range(iters):
            fn()
        end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iters  # ms


def bench_one(name, impl, args, seqlen, device, dtype):
    shape = (args.batch, args.heads, seqlen, args.head_dim)
    q = torch.randn(shape, device=device, dtype=dtype, requires_grad=True)
    k = torch.randn(shape, device=device, dtype=dtype, requires_grad=True)
    v = torch.randn(shape, device=device, dtype=dtype, requires_grad=True)
    grad = torch.randn(shape, device=device, dtype=dtype)

    torch.cuda.reset_peak_memory_stats()
    try:
        fwd_ms = time_fn(lambda: impl(q, k, v), args.warmup, args.iters, f"{name}/fwd/{seqlen}")

        def fwd_bwd():
            out = impl(q, k, v)
            out.backward(grad)
        fb_ms = time_fn(fwd_bwd, args.warmup, args.iters, f"{name}/fwdbwd/{seqlen}")
    except torch.cuda.OutOfMemoryError:
        return dict(impl=name, seqlen=seqlen, fwd_ms=float("nan"), fwdbwd_ms=float("nan"),
                    fwd_tflops=0.0, fwdbwd_tflops=0.0, peak_gib=float("nan"), note="OOM")
    except RuntimeError as e:  # e.g. backend not available for this head_dim / dtype
        return dict(impl=name, seqlen=seqlen, fwd_ms=float("nan"), fwdbwd_ms=float("nan"),
                    fwd_tflops=0.0, fwdbwd_tflops=0.0, peak_gib=float("nan"), note=str(e).split("\n")[0][:60])
    peak = torch.cuda.max_memory_allocated() / 2**30
    f_fwd = attention_flops(args.batch, args.heads, seqlen, args.head_dim, args.causal, "fwd")
    f_fb = f_fwd + attention_flops(args.batch, args.heads, seqlen, args.head_dim, args.causal, "bwd")
    return dict(impl=name, seqlen=seqlen, fwd_ms=fwd_ms, fwdbwd_ms=fb_ms,
                fwd_tflops=f_fwd / fwd_ms / 1e9, fwdbwd_tflops=f_fb / fb_ms / 1e9, peak_gib=peak, note="")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--head-dim", type=int, default=64)
    p.add_argument("--seqlens", type=int, nargs="+", default=[512, 1024, 2048, 4096])
    p.add_argument("--dtype", choices=["fp16", "bf16"], default="bf16")
    p.add_argument("--causal", action="store_true")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--csv", default=None)
    args = p.parse_args()

    if not torch.cuda.is_available():
        sys.exit("this benchmark needs a GPU")
    device = torch.device("cuda")
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    print(f"# {torch.cuda.get_device_name()} | torch {torch.__version__} | {args.dtype} | causal={args.causal}")
    print(f"# xformers: {HAS_XFORMERS}, flash-attn: {HAS_FLASH}")

    rows = []
    impls = make_impls(args.causal)
    for seqlen in args.seqlens:
        for name, impl in impls.items():
            r = bench_one(name, impl, args, seqlen, device, dtype)
            rows.append(r)
            print(f"{name:>15} S={seqlen:>6}  fwd {r['fwd_ms']:8.3f} ms {r['fwd_tflops']:7.1f} TF/s | "
                  f"fwd+bwd {r['fwdbwd_ms']:8.3f} ms {r['fwdbwd_tflops']:7.1f} TF/s | "
                  f"peak {r['peak_gib']:6.2f} GiB {r['note']}")
            torch.cuda.empty_cache()

    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
