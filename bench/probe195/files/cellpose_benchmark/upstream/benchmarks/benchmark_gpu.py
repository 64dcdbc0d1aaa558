"""Benchmark cellpose segmentation speed and GPU memory on a folder of images.

    python benchmarks/benchmark_gpu.py --dir /data/tissuenet_test --model cyto3 --batch_sizes 8 16 32 --gpu 0

Writes one CSV row per (image size, batch size) with the network time, the
dynamics (mask reconstruction) time and the peak GPU memory.
"""
import argparse
import csv
import os
import platform
import time
from pathlib import Path

import numpy as np
import torch

try:
    import pynvml
    pynvml.nvmlInit()
    NVML = True
except Exception:  # no NVIDIA driver / pynvml not installed
    NVML = False

from cellpose import core, io, models


def gpu_info(index):
    info = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "gpu_name": torch.cuda.get_device_name(index),
        "gpu_mem_total_gb": round(torch.cuda.get_device_properties(index).total_memory / 2**30, 1),
        "capability": "%d.%d" % torch.cuda.get_device_capability(index),
        "host": platform.node(),
    }
    if NVML:
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        info["driver"] = pynvml.nvmlSystemGetDriverVersion()
        info["power_limit_w"] = pynvml.nvmlDeviceGetPowerManagementLimit(handle) / 1000
    return info


def nvml_used_mb(index):
    if not NVML:
        return float("nan")
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    return pynvml.nvmlDeviceGetMemoryInfo(handle).used / 2**20


def time_eval(model, img, batch_size, diameter, device_index):
    torch.cuda.synchronize(device_index)
    torch.cuda.reset_peak_memory_stats(device_index)
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)

    t0 = time.perf_counter()
    start.record()
    masks, flows, styles = model.eval(img, batch_size=batch_size, diameter=diameter,
                                      channels=[0, 0], compute_masks=False)[:3]
    end.record()
    torch.cuda.synchronize()
    t_net = start.elapsed_time(end) / 1000.0

    t1 = time.perf_counter()
    masks = model.eval(img, batch_size=batch_size, diameter=diameter, channels=[0, 0])[0]
    t_total = time.perf_counter() - t1
    peak = torch.cuda.max_memory_allocated(device_index) / 2**20
    return t_net, t_total - t_net, peak, int(masks.max())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--model", default="cyto3")
    parser.add_argument("--diameter", type=float, default=30.0)
    parser.add_argument("--batch_sizes", type=int, nargs="+", default=[8, 16, 32])
    parser.add_argument("--gpu", type=int, default=0, help="CUDA device index")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default="benchmark_results.csv")
    args = parser.parse_args()

    if not core.use_gpu(gpu_number=args.gpu):
        raise SystemExit("this benchmark needs a working CUDA GPU")

    torch.backends.cudnn.benchmark = True
    device = torch.device(f"cuda:{args.gpu}")
    model = models.CellposeModel(gpu=True, device=device, model_type=args.model)

    info = gpu_info(args.gpu)
    print(info)

    files = io.get_image_files(args.dir, "_masks")
    rows = []
    for f in files:
        img = io.imread(f)
        # warm-up (cudnn autotuner + allocator)
        model.eval(img, batch_size=args.batch_sizes[0], diameter=args.diameter, channels=[0, 0])
        for bs in args.batch_sizes:
            for r in range(args.repeats):
                t_net, t_dyn, peak, n = time_eval(model, img, bs, args.diameter, args.gpu)
                rows.append({
                    "file": Path(f).name, "shape": "x".join(map(str, img.shape)), "batch_size": bs,
                    "repeat": r, "t_net_s": round(t_net, 4), "t_dynamics_s": round(t_dyn, 4),
                    "peak_alloc_mb": round(peak, 1), "nvml_used_mb": round(nvml_used_mb(args.gpu), 1),
                    "n_masks": n, **info,
                })
                print(rows[-1])
        torch.cuda.empty_cache()

    with open(args.out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {len(rows)} rows to {args.out}")
    if NVML:
        pynvml.nvmlShutdown()


if __name__ == "__main__":
    main()
