#!/usr/bin/env python
"""Online-serving latency / throughput of CTR rankers (DeepFM, DCN-V2, DIN) at fixed batch sizes.

Measures, per batch size: eager fp32, eager fp16, TorchScript-traced fp16 and CUDA-graph-replayed fp16.
Small ranking batches (64-512 candidates) are launch-bound, which is where graph replay pays off.

    python benchmarks/bench_ctr_inference.py --model dcnv2 --batch_sizes 64 256 1024 4096 --out bench.json
"""
import argparse
import json
import platform
import statistics
import time

import torch
import torch.nn as nn

from ctr_bench.models import build_model
from ctr_bench.utils.synthetic import synthetic_ctr_batch


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="dcnv2", choices=["deepfm", "dcn", "dcnv2", "din"])
    p.add_argument("--checkpoint", default=None)
    p.add_argument("--batch_sizes", type=int, nargs="+", default=[64, 256, 1024, 4096])
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--iters", type=int, default=200)
    p.add_argument("--seq_len", type=int, default=50, help="history length for DIN")
    p.add_argument("--device", default="cuda:0")
    p.add_argument("--profile", action="store_true", help="wrap the timed loop in NVTX ranges for nsys")
    p.add_argument("--out", default=None)
    return p.parse_args()


class CudaTimer:
    """Device-side timing with events; reports milliseconds per call."""

    def __init__(self):
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)

    def __enter__(self):
        self.start.record()
        return self

    def __exit__(self, *exc):
        self.end.record()
        self.end.synchronize()
        self.ms = self.start.elapsed_time(self.end)


def time_fn(fn, warmup, iters, profile=False, tag=""):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    samples = []
    for i in range(iters):
        if profile:
            torch.cuda.nvtx.range_push(f"{tag}/{i}")
        with CudaTimer() as t:
            fn()
        if profile:
            torch.cuda.nvtx.range_pop()
        samples.append(t.ms)
    samples.sort()
    return {
        "p50_ms": statistics.median(samples),
        "p99_ms": samples[int(0.99 * (len(samples) - 1))],
        "mean_ms": sum(samples) / len(samples),
    }


def capture_graph(model, example, warmup=3):
    """Capture one forward into a CUDA graph; returns (replay_fn, static_input, static_output)."""
    static_in = {k: v.clone() for k, v in example.items()}
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmup):
            model(static_in)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = model(static_in)

    def replay(new_batch=None):
        if new_batch is not None:
            for k, v in new_batch.items():
                static_in[k].copy_(v, non_blocking=True)
        graph.replay()
        return static_out

    return replay, static_in, static_out


def main():
    args = parse_args()
    device = torch.device(args.device)
    torch.backends.cudnn.benchmark = True

    model = build_model(args.model, pretrained=args.checkpoint).to(device).eval()
    results = {
        "model": args.model,
        "gpu": torch.cuda.get_device_name(device),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "host": platform.node(),
        "runs": [],
    }
    print(f"{args.model} on {results['gpu']} (torch {results['torch']}, CUDA {results['cuda']})")

    for bs in args.batch_sizes:
        batch = synthetic_ctr_batch(args.model, bs, seq_len=args.seq_len, device=device)
        row = {"batch_size": bs}
        with torch.inference_mode():
            row["eager_fp32"] = time_fn(lambda: model(batch), args.warmup, args.iters, args.profile, "fp32")

            with torch.autocast(device_type="cuda", dtype=torch.float16):
                row["eager_fp16"] = time_fn(lambda: model(batch), args.warmup, args.iters, args.profile,
                                            "fp16")

        half_model = build_model(args.model, pretrained=args.checkpoint).to(device).half().eval()
        half_batch = {k: (v.half() if v.is_floating_point() else v) for k, v in batch.items()}
        with torch.no_grad():
            traced = torch.jit.trace(half_model, (half_batch,), strict=False)
            traced = torch.jit.freeze(traced)
            row["traced_fp16"] = time_fn(lambda: traced(half_batch), args.warmup, args.iters, args.profile,
                                         "traced")

            replay, _, _ = capture_graph(half_model, half_batch)
            row["cudagraph_fp16"] = time_fn(replay, args.warmup, args.iters, args.profile, "graph")

        mem_mb = torch.cuda.max_memory_allocated(device) / 2 ** 20
        row["peak_mem_mb"] = mem_mb
        row["qps_graph"] = bs / (row["cudagraph_fp16"]["p50_ms"] / 1e3)
        results["runs"].append(row)
        print(f"bs={bs:5d}  eager32 {row['eager_fp32']['p50_ms']:.3f}ms  "
              f"eager16 {row['eager_fp16']['p50_ms']:.3f}ms  traced {row['traced_fp16']['p50_ms']:.3f}ms  "
              f"graph {row['cudagraph_fp16']['p50_ms']:.3f}ms  ({row['qps_graph'] / 1e3:.0f}k qps)  "
              f"peak {mem_mb:.0f}MB")
        del half_model, traced, replay
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)

    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=2)
    return results


if __name__ == "__main__":
    t0 = time.time()
    main()
    print(f"total {time.time() - t0:.1f}s")
