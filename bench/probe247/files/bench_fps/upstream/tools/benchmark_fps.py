"""Latency / throughput benchmark for the gaze and head-pose networks.

    python tools/benchmark_fps.py --model l2cs --batch 1 32 --fp16
    python tools/benchmark_fps.py --model sixdrepnet --batch 1 --compile --channels_last

Numbers in the README were produced on an RTX 3090 (driver 525, CUDA 11.8).
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np
import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))

try:
    import pynvml
    pynvml.nvmlInit()
    HAS_NVML = True
except Exception:  # pynvml missing or no NVIDIA driver
    HAS_NVML = False


def build_model(name):
    if name == 'l2cs':
        from l2cs.model import L2CS
        return L2CS(torchvision.models.resnet.Bottleneck, [3, 4, 6, 3], 90), 448
    if name == 'l2cs_lite':
        from l2cs.model import L2CSLite
        return L2CSLite(num_bins=90, pretrained=False), 224
    if name == 'sixdrepnet':
        from sixdrepnet.model import SixDRepNet
        return SixDRepNet(backbone_name='RepVGG-B1g2', backbone_file='', deploy=True, pretrained=False), 224
    if name == 'gazetr':
        from model import Model
        return Model(), 224
    raise ValueError(name)


def gpu_info(device_index):
    info = {
        'torch': torch.__version__,
        'cuda': torch.version.cuda,
        'cudnn': torch.backends.cudnn.version(),
        'python': platform.python_version(),
    }
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(device_index)
        info['gpu'] = props.name
        info['gpu_mem_gb'] = round(props.total_memory / 2 ** 30, 1)
        info['sm'] = '%d.%d' % torch.cuda.get_device_capability(device_index)
    try:
        out = subprocess.check_output(
            ['nvidia-smi', '--query-gpu=driver_version,clocks.max.sm', '--format=csv,noheader', '-i', str(device_index)])
        info['driver'], info['max_sm_clock'] = [s.strip() for s in out.decode().split(',')]
    except (OSError, subprocess.CalledProcessError):
        pass
    return info


def power_watts(device_index):
    if not HAS_NVML:
        return float('nan')
    handle = pynvml.nvmlDeviceGetHandleByIndex(device_index)
    return pynvml.nvmlDeviceGetPowerUsage(handle) / 1000.0


@torch.no_grad()
def bench(model, batch, size, device, args):
    x = torch.randn(batch, 3, size, size, device=device)
    if args.channels_last:
        x = x.to(memory_format=torch.channels_last)
    inp = {'face': x} if args.model == 'gazetr' else x

    autocast = torch.cuda.amp.autocast(enabled=args.fp16)

    # warmup (also triggers cudnn autotuning / compile)
    for _ in range(args.warmup):
        with autocast:
            model(inp)
    torch.cuda.synchronize(device)

    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)
    times = []
    watts = []
    torch.cuda.reset_peak_memory_stats(device)
    for _ in range(args.iters):
        starter.record()
        with autocast:
            model(inp)
        ender.record()
        torch.cuda.synchronize()
        times.append(starter.elapsed_time(ender))
        watts.append(power_watts(args.gpu))
    times = np.array(times)
    return {
        'batch': batch,
        'mean_ms': float(times.mean()),
        'p50_ms': float(np.percentile(times, 50)),
        'p90_ms': float(np.percentile(times, 90)),
        'fps': float(1000.0 * batch / times.mean()),
        'peak_mem_mb': torch.cuda.max_memory_allocated(device) / 2 ** 20,
        'power_w': float(np.nanmean(watts)) if watts else float('nan'),
    }


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument('--model', default='l2cs', choices=['l2cs', 'l2cs_lite', 'sixdrepnet', 'gazetr'])
    p.add_argument('--batch', type=int, nargs='+', default=[1])
    p.add_argument('--gpu', type=int, default=0)
    p.add_argument('--fp16', action='store_true')
    p.add_argument('--channels_last', action='store_true')
    p.add_argument('--compile', action='store_true', help='torch.compile (PyTorch >= 2.0)')
    p.add_argument('--warmup', type=int, default=20)
    p.add_argument('--iters', type=int, default=200)
    p.add_argument('--json', default='', help='write results to this file')
    return p.parse_args()


def main():
    args = parse_args()
    if not torch.cuda.is_available():
        sys.exit('this benchmark needs a CUDA GPU')
    torch.backends.cudnn.benchmark = True
    torch.cuda.set_device(args.gpu)
    device = torch.device('cuda', args.gpu)

    model, size = build_model(args.model)
    model.eval().to(device)
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)
    if args.compile:
        model = torch.compile(model, mode='reduce-overhead')

    info = gpu_info(args.gpu)
    print(json.dumps(info, indent=1))
    results = []
    for b in args.batch:
        r = bench(model, b, size, device, args)
        results.append(r)
        print('{model} bs={batch:<3d} {mean_ms:7.2f} ms (p90 {p90_ms:6.2f})  {fps:8.1f} img/s  '
              '{peak_mem_mb:7.0f} MB  {power_w:5.0f} W'.format(model=args.model, **r))
        torch.cuda.empty_cache()

    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'env': info, 'args': vars(args), 'results': results}, f, indent=1)


if __name__ == '__main__':
    main()
