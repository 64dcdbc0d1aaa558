"""Measure per-scan inference latency and peak GPU memory of ISBNet on the test split.

    python tools/benchmark_speed.py configs/scannetv2/isbnet_scannetv2.yaml \
        pretrains/scannetv2/head_scannetv2_val.pth --num-scans 100 [--fp16] [--profile]

Latency is measured with CUDA events around the forward pass only (data loading and
voxelization in the collate function are excluded), after ``--warmup`` scans.
"""
import argparse
import json
import os
import os.path as osp
import time

import numpy as np
import torch
import yaml
from munch import Munch
from torch.profiler import ProfilerActivity, profile, record_function

from isbnet.data import build_dataloader, build_dataset
from isbnet.model import ISBNet
from isbnet.util import get_root_logger, load_checkpoint


def get_args():
    parser = argparse.ArgumentParser('ISBNet speed benchmark')
    parser.add_argument('config', type=str, help='path to config file')
    parser.add_argument('checkpoint', type=str, help='path to checkpoint')
    parser.add_argument('--device', type=str, default='cuda:0', help='device to run on')
    parser.add_argument('--num-scans', type=int, default=100)
    parser.add_argument('--warmup', type=int, default=10)
    parser.add_argument('--fp16', action='store_true', help='run the forward pass under autocast')
    parser.add_argument('--tf32', action='store_true', help='allow TF32 matmuls on Ampere or newer')
    parser.add_argument('--profile', action='store_true', help='dump a profiler trace of one scan')
    parser.add_argument('--out', type=str, default='work_dirs/benchmark')
    return parser.parse_args()


def select_device(name):
    """Return a torch.device, failing early with a readable message."""
    if name.startswith('cuda') and not torch.cuda.is_available():
        raise RuntimeError(f'{name} requested but CUDA is not available')
    return torch.device(name)


def summarize(times_ms):
    t = np.asarray(times_ms)
    return dict(
        mean=float(t.mean()),
        median=float(np.median(t)),
        p90=float(np.percentile(t, 90)),
        min=float(t.min()),
        max=float(t.max()),
        fps=float(1000.0 / t.mean()),
    )


def main():
    args = get_args()
    cfg = Munch.fromDict(yaml.safe_load(open(args.config, 'r').read()))
    logger = get_root_logger()
    os.makedirs(args.out, exist_ok=True)

    device = select_device(args.device)
    torch.cuda.set_device(device)
    logger.info(f'Benchmarking on {torch.cuda.get_device_name(device)}')

    major, minor = torch.cuda.get_device_capability(device)
    if args.tf32 and major >= 8:
        # Ampere and newer: let the dynamic-convolution matmuls use TF32
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    # spconv picks its own kernels; cudnn autotuning only adds noise to the timings
    torch.backends.cudnn.benchmark = False

    model = ISBNet(**cfg.model, dataset_name=cfg.data.train.type).to(device)
    load_checkpoint(args.checkpoint, logger, model)
    model.eval()

    dataset = build_dataset(cfg.data.test, logger)
    dataloader = build_dataloader(dataset, training=False, dist=False, **cfg.dataloader.test)

    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    torch.cuda.reset_peak_memory_stats(device)

    times_ms, npoints = [], []
    wall0 = time.perf_counter()
    with torch.no_grad():
        for i, batch in enumerate(dataloader):
            if i >= args.num_scans:
                break
            start_evt.record()
            with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=args.fp16):
                model(batch)
            end_evt.record()
            torch.cuda.synchronize(device)
            if i >= args.warmup:
                times_ms.append(start_evt.elapsed_time(end_evt))
                npoints.append(int(batch['coords_float'].shape[0]))
    wall = time.perf_counter() - wall0

    stats = summarize(times_ms)
    stats['peak_mem_mb'] = torch.cuda.max_memory_allocated(device) / 2**20
    stats['mean_points'] = float(np.mean(npoints))
    stats['wall_s'] = wall
    stats['fp16'] = args.fp16
    logger.info(json.dumps(stats, indent=2))
    with open(osp.join(args.out, 'speed.json'), 'w') as f:
        json.dump(stats, f, indent=2)

    if args.profile:
        batch = next(iter(dataloader))
        with profile(
                activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                record_shapes=True,
                profile_memory=True) as prof:
            with record_function('isbnet_forward'):
                with torch.no_grad():
                    model(batch)
        logger.info(prof.key_averages().table(sort_by='cuda_time_total', row_limit=25))
        prof.export_chrome_trace(osp.join(args.out, 'trace.json'))
        logger.info(f'Profiler trace written to {osp.join(args.out, "trace.json")}')


if __name__ == '__main__':
    main()
