#!/usr/bin/env python
"""Latency benchmark for always-on keyword spotting.

Wake-word inference is batch 1, one 1 s window every 100 ms hop, so per-call overhead (kernel
launches, host syncs) dominates the cost. This script measures eager, TorchScript and
CUDA-graph replay latency for a KWT / BC-ResNet checkpoint and optionally dumps a profiler trace.

    python tools/benchmark_latency.py --model kwt-1 --ckpt runs/kwt1/best.pt
    python tools/benchmark_latency.py --model kwt-1 --cuda-graph --half --profile trace/
"""

import argparse
import json
import os
import statistics
import time

import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule, tensorboard_trace_handler

from models.kwt import kwt_from_name


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="kwt-1")
    p.add_argument("--ckpt", default="", help="optional checkpoint; random weights otherwise")
    p.add_argument("--num-classes", type=int, default=12)
    p.add_argument("--device", default="cuda:0")
    p.add_argument("--batch-size", type=int, default=1)
    p.add_argument("--iters", type=int, default=500)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--half", action="store_true", help="fp16 weights and inputs")
    p.add_argument("--jit", action="store_true", help="also benchmark a traced TorchScript module")
    p.add_argument("--cuda-graph", action="store_true", help="also benchmark CUDA graph replay")
    p.add_argument("--profile", default="", help="directory for a tensorboard profiler trace")
    p.add_argument("--out", default="", help="write results as JSON")
    return p.parse_args()


def load_model(args, device):
    model = kwt_from_name(args.model, num_classes=args.num_classes)
    if args.ckpt:
        state = torch.load(args.ckpt, map_location="cpu")
        model.load_state_dict(state.get("model", state))
    model = model.to(device).eval()
    return model


def time_fn(fn, x, device, iters, warmup):
    """Wall-clock per-call latency in ms, synchronising the device after every call."""
    with torch.inference_mode():
        for _ in range(warmup):
            fn(x)
        torch.cuda.synchronize()
        times = []
        for _ in range(iters):
            t0 = time.perf_counter()
            fn(x)
            torch.cuda.synchronize(device)
            times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return {
        "mean_ms": statistics.fmean(times),
        "p50_ms": times[len(times) // 2],
        "p90_ms": times[int(len(times) * 0.9)],
        "p99_ms": times[int(len(times) * 0.99)],
    }


def build_graph_runner(model, example, warmup=3):
    """Capture one forward pass into a CUDA graph; returns a callable that replays it."""
    static_in = example.clone()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        with torch.inference_mode():
            for _ in range(warmup):
                model(static_in)
    torch.cuda.current_stream().wait_stream(s)

    g = torch.cuda.CUDAGraph()
    with torch.inference_mode():
        with torch.cuda.graph(g):
            static_out = model(static_in)

    def run(x):
        static_in.copy_(x)
        g.replay()
        return static_out

    return run


def run_profiler(model, x, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=schedule(wait=2, warmup=3, active=10, repeat=1),
        on_trace_ready=tensorboard_trace_handler(out_dir),
        record_shapes=True,
    ) as prof:
        with torch.inference_mode():
            for _ in range(15):
                with record_function("kws_forward"):
                    model(x)
                prof.step()
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=15))


def main():
    args = parse_args()
    device = torch.device(args.device)
    torch.backends.cudnn.benchmark = True

    model = load_model(args, device)
    use_half = args.half and device.type == "cuda"
    dtype = torch.float16 if use_half else torch.float32
    if use_half:
        model = model.half()

    x = torch.randn(args.batch_size, 1, 40, 98, device=device, dtype=dtype)
    results = {"model": args.model, "device": str(device), "dtype": str(dtype), "batch_size": args.batch_size}

    results["eager"] = time_fn(model, x, device, args.iters, args.warmup)
    print("eager      ", json.dumps(results["eager"]))

    if args.jit:
        with torch.inference_mode():
            traced = torch.jit.trace(model, x)
            traced = torch.jit.freeze(traced)
        results["torchscript"] = time_fn(traced, x, device, args.iters, args.warmup)
        print("torchscript", json.dumps(results["torchscript"]))

    if args.cuda_graph:
        runner = build_graph_runner(model, x)
        results["cuda_graph"] = time_fn(runner, x, device, args.iters, args.warmup)
        print("cuda_graph ", json.dumps(results["cuda_graph"]))

    if args.profile:
        run_profiler(model, x, args.profile)

    hop_ms = 100.0
    best = min(v["p99_ms"] for k, v in results.items() if isinstance(v, dict))
    print(f"p99 latency {best:.2f} ms -> {best / hop_ms * 100:.1f}% of the {hop_ms:.0f} ms hop budget")

    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
