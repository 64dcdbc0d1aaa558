# Copyright (c) OpenMMLab. All rights reserved.
"""Measure the inference speed of a recognizer (videos / skeleton clips per second).

    python tools/analysis/benchmark.py configs/skeleton/stgcn/stgcn_80e_ntu60_xsub_keypoint.py \
        --log-interval 50 --fuse-conv-bn --fake-input 1,3,100,17,2
"""
import argparse
import time

import torch
from mmcv import Config
from mmcv.cnn import fuse_conv_bn
from mmcv.parallel import MMDataParallel
from mmcv.runner.fp16_utils import wrap_fp16_model

from mmaction.datasets import build_dataloader, build_dataset
from mmaction.models import build_model


def parse_args():
    parser = argparse.ArgumentParser(
        description='MMAction2 benchmark a recognizer')
    parser.add_argument('config', help='test config file path')
    parser.add_argument(
        '--log-interval', default=10, type=int, help='interval of logging')
    parser.add_argument(
        '--fuse-conv-bn',
        action='store_true',
        help='Whether to fuse conv and bn, this will slightly increase'
        'the inference speed')
    parser.add_argument(
        '--fake-input',
        default=None,
        help='comma separated input shape (N,C,T,V,M for skeleton models); '
        'benchmark the network alone on random data instead of the test set')
    parser.add_argument('--num-iters', type=int, default=2000)
    args = parser.parse_args()
    return args


def benchmark_fake_input(model, shape, num_iters, log_interval):
    """Time the network alone with CUDA events (excludes data loading)."""
    x = torch.randn(*shape).cuda()
    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)
    torch.cuda.reset_peak_memory_stats()

    times = []
    with torch.no_grad():
        for i in range(num_iters):
            starter.record()
            model.module.forward_dummy(x)
            ender.record()
            torch.cuda.synchronize()  # wait for the events
            if i >= 10:
                times.append(starter.elapsed_time(ender))
            if (i + 1) % log_interval == 0 and times:
                print(f'iter {i + 1}: {1000.0 * shape[0] / (sum(times) / len(times)):.1f} clips/s')

    mean_ms = sum(times) / max(len(times), 1)
    print(f'{torch.cuda.get_device_name(0)}: {mean_ms:.2f} ms / batch, '
          f'peak mem {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB')


def main():
    args = parse_args()

    cfg = Config.fromfile(args.config)
    # set cudnn_benchmark
    if cfg.get('cudnn_benchmark', False):
        torch.backends.cudnn.benchmark = True
    cfg.model.backbone.pretrained = None
    cfg.data.test.test_mode = True

    # build the model and load checkpoint
    model = build_model(cfg.model, train_cfg=None, test_cfg=cfg.get('test_cfg'))
    fp16_cfg = cfg.get('fp16', None)
    if fp16_cfg is not None:
        wrap_fp16_model(model)
    if args.fuse_conv_bn:
        model = fuse_conv_bn(model)

    model = MMDataParallel(model, device_ids=[0])

    model.eval()

    if args.fake_input is not None:
        shape = tuple(int(x) for x in args.fake_input.split(','))
        benchmark_fake_input(model, shape, args.num_iters, args.log_interval)
        return

    # build the dataloader
    dataset = build_dataset(cfg.data.test, dict(test_mode=True))
    data_loader = build_dataloader(
        dataset,
        videos_per_gpu=1,
        workers_per_gpu=cfg.data.workers_per_gpu,
        persistent_workers=cfg.data.get('persistent_workers', False),
        dist=False,
        shuffle=False)

    # the first several iterations may be very slow so skip them
    num_warmup = 5
    pure_inf_time = 0

    # benchmark with 2000 video and take the average
    for i, data in enumerate(data_loader):

        torch.cuda.synchronize()
        start_time = time.perf_counter()

        with torch.no_grad():
            model(return_loss=False, **data)

        torch.cuda.synchronize()  # make sure the forward pass finished
        elapsed = time.perf_counter() - start_time

        if i >= num_warmup:
            pure_inf_time += elapsed
            if (i + 1) % args.log_interval == 0:
                fps = (i + 1 - num_warmup) / pure_inf_time
                print(
                    f'Done video [{i + 1:<3}/ {args.num_iters}], '
                    f'fps: {fps:.1f} video / s')

        if (i + 1) == args.num_iters:
            pure_inf_time += elapsed
            fps = (i + 1 - num_warmup) / pure_inf_time
            print(f'Overall fps: {fps:.1f} video / s')
            break


if __name__ == '__main__':
    main()
