#!/usr/bin/env python
"""Throughput / memory benchmark for the CXR backbones.

Measures forward-only (inference) and forward+backward (training) images/sec for a set of
timm models at CheXpert resolution, optionally with AMP, channels_last and torch.compile.

    python tools/benchmark.py --models densenet121 resnet50 efficientnet_b0 --img-size 320 --amp
    nsys profile -t cuda,nvtx python tools/benchmark.py --models densenet121 --nvtx --steps 20
    python tools/benchmark.py --models densenet121 --profile --profile-dir ./tb_trace
"""
import argparse
import json
import time

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

import timm


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument('--models', nargs='+', default=['densenet121'])
    p.add_argument('--img-size', type=int, default=320)
    p.add_argument('--batch-size', type=int, default=64)
    p.add_argument('--num-classes', type=int, default=14)
    p.add_argument('--warmup', type=int, default=10)
    p.add_argument('--steps', type=int, default=50)
    p.add_argument('--amp', action='store_true')
    p.add_argument('--channels-last', action='store_true')
    p.add_argument('--compile', action='store_true')
    p.add_argument('--nvtx', action='store_true', help='emit NVTX ranges for Nsight Systems')
    p.add_argument('--profile', action='store_true', help='torch.profiler trace of a few training steps')
    p.add_argument('--profile-dir', default='./tb_trace')
    p.add_argument('--json', default=None, help='write results to this file')
    return p.parse_args()


def env_info():
    props = torch.cuda.get_device_properties(0)
    return {
        'torch': torch.__version__,
        'cuda': torch.version.cuda,
        'cudnn': torch.backends.cudnn.version(),
        'device': torch.cuda.get_device_name(0),
        'sm': f'{props.major}.{props.minor}',
        'total_mem_gb': round(props.total_memory / 1024 ** 3, 1),
        'device_count': torch.cuda.device_count(),
    }


def timed(fn, steps, warmup, nvtx_name=None, use_nvtx=False):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    if use_nvtx:
        torch.cuda.nvtx.range_push(nvtx_name)
    start.record()
    for _ in range(steps):
        fn()
    end.record()
    torch.cuda.synchronize()
    if use_nvtx:
        torch.cuda.nvtx.range_pop()
    return start.elapsed_time(end) / 1000.0


def bench_model(name, args):
    model = timm.create_model(name, pretrained=False, num_classes=args.num_classes).cuda()
    x = torch.randn(args.batch_size, 3, args.img_size, args.img_size).cuda()
    y = torch.randint(0, 2, (args.batch_size, args.num_classes)).float().cuda()
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    if args.compile:
        model = torch.compile(model)

    criterion = nn.BCEWithLogitsLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    def infer_step():
        with torch.no_grad(), torch.cuda.amp.autocast(enabled=args.amp):
            model(x)

    def train_step():
        optimizer.zero_grad(set_to_none=True)
        with torch.cuda.amp.autocast(enabled=args.amp):
            loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

    model.eval()
    torch.cuda.reset_peak_memory_stats()
    t_inf = timed(infer_step, args.steps, args.warmup, f'{name}/infer', args.nvtx)
    mem_inf = torch.cuda.max_memory_allocated() / 1024 ** 2

    model.train()
    torch.cuda.reset_peak_memory_stats()
    t_train = timed(train_step, args.steps, args.warmup, f'{name}/train', args.nvtx)
    mem_train = torch.cuda.max_memory_allocated() / 1024 ** 2

    if args.profile:
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                     schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
                     on_trace_ready=tensorboard_trace_handler(f'{args.profile_dir}/{name}'),
                     record_shapes=True, profile_memory=True, with_stack=False) as prof:
            for _ in range(6):
                train_step()
                prof.step()
        print(prof.key_averages().table(sort_by='cuda_time_total', row_limit=15))

    n = args.steps * args.batch_size
    res = {
        'model': name,
        'params_m': round(sum(p.numel() for p in model.parameters()) / 1e6, 2),
        'infer_img_s': round(n / t_inf, 1),
        'train_img_s': round(n / t_train, 1),
        'infer_peak_mb': round(mem_inf),
        'train_peak_mb': round(mem_train),
    }
    del model, optimizer, x, y
    torch.cuda.empty_cache()
    return res


def main():
    args = parse_args()
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    info = env_info()
    print(json.dumps(info, indent=2))

    results = []
    for name in args.models:
        r = bench_model(name, args)
        print('{model:>24s} | {params_m:6.1f}M | infer {infer_img_s:8.1f} img/s | train {train_img_s:8.1f} img/s '
              '| peak {infer_peak_mb:6d}/{train_peak_mb:6d} MB'.format(**r))
        results.append(r)

    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'env': info, 'args': vars(args), 'results': results}, f, indent=2)


if __name__ == '__main__':
    main()
