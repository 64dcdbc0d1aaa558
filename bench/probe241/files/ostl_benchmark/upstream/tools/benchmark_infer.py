"""Inference benchmark for spatio-temporal forecasting models (SimVP / TAU / ConvLSTM ...).

Reports latency, throughput, peak memory and board power for a range of batch sizes,
optionally with torch.compile and a short profiler trace.

    python tools/benchmark_infer.py -c configs/sevir/simvp/SimVP_gSTA.py --batch-sizes 1 4 16 \
        --amp --compile --profile-dir work_dirs/prof_simvp
"""
import argparse
import json
import os
import time

import numpy as np
import pynvml
import torch
from torch.profiler import profile, schedule, tensorboard_trace_handler, ProfilerActivity

from openstl.models import SimVP_Model, ConvLSTM_Model
from openstl.utils import load_config, update_config, default_parser


def parse_args():
    p = argparse.ArgumentParser(description="STL inference benchmark")
    p.add_argument("-c", "--config_file", required=True)
    p.add_argument("--method", default="simvp")
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 4, 16])
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--iters", type=int, default=100)
    p.add_argument("--amp", action="store_true", help="autocast to bf16 on Ampere+, fp16 otherwise")
    p.add_argument("--compile", action="store_true", help="wrap the model with torch.compile")
    p.add_argument("--profile-dir", default=None)
    p.add_argument("--gpu", type=int, default=0)
    p.add_argument("--out", default="benchmark.json")
    return p.parse_args()


class PowerMeter:
    """Samples board power through NVML (milliwatts -> watts)."""

    def __init__(self, index):
        pynvml.nvmlInit()
        self.handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        self.samples = []

    def sample(self):
        self.samples.append(pynvml.nvmlDeviceGetPowerUsage(self.handle) / 1000.0)

    def mean(self):
        return float(np.mean(self.samples)) if self.samples else float("nan")

    def close(self):
        pynvml.nvmlShutdown()


def pick_amp_dtype():
    major, _ = torch.cuda.get_device_capability()
    return torch.bfloat16 if major >= 8 else torch.float16


def build_model(args, device):
    config = update_config(default_parser(), load_config(args.config_file))
    config["method"] = args.method
    if args.method in ("simvp", "tau"):
        model = SimVP_Model(**config)
        in_shape = config["in_shape"]
        make_input = lambda b: torch.randn(b, *in_shape, device=device)
    elif args.method == "convlstm":
        model = ConvLSTM_Model(**config)
        T, C, H, W = config["in_shape"]
        p = config["patch_size"]
        make_input = lambda b: (torch.randn(b, config["total_length"], H // p, W // p, p * p * C, device=device),
                                torch.zeros(b, config["aft_seq_length"] - 1, H // p, W // p, p * p * C, device=device))
    else:
        raise ValueError(args.method)
    return model.to(device).eval(), make_input


def run_once(model, inp):
    if isinstance(inp, tuple):
        return model(*inp)
    return model(inp)


@torch.no_grad()
def bench(model, make_input, batch_size, args, amp_dtype, power):
    inp = make_input(batch_size)
    for _ in range(args.warmup):
        with torch.autocast("cuda", dtype=amp_dtype, enabled=args.amp):  # warm-up / autotune
            run_once(model, inp)
    torch.cuda.synchronize()  # drain warm-up work
    torch.cuda.reset_peak_memory_stats()

    times = []
    for _ in range(args.iters):
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=amp_dtype, enabled=args.amp):
            run_once(model, inp)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        power.sample()
    times = np.array(times)
    return {
        "batch_size": batch_size,
        "latency_ms_p50": float(np.percentile(times, 50) * 1e3),
        "latency_ms_p90": float(np.percentile(times, 90) * 1e3),
        "samples_per_s": float(batch_size / times.mean()),
        "peak_mem_mb": torch.cuda.max_memory_allocated() / 2 ** 20,
        "power_w": power.mean(),
    }


def profile_model(model, make_input, args, amp_dtype):
    inp = make_input(args.batch_sizes[0])
    activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    with profile(activities=activities,
                 schedule=schedule(wait=1, warmup=2, active=3, repeat=1),
                 on_trace_ready=tensorboard_trace_handler(args.profile_dir),
                 record_shapes=True, profile_memory=True, with_stack=False) as prof:
        for _ in range(6):
            with torch.no_grad(), torch.autocast("cuda", dtype=amp_dtype, enabled=args.amp):
                run_once(model, inp)
            prof.step()
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=25))


def main():
    args = parse_args()
    device = torch.device(f"cuda:{args.gpu}")
    torch.cuda.set_device(device)
    torch.set_float32_matmul_precision("high")

    amp_dtype = pick_amp_dtype() if args.amp else torch.float32
    model, make_input = build_model(args, device)
    if args.compile:
        model = torch.compile(model, mode="max-autotune")

    props = torch.cuda.get_device_properties(device)
    print(f"device: {props.name}, {props.total_memory / 2 ** 30:.1f} GB, amp={args.amp} ({amp_dtype})")

    power = PowerMeter(args.gpu)
    results = []
    try:
        for bs in args.batch_sizes:
            res = bench(model, make_input, bs, args, amp_dtype, power)
            print(json.dumps(res))
            results.append(res)
    finally:
        power.close()

    if args.profile_dir:
        os.makedirs(args.profile_dir, exist_ok=True)
        profile_model(model, make_input, args, amp_dtype)

    with open(args.out, "w") as f:
        json.dump({"device": props.name, "method": args.method, "compile": args.compile,
                   "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
