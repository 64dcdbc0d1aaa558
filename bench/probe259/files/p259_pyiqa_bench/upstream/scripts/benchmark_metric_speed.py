"""Benchmark inference speed and peak memory of IQA metrics.

Example:
    CUDA_VISIBLE_DEVICES=0 python scripts/benchmark_metric_speed.py -m musiq topiq_nr lpips --size 512 --bs 4

Results are appended to a csv so that the README table can be regenerated.
"""
import argparse
import csv
import os
import time

import torch
from tabulate import tabulate

import pyiqa


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('-m', '--metrics', nargs='+', default=['psnr', 'ssim', 'lpips', 'musiq', 'topiq_nr'])
    parser.add_argument('--size', type=int, default=512, help='square input resolution')
    parser.add_argument('--bs', type=int, default=1, help='batch size')
    parser.add_argument('--warmup', type=int, default=5)
    parser.add_argument('--iters', type=int, default=20)
    parser.add_argument('--fp16', action='store_true', help='run the network under autocast fp16')
    parser.add_argument('--compile', action='store_true', help='wrap the network with torch.compile')
    parser.add_argument('--profile', action='store_true', help='dump a chrome trace of the last iterations')
    parser.add_argument('--out', type=str, default='benchmark_results.csv')
    return parser.parse_args()


def device_info():
    name = torch.cuda.get_device_name(0)
    major, minor = torch.cuda.get_device_capability(0)
    total = torch.cuda.get_device_properties(0).total_memory / 1024**3
    return f'{name} (sm_{major}{minor}, {total:.0f} GB)'


@torch.no_grad()
def bench_one(name, args, device):
    metric = pyiqa.create_metric(name, device=device)
    if args.compile and hasattr(metric, 'net'):
        metric.net = torch.compile(metric.net, mode='reduce-overhead')

    x = torch.rand(args.bs, 3, args.size, args.size, device=device)
    y = torch.rand(args.bs, 3, args.size, args.size, device=device)
    inputs = (x, y) if metric.metric_mode == 'FR' else (x, )

    for _ in range(args.warmup):
        with torch.cuda.amp.autocast(args.fp16):
            metric(*inputs)
    torch.cuda.synchronize(device)
    torch.cuda.reset_peak_memory_stats()

    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(args.iters):
        start_evt.record()
        with torch.cuda.amp.autocast(enabled=args.fp16):
            metric(*inputs)
        end_evt.record()
        torch.cuda.synchronize()
        times.append(start_evt.elapsed_time(end_evt))

    peak_mem = torch.cuda.max_memory_allocated() / 1024**2
    avg_ms = sum(times) / len(times)
    del metric
    torch.cuda.empty_cache()
    return avg_ms, peak_mem


def profile_one(name, args, device):
    from torch.profiler import profile, ProfilerActivity, schedule, tensorboard_trace_handler
    metric = pyiqa.create_metric(name, device=device)
    x = torch.rand(args.bs, 3, args.size, args.size, device=device)
    inputs = (x, x.clone()) if metric.metric_mode == 'FR' else (x, )
    trace_dir = os.path.join('./profile', name)
    with profile(
            activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
            schedule=schedule(wait=1, warmup=2, active=3),
            on_trace_ready=tensorboard_trace_handler(trace_dir),
            record_shapes=True) as prof:
        for _ in range(6):
            with torch.no_grad():
                metric(*inputs)
            prof.step()
    print(prof.key_averages().table(sort_by='cuda_time_total', row_limit=15))


def main():
    args = parse_args()
    assert torch.cuda.is_available(), 'This benchmark needs a CUDA device.'
    device = torch.device('cuda')
    torch.backends.cudnn.benchmark = True
    print(f'Device: {device_info()}')
    print(f'torch {torch.__version__}, CUDA {torch.version.cuda}, pyiqa {pyiqa.__version__}')

    rows = []
    for name in args.metrics:
        try:
            avg_ms, peak_mem = bench_one(name, args, device)
        except torch.cuda.OutOfMemoryError:
            print(f'{name}: out of memory at {args.size}x{args.size} bs={args.bs}')
            torch.cuda.empty_cache()  # free what we can before the next metric
            continue
        fps = args.bs * 1000.0 / avg_ms
        rows.append([name, args.size, args.bs, f'{avg_ms:.2f}', f'{fps:.1f}', f'{peak_mem:.0f}'])
        if args.profile:
            profile_one(name, args, device)

    headers = ['metric', 'size', 'bs', 'ms/iter', 'img/s', 'peak MB']
    print(tabulate(rows, headers=headers, tablefmt='github'))

    write_header = not os.path.exists(args.out)
    with open(args.out, 'a', newline='') as f:
        writer = csv.writer(f)
        if write_header:
            writer.writerow(headers + ['device', 'date'])
        for r in rows:
            writer.writerow(r + [device_info(), time.strftime('%Y-%m-%d')])


if __name__ == '__main__':
    main()
