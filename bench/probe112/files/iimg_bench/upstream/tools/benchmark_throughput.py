# --------------------------------------------------------
# InternImage
# Copyright (c) 2022 OpenGVLab
# Licensed under The MIT License [see LICENSE for details]
# --------------------------------------------------------
"""Measure inference throughput / latency / peak memory of classification backbones.

Example:
    python tools/benchmark_throughput.py --cfg configs/internimage_t_1k_224.yaml --batch-size 128 --amp
    python tools/benchmark_throughput.py --model convnext_tiny --timm --batch-size 256 --channels-last
"""
import argparse
import os
import sys
import time
import json

import numpy as np
import torch
import torch.backends.cudnn as cudnn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))

try:
    from fvcore.nn import FlopCountAnalysis, flop_count_table
    has_fvcore = True
except ImportError:
    has_fvcore = False


def parse_args():
    parser = argparse.ArgumentParser('backbone throughput benchmark')
    parser.add_argument('--cfg', type=str, default=None, help='InternImage config file')
    parser.add_argument('--model', type=str, default=None, help='timm model name (with --timm)')
    parser.add_argument('--timm', action='store_true', help='build the model with timm.create_model')
    parser.add_argument('--img-size', type=int, default=224)
    parser.add_argument('--batch-size', type=int, default=64)
    parser.add_argument('--warmup', type=int, default=50)
    parser.add_argument('--iters', type=int, default=100)
    parser.add_argument('--amp', action='store_true', help='run in fp16/bf16 autocast')
    parser.add_argument('--channels-last', action='store_true')
    parser.add_argument('--compile', action='store_true', help='torch.compile the model (torch>=2.0)')
    parser.add_argument('--gpu', type=int, default=0, help='which GPU to benchmark on')
    parser.add_argument('--flops', action='store_true', help='also count FLOPs with fvcore')
    parser.add_argument('--out', type=str, default=None, help='append the result as a json line')
    return parser.parse_args()


def build(args):
    if args.timm:
        import timm
        return timm.create_model(args.model, pretrained=False)
    from config import get_config
    from models import build_model

    class _A:  # minimal namespace expected by get_config
        cfg = args.cfg
        opts = None
        batch_size = args.batch_size
        dataset = None
        zip = False
        cache_mode = None
        pretrained = None
        resume = None
        accumulation_steps = None
        use_checkpoint = False
        output = '/tmp'
        tag = None
        eval = True
        throughput = True
        local_rank = 0
        amp_opt_level = None
        save_ckpt_num = None
        use_zero = False
        disable_grad_scalar = False
        data_path = None
    config = get_config(_A())
    return build_model(config)


def pick_amp_dtype():
    # bf16 on Ampere and newer, fp16 on Volta/Turing
    major, _ = torch.cuda.get_device_capability()
    if major >= 8:
        return torch.bfloat16
    return torch.float16


@torch.no_grad()
def benchmark(model, images, args, amp_dtype):
    timings = []
    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)

    for _ in range(args.warmup):
        with torch.autocast('cuda', dtype=amp_dtype, enabled=args.amp):
            model(images)
    torch.cuda.synchronize()

    torch.cuda.reset_peak_memory_stats()
    for _ in range(args.iters):
        start_evt.record()
        with torch.autocast(device_type='cuda', dtype=amp_dtype, enabled=args.amp):
            model(images)
        end_evt.record()
        end_evt.synchronize()
        timings.append(start_evt.elapsed_time(end_evt))
    peak_mem = torch.cuda.max_memory_allocated() / 2 ** 20
    return np.array(timings), peak_mem


def main():
    args = parse_args()
    assert torch.cuda.is_available(), 'this benchmark needs a CUDA device'
    torch.cuda.set_device(args.gpu)
    device = torch.device('cuda', args.gpu)
    cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    model = build(args)
    model.eval()
    model.to(device)

    images = torch.randn(args.batch_size, 3, args.img_size, args.img_size, device=device)
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)
        images = images.contiguous(memory_format=torch.channels_last)

    if args.compile:
        model = torch.compile(model, mode='max-autotune')

    amp_dtype = pick_amp_dtype() if args.amp else torch.float32

    if args.flops and has_fvcore:
        flops = FlopCountAnalysis(model, images[:1])
        print(flop_count_table(flops, max_depth=2))
        gflops = flops.total() / 1e9
    else:
        gflops = None

    timings, peak_mem = benchmark(model, images, args, amp_dtype)
    ms = float(np.median(timings))
    result = {
        'model': args.model or os.path.basename(args.cfg or ''),
        'device': torch.cuda.get_device_name(args.gpu),
        'batch_size': args.batch_size,
        'img_size': args.img_size,
        'amp': str(amp_dtype) if args.amp else 'fp32',
        'channels_last': args.channels_last,
        'median_ms': ms,
        'throughput': args.batch_size * 1000.0 / ms,
        'peak_mem_mb': peak_mem,
        'gflops': gflops,
        'torch': torch.__version__,
        'cuda': torch.version.cuda,
        'cudnn': torch.backends.cudnn.version(),
    }
    print(json.dumps(result, indent=2))
    if args.out:
        with open(args.out, 'a') as f:
            f.write(json.dumps(result) + '\n')


if __name__ == '__main__':
    main()
