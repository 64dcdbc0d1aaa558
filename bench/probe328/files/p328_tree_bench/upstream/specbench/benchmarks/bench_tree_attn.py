"""Latency of one tree-verification attention call: Triton tree kernel vs. SDPA with an
explicit mask vs. eager, with a causal FlashAttention-2 call (no tree support) as the
lower bound.

python benchmarks/bench_tree_attn.py --prefix 512 1024 2048 --tree 64 128 --out results/tree_attn.csv
"""
import argparse
import csv
import math
import os
import random

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

from specbench.tree_attn.ops import backend_summary
from specbench.tree_attn.tree_mask import additive_mask, build_tree_mask
from specbench.tree_attn.triton_tree_attention import tree_attention, tree_attention_ref

try:
    from flash_attn import flash_attn_func
except ImportError:
    flash_attn_func = None


def random_tree(n, max_children=4, seed=0):
    rng = random.Random(seed)
    parents = [-1]
    frontier = [0]
    while len(parents) < n:
        p = rng.choice(frontier)
        parents.append(p)
        frontier.append(len(parents) - 1)
        if sum(1 for x in parents if x == p) >= max_children:
            frontier.remove(p)
    return parents


def time_cuda(fn, warmup=10, iters=50):
    for _ in range(warmup):
        fn()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iters


def run_case(B, H, D, n_prefix, n_tree, dtype, check=True):
    device = "cuda"
    q = torch.randn(B, H, n_tree, D, device=device, dtype=dtype)
    k = torch.randn(B, H, n_prefix + n_tree, D, device=device, dtype=dtype)
    v = torch.randn(B, H, n_prefix + n_tree, D, device=device, dtype=dtype)
    parents = random_tree(n_tree)
    tm = build_tree_mask(parents)
    amask = additive_mask(tm, n_prefix, dtype)

    if check:
        ref = tree_attention_ref(q, k, v, tm, n_prefix)
        out = tree_attention(q, k, v, tm, n_prefix)
        err = (out.float() - ref.float()).abs().max().item()
        assert err < 2e-2, f"triton tree attention mismatch: {err}"

    res = {}
    torch.cuda.reset_peak_memory_stats()
    res["triton_ms"] = time_cuda(lambda: tree_attention(q, k, v, tm, n_prefix))
    res["triton_peak_mb"] = torch.cuda.max_memory_allocated() / 2**20

    # SDPA with an explicit additive mask cannot use the flash backend; force mem-efficient
    with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=False, enable_mem_efficient=True):
        res["sdpa_mask_ms"] = time_cuda(lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=amask))

    res["eager_ms"] = time_cuda(lambda: tree_attention_ref(q, k, v, tm, n_prefix))

    if flash_attn_func is not None:
        qf, kf, vf = (x.transpose(1, 2).contiguous() for x in (q, k, v))
        res["flash_causal_ms"] = time_cuda(lambda: flash_attn_func(qf, kf, vf, causal=True))
    else:
        res["flash_causal_ms"] = float("nan")
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--prefix", type=int, nargs="+", default=[256, 1024, 4096])
    ap.add_argument("--tree", type=int, nargs="+", default=[32, 64, 128])
    ap.add_argument("--dtype", choices=["fp16", "bf16"], default="fp16")
    ap.add_argument("--profile", action="store_true", help="dump a chrome trace of the largest case")
    ap.add_argument("--out", type=str, default="results/tree_attn.csv")
    args = ap.parse_args()

    torch.manual_seed(0)
    torch.cuda.manual_seed(0)
    dtype = torch.float16 if args.dtype == "fp16" else torch.bfloat16
    gpu = torch.cuda.get_device_name()
    print(backend_summary("cuda"))
    print(f"GPU: {gpu}")

    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    rows = []
    for n_prefix in args.prefix:
        for n_tree in args.tree:
            r = run_case(args.batch, args.heads, args.head_dim, n_prefix, n_tree, dtype)
            row = {"gpu": gpu, "prefix": n_prefix, "tree": n_tree, **{k: round(v, 4) for k, v in r.items()}}
            rows.append(row)
            print(row)

    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)

    if args.profile:
        n_prefix, n_tree = max(args.prefix), max(args.tree)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
            run_case(args.batch, args.heads, args.head_dim, n_prefix, n_tree, dtype, check=False)
        prof.export_chrome_trace(args.out.replace(".csv", ".trace.json"))
        print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=15))


if __name__ == "__main__":
    main()
