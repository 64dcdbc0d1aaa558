"""Latency / throughput benchmark for the weakly-supervised VAD heads.

Measures the scoring head only (features are pre-extracted), which is what
runs per camera stream in deployment:

    python tools/benchmark.py --model rtfm --batch 1 --snippets 32 --iters 500
    python tools/benchmark.py --model urdmu --batch 16 --amp --profile prof_out/

Numbers in the README were obtained on one A100-40GB, torch 2.0.1, CUDA 11.8.
"""
import argparse
import json
import os
import platform
import time

import numpy as np
import torch
import torch.nn as nn

from libs.modeling import build_vad_head

torch.backends.cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument('--model', default='rtfm', choices=['rtfm', 'mgfn', 'urdmu', 'vadclip'])
    p.add_argument('--batch', type=int, default=1)
    p.add_argument('--crops', type=int, default=10)
    p.add_argument('--snippets', type=int, default=32)
    p.add_argument('--feat-dim', type=int, default=2048)
    p.add_argument('--iters', type=int, default=300)
    p.add_argument('--warmup', type=int, default=50)
    p.add_argument('--amp', action='store_true')
    p.add_argument('--compile', action='store_true', help='torch.compile the head (torch>=2.0)')
    p.add_argument('--profile', default='', help='write a profiler trace to this folder')
    p.add_argument('--nvtx', action='store_true', help='emit NVTX ranges for nsys')
    p.add_argument('--device', default='cuda:0')
    p.add_argument('--json', default='', help='append the result as one json line to this file')
    p.add_argument('--sweep', action='store_true', help='also sweep the batch size')
    return p.parse_args()


def env_info(device):
    props = torch.cuda.get_device_properties(device)
    return {
        'gpu': props.name,
        'sm': '{}.{}'.format(props.major, props.minor),
        'mem_gb': round(props.total_memory / 1024 ** 3, 1),
        'torch': torch.__version__,
        'cuda': torch.version.cuda,
        'cudnn': torch.backends.cudnn.version(),
        'python': platform.python_version(),
    }


def amp_ctx(enabled):
    return torch.autocast(device_type='cuda', dtype=torch.float16, enabled=enabled)


@torch.no_grad()
def time_with_events(model, x, iters, use_amp, nvtx=False):
    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)
    timings = np.zeros(iters)
    for i in range(iters):
        if nvtx:
            torch.cuda.nvtx.range_push("iter{}".format(i))
        starter.record()
        with amp_ctx(use_amp):
            model(x)
        ender.record()
        torch.cuda.synchronize()  # wait for gpu sync
        if nvtx:
            torch.cuda.nvtx.range_pop()
        timings[i] = starter.elapsed_time(ender)
    return timings


@torch.no_grad()
def time_wallclock(model, x, iters, use_amp):
    """Host-side timing as a sanity check for the event timings."""
    torch.cuda.synchronize()  # drain queued work before starting the clock
    t0 = time.perf_counter()
    for _ in range(iters):
        with amp_ctx(use_amp):
            model(x)
    torch.cuda.synchronize()  # stop the clock after the last kernel
    return (time.perf_counter() - t0) * 1000.0 / iters


def run_profiler(model, x, out_dir, use_amp):
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
    os.makedirs(out_dir, exist_ok=True)
    with profile(
            activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
            schedule=schedule(wait=1, warmup=2, active=5, repeat=1),
            on_trace_ready=tensorboard_trace_handler(out_dir),
            record_shapes=True,
            profile_memory=True,
            with_stack=False) as prof:
        for _ in range(10):
            with torch.no_grad(), amp_ctx(use_amp):
                model(x)
            prof.step()
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=20))


def main():
    args = parse_args()
    device = torch.device(args.device)
    torch.cuda.set_device(device)

    model = build_vad_head(args.model, feat_dim=args.feat_dim, batch_size=args.batch).to(device).eval()
    if args.compile:
        model = torch.compile(model, mode="max-autotune")

    x = torch.randn(args.batch, args.crops, args.snippets, args.feat_dim, device=device)
    n_params = sum(p.numel() for p in model.parameters()) / 1e6

    info = env_info(device)
    print(json.dumps(info, indent=1))
    print('model={} params={:.2f}M input={}'.format(args.model, n_params, tuple(x.shape)))

    # warm-up (also triggers cudnn autotuning / compilation)
    with torch.no_grad():
        for _ in range(args.warmup):
            with amp_ctx(args.amp):
                model(x)
    torch.cuda.synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)

    timings = time_with_events(model, x, args.iters, args.amp, nvtx=args.nvtx)
    wall = time_wallclock(model, x, args.iters, args.amp)
    peak_mb = torch.cuda.max_memory_allocated(device) / 1024 ** 2

    mean, std = timings.mean(), timings.std()
    fps = args.batch * 1000.0 / mean
    snippets_per_s = fps * args.snippets
    print('latency {:.3f} +- {:.3f} ms (wall {:.3f} ms) | {:.1f} videos/s | {:.0f} snippets/s | peak {:.0f} MB'.format(
        mean, std, wall, fps, snippets_per_s, peak_mb))

    if args.profile:
        run_profiler(model, x, args.profile, args.amp)

    if args.sweep:
        # throughput vs. batch size (how many camera streams one card can serve)
        print('batch,latency_ms,videos_per_s')
        for bs in (1, 2, 4, 8, 16, 32, 64, 128):
            xb = torch.randn(bs, args.crops, args.snippets, args.feat_dim, device=device)
            try:
                t = time_with_events(model, xb, max(args.iters // 5, 20), args.amp)
            except RuntimeError as e:  # OOM
                print('{},oom,'.format(bs))
                break
            print('{},{:.3f},{:.1f}'.format(bs, t.mean(), bs * 1000.0 / t.mean()))
            del xb
            torch.cuda.empty_cache()

    if args.json:
        rec = dict(info, model=args.model, batch=args.batch, amp=args.amp, compile=args.compile,
                   latency_ms=float(mean), latency_std=float(std), videos_per_s=float(fps), peak_mb=float(peak_mb))
        with open(args.json, 'a') as f:
            f.write(json.dumps(rec) + '\n')


if __name__ == '__main__':
    main()
