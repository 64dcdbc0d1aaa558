#!/usr/bin/env python
"""Latency / memory benchmark of OOD postprocessors.

Measures, for every postprocessor listed in the config, the per-batch wall
time of ``postprocessor.postprocess(net, data)`` on random inputs, the peak
GPU memory, and (optionally) emits NVTX ranges so that a run can be inspected
in Nsight Systems:

    python tools/benchmark_postprocessors.py --config configs/bench/ood_bench.yaml
    nsys profile -t cuda,nvtx -o odin_r50 python tools/benchmark_postprocessors.py \
        --config configs/bench/ood_bench.yaml --only odin --nvtx
"""
import argparse
import json
import os
import statistics
import time
from contextlib import contextmanager

import numpy as np
import torch
import yaml

from openood.networks import get_network
from openood.postprocessors import get_postprocessor
from openood.utils import Config

try:
    import pynvml
    pynvml.nvmlInit()
    _NVML = True
except Exception:  # no driver / no pynvml
    _NVML = False


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument('--config', required=True)
    p.add_argument('--only', default=None, help='comma separated postprocessor names')
    p.add_argument('--warmup', type=int, default=10)
    p.add_argument('--iters', type=int, default=50)
    p.add_argument('--nvtx', action='store_true')
    p.add_argument('--out', default='results/bench')
    return p.parse_args()


@contextmanager
def nvtx_range(msg, enabled):
    if enabled:
        torch.cuda.nvtx.range_push(msg)
    try:
        yield
    finally:
        if enabled:
            torch.cuda.nvtx.range_pop()


def gpu_utilization(index):
    if not _NVML:
        return None
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    return pynvml.nvmlDeviceGetUtilizationRates(handle).gpu


def time_postprocessor(name, pp, net, data, args, device_index):
    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)

    assert data.is_cuda, 'benchmark inputs must live on the GPU'
    # ODIN / GradNorm need grads w.r.t. the input, the rest run under no_grad
    needs_grad = name in ('odin', 'gradnorm', 'mds_ensemble', 'godin')

    for _ in range(args.warmup):
        x = data.clone().requires_grad_(needs_grad)
        pp.postprocess(net, x)
    torch.cuda.synchronize(device_index)

    torch.cuda.reset_peak_memory_stats(device_index)
    times_ms = []
    with nvtx_range(name, args.nvtx):
        for _ in range(args.iters):
            x = data.clone().requires_grad_(needs_grad)
            starter.record()
            pp.postprocess(net, x)
            ender.record()
            torch.cuda.synchronize()
            times_ms.append(starter.elapsed_time(ender))

    peak_mb = torch.cuda.max_memory_allocated(device_index) / 2**20
    return {
        'postprocessor': name,
        'batch_size': int(data.shape[0]),
        'mean_ms': statistics.mean(times_ms),
        'p50_ms': statistics.median(times_ms),
        'p95_ms': float(np.percentile(times_ms, 95)),
        'peak_mem_mb': peak_mb,
        'gpu_util': gpu_utilization(device_index),
    }


def main():
    args = parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)

    device = torch.device(cfg['runtime']['device'])
    device_index = device.index or 0
    torch.backends.cudnn.benchmark = cfg['runtime'].get('cudnn_benchmark', True)

    print('device       :', torch.cuda.get_device_name(device_index))
    print('torch / cuda :', torch.__version__, torch.version.cuda)

    net_cfg = Config(cfg['network'])
    net = get_network(net_cfg).to(device).eval()
    if cfg['runtime'].get('channels_last', False):
        net = net.to(memory_format=torch.channels_last)

    names = [p['name'] for p in cfg['postprocessors']]
    if args.only:
        keep = set(args.only.split(','))
        names = [n for n in names if n in keep]

    results = []
    for bs in cfg['runtime']['batch_sizes']:
        data = torch.randn(bs, 3, cfg['runtime']['image_size'],
                           cfg['runtime']['image_size'], device=device)
        for pp_cfg in cfg['postprocessors']:
            if pp_cfg['name'] not in names:
                continue
            pp = get_postprocessor(Config(pp_cfg))
            # postprocessors that need an ID fit (MDS, KNN, ViM) get a dummy
            # one here, we only care about the scoring cost
            if hasattr(pp, 'setup_dummy'):
                pp.setup_dummy(net, feat_dim=cfg['network']['feat_dim'])
            res = time_postprocessor(pp_cfg['name'], pp, net, data, args,
                                     device_index)
            print('{postprocessor:>12s} bs={batch_size:<4d} {mean_ms:8.2f} ms '
                  '(p95 {p95_ms:8.2f})  peak {peak_mem_mb:8.1f} MB'.format(**res))
            results.append(res)
            del pp
            torch.cuda.empty_cache()

    os.makedirs(args.out, exist_ok=True)
    tag = time.strftime('%Y%m%d-%H%M%S')
    with open(os.path.join(args.out, f'bench_{tag}.json'), 'w') as f:
        json.dump({'device': torch.cuda.get_device_name(device_index),
                   'results': results}, f, indent=2)


if __name__ == '__main__':
    main()
