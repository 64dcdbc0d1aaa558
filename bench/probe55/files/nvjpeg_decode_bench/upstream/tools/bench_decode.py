#!/usr/bin/env python
"""Compare JPEG decode throughput: PIL / torchvision CPU / torchvision nvJPEG (single and batched).

    python tools/bench_decode.py --images /data/imagenet/val --num-images 2048 --batch-size 128

Prints images/s for every decoder and the mean device utilisation while the GPU decoders ran,
so the numbers can be compared with the dataloader's per-worker budget.
"""
import argparse
import glob
import os
import statistics
import sys
import threading
import time

import numpy as np
import pynvml
import torch
import torchvision
from PIL import Image
from torchvision.io import ImageReadMode, decode_jpeg, read_file


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--images", required=True, help="directory tree of .JPEG files")
    p.add_argument("--num-images", type=int, default=2048)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--device-index", type=int, default=0)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--skip-pil", action="store_true")
    return p.parse_args()


def load_files(root, n):
    paths = sorted(glob.glob(os.path.join(root, "**", "*.JPEG"), recursive=True))
    if not paths:
        paths = sorted(glob.glob(os.path.join(root, "**", "*.jpg"), recursive=True))
    if not paths:
        sys.exit(f"no JPEG files under {root}")
    paths = paths[:n]
    return paths, [read_file(p) for p in paths]


class UtilSampler(threading.Thread):
    """Polls NVML every 50 ms while a GPU decoder is running."""

    def __init__(self, index):
        super().__init__(daemon=True)
        pynvml.nvmlInit()
        self.handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        self.samples = []
        self._stop_evt = threading.Event()

    def run(self):
        while not self._stop_evt.is_set():
            self.samples.append(pynvml.nvmlDeviceGetUtilizationRates(self.handle).gpu)
            time.sleep(0.05)

    def stop(self):
        self._stop_evt.set()
        self.join()
        return statistics.mean(self.samples) if self.samples else float("nan")


def bench_pil(paths, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for p in paths:
            with Image.open(p) as im:
                np.asarray(im.convert("RGB"))
        times.append(time.perf_counter() - t0)
    return len(paths) / min(times)


def bench_tv_cpu(datas, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for d in datas:
            decode_jpeg(d, mode=ImageReadMode.RGB)
        times.append(time.perf_counter() - t0)
    return len(datas) / min(times)


def bench_nvjpeg_single(datas, repeat, warmup):
    for d in datas[:warmup * 8]:
        _ = decode_jpeg(d, device="cuda", mode=ImageReadMode.RGB)
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(repeat):
        start = torch.cuda.Event(enable_timing=True)
        stop_evt = torch.cuda.Event(enable_timing=True)
        start.record()
        for d in datas:
            decode_jpeg(d, mode=ImageReadMode.RGB, device="cuda")
        stop_evt.record()
        stop_evt.synchronize()
        best = min(best, start.elapsed_time(stop_evt) / 1e3)
    return len(datas) / best


def bench_nvjpeg_batched(datas, repeat, warmup, batch_size, device):
    batches = [datas[i:i + batch_size] for i in range(0, len(datas), batch_size)]
    for b in batches[:warmup]:
        decode_jpeg(b, mode=ImageReadMode.RGB, device=device)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for b in batches:
            out = decode_jpeg(b, mode=ImageReadMode.RGB, device=device)
        torch.cuda.synchronize(device)  # wait for the last batch
        best = min(best, time.perf_counter() - t0)
    assert out[0].device == device
    return len(datas) / best


def main():
    args = parse_args()
    if not torch.cuda.is_available():
        sys.exit("this benchmark needs a CUDA device (nvJPEG)")

    device = torch.device("cuda", args.device_index)
    torch.cuda.set_device(device)
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, "
          f"device {torch.cuda.get_device_name(device)}")

    paths, datas = load_files(args.images, args.num_images)
    total_mb = sum(d.numel() for d in datas) / 2**20
    print(f"{len(datas)} images, {total_mb:.1f} MiB encoded")

    results = {}
    if not args.skip_pil:
        results["PIL"] = bench_pil(paths, args.repeat)
    results["torchvision cpu"] = bench_tv_cpu(datas, args.repeat)

    sampler = UtilSampler(args.device_index)
    sampler.start()
    results["nvjpeg single"] = bench_nvjpeg_single(datas, args.repeat, args.warmup)
    results["nvjpeg batched"] = bench_nvjpeg_batched(datas, args.repeat, args.warmup, args.batch_size, device)
    util = sampler.stop()

    width = max(len(k) for k in results)
    for name, ips in results.items():
        print(f"{name:<{width}}  {ips:10.1f} img/s")
    print(f"mean GPU utilisation during nvJPEG runs: {util:.0f}%")
    print(f"peak device memory: {torch.cuda.max_memory_allocated(device) / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
