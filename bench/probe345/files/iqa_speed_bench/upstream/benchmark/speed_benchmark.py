"""Benchmark inference speed / memory of pyiqa metrics.

Example:
    python benchmark/speed_benchmark.py -m musiq maniqa topiq_nr --size 512 --iters 100 --fp16
    python benchmark/speed_benchmark.py -m lpips dists --device cuda:1 --json results/speed_a100.json
"""
import argparse
import json
import os
import platform
import time

import torch

import pyiqa

try:
    import pynvml
except ImportError:  # optional, only used to report SM utilisation
    pynvml = None


def gpu_utilization(index=0):
    """Return the SM utilisation (%) of GPU ``index`` as reported by NVML, or -1 if unavailable."""
    if pynvml is None:
        return -1
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    util = pynvml.nvmlDeviceGetUtilizationRates(handle)
    return util.gpu


def parse_args():
    parser = argparse.ArgumentParser(description='pyiqa speed benchmark')
    parser.add_argument('-m', '--metrics', nargs='+', default=['musiq', 'maniqa', 'topiq_nr', 'lpips'])
    parser.add_argument('--device', type=str, default='cuda', help='torch device string')
    parser.add_argument('--size', type=int, default=512, help='input resolution (square)')
    parser.add_argument('--batch', type=int, default=1)
    parser.add_argument('--warmup', type=int, default=10)
    parser.add_argument('--iters', type=int, default=50)
    parser.add_argument('--fp16', action='store_true', help='run under autocast(fp16)')
    parser.add_argument('--compile', action='store_true', help='wrap the network with torch.compile')
    parser.add_argument('--nvtx', action='store_true', help='emit NVTX ranges for nsys profiling')
    parser.add_argument('--json', type=str, default=None, help='dump results to this json file')
    return parser.parse_args()


@torch.inference_mode()
def bench_one(name, args, device):
    metric = pyiqa.create_metric(name, device=device)
    if args.compile:
        metric.net = torch.compile(metric.net, mode='max-autotune')

    x = torch.rand(args.batch, 3, args.size, args.size, device=device)
    ref = torch.rand_like(x)
    is_fr = metric.metric_mode == 'FR'

    def run():
        with torch.cuda.amp.autocast(enabled=args.fp16):
            return metric(x, ref) if is_fr else metric(x)

    for _ in range(args.warmup):
        run()
    torch.cuda.synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)

    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    wall0 = time.perf_counter()
    start.record()
    for i in range(args.iters):
        if args.nvtx:
            torch.cuda.nvtx.range_push(f'{name}_iter{i}')
        run()
        if args.nvtx:
            torch.cuda.nvtx.range_pop()
    end.record()
    torch.cuda.synchronize()
    wall = (time.perf_counter() - wall0) / args.iters

    ms_per_iter = start.elapsed_time(end) / args.iters
    peak_mb = torch.cuda.max_memory_allocated(device) / 2**20
    result = dict(
        metric=name,
        mode=metric.metric_mode,
        ms_per_iter=round(ms_per_iter, 3),
        wall_ms_per_iter=round(wall * 1000, 3),
        imgs_per_sec=round(args.batch * 1000.0 / ms_per_iter, 2),
        peak_mem_mb=round(peak_mb, 1),
        sm_util=gpu_utilization(device.index or 0),
    )
    del metric
    torch.cuda.empty_cache()
    return result


def main():
    args = parse_args()
    device = torch.device(args.device)

    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True

    header = {
        'host': platform.node(),
        'torch': torch.__version__,
        'cuda': torch.version.cuda,
        'gpu': torch.cuda.get_device_name(device),
        'size': args.size,
        'batch': args.batch,
        'fp16': args.fp16,
    }
    print(json.dumps(header, indent=2))

    results = []
    for name in args.metrics:
        try:
            r = bench_one(name, args, device)
        except Exception as e:  # some metrics do not support arbitrary sizes
            print(f'[skip] {name}: {e}')
            continue
        print(f"{r['metric']:<14} {r['mode']:<3} {r['ms_per_iter']:>9.2f} ms  "
              f"{r['imgs_per_sec']:>8.1f} img/s  {r['peak_mem_mb']:>8.1f} MB  util {r['sm_util']}%")
        results.append(r)

    if args.json:
        os.makedirs(os.path.dirname(args.json) or '.', exist_ok=True)
        with open(args.json, 'w') as f:
            json.dump({'env': header, 'results': results}, f, indent=2)


if __name__ == '__main__':
    main()
