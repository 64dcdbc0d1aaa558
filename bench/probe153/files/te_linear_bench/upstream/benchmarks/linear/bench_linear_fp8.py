"""Throughput of torch.nn.Linear (bf16) vs te.Linear (bf16 / fp8 delayed scaling).

    python benchmarks/linear/bench_linear_fp8.py --shapes 4096x4096x4096 8192x8192x8192 --nvtx
    nsys profile -t cuda,nvtx python benchmarks/linear/bench_linear_fp8.py --nvtx

Results are printed as a markdown table (TFLOP/s, fwd+bwd).
"""
import argparse
import os
from contextlib import contextmanager, nullcontext

import torch
import torch.nn as nn

try:
    import transformer_engine.pytorch as te
    from transformer_engine.common.recipe import DelayedScaling, Format
    HAVE_TE = True
except ImportError:
    HAVE_TE = False


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--shapes", nargs="+", default=["4096x4096x4096", "8192x4096x14336", "8192x14336x4096"],
                   help="MxKxN (tokens x in_features x out_features)")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--nvtx", action="store_true", help="emit NVTX ranges for Nsight Systems")
    p.add_argument("--no-te", action="store_true")
    p.add_argument("--device", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
    return p.parse_args()


@contextmanager
def nvtx_range(name, enabled):
    if enabled:
        torch.cuda.nvtx.range_push(name)
    try:
        yield
    finally:
        if enabled:
            torch.cuda.nvtx.range_pop()


def time_fwd_bwd(layer, x, ctx_factory, warmup, iters, nvtx, tag):
    grad = torch.randn(x.shape[0], layer.out_features, device=x.device, dtype=x.dtype)
    for _ in range(warmup):
        with ctx_factory():
            y = layer(x)
        y.backward(grad)
    torch.cuda.synchronize()

    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    with nvtx_range(tag, nvtx):
        start.record()
        for _ in range(iters):
            with ctx_factory():
                y = layer(x)
            y.backward(grad)
        stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) / iters  # ms


def tflops(m, k, n, ms):
    # fwd: 2mkn, bwd: 4mkn
    return 6 * m * k * n / (ms * 1e-3) / 1e12


def main():
    args = parse_args()
    torch.cuda.set_device(args.device)
    device = torch.device("cuda", args.device)
    torch.backends.cuda.matmul.allow_tf32 = False

    major, minor = torch.cuda.get_device_capability(device)
    fp8_ok = HAVE_TE and not args.no_te and (major, minor) >= (8, 9)
    print(f"# {torch.cuda.get_device_name(device)} (sm_{major}{minor}), TE={HAVE_TE}, fp8={fp8_ok}")

    recipe = None
    if fp8_ok:
        recipe = DelayedScaling(fp8_format=Format.HYBRID, amax_history_len=16, amax_compute_algo="max")

    rows = []
    for shape in args.shapes:
        m, k, n = (int(v) for v in shape.split("x"))
        x = torch.randn(m, k, device=device, dtype=torch.bfloat16, requires_grad=True)

        ref = nn.Linear(k, n, bias=False, device=device, dtype=torch.bfloat16)
        ms_ref = time_fwd_bwd(ref, x, nullcontext, args.warmup, args.iters, args.nvtx, f"torch_{shape}")
        row = {"shape": shape, "torch_bf16": tflops(m, k, n, ms_ref)}

        if HAVE_TE and not args.no_te:
            te_layer = te.Linear(k, n, bias=False, params_dtype=torch.bfloat16).to(device)
            ms_te = time_fwd_bwd(te_layer, x, nullcontext, args.warmup, args.iters, args.nvtx, f"te_bf16_{shape}")
            row["te_bf16"] = tflops(m, k, n, ms_te)
            if fp8_ok:
                fp8_ctx = lambda: te.fp8_autocast(enabled=True, fp8_recipe=recipe)
                ms_fp8 = time_fwd_bwd(te_layer, x, fp8_ctx, args.warmup, args.iters, args.nvtx, f"te_fp8_{shape}")
                row["te_fp8"] = tflops(m, k, n, ms_fp8)
        rows.append(row)
        del x
        torch.cuda.empty_cache()

    cols = ["shape", "torch_bf16", "te_bf16", "te_fp8"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for row in rows:
        cells = [row["shape"]] + [f"{row[c]:.1f}" if c in row else "-" for c in cols[1:]]
        print("| " + " | ".join(cells) + " |")
    print(f"# peak memory: {torch.cuda.max_memory_allocated(device) / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
