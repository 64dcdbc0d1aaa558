#!/usr/bin/env python
"""Throughput / latency benchmark for learned-simulator rollouts.

Measures steps/s of a trained GNS or MeshGraphNets checkpoint for several
batch sizes, optionally replaying the step through a CUDA graph, and writes a
JSON report together with an optional Chrome trace and NVTX ranges for Nsight.

    python tools/benchmark_rollout.py --ckpt models/model-2000000.pt --metadata data/WaterDrop/metadata.json
    nsys profile -t cuda,nvtx python tools/benchmark_rollout.py ... --nvtx
"""

import argparse
import contextlib
import json
import os
import platform
import statistics
import time

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

try:
    import pynvml
    pynvml.nvmlInit()
    _NVML = True
except Exception:  # noqa: BLE001 - pynvml missing or no NVIDIA driver
    _NVML = False

from gns import reading_utils
from gns.train import _get_simulator, INPUT_SEQUENCE_LENGTH


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--metadata", required=True)
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--particles", type=int, nargs="+", default=[1024, 4096, 16384])
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--cuda-graph", action="store_true", help="capture one predict step into a CUDA graph")
    ap.add_argument("--nvtx", action="store_true", help="emit NVTX ranges around each step")
    ap.add_argument("--trace", default="", help="directory for a torch.profiler trace")
    ap.add_argument("--out", default="benchmark_rollout.json")
    return ap.parse_args()


@contextlib.contextmanager
def nvtx_range(name, enabled):
    if enabled:
        torch.cuda.nvtx.range_push(name)
    try:
        yield
    finally:
        if enabled:
            torch.cuda.nvtx.range_pop()


def gpu_info(device):
    info = {
        "name": torch.cuda.get_device_name(device),
        "capability": ".".join(map(str, torch.cuda.get_device_capability(device))),
        "total_mem_gb": torch.cuda.get_device_properties(device).total_memory / 2 ** 30,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
    }
    if _NVML:
        handle = pynvml.nvmlDeviceGetHandleByIndex(device.index or 0)
        info["driver"] = pynvml.nvmlSystemGetDriverVersion()
        info["power_limit_w"] = pynvml.nvmlDeviceGetPowerManagementLimit(handle) / 1000.0
        info["sm_clock_mhz"] = pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)
    return info


def make_inputs(n, dim, device):
    pos = torch.rand(n, INPUT_SEQUENCE_LENGTH, dim, device=device) * 0.8 + 0.1
    # slow drift so neighbourhoods are realistic
    drift = torch.linspace(0, 1e-3, INPUT_SEQUENCE_LENGTH, device=device)[None, :, None]
    pos = pos + drift
    types = torch.full((n,), 5, dtype=torch.long, device=device)
    return pos, types


def time_steps(fn, iters, device):
    times = []
    for _ in range(iters):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize(device)
        times.append(start.elapsed_time(end))
    return times


def main():
    args = parse_args()
    device = torch.device(args.device)
    torch.backends.cudnn.benchmark = True

    metadata = reading_utils.read_metadata(args.metadata)
    sim = _get_simulator(metadata, 0.0, 0.0, device)
    sim.load(args.ckpt)
    sim.to(device).eval()

    report = {"host": platform.node(), "torch": torch.__version__, "gpu": gpu_info(device), "results": []}

    for n in args.particles:
        pos, types = make_inputs(n, metadata["dim"], device)
        nper = torch.tensor([n], device=device)

        def step():
            with torch.no_grad():
                return sim.predict_positions(pos, nparticles_per_example=nper, particle_types=types)

        for _ in range(args.warmup):
            step()
        torch.cuda.synchronize()

        graph_used = False
        if args.cuda_graph:
            try:
                s = torch.cuda.Stream()
                s.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(s):
                    for _ in range(3):
                        step()
                torch.cuda.current_stream().wait_stream(s)
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g):
                    static_out = step()
                run = g.replay
                graph_used = True
            except RuntimeError as e:  # radius_graph has dynamic shapes
                print(f"[n={n}] CUDA graph capture failed ({e}); falling back to eager")
                run = step
        else:
            run = step

        torch.cuda.reset_peak_memory_stats(device)
        with nvtx_range(f"rollout_n{n}", args.nvtx):
            times = time_steps(run, args.iters, device)

        res = {
            "particles": n,
            "cuda_graph": graph_used,
            "median_ms": statistics.median(times),
            "p90_ms": float(np.percentile(times, 90)),
            "steps_per_s": 1000.0 / statistics.median(times),
            "peak_mem_mb": torch.cuda.max_memory_allocated(device) / 2 ** 20,
        }
        print(json.dumps(res))
        report["results"].append(res)
        torch.cuda.empty_cache()

    if args.trace:
        pos, types = make_inputs(args.particles[0], metadata["dim"], device)
        nper = torch.tensor([args.particles[0]], device=device)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                     schedule=schedule(wait=1, warmup=2, active=5),
                     on_trace_ready=tensorboard_trace_handler(args.trace),
                     record_shapes=True) as prof:
            for _ in range(8):
                with torch.no_grad():
                    sim.predict_positions(pos, nparticles_per_example=nper, particle_types=types)
                prof.step()

    with open(args.out, "w") as f:
        json.dump(report, f, indent=2)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
