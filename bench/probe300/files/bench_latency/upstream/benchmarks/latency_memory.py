"""Inference cost of uncertainty methods: latency, throughput and peak memory.

Compares, for the same WRN-28-10 backbone:
    * deterministic softmax (1 forward pass)
    * MC dropout (T stochastic passes)
    * deep ensemble (M members)
    * SWAG (S posterior samples; bn_update excluded from timing)
    * DUQ / SNGP / DDU (single pass + cheap head)

Timing uses CUDA events around the forward passes only, after a warm-up, with cudnn
autotuning enabled.  NVTX ranges let you inspect a run in Nsight Systems:
    nsys profile -t cuda,nvtx python benchmarks/latency_memory.py --methods mc_dropout
"""
import argparse
import csv
import json
import os
import platform
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from models.wide_resnet import WideResNet
from sngp.layers import SNGPHead
from duq.resnet_duq import ResNet_DUQ

try:
    import pynvml

    pynvml.nvmlInit()
    _NVML_HANDLE = pynvml.nvmlDeviceGetHandleByIndex(int(os.environ.get("BENCH_GPU_INDEX", 0)))
except Exception:  # no NVML on this machine, utilisation column stays empty
    pynvml = None
    _NVML_HANDLE = None


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--methods", nargs="+",
                   default=["softmax", "mc_dropout", "ensemble", "swag", "duq", "sngp", "ddu"])
    p.add_argument("--batch_sizes", nargs="+", type=int, default=[1, 32, 256])
    p.add_argument("--mc_samples", type=int, default=10)
    p.add_argument("--ensemble_size", type=int, default=5)
    p.add_argument("--swag_samples", type=int, default=30)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--fp16", action="store_true", help="benchmark under autocast(fp16)")
    p.add_argument("--channels_last", action="store_true")
    p.add_argument("--compile", action="store_true", help="torch.compile with CUDA graphs")
    p.add_argument("--out", default="results/latency.csv")
    return p.parse_args()


def pick_device():
    if torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")


def describe_device(device):
    info = {"host": platform.node(), "torch": torch.__version__, "device": str(device)}
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        info.update({
            "name": torch.cuda.get_device_name(device),
            "total_mem_gb": round(props.total_memory / 2 ** 30, 1),
            "capability": "%d.%d" % torch.cuda.get_device_capability(device),
            "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(),
        })
    return info


def gpu_utilisation():
    if _NVML_HANDLE is None:
        return None
    return pynvml.nvmlDeviceGetUtilizationRates(_NVML_HANDLE).gpu


def enable_mc_dropout(model):
    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.train()


class Runner:
    """Builds the model(s) for one method and exposes a single ``__call__(x)``."""

    def __init__(self, method, args, device):
        self.method = method
        self.args = args
        self.device = device
        base = lambda drop=0.0: WideResNet(28, 10, num_classes=10, dropout_rate=drop)
        if method == "ensemble":
            self.models = [base().to(device).eval() for _ in range(args.ensemble_size)]
        elif method == "mc_dropout":
            m = base(0.1).to(device).eval()
            enable_mc_dropout(m)
            self.models = [m]
        elif method == "sngp":
            backbone = base()
            backbone.fc = nn.Identity()
            self.models = [SNGPHead(backbone, 640, 10).to(device).eval()]
        elif method == "duq":
            backbone = base()
            backbone.fc = nn.Identity()
            self.models = [ResNet_DUQ(backbone, 10, 640, 640, 0.1, 0.999).to(device).eval()]
        else:  # softmax, swag (weights are re-sampled outside the timed region), ddu
            self.models = [base().to(device).eval()]
        if args.channels_last:
            self.models = [m.to(memory_format=torch.channels_last) for m in self.models]
        if args.compile:
            self.models = [torch.compile(m, mode="reduce-overhead") for m in self.models]

    @torch.no_grad()
    def __call__(self, x):
        if self.method == "mc_dropout":
            return torch.stack([F.softmax(self.models[0](x), -1) for _ in range(self.args.mc_samples)]).mean(0)
        if self.method == "ensemble":
            return torch.stack([F.softmax(m(x), -1) for m in self.models]).mean(0)
        if self.method == "swag":
            return torch.stack([F.softmax(self.models[0](x), -1) for _ in range(self.args.swag_samples)]).mean(0)
        return self.models[0](x)


def benchmark(runner, batch_size, args, device):
    x = torch.randn(batch_size, 3, 32, 32, device=device)
    if args.channels_last:
        x = x.to(memory_format=torch.channels_last)
    amp_ctx = torch.autocast(device_type=device.type, dtype=torch.float16, enabled=args.fp16)

    with amp_ctx:
        for _ in range(args.warmup):
            runner(x)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()

    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)
    times = []
    utils = []
    torch.cuda.nvtx.range_push(f"{runner.method}_bs{batch_size}")
    with amp_ctx:
        for _ in range(args.iters):
            starter.record()
            runner(x)
            ender.record()
            ender.synchronize()
            times.append(starter.elapsed_time(ender))
            u = gpu_utilisation()
            if u is not None:
                utils.append(u)
    torch.cuda.nvtx.range_pop()

    peak_mb = torch.cuda.max_memory_allocated() / 2 ** 20
    med = statistics.median(times)
    return {
        "method": runner.method,
        "batch_size": batch_size,
        "latency_ms_median": med,
        "latency_ms_p90": sorted(times)[int(0.9 * len(times)) - 1],
        "throughput_img_s": batch_size / (med / 1000.0),
        "peak_mem_mb": peak_mb,
        "gpu_util_pct": statistics.mean(utils) if utils else "",
    }


def main():
    args = get_args()
    device = pick_device()
    if device.type != "cuda":
        raise SystemExit("this benchmark needs a GPU")

    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True

    # tensor cores only help fp16 from Volta on; warn people running on old cards
    if args.fp16 and torch.cuda.get_device_capability(device)[0] < 7:
        print("warning: fp16 autocast on a pre-Volta GPU will be slower than fp32")

    info = describe_device(device)
    print(json.dumps(info, indent=2))

    rows = []
    for method in args.methods:
        runner = Runner(method, args, device)
        for bs in args.batch_sizes:
            row = benchmark(runner, bs, args, device)
            rows.append(row)
            print("{method:>10s} bs={batch_size:<4d} median {latency_ms_median:8.2f} ms  "
                  "{throughput_img_s:9.1f} img/s  peak {peak_mem_mb:8.1f} MB".format(**row))
        del runner
        torch.cuda.empty_cache()

    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    with open(os.path.splitext(args.out)[0] + "_device.json", "w") as f:
        json.dump(info, f, indent=2)


if __name__ == "__main__":
    main()
