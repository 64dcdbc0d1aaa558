"""
Measure parameters, FLOPs, latency, throughput and peak memory of the detectors
registered in DeepfakeBench (numbers reported in Table 7 of the paper).

    python tools/benchmark_speed.py --detectors xception efficientnetb4 spsl f3net \
        --batch_size 32 --resolution 256 --amp
"""
import argparse
import csv
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import yaml

sys.path.append(os.path.join(os.path.dirname(__file__), '..', 'training'))
from detectors import DETECTOR  # noqa: E402

try:
    from thop import profile as thop_profile
except ImportError:
    thop_profile = None

try:
    import pynvml
    pynvml.nvmlInit()
    _NVML = True
except Exception:
    _NVML = False


def gpu_info():
    """Driver / board information written into the csv header."""
    if not torch.cuda.is_available():
        return 'cpu'
    name = torch.cuda.get_device_name(0)
    if _NVML:
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        driver = pynvml.nvmlSystemGetDriverVersion()
        power = pynvml.nvmlDeviceGetPowerManagementLimit(handle) / 1000
        return f'{name} (driver {driver}, {power:.0f} W cap)'
    return name


def build(name, resolution):
    cfg_path = os.path.join('training', 'config', 'detector', f'{name}.yaml')
    with open(cfg_path) as f:
        config = yaml.safe_load(f)
    config['resolution'] = resolution
    config['pretrained'] = config.get('pretrained', None)
    model = DETECTOR[config['model_name']](config)
    return model.eval()


def count_params(model):
    return sum(p.numel() for p in model.parameters()) / 1e6


class Wrapper(nn.Module):
    """DeepfakeBench detectors take a data_dict; thop/profilers want a tensor."""

    def __init__(self, detector):
        super().__init__()
        self.detector = detector

    def forward(self, x):
        return self.detector({'image': x, 'label': None}, inference=True)['prob']


@torch.no_grad()
def measure_latency(model, x, warmup=20, iters=100, amp=False):
    for _ in range(warmup):
        with torch.cuda.amp.autocast(enabled=amp):
            model(x)
    torch.cuda.synchronize()

    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)
    timings = np.zeros(iters)
    for i in range(iters):
        starter.record()
        with torch.cuda.amp.autocast(enabled=amp, dtype=torch.float16):
            model(x)
        ender.record()
        torch.cuda.synchronize(x.device)
        timings[i] = starter.elapsed_time(ender)  # milliseconds
    return timings.mean(), timings.std()


@torch.no_grad()
def measure_memory(model, x, amp=False):
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    with torch.autocast('cuda', enabled=amp):
        model(x)
    torch.cuda.synchronize()  # flush before reading the peak
    return torch.cuda.max_memory_allocated() / 2 ** 20


def profile_ops(model, x, out_dir, name):
    """Optional kernel-level trace for the slowest detectors (opens in chrome://tracing)."""
    from torch.profiler import profile, ProfilerActivity, record_function
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
        with record_function('forward'):
            torch.cuda.nvtx.range_push(name)
            model(x)
            torch.cuda.nvtx.range_pop()
    prof.export_chrome_trace(os.path.join(out_dir, f'{name}_trace.json'))
    print(prof.key_averages().table(sort_by='cuda_time_total', row_limit=15))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--detectors', nargs='+', default=['xception', 'efficientnetb4', 'f3net', 'spsl', 'srm'])
    parser.add_argument('--batch_size', type=int, default=32)
    parser.add_argument('--resolution', type=int, default=256)
    parser.add_argument('--amp', action='store_true')
    parser.add_argument('--channels_last', action='store_true')
    parser.add_argument('--trace', action='store_true')
    parser.add_argument('--out', default='./benchmark')
    args = parser.parse_args()

    os.makedirs(args.out, exist_ok=True)
    device = 'cuda:0'
    torch.backends.cudnn.benchmark = True
    info = gpu_info()
    print(f'benchmarking on {info}')

    rows = []
    for name in args.detectors:
        model = Wrapper(build(name, args.resolution)).to(device)
        x = torch.randn(args.batch_size, 3, args.resolution, args.resolution, device=device)
        if args.channels_last:
            model = model.to(memory_format=torch.channels_last)
            x = x.contiguous(memory_format=torch.channels_last)

        params = count_params(model)
        gflops = float('nan')
        if thop_profile is not None:
            macs, _ = thop_profile(model, inputs=(x[:1],), verbose=False)
            gflops = 2 * macs / 1e9

        mean_ms, std_ms = measure_latency(model, x, amp=args.amp)
        mem_mb = measure_memory(model, x, amp=args.amp)
        fps = args.batch_size / (mean_ms / 1000)
        print(f'{name:>16}: {params:7.2f} M  {gflops:7.2f} GFLOPs  {mean_ms:7.2f}±{std_ms:.2f} ms  '
              f'{fps:8.1f} img/s  {mem_mb:8.0f} MB')
        rows.append([name, f'{params:.2f}', f'{gflops:.2f}', f'{mean_ms:.2f}', f'{fps:.1f}', f'{mem_mb:.0f}'])
        if args.trace:
            profile_ops(model, x, args.out, name)
        del model, x
        torch.cuda.empty_cache()  # release before the next detector

    with open(os.path.join(args.out, f'speed_bs{args.batch_size}_{args.resolution}.csv'), 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow([f'# {info}, amp={args.amp}'])
        w.writerow(['detector', 'params_M', 'GFLOPs', 'latency_ms', 'img_per_s', 'peak_mem_MB'])
        w.writerows(rows)


if __name__ == '__main__':
    main()
