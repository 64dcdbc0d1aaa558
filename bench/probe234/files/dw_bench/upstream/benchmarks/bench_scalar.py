"""
Timing and memory benchmark of the scalar propagator (forward and forward+backward)
for a range of model sizes, accuracies and batch sizes.

    python benchmarks/bench_scalar.py --device cuda --sizes 256 512 1024 --accuracy 4 8
    python benchmarks/bench_scalar.py --device cpu --threads 32

Results are appended to benchmarks/results.csv; the --profile flag additionally
writes a chrome trace of one forward+backward step.
"""
import argparse
import csv
import itertools
import os
import platform
import time
from datetime import datetime

import torch
from torch.profiler import ProfilerActivity, profile, record_function

import deepwave


def make_problem(n, n_shots, nt, device, dtype=torch.float32):
    dx = 5.0
    dt = 0.0005
    v = 1500 + 1000 * torch.rand(n, n, device=device, dtype=dtype)
    freq = 25
    src_amp = deepwave.wavelets.ricker(freq, nt, dt, 1.5 / freq).to(dtype).repeat(n_shots, 1, 1).to(device)
    src_loc = torch.zeros(n_shots, 1, 2, dtype=torch.long, device=device)
    src_loc[:, 0, 0] = torch.linspace(10, n - 10, n_shots).long()
    src_loc[:, 0, 1] = 2
    n_rec = n // 2
    rec_loc = torch.zeros(n_shots, n_rec, 2, dtype=torch.long, device=device)
    rec_loc[:, :, 0] = torch.arange(n_rec) * 2
    rec_loc[:, :, 1] = 2
    return v, dx, dt, src_amp, src_loc, rec_loc, freq


class Timer:
    """CUDA events on the GPU, perf_counter on the CPU."""

    def __init__(self, device):
        self.device = device
        self.use_events = device.type == "cuda"
        if self.use_events:
            self.start = torch.cuda.Event(enable_timing=True)
            self.end = torch.cuda.Event(enable_timing=True)

    def __enter__(self):
        if self.use_events:
            self.start.record()
        else:
            self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        if self.use_events:
            self.end.record()
            self.end.synchronize()
            self.ms = self.start.elapsed_time(self.end)
        else:
            self.ms = (time.perf_counter() - self.t0) * 1000


def bench_one(n, n_shots, nt, accuracy, device, backward, repeats):
    v, dx, dt, src_amp, src_loc, rec_loc, freq = make_problem(n, n_shots, nt, device)
    on_gpu = device.type == "cuda"
    if backward:
        v.requires_grad_()

    def step():
        out = deepwave.scalar(v, dx, dt, source_amplitudes=src_amp, source_locations=src_loc,
                              receiver_locations=rec_loc, accuracy=accuracy, pml_freq=freq)
        if backward:
            out[-1].square().sum().backward()
        return out

    # warm-up (also triggers lazy CUDA init and kernel loading)
    step()
    if on_gpu:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats(device)

    times = []
    for _ in range(repeats):
        with Timer(device) as t:
            step()
        times.append(t.ms)

    peak_mb = torch.cuda.max_memory_allocated(device) / 2 ** 20 if on_gpu else float("nan")
    times.sort()
    return times[len(times) // 2], times[0], peak_mb


def device_name(device):
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return platform.processor() or platform.machine()


def profile_step(n, n_shots, nt, accuracy, device, trace_path):
    v, dx, dt, src_amp, src_loc, rec_loc, freq = make_problem(n, n_shots, nt, device)
    v.requires_grad_()
    gpu_trace = device.type == "cuda"
    activities = [ProfilerActivity.CPU]
    if gpu_trace:
        activities.append(ProfilerActivity.CUDA)
    with profile(activities=activities, record_shapes=True, profile_memory=True) as prof:
        with record_function("scalar_forward"):
            out = deepwave.scalar(v, dx, dt, accuracy=accuracy, pml_freq=freq, source_amplitudes=src_amp,
                                  source_locations=src_loc, receiver_locations=rec_loc)
        with record_function("scalar_backward"):
            out[-1].square().sum().backward()
    prof.export_chrome_trace(trace_path)
    sort_key = "cuda_time_total" if gpu_trace else "cpu_time_total"
    print(prof.key_averages().table(sort_by=sort_key, row_limit=15))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cuda")
    p.add_argument("--sizes", type=int, nargs="+", default=[256, 512, 1024])
    p.add_argument("--shots", type=int, nargs="+", default=[1, 8, 32])
    p.add_argument("--nt", type=int, default=2000)
    p.add_argument("--accuracy", type=int, nargs="+", default=[2, 4, 8])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--profile", action="store_true")
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results.csv"))
    args = p.parse_args()

    device = torch.device(args.device)
    if args.threads:
        torch.set_num_threads(args.threads)

    if args.profile:
        profile_step(args.sizes[0], args.shots[0], args.nt, args.accuracy[0], device, "trace_scalar.json")
        return

    rows = []
    name = device_name(device)
    print(f"device: {name}  torch {torch.__version__}  deepwave {deepwave.__version__}")
    for n, shots, acc in itertools.product(args.sizes, args.shots, args.accuracy):
        for backward in (False, True):
            med, best, peak = bench_one(n, shots, args.nt, acc, device, backward, args.repeats)
            mode = "fwd+bwd" if backward else "fwd"
            cells_per_s = n * n * shots * args.nt / (med / 1000)
            print(f"n={n:5d} shots={shots:3d} acc={acc} {mode:8s} {med:9.1f} ms (best {best:9.1f})"
                  f"  {cells_per_s / 1e9:6.2f} Gcell/s  peak {peak:8.1f} MB")
            rows.append([datetime.now().isoformat(timespec="seconds"), name, n, shots, args.nt, acc, mode,
                         f"{med:.2f}", f"{best:.2f}", f"{peak:.1f}"])

    new = not os.path.exists(args.out)
    with open(args.out, "a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(["date", "device", "n", "shots", "nt", "accuracy", "mode", "median_ms", "best_ms", "peak_mb"])
        w.writerows(rows)


if __name__ == "__main__":
    main()
