"""Throughput / latency harness for compressed models.

Modes:
    eager   - plain forward passes
    graph   - CUDA graph capture once, replay per iteration (static shapes)
Reports p50/p90/p99 latency, throughput and peak memory for a list of batch sizes.
"""
import argparse
import csv
import gc
import json
import os
import platform
import statistics
import time
from contextlib import nullcontext

import torch

from benchmark.registry import load_model  # local helper


def setup_backend(deterministic: bool):
    torch.backends.cudnn.benchmark = not deterministic
    torch.backends.cudnn.deterministic = deterministic
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True


def env_info():
    return {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "device": torch.cuda.get_device_name(),
        "capability": ".".join(map(str, torch.cuda.get_device_capability())),
        "python": platform.python_version(),
    }


def percentile(xs, q):
    xs = sorted(xs)
    k = min(len(xs) - 1, max(0, int(round(q / 100.0 * (len(xs) - 1)))))
    return xs[k]


class GraphRunner:
    """Capture model(static_input) into a CUDA graph and replay it."""

    def __init__(self, model, example, warmup=3):
        self.static_input = example.clone()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(warmup):
                model(self.static_input)
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.static_output = model(self.static_input)

    def __call__(self, x):
        self.static_input.copy_(x)
        self.graph.replay()
        return self.static_output


@torch.inference_mode()
def bench_one(model, batch, args):
    x = torch.randn(batch, *args.input_shape, device="cuda", dtype=args.dtype)
    runner = GraphRunner(model, x) if args.mode == "graph" else model
    amp = torch.autocast("cuda", dtype=torch.float16) if args.amp else nullcontext()

    with amp:
        for _ in range(args.warmup):
            runner(x)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()

        lat = []
        for _ in range(args.iters):
            t0 = time.perf_counter()
            runner(x)
            torch.cuda.synchronize()  # per-iteration wall clock
            lat.append((time.perf_counter() - t0) * 1e3)
    return {
        "batch": batch,
        "p50_ms": percentile(lat, 50),
        "p90_ms": percentile(lat, 90),
        "p99_ms": percentile(lat, 99),
        "mean_ms": statistics.mean(lat),
        "throughput": batch * 1e3 / statistics.mean(lat),
        "peak_mem_mb": torch.cuda.max_memory_allocated() / 2**20,
    }


def main():
    ap = argparse.ArgumentParser(description="GPU latency benchmark")
    ap.add_argument("--model", required=True, help="registry name, e.g. resnet50_int8_qdq")
    ap.add_argument("--mode", choices=["eager", "graph"], default="eager")
    ap.add_argument("--batches", default="1,8,32,64")
    ap.add_argument("--input-shape", default="3,224,224")
    ap.add_argument("--dtype", choices=["fp32", "fp16", "bf16"], default="fp16")
    ap.add_argument("--amp", action="store_true")
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--iters", type=int, default=300)
    ap.add_argument("--deterministic", action="store_true")
    ap.add_argument("--out", default="results/latency.csv")
    args = ap.parse_args()
    args.input_shape = tuple(int(v) for v in args.input_shape.split(","))
    args.dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[args.dtype]

    setup_backend(args.deterministic)
    model = load_model(args.model).to(device="cuda", dtype=args.dtype).eval()
    print(json.dumps(env_info(), indent=2))

    rows = []
    for b in (int(v) for v in args.batches.split(",")):
        try:
            r = bench_one(model, b, args)
        except torch.cuda.OutOfMemoryError:
            print(f"batch {b}: OOM, stopping")
            break
        rows.append(r)
        print(f"bs={b:4d} p50={r['p50_ms']:.2f}ms p99={r['p99_ms']:.2f}ms "
              f"thr={r['throughput']:.0f}/s mem={r['peak_mem_mb']:.0f}MB")
        gc.collect()
        torch.cuda.empty_cache()

    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()) + ["model", "mode"])
        w.writeheader()
        for r in rows:
            w.writerow({**r, "model": args.model, "mode": args.mode})
    print("wrote", args.out)


if __name__ == "__main__":
    main()
