#!/usr/bin/env python3
"""Latency / throughput benchmark for pruned and quantized vision models.

Compares, on one GPU:
  * eager fp32
  * eager AMP (fp16 autocast)
  * channels_last + AMP
  * torch.compile(mode="max-autotune")
  * Torch-TensorRT fp16 (if torch_tensorrt is importable)

    python benchmarks/latency_bench.py --model resnet50 --batch-sizes 1 8 32 --csv results.csv
    python benchmarks/latency_bench.py --weights runs/prune/resnet50_pruned.pth --full-model
"""
import argparse
import csv
import gc
import os
import statistics
import sys

import torch
import torchvision

try:
    import torch_tensorrt  # noqa: F401
    HAS_TRT = True
except ImportError:
    HAS_TRT = False


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="resnet50")
    p.add_argument("--weights", default=None, help="state_dict, or a full pickled model with --full-model")
    p.add_argument("--full-model", action="store_true", help="--weights is a torch.save(model) of a pruned net")
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 8, 32])
    p.add_argument("--resolution", type=int, default=224)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--iters", type=int, default=100)
    p.add_argument("--device", default="cuda:0")
    p.add_argument("--modes", nargs="+", default=["fp32", "amp", "amp_cl", "compile", "trt"])
    p.add_argument("--csv", default=None)
    return p.parse_args()


def load_model(args):
    if args.full_model:
        model = torch.load(args.weights, map_location="cpu")
    else:
        model = torchvision.models.__dict__[args.model](weights=None if args.weights else "DEFAULT")
        if args.weights:
            model.load_state_dict(torch.load(args.weights, map_location="cpu"))
    return model.eval()


@torch.no_grad()
def time_model(fn, x, warmup, iters):
    for _ in range(warmup):
        fn(x)
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn(x)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return {
        "mean_ms": statistics.fmean(times),
        "p50_ms": times[len(times) // 2],
        "p99_ms": times[min(len(times) - 1, int(len(times) * 0.99))],
    }


def make_runner(mode, model, device, bs, res):
    x = torch.randn(bs, 3, res, res, device=device)
    if mode == "fp32":
        return model, x
    if mode == "amp":
        def run(inp):
            with torch.autocast(device_type="cuda", dtype=torch.float16):
                return model(inp)
        return run, x
    if mode == "amp_cl":
        m = model.to(memory_format=torch.channels_last)
        x = x.to(memory_format=torch.channels_last)

        def run(inp):
            with torch.autocast("cuda", dtype=torch.float16):
                return m(inp)
        return run, x
    if mode == "compile":
        compiled = torch.compile(model, mode="max-autotune")
        return compiled, x
    if mode == "trt":
        if not HAS_TRT:
            return None, None
        trt_model = torch_tensorrt.compile(
            model, ir="dynamo", inputs=[torch_tensorrt.Input(x.shape, dtype=torch.half)],
            enabled_precisions={torch.half},
        )
        return trt_model, x.half()
    raise ValueError(mode)


def main():
    args = parse_args()
    device = torch.device(args.device)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    model = load_model(args).to(device)
    n_params = sum(p.numel() for p in model.parameters()) / 1e6
    gpu_name = torch.cuda.get_device_name(device)
    print(f"{args.model}: {n_params:.2f}M params on {gpu_name} (torch {torch.__version__}, cuda {torch.version.cuda})")

    rows = []
    for mode in args.modes:
        for bs in args.batch_sizes:
            torch.cuda.reset_peak_memory_stats(device)
            fn, x = make_runner(mode, model, device, bs, args.resolution)
            if fn is None:
                print(f"[skip] {mode}: torch_tensorrt not installed")
                break
            stats = time_model(fn, x, args.warmup, args.iters)
            peak_mb = torch.cuda.max_memory_allocated(device) / 2**20
            row = {
                "model": args.model,
                "mode": mode,
                "batch": bs,
                "img_per_s": bs * 1000.0 / stats["mean_ms"],
                "peak_mem_mb": round(peak_mb, 1),
                "gpu": gpu_name,
                **{k: round(v, 3) for k, v in stats.items()},
            }
            rows.append(row)
            print("{mode:>8} bs={batch:<3} mean={mean_ms:7.3f}ms p99={p99_ms:7.3f}ms "
                  "{img_per_s:9.1f} img/s peak={peak_mem_mb}MB".format(**row))
            del fn, x
            gc.collect()
            torch.cuda.empty_cache()

    if args.csv and rows:
        new_file = not os.path.exists(args.csv)
        with open(args.csv, "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            if new_file:
                w.writeheader()
            w.writerows(rows)
        print(f"appended {len(rows)} rows to {args.csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
