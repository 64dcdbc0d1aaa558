"""
Measure descriptor extraction latency, throughput and peak memory of VPR models.

Numbers in the paper (Table 5) were obtained with:
    python tools/benchmark_latency.py --models resnet50_gem resnet50_mixvpr dinov2_salad \
        --batch_sizes 1 32 --image_size 320 320 --gpu 0 --amp

Latency is measured with CUDA events after a warm-up, peak memory with the caching
allocator statistics, FLOPs with fvcore (on CPU, once per model).
"""
import argparse
import csv
import os
import time
from collections import OrderedDict

import numpy as np
import pynvml
import torch
from torch.profiler import ProfilerActivity, profile

from vpr_model import VPRModel


MODEL_CONFIGS = OrderedDict({
    "resnet50_gem": dict(backbone_arch="resnet50", layers_to_crop=[4],
                         agg_arch="GeM", agg_config={"p": 3}),
    "resnet50_mixvpr": dict(backbone_arch="resnet50", layers_to_crop=[4],
                            agg_arch="MixVPR",
                            agg_config={"in_channels": 1024, "in_h": 20, "in_w": 20, "out_channels": 1024,
                                        "mix_depth": 4, "mlp_ratio": 1, "out_rows": 4}),
    "resnet50_convap": dict(backbone_arch="resnet50", layers_to_crop=[4],
                            agg_arch="ConvAP", agg_config={"in_channels": 1024, "out_channels": 2048}),
    "dinov2_salad": dict(backbone_arch="dinov2_vitb14",
                         backbone_config={"num_trainable_blocks": 4, "return_token": True, "norm_layer": True},
                         agg_arch="SALAD",
                         agg_config={"num_channels": 768, "num_clusters": 64, "cluster_dim": 128, "token_dim": 256}),
})


def parse_args():
    parser = argparse.ArgumentParser(description="VPR latency benchmark")
    parser.add_argument("--models", nargs="+", default=list(MODEL_CONFIGS.keys()), choices=list(MODEL_CONFIGS.keys()))
    parser.add_argument("--batch_sizes", nargs="+", type=int, default=[1, 32])
    parser.add_argument("--image_size", nargs=2, type=int, default=[320, 320])
    parser.add_argument("--gpu", type=int, default=0)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--iters", type=int, default=100)
    parser.add_argument("--amp", action="store_true", help="fp16 autocast")
    parser.add_argument("--channels_last", action="store_true")
    parser.add_argument("--compile", action="store_true", help="torch.compile the model (PyTorch >= 2.0)")
    parser.add_argument("--profile", action="store_true", help="print the top kernels of one batch")
    parser.add_argument("--flops", action="store_true", help="also count FLOPs with fvcore (slow)")
    parser.add_argument("--out_csv", type=str, default="latency.csv")
    return parser.parse_args()


def gpu_info(idx):
    """Name and total memory (GB) of the benchmarked GPU, for the results table."""
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(idx)
    return pynvml.nvmlDeviceGetName(handle), pynvml.nvmlDeviceGetMemoryInfo(handle).total / 1024 ** 3


def count_flops(model, image_size):
    from fvcore.nn import FlopCountAnalysis
    model_cpu = model.cpu().eval()
    x = torch.randn(1, 3, *image_size)
    flops = FlopCountAnalysis(model_cpu, x)
    flops.unsupported_ops_warnings(False)
    flops.uncalled_modules_warnings(False)
    return flops.total() / 1e9


@torch.no_grad()
def measure(model, x, warmup, iters, amp):
    for _ in range(warmup):
        with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=amp):
            model(x)
    torch.cuda.synchronize()  # drain the warm-up queue

    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)
    timings = np.zeros(iters)
    for i in range(iters):
        starter.record()
        with torch.autocast("cuda", dtype=torch.float16, enabled=amp):
            model(x)
        ender.record()
        # wait for the GPU to finish before reading the timer
        torch.cuda.synchronize()
        timings[i] = starter.elapsed_time(ender)  # milliseconds
    return timings


def main():
    args = parse_args()
    device = torch.device(f"cuda:{args.gpu}")
    torch.backends.cudnn.benchmark = True

    gpu_name, gpu_mem = gpu_info(args.gpu)
    print(f"Benchmarking on {gpu_name} ({gpu_mem:.0f} GB), torch {torch.__version__}")

    major, _ = torch.cuda.get_device_capability(device)
    if args.amp and major < 7:
        print("WARNING: this GPU has no tensor cores, fp16 autocast will not be faster")

    rows = []
    for name in args.models:
        model = VPRModel(**MODEL_CONFIGS[name]).eval()
        gflops = count_flops(model, args.image_size) if args.flops else float("nan")
        n_params = sum(p.numel() for p in model.parameters()) / 1e6

        model = model.to(device)
        if args.channels_last:
            model = model.to(memory_format=torch.channels_last)
        if args.compile:
            model = torch.compile(model, mode="max-autotune")

        for bs in args.batch_sizes:
            x = torch.randn(bs, 3, *args.image_size, device=device)
            if args.channels_last:
                x = x.contiguous(memory_format=torch.channels_last)

            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats(device)
            timings = measure(model, x, args.warmup, args.iters, args.amp)
            peak_mem = torch.cuda.max_memory_allocated(device) / 1024 ** 2

            mean_ms, std_ms = timings.mean(), timings.std()
            throughput = bs * 1000.0 / mean_ms
            print(f"{name:18s} bs={bs:<3d} {mean_ms:8.2f} ± {std_ms:5.2f} ms  "
                  f"{throughput:8.1f} img/s  peak {peak_mem:7.0f} MB  {n_params:6.1f} M params  {gflops:6.1f} GFLOPs")
            rows.append(OrderedDict(model=name, batch_size=bs, mean_ms=round(mean_ms, 3), std_ms=round(std_ms, 3),
                                    img_per_s=round(throughput, 1), peak_mem_mb=round(peak_mem), params_m=round(n_params, 2),
                                    gflops=round(gflops, 2), device=gpu_name, amp=args.amp))

        if args.profile:
            x = torch.randn(args.batch_sizes[-1], 3, *args.image_size, device=device)
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
                with torch.no_grad():
                    model(x)
            print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=15))

        del model
        time.sleep(1)

    write_header = not os.path.exists(args.out_csv)
    with open(args.out_csv, "a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        if write_header:
            writer.writeheader()
        writer.writerows(rows)
    print(f"Results appended to {args.out_csv}")


if __name__ == "__main__":
    main()
