#!/usr/bin/env python
"""
Benchmark inference runtime and peak GPU memory of registration networks.

For each model in MODELS we time `--runs` forward passes of a random (moving, fixed) pair at the
given volume size after `--warmup` passes, using CUDA events, and report mean/std runtime,
peak allocated memory and the parameter count. Results are appended to a CSV so numbers from
different GPUs can be collected in one table (the GPU name is stored with each row).

    python tools/benchmark_runtime.py --models vxm transmorph lapirn --size 160 192 224 --fp16
"""

import argparse
import csv
import datetime
import os
import platform
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from regkit.models import build_model  # noqa: E402
from regkit.utils.gpu_utils import count_parameters  # noqa: E402

MODELS = ["vxm", "vxm-diff", "transmorph", "transmorph-large", "lapirn", "synthmorph"]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="+", default=MODELS, choices=MODELS)
    p.add_argument("--size", type=int, nargs=3, default=[160, 192, 224])
    p.add_argument("--batch-size", type=int, default=1)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--fp16", action="store_true", help="run under autocast(fp16)")
    p.add_argument("--channels-last", action="store_true", help="use channels_last_3d memory format")
    p.add_argument("--cudnn-benchmark", action="store_true")
    p.add_argument("--out", default="results/runtime.csv")
    p.add_argument("--device", type=int, default=0, help="CUDA device index")
    return p.parse_args()


@torch.no_grad()
def benchmark(model, x, warmup, runs, fp16):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    times = []
    for i in range(warmup + runs):
        start.record()
        with torch.autocast("cuda", dtype=torch.float16, enabled=fp16):
            model(x)
        end.record()
        torch.cuda.synchronize()
        if i >= warmup:
            times.append(start.elapsed_time(end))  # milliseconds
    return np.mean(times), np.std(times)


def main():
    args = parse_args()
    if not torch.cuda.is_available():
        sys.exit("benchmark_runtime.py needs a CUDA GPU")

    device = torch.device(f"cuda:{args.device}")
    torch.cuda.set_device(device)
    torch.backends.cudnn.benchmark = args.cudnn_benchmark
    gpu_name = torch.cuda.get_device_name(device)
    total_mem = torch.cuda.get_device_properties(device).total_memory / 2 ** 30
    print(f"{gpu_name} ({total_mem:.0f} GiB), torch {torch.__version__}, CUDA {torch.version.cuda}, "
          f"cuDNN {torch.backends.cudnn.version()}")

    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    write_header = not os.path.exists(args.out)
    with open(args.out, "a", newline="") as f:
        writer = csv.writer(f)
        if write_header:
            writer.writerow(["date", "host", "gpu", "model", "size", "batch", "fp16",
                             "mean_ms", "std_ms", "peak_mem_gib", "params_m"])
        for name in args.models:
            model = build_model(name, inshape=tuple(args.size)).cuda().eval()
            x = torch.randn(args.batch_size, 2, *args.size, device=device)
            if args.channels_last:
                model = model.to(memory_format=torch.channels_last_3d)
                x = x.to(memory_format=torch.channels_last_3d)

            torch.cuda.empty_cache()  # start every model from a clean cache
            torch.cuda.reset_peak_memory_stats(device)
            try:
                mean_ms, std_ms = benchmark(model, x, args.warmup, args.runs, args.fp16)
            except torch.cuda.OutOfMemoryError:
                print(f"{name:18s} OOM at {tuple(args.size)}")
                del model, x
                torch.cuda.empty_cache()
                continue
            peak = torch.cuda.max_memory_allocated(device) / 2 ** 30
            params = count_parameters(model) / 1e6
            print(f"{name:18s} {mean_ms:8.2f} +- {std_ms:6.2f} ms   peak {peak:6.2f} GiB   {params:6.2f} M params")
            writer.writerow([datetime.date.today().isoformat(), platform.node(), gpu_name, name,
                             "x".join(map(str, args.size)), args.batch_size, int(args.fp16),
                             f"{mean_ms:.3f}", f"{std_ms:.3f}", f"{peak:.3f}", f"{params:.3f}"])
            del model, x


if __name__ == "__main__":
    main()
