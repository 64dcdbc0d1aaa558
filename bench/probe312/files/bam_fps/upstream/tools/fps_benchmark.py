"""Measure inference speed (FPS) and peak memory of a few-shot segmentation model.

Usage:
    python tools/fps_benchmark.py --config config/pascal/pascal_split0_resnet50.yaml --shot 1 --iters 300

The numbers reported in the paper were measured on a single RTX 2080Ti with batch size 1,
473x473 query / support images and cudnn.benchmark enabled.
"""
import argparse
import time

import numpy as np
import torch
import torch.backends.cudnn as cudnn

from model import BAM
from util import config


def get_parser():
    parser = argparse.ArgumentParser(description='FPS benchmark')
    parser.add_argument('--config', type=str, default='config/pascal/pascal_split0_resnet50.yaml')
    parser.add_argument('--arch', type=str, default='BAM')
    parser.add_argument('--shot', type=int, default=1)
    parser.add_argument('--size', type=int, default=473)
    parser.add_argument('--iters', type=int, default=300)
    parser.add_argument('--warmup', type=int, default=50)
    parser.add_argument('--gpu', type=int, default=0, help='GPU index to benchmark on')
    parser.add_argument('--half', action='store_true', help='benchmark with fp16 weights and inputs')
    parser.add_argument('--profile', type=str, default='', help='write a chrome trace of 10 episodes to this dir')
    args = parser.parse_args()
    cfg = config.load_cfg_from_cfg_file(args.config)
    cfg.arch, cfg.shot = args.arch, args.shot
    return args, cfg


def describe_device(index):
    name = torch.cuda.get_device_name(index)
    major, minor = torch.cuda.get_device_capability(index)
    total = torch.cuda.get_device_properties(index).total_memory / 1024 ** 3
    print('Benchmarking on GPU {}: {} (sm_{}{}, {:.1f} GB)'.format(index, name, major, minor, total))
    if major < 7 and torch.backends.cudnn.version() is not None:
        print('warning: no tensor cores on this GPU, --half will not be faster')


def build_inputs(cfg, size, shot, device, dtype):
    x = torch.randn(1, 3, size, size, device=device, dtype=dtype)
    s_x = torch.randn(1, shot, 3, size, size, device=device, dtype=dtype)
    s_y = torch.randint(0, 2, (1, shot, size, size), device=device).float()
    y_m = torch.zeros(1, size, size, device=device).long()
    cat_idx = [torch.zeros(1, dtype=torch.long)]
    return x, s_x, s_y, y_m, cat_idx


def profile_episodes(model, inputs, out_dir, steps=10):
    """Record a kernel-level trace (open with chrome://tracing or TensorBoard's profiler plugin)."""
    from torch.profiler import profile, ProfilerActivity, schedule, tensorboard_trace_handler
    x, s_x, s_y, y_m, cat_idx = inputs
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=1, warmup=2, active=steps),
                 on_trace_ready=tensorboard_trace_handler(out_dir),
                 record_shapes=True,
                 profile_memory=True) as prof:
        for _ in range(steps + 3):
            with torch.no_grad():
                model(x=x, s_x=s_x, s_y=s_y, y_m=y_m, cat_idx=cat_idx)
            prof.step()
    print(prof.key_averages().table(sort_by='self_cuda_time_total', row_limit=25))


def main():
    args, cfg = get_parser()
    cudnn.benchmark = True

    torch.cuda.set_device(args.gpu)
    device = torch.device('cuda:{}'.format(args.gpu))
    describe_device(args.gpu)

    model = eval(cfg.arch).OneModel(cfg, cls_type='Base')
    model.eval()
    model = model.to(device)
    dtype = torch.float32
    if args.half:
        model = model.half()
        dtype = torch.float16

    x, s_x, s_y, y_m, cat_idx = build_inputs(cfg, args.size, args.shot, device, dtype)

    with torch.no_grad():
        for _ in range(args.warmup):
            model(x=x, s_x=s_x, s_y=s_y, y_m=y_m, cat_idx=cat_idx)
        torch.cuda.synchronize()

        torch.cuda.reset_peak_memory_stats()
        starter = torch.cuda.Event(enable_timing=True)
        ender = torch.cuda.Event(enable_timing=True)
        timings = np.zeros(args.iters)
        for it in range(args.iters):
            starter.record()
            model(x=x, s_x=s_x, s_y=s_y, y_m=y_m, cat_idx=cat_idx)
            ender.record()
            torch.cuda.synchronize()  # wait for ender before reading the timer
            timings[it] = starter.elapsed_time(ender)  # milliseconds

        wall_start = time.perf_counter()
        for _ in range(args.iters):
            model(x=x, s_x=s_x, s_y=s_y, y_m=y_m, cat_idx=cat_idx)
        torch.cuda.synchronize(device)
        wall = time.perf_counter() - wall_start

    if args.profile:
        profile_episodes(model, (x, s_x, s_y, y_m, cat_idx), args.profile)

    mean_ms = timings.mean()
    print('{}-shot {}x{}: {:.2f} ms / episode (std {:.2f}), {:.1f} FPS (event timing)'.format(
        args.shot, args.size, args.size, mean_ms, timings.std(), 1000.0 / mean_ms))
    print('wall-clock FPS: {:.1f}'.format(args.iters / wall))
    print('peak memory: {:.0f} MB'.format(torch.cuda.max_memory_allocated(device) / 1024 ** 2))


if __name__ == '__main__':
    main()
