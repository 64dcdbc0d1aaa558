#!/usr/bin/env python
"""
Latency / real-time-factor benchmark for spoofing countermeasures.

Measures, for each model in the list, the GPU time per utterance for a range of
utterance durations, the real-time factor (processing time / audio duration)
and the peak GPU memory. Optionally records a torch.profiler trace.

  python tools/benchmark_rtf.py --models aasist aasist_l rawnet2 xlsr_sls \
      --durations 1 2 4 8 --batch 1 --half --profile
"""
import argparse
import json
import os
import time
from importlib import import_module

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

MODEL_ZOO = {
    "aasist": ("models.AASIST", "config/AASIST.conf"),
    "aasist_l": ("models.AASIST", "config/AASIST-L.conf"),
    "rawnet2": ("models.RawNet2Spoof", "config/RawNet2_baseline.conf"),
    "xlsr_sls": ("models.XLSR_SLS", "config/XLSR_SLS.conf"),
}

SR = 16000


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--models", nargs="+", default=["aasist"])
    p.add_argument("--durations", nargs="+", type=float, default=[1.0, 2.0, 4.0, 8.0])
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--half", action="store_true", help="run the model in fp16")
    p.add_argument("--compile", action="store_true", help="torch.compile the model first")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--gpu", type=int, default=0)
    p.add_argument("--out", default="benchmark_rtf.json")
    return p.parse_args()


def load_model(name, device, half=False):
    module_name, conf_path = MODEL_ZOO[name]
    with open(conf_path) as f:
        config = json.load(f)
    model = getattr(import_module(module_name), "Model")(config["model_config"])
    weights = config.get("model_path")
    if weights and os.path.exists(weights):
        model.load_state_dict(torch.load(weights, map_location=device))
    model = model.to(device).eval()
    if half:
        model = model.half()
    return model


@torch.no_grad()
def time_model(model, x, warmup, iters):
    """Returns per-call latency in ms measured with CUDA events."""
    for _ in range(warmup):
        model(x)
    torch.cuda.synchronize()  # drain the warm-up launches

    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(iters):
        starter.record()
        model(x)
        ender.record()
        torch.cuda.synchronize()
        times.append(starter.elapsed_time(ender))
    return np.asarray(times)


def run_profile(model, x, trace_dir):
    os.makedirs(trace_dir, exist_ok=True)
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=schedule(wait=1, warmup=2, active=5, repeat=1),
        on_trace_ready=tensorboard_trace_handler(trace_dir),
        record_shapes=True,
        profile_memory=True,
        with_stack=False,
    ) as prof:
        for _ in range(8):
            with torch.no_grad():
                model(x)
            prof.step()
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=15))


def main():
    args = get_args()
    torch.cuda.set_device(args.gpu)
    device = torch.device("cuda", args.gpu)
    torch.backends.cudnn.benchmark = True

    gpu_name = torch.cuda.get_device_name(args.gpu)
    total_mem = torch.cuda.get_device_properties(args.gpu).total_memory / 2 ** 30
    print("Benchmarking on {} ({:.0f} GB), torch {}, cuda {}".format(
        gpu_name, total_mem, torch.__version__, torch.version.cuda))

    results = {"device": gpu_name, "torch": torch.__version__, "half": args.half, "runs": []}
    dtype = torch.float16 if args.half else torch.float32

    for name in args.models:
        model = load_model(name, device, half=args.half)
        if args.compile:
            model = torch.compile(model, mode="max-autotune")
        n_params = sum(p.numel() for p in model.parameters()) / 1e6
        for dur in args.durations:
            n = int(dur * SR)
            x = torch.randn(args.batch, n, device=device, dtype=dtype)
            torch.cuda.reset_peak_memory_stats(device)
            t = time_model(model, x, args.warmup, args.iters)
            peak = torch.cuda.max_memory_allocated(device) / 2 ** 20
            rtf = (t.mean() / 1000.0) / (dur * args.batch)
            row = {
                "model": name, "params_M": round(n_params, 2), "duration_s": dur,
                "batch": args.batch, "lat_ms_mean": float(t.mean()),
                "lat_ms_p90": float(np.percentile(t, 90)), "rtf": float(rtf),
                "peak_mem_MB": float(peak),
            }
            results["runs"].append(row)
            print("{:10s} {:4.1f}s x{}  {:7.2f} ms (p90 {:7.2f})  RTF {:.4f}  mem {:7.1f} MB".format(
                name, dur, args.batch, row["lat_ms_mean"], row["lat_ms_p90"], rtf, peak))

        if args.profile:
            x = torch.randn(args.batch, int(4.0 * SR), device=device, dtype=dtype)
            run_profile(model, x, os.path.join("traces", name))

        del model
        torch.cuda.empty_cache()

    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
    print("saved", args.out)


if __name__ == "__main__":
    main()
