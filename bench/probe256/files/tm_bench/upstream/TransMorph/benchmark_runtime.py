"""
Runtime / memory benchmark used for the "Computational complexity" table.

Measures, for every model in MODELS, the forward time of one 160x192x224 pair (mean over
--repeats after --warmup passes), the peak GPU memory and the number of parameters.

    python benchmark_runtime.py --gpu 0 --repeats 50 --half
"""
import argparse
import csv
import os

import numpy as np
import torch
import torch.nn as nn

from models.TransMorph import CONFIGS as CONFIGS_TM
import models.TransMorph as TransMorph
import utils

MODELS = ['TransMorph', 'TransMorph-Small', 'TransMorph-Tiny', 'TransMorph-Large']


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument('--gpu', type=int, default=0)
    p.add_argument('--repeats', type=int, default=50)
    p.add_argument('--warmup', type=int, default=10)
    p.add_argument('--half', action='store_true', help='also benchmark float16 autocast')
    p.add_argument('--channels-last', action='store_true', help='use the NDHWC memory format')
    p.add_argument('--out', default='experiments/runtime.csv')
    return p.parse_args()


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


@torch.no_grad()
def time_forward(model, x_in, repeats, warmup, use_amp):
    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)
    timings = np.zeros(repeats)
    for _ in range(warmup):  # warm-up also triggers the cudnn autotuner
        with torch.cuda.amp.autocast(enabled=use_amp), torch.no_grad():
            model(x_in)
    torch.cuda.synchronize()
    for rep in range(repeats):
        starter.record()
        with torch.cuda.amp.autocast(enabled=use_amp):
            model(x_in)
        ender.record()
        torch.cuda.synchronize()  # wait for the GPU before reading the events
        timings[rep] = starter.elapsed_time(ender)  # milliseconds
    return timings.mean(), timings.std()


def main():
    args = parse_args()
    torch.cuda.set_device(args.gpu)
    torch.backends.cudnn.benchmark = True
    gpu_name = torch.cuda.get_device_name(args.gpu)
    print('benchmarking on', gpu_name)

    rows = []
    for name in MODELS:
        config = CONFIGS_TM[name]
        model = TransMorph.TransMorph(config).cuda().eval()
        reg_model = utils.register_model(config.img_size, 'bilinear').cuda()
        if args.channels_last:
            model = model.to(memory_format=torch.channels_last_3d)

        x = torch.rand((1, 1, *config.img_size), device='cuda')
        y = torch.rand((1, 1, *config.img_size), device='cuda')
        x_in = torch.cat((x, y), dim=1)

        for use_amp in ([False, True] if args.half else [False]):
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
            mean_ms, std_ms = time_forward(model, x_in, args.repeats, args.warmup, use_amp)
            with torch.no_grad():
                _, flow = model(x_in)
                reg_model([x, flow])
            peak_gb = torch.cuda.max_memory_allocated() / 1024 ** 3
            row = {
                'model': name,
                'amp': use_amp,
                'params_M': count_parameters(model) / 1e6,
                'forward_ms': round(mean_ms, 2),
                'forward_ms_std': round(std_ms, 2),
                'peak_mem_GB': round(peak_gb, 2),
                'device': gpu_name,
            }
            print(row)
            rows.append(row)
        del model, reg_model

    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, 'w', newline='') as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)


if __name__ == '__main__':
    main()
