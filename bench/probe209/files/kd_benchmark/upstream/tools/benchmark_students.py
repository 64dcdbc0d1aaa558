"""Latency / throughput / memory table for teacher and student networks.

Produces the "speed" columns of the results table in the README:

    python tools/benchmark_students.py --models resnet32x4 resnet8x4 ShuffleV2 --batch-size 64 --amp

Numbers in the paper were measured on a single RTX 3090 (driver 515, CUDA 11.7) with
cudnn.benchmark enabled and channels_last inputs.
"""
import argparse
import json
import os
import platform
import time

import numpy as np
import torch
import torch.nn as nn

from models import model_dict


def get_args():
    parser = argparse.ArgumentParser("benchmark distillation students")
    parser.add_argument("--models", nargs="+", default=["resnet32x4", "resnet8x4"])
    parser.add_argument("--num-classes", type=int, default=100)
    parser.add_argument("--input-size", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--iters", type=int, default=100)
    parser.add_argument("--amp", action="store_true", help="fp16 autocast")
    parser.add_argument("--channels-last", action="store_true")
    parser.add_argument("--compile", action="store_true", help="torch.compile the model first (PyTorch 2.x)")
    parser.add_argument("--gpu", type=int, default=0)
    parser.add_argument("--out", type=str, default="benchmark.json")
    return parser.parse_args()


def count_parameters(model):
    return sum(p.numel() for p in model.parameters()) / 1e6


def describe_environment(gpu):
    """environment block that is dumped next to the numbers"""
    info = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "device": torch.cuda.get_device_name(gpu),
    }
    major, minor = torch.cuda.get_device_capability(gpu)
    info["compute_capability"] = "{}.{}".format(major, minor)
    # tensor cores for fp16 need sm_70+, bf16 needs sm_80+
    info["bf16_ok"] = major >= 8
    return info


@torch.no_grad()
def benchmark(model, x, warmup, iters, use_amp):
    model.eval()
    for _ in range(warmup):
        with torch.cuda.amp.autocast(enabled=use_amp):
            model(x)
    torch.cuda.synchronize()

    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)
    timings = np.zeros((iters, 1))
    for rep in range(iters):
        starter.record()
        with torch.autocast("cuda", enabled=use_amp):
            model(x)
        ender.record()
        torch.cuda.synchronize()  # wait for the GPU to finish before reading the timer
        timings[rep] = starter.elapsed_time(ender)

    mean_ms = float(np.mean(timings))
    std_ms = float(np.std(timings))
    throughput = x.shape[0] * 1000.0 / mean_ms
    return mean_ms, std_ms, throughput


def main():
    args = get_args()
    if not torch.cuda.is_available():
        raise SystemExit("this benchmark needs a CUDA GPU")

    torch.cuda.set_device(args.gpu)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    device = torch.device("cuda:{}".format(args.gpu))

    env = describe_environment(args.gpu)
    print(json.dumps(env, indent=2))

    results = []
    for name in args.models:
        model = model_dict[name](num_classes=args.num_classes)
        n_params = count_parameters(model)
        model = model.to(device)
        x = torch.randn(args.batch_size, 3, args.input_size, args.input_size, device=device)
        if args.channels_last:
            model = model.to(memory_format=torch.channels_last)
            x = x.to(memory_format=torch.channels_last)
        if args.compile:
            model = torch.compile(model, mode="max-autotune")

        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
        mean_ms, std_ms, throughput = benchmark(model, x, args.warmup, args.iters, args.amp)
        peak_mb = torch.cuda.max_memory_allocated(device) / 1024 ** 2

        row = {
            "model": name,
            "params_M": round(n_params, 3),
            "batch_size": args.batch_size,
            "latency_ms": round(mean_ms, 3),
            "latency_std_ms": round(std_ms, 3),
            "throughput_img_s": round(throughput, 1),
            "peak_mem_MB": round(peak_mb, 1),
            "amp": args.amp,
        }
        print("{model:>12s}  {params_M:7.2f}M  {latency_ms:8.3f} ms  {throughput_img_s:9.1f} img/s  "
              "{peak_mem_MB:8.1f} MB".format(**row))
        results.append(row)
        del model, x

    out = {"env": env, "results": results, "time": time.strftime("%Y-%m-%d %H:%M:%S")}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=2)
    print("saved to {}".format(args.out))


if __name__ == "__main__":
    main()
