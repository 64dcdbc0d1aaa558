#!/usr/bin/env python
"""Inference throughput / latency benchmark for torchvision classification models.

Measures images/sec at several batch sizes with CUDA events (so host overhead is not counted),
optionally in fp16 (on GPUs with tensor cores) and channels_last.

Examples::

    python benchmark_inference.py -a resnet50 --batch-sizes 1 8 32 64 128 256 --fp16
    python benchmark_inference.py -a mobilenet_v2 --channels-last --iters 500 --csv results.csv
"""
import argparse
import csv
import os
import platform
import sys
import time

import numpy as np
import torch
import torchvision.models as models

try:
    import pynvml
    pynvml.nvmlInit()
    _HAS_NVML = True
except Exception:  # pynvml missing or no NVIDIA driver
    _HAS_NVML = False


def parse_args():
    model_names = sorted(name for name in models.__dict__
                         if name.islower() and not name.startswith("__")
                         and callable(models.__dict__[name]))
    parser = argparse.ArgumentParser(description="torchvision inference benchmark")
    parser.add_argument("-a", "--arch", default="resnet50", choices=model_names)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 8, 32, 64, 128, 256])
    parser.add_argument("--image-size", type=int, default=224)
    parser.add_argument("--warmup", type=int, default=20, help="warm-up iterations per batch size")
    parser.add_argument("--iters", type=int, default=200, help="timed iterations per batch size")
    parser.add_argument("--fp16", action="store_true", help="run in half precision (needs sm_70+)")
    parser.add_argument("--amp", action="store_true", help="run under torch.cuda.amp.autocast instead of .half()")
    parser.add_argument("--channels-last", action="store_true")
    parser.add_argument("--jit", action="store_true", help="torch.jit.trace the model first")
    parser.add_argument("--tf32", action="store_true", help="allow TF32 matmul/conv on Ampere")
    parser.add_argument("--device-id", type=int, default=0)
    parser.add_argument("--csv", default="", help="append results to this csv file")
    return parser.parse_args()


def gpu_info(device_id):
    name = torch.cuda.get_device_name(device_id)
    props = torch.cuda.get_device_properties(device_id)
    print("GPU {}: {} | {:.1f} GiB | sm_{}{} | {} SMs".format(
        device_id, name, props.total_memory / 1024 ** 3, props.major, props.minor, props.multi_processor_count))
    if _HAS_NVML:
        handle = pynvml.nvmlDeviceGetHandleByIndex(device_id)
        print("driver {} | power limit {:.0f} W".format(
            pynvml.nvmlSystemGetDriverVersion(), pynvml.nvmlDeviceGetEnforcedPowerLimit(handle) / 1000.0))
    return name


def power_draw_watts(device_id):
    if not _HAS_NVML:
        return float("nan")
    handle = pynvml.nvmlDeviceGetHandleByIndex(device_id)
    return pynvml.nvmlDeviceGetPowerUsage(handle) / 1000.0


def build_model(args, device):
    model = models.__dict__[args.arch](weights=None)
    model.eval()
    if args.fp16:
        major, _ = torch.cuda.get_device_capability(args.device_id)
        if major < 7:
            print("WARNING: fp16 requested but sm_{}x has no tensor cores, falling back to fp32".format(major))
            args.fp16 = False
    if args.fp16:
        model = model.half()
    memory_format = torch.channels_last if args.channels_last else torch.contiguous_format
    model = model.to(device, memory_format=memory_format)
    if args.jit:
        example = torch.randn(1, 3, args.image_size, args.image_size, device=device)
        if args.fp16:
            example = example.half()
        with torch.no_grad():
            model = torch.jit.trace(model, example.contiguous(memory_format=memory_format))
            model = torch.jit.freeze(model)
    return model, memory_format


@torch.no_grad()
def bench_one(model, batch_size, args, device, memory_format):
    dtype = torch.half if args.fp16 else torch.float
    x = torch.randn(batch_size, 3, args.image_size, args.image_size, device=device, dtype=dtype)
    x = x.contiguous(memory_format=memory_format)

    for _ in range(args.warmup):
        if args.amp:
            with torch.cuda.amp.autocast():
                model(x)
        else:
            model(x)
    torch.cuda.synchronize()

    torch.cuda.reset_peak_memory_stats(device)
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    latencies = []
    start_all = time.perf_counter()
    for _ in range(args.iters):
        start.record()
        if args.amp:
            with torch.cuda.amp.autocast():  # timed region
                model(x)
        else:
            model(x)
        end.record()
        end.synchronize()
        latencies.append(start.elapsed_time(end))  # ms
    wall = time.perf_counter() - start_all

    latencies = np.asarray(latencies)
    return {
        "batch_size": batch_size,
        "throughput": batch_size * args.iters / wall,
        "lat_mean_ms": float(latencies.mean()),
        "lat_p50_ms": float(np.percentile(latencies, 50)),
        "lat_p99_ms": float(np.percentile(latencies, 99)),
        "peak_mem_mb": torch.cuda.max_memory_allocated(device) / 2 ** 20,
        "power_w": power_draw_watts(args.device_id),
    }


def main():
    args = parse_args()
    if not torch.cuda.is_available():
        sys.exit("This benchmark needs a CUDA device.")

    torch.cuda.set_device(args.device_id)
    device = torch.device("cuda", args.device_id)
    torch.backends.cudnn.benchmark = True
    if args.tf32:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True

    gpu_name = gpu_info(args.device_id)
    print("torch {} | CUDA {} | cuDNN {} | python {}".format(
        torch.__version__, torch.version.cuda, torch.backends.cudnn.version(), platform.python_version()))

    model, memory_format = build_model(args, device)

    rows = []
    for bs in args.batch_sizes:
        try:
            r = bench_one(model, bs, args, device, memory_format)
        except RuntimeError as e:
            if "out of memory" in str(e):
                print("bs={}: OOM, stopping".format(bs))
                torch.cuda.empty_cache()
                break
            raise
        rows.append(r)
        print("bs={batch_size:4d}  {throughput:9.1f} img/s  mean {lat_mean_ms:7.2f} ms  "
              "p99 {lat_p99_ms:7.2f} ms  peak {peak_mem_mb:8.0f} MB  {power_w:6.1f} W".format(**r))

    if args.csv:
        new_file = not os.path.exists(args.csv)
        with open(args.csv, "a", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=["gpu", "arch", "precision", "channels_last"] + list(rows[0].keys()))
            if new_file:
                writer.writeheader()
            for r in rows:
                writer.writerow(dict(gpu=gpu_name, arch=args.arch,
                                     precision="fp16" if args.fp16 else ("amp" if args.amp else "fp32"),
                                     channels_last=args.channels_last, **r))


if __name__ == "__main__":
    main()
