"""Measure inference speed (FPS) of polyp segmentation models at 352x352, as reported in the papers.

    python tools/benchmark_fps.py --model PolypPVT --batch 1 --iters 500 --half

The numbers in our table were measured on a single RTX 3090 with cuDNN benchmark enabled and the
GPU otherwise idle.
"""
import argparse
import importlib
import os
import platform
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MODELS = {
    "PraNet": ("lib.PraNet_Res2Net", "PraNet"),
    "PolypPVT": ("lib.pvt", "PolypPVT"),
    "HarDMSEG": ("lib.HarDMSEG", "HarDMSEG"),
}


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="PolypPVT", choices=sorted(MODELS))
    p.add_argument("--size", type=int, default=352)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--iters", type=int, default=500)
    p.add_argument("--half", action="store_true", help="fp16 weights and inputs")
    p.add_argument("--channels_last", action="store_true")
    p.add_argument("--weights", default="", help="optional checkpoint to load")
    return p.parse_args()


def build(name, weights):
    module_name, cls_name = MODELS[name]
    cls = getattr(importlib.import_module(module_name), cls_name)
    model = cls()
    if weights:
        state = torch.load(weights, map_location="cpu")
        model.load_state_dict(state, strict=False)
    return model


def describe_device():
    props = torch.cuda.get_device_properties(0)
    return (f"{torch.cuda.get_device_name(0)} | {props.total_memory / 2 ** 30:.0f} GiB | "
            f"SMs {props.multi_processor_count} | CUDA {torch.version.cuda} | "
            f"cuDNN {torch.backends.cudnn.version()}")


@torch.no_grad()
def time_cuda_events(model, x, iters):
    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)
    timings = np.zeros((iters, 1))
    for rep in range(iters):
        starter.record()
        _ = model(x)
        ender.record()
        torch.cuda.synchronize()  # wait for the GPU before reading the events
        timings[rep] = starter.elapsed_time(ender)
    return timings


@torch.no_grad()
def time_wallclock(model, x, iters):
    sync = torch.cuda.synchronize
    sync()
    t0 = time.perf_counter()
    for _ in range(iters):
        _ = model(x)
    sync()
    return (time.perf_counter() - t0) / iters


def main():
    args = parse_args()
    assert torch.cuda.is_available(), "FPS benchmark requires a CUDA device"
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.enabled = True

    device = torch.device("cuda")
    model = build(args.model, args.weights).eval().to(device)
    x = torch.randn(args.batch, 3, args.size, args.size, device=device)
    if args.half:
        model = model.half()
        x = x.half()
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)

    print(f"{args.model} @ {args.size}x{args.size}, batch {args.batch}, half={args.half}")
    print(describe_device())
    print(f"python {platform.python_version()} | torch {torch.__version__}")

    with torch.no_grad():
        for _ in range(args.warmup):
            _ = model(x)
    torch.cuda.synchronize()

    timings = time_cuda_events(model, x, args.iters)
    mean_ms = float(np.mean(timings))
    std_ms = float(np.std(timings))
    wall = time_wallclock(model, x, args.iters // 2)

    n_params = sum(p.numel() for p in model.parameters()) / 1e6
    print(f"params: {n_params:.2f} M")
    print(f"latency (events): {mean_ms:.2f} +- {std_ms:.2f} ms  ->  {1000.0 * args.batch / mean_ms:.1f} FPS")
    print(f"latency (wall)  : {wall * 1000:.2f} ms  ->  {args.batch / wall:.1f} FPS")
    print(f"max memory allocated: {torch.cuda.max_memory_allocated() / 2 ** 20:.0f} MiB")


if __name__ == "__main__":
    main()
