"""Benchmark weight-only quantised GEMMs (Marlin int4, HQQ, SmoothQuant W8A8) against fp16 cuBLAS.

For every (m, n, k) the script reports median latency from CUDA events, effective TFLOP/s and
weight bandwidth, and peak memory. The L2 cache is flushed between repetitions so that small
problems are not measured from cache.

    python benchmarks/bench_wq_gemm.py --shapes llama2-7b --batch 1 16 64 --device 0
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import time
from typing import Callable, Dict, List, Tuple

import torch

import marlin
from hqq.core.quantize import HQQBackend, HQQLinear
from smoothquant.w8a8 import W8A8Linear

MODEL_SHAPES: Dict[str, List[Tuple[int, int]]] = {
    # (k, n) of the linear layers of one transformer block
    "llama2-7b": [(4096, 12288), (4096, 4096), (4096, 22016), (11008, 4096)],
    "llama2-13b": [(5120, 15360), (5120, 5120), (5120, 27648), (13824, 5120)],
    "llama2-70b": [(8192, 10240), (8192, 8192), (8192, 57344), (28672, 8192)],
}


def gpu_info() -> Dict[str, str]:
    out = subprocess.check_output(
        ["nvidia-smi", "--query-gpu=name,clocks.sm,clocks.max.sm,power.draw,memory.total", "--format=csv,noheader"],
        text=True,
    )
    name, sm, sm_max, power, mem = [x.strip() for x in out.splitlines()[0].split(",")]
    return {"name": name, "sm_clock": sm, "sm_clock_max": sm_max, "power": power, "memory": mem,
            "torch_device": torch.cuda.get_device_name()}


class L2Flusher:
    def __init__(self, size_bytes: int = 256 * 1024 * 1024):
        self.cache = torch.empty(size_bytes // 4, dtype=torch.int, device="cuda")

    def __call__(self):
        self.cache.zero_()


def bench(fn: Callable[[], torch.Tensor], warmup: int = 10, reps: int = 100, flush: L2Flusher = None) -> Dict[str, float]:
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    torch.cuda.reset_peak_memory_stats()
    for i in range(reps):
        if flush is not None:
            flush()
        torch.cuda.nvtx.range_push(f"rep{i}")
        starts[i].record()
        fn()
        ends[i].record()
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()  # all events recorded
    times = [s.elapsed_time(e) for s, e in zip(starts, ends)]
    return {
        "median_ms": statistics.median(times),
        "min_ms": min(times),
        "p90_ms": sorted(times)[int(0.9 * len(times)) - 1],
        "peak_mem_mb": torch.cuda.max_memory_allocated() / 2 ** 20,
    }


def make_cases(m: int, k: int, n: int, dev: torch.device) -> Dict[str, Callable[[], torch.Tensor]]:
    A = torch.randn(m, k, dtype=torch.half, device=dev)
    B = torch.randn(k, n, dtype=torch.half, device=dev)
    cases = {"fp16": lambda: torch.matmul(A, B)}

    lin = torch.nn.Linear(k, n, bias=False).half().to(dev)
    if k % 128 == 0 and n % 256 == 0:
        mlayer = marlin.Layer(k, n, groupsize=128).to(dev)
        lin_fq, s = marlin.fake_quantize(torch.nn.Linear(k, n, bias=False).half().to(dev), groupsize=128)
        mlayer.pack(lin_fq, s)
        cases["marlin"] = lambda: mlayer(A)

    HQQLinear.set_backend(HQQBackend.PYTORCH)
    hqq = HQQLinear(torch.nn.Linear(k, n, bias=False).half(), {"nbits": 4, "group_size": 64},
                    compute_dtype=torch.half, device=str(dev))
    cases["hqq_torch"] = lambda: hqq(A)

    w8a8 = W8A8Linear.from_float(lin)
    cases["w8a8"] = lambda: w8a8(A)
    return cases


def summarize(rows: List[Dict[str, float]]) -> None:
    """Speed-up of every kernel over fp16 for the same (m, k, n)."""
    base = {(r["m"], r["k"], r["n"]): r["median_ms"] for r in rows if r["kernel"] == "fp16"}
    kernels = sorted({r["kernel"] for r in rows if r["kernel"] != "fp16"})
    header = f"{'m':>5s} {'k':>6s} {'n':>6s} " + " ".join(f"{k:>10s}" for k in kernels)
    print(header)
    print("-" * len(header))
    for (m, k, n), t_ref in sorted(base.items()):
        cells = []
        for name in kernels:
            hit = [r for r in rows if r["kernel"] == name and (r["m"], r["k"], r["n"]) == (m, k, n)]
            cells.append(f"{t_ref / hit[0]['median_ms']:9.2f}x" if hit else f"{'-':>10s}")
        print(f"{m:5d} {k:6d} {n:6d} " + " ".join(cells))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shapes", default="llama2-7b", choices=sorted(MODEL_SHAPES))
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 16, 64, 256])
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--no-flush", action="store_true")
    parser.add_argument("--out", default="results/wq_gemm.csv")
    args = parser.parse_args()

    torch.cuda.set_device(args.device)
    dev = torch.device("cuda", args.device)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    info = gpu_info()
    print(json.dumps(info, indent=1))
    flush = None if args.no_flush else L2Flusher()

    rows = []
    for m in args.batch:
        for k, n in MODEL_SHAPES[args.shapes]:
            cases = make_cases(m, k, n, dev)
            for name, fn in cases.items():
                with torch.inference_mode():
                    r = bench(fn, reps=args.reps, flush=flush)
                flops = 2 * m * n * k
                bits = 16 if name == "fp16" else 8 if name == "w8a8" else 4
                r.update({
                    "kernel": name, "m": m, "k": k, "n": n,
                    "tflops": flops / (r["median_ms"] * 1e-3) / 1e12,
                    "weight_gbps": (k * n * bits / 8) / (r["median_ms"] * 1e-3) / 1e9,
                })
                rows.append(r)
                print(f"{name:10s} m={m:4d} k={k:6d} n={n:6d}  {r['median_ms']:8.4f} ms  "
                      f"{r['tflops']:7.2f} TFLOP/s  {r['weight_gbps']:8.1f} GB/s  {r['peak_mem_mb']:8.1f} MiB")
            del cases
            torch.cuda.empty_cache()

    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    summarize(rows)
    with open(os.path.splitext(args.out)[0] + ".meta.json", "w") as fh:
        json.dump({"device": info, "time": time.strftime("%Y-%m-%d %H:%M:%S"), "args": vars(args)}, fh, indent=1)


if __name__ == "__main__":
    main()
