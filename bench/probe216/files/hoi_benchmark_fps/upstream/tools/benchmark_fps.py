"""
Measure inference speed (FPS) of an HOI detector on a single GPU.

Example:
    python tools/benchmark_fps.py --dataset_file hico --backbone resnet50 --num_queries 64 \
        --dec_layers 3 --with_clip_label --with_obj_clip_label --use_nms_filter \
        --pretrained exps/hico_gen_vlkt_s_r50_dec_3layers/checkpoint_best.pth --iters 300

Numbers in the paper table were measured with --half on an A100 (TF32 allowed for the fp32 runs).
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import util.misc as utils  # noqa: E402
from main import get_args_parser  # noqa: E402
from models import build_model  # noqa: E402


def bench_args():
    parser = argparse.ArgumentParser('HOI FPS benchmark', parents=[get_args_parser()])
    parser.add_argument('--gpu_id', default=0, type=int)
    parser.add_argument('--iters', default=200, type=int)
    parser.add_argument('--warmup', default=20, type=int)
    parser.add_argument('--height', default=800, type=int)
    parser.add_argument('--width', default=1200, type=int)
    parser.add_argument('--bench_batch', default=1, type=int)
    parser.add_argument('--half', action='store_true', help='run the model in fp16')
    parser.add_argument('--tf32', action='store_true', help='allow TF32 matmul/conv on Ampere+')
    parser.add_argument('--data_parallel', action='store_true',
                        help='wrap the model in nn.DataParallel to measure multi-GPU throughput')
    parser.add_argument('--nvtx', action='store_true', help='emit NVTX ranges for nsys')
    parser.add_argument('--save', default='', help='optional json file for the results')
    return parser.parse_args()


def make_inputs(args, device):
    images = torch.randn(args.bench_batch, 3, args.height, args.width, device=device)
    mask = torch.zeros(args.bench_batch, args.height, args.width, dtype=torch.bool, device=device)
    if args.half:
        images = images.half()
    clip_input = torch.randn(args.bench_batch, 3, 224, 224, device=device)
    return utils.NestedTensor(images, mask), clip_input


@torch.no_grad()
def main():
    args = bench_args()
    args.distributed = False

    device = torch.device("cuda", args.gpu_id)
    torch.cuda.set_device(device)
    if args.tf32 and torch.cuda.get_device_capability(device)[0] >= 8:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True

    model, _, postprocessors = build_model(args)
    if args.pretrained:
        ckpt = torch.load(args.pretrained, map_location='cpu')
        missing, unexpected = model.load_state_dict(ckpt['model'], strict=False)
        print('missing keys: {} | unexpected keys: {}'.format(len(missing), len(unexpected)))
    model.to(device)
    model.eval()
    if args.half:
        model.half()
    if args.data_parallel:
        model = torch.nn.DataParallel(model)

    samples, clip_input = make_inputs(args, device)
    target_sizes = torch.tensor([[args.height, args.width]] * args.bench_batch, device=device)

    for _ in range(args.warmup):
        outputs = model(samples, is_training=False, clip_input=clip_input)
        postprocessors['hoi'](outputs, target_sizes)
    torch.cuda.synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)

    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)
    timings = []
    wall = time.perf_counter()
    for i in range(args.iters):
        if args.nvtx:
            torch.cuda.nvtx.range_push('iter_{}'.format(i))
        starter.record()
        outputs = model(samples, is_training=False, clip_input=clip_input)
        results = postprocessors['hoi'](outputs, target_sizes)
        ender.record()
        torch.cuda.synchronize()
        if args.nvtx:
            torch.cuda.nvtx.range_pop()
        timings.append(starter.elapsed_time(ender))
    wall = time.perf_counter() - wall

    timings = np.array(timings)
    fps = 1000.0 / timings.mean() * args.bench_batch
    report = {
        'device': torch.cuda.get_device_name(device),
        'torch': torch.__version__,
        'batch': args.bench_batch,
        'resolution': [args.height, args.width],
        'half': args.half,
        'latency_ms_mean': float(timings.mean()),
        'latency_ms_p50': float(np.percentile(timings, 50)),
        'latency_ms_p90': float(np.percentile(timings, 90)),
        'fps': float(fps),
        'wall_fps': float(args.iters * args.bench_batch / wall),
        'peak_mem_mb': torch.cuda.max_memory_allocated(device) / 2 ** 20,
        'num_results': len(results),
    }
    print(json.dumps(report, indent=2))
    if args.save:
        with open(args.save, 'w') as f:
            json.dump(report, f, indent=2)


if __name__ == '__main__':
    main()
