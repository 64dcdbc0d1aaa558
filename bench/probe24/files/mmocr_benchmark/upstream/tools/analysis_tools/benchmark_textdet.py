# Copyright (c) OpenMMLab. All rights reserved.
"""Measure the inference speed (and peak memory) of a text detector.

Example:
    python tools/analysis_tools/benchmark_textdet.py \
        configs/textdet/dbnet/dbnet_resnet50-dcnv2_fpnc_1200e_icdar2015.py \
        dbnet_r50.pth --repeat-num 3
"""
import argparse
import os.path as osp
import time

import numpy as np
import torch
from mmengine import Config, DictAction, MMLogger
from mmengine.dataset import Compose, pseudo_collate
from mmengine.registry import init_default_scope
from mmengine.runner import load_checkpoint

from mmocr.registry import DATASETS, MODELS
from mmocr.utils import register_all_modules


def parse_args():
    parser = argparse.ArgumentParser(description='MMOCR benchmark a model')
    parser.add_argument('config', help='test config file path')
    parser.add_argument('checkpoint', help='checkpoint file')
    parser.add_argument(
        '--repeat-num', type=int, default=1,
        help='number of repeat times of measurement for averaging the results')
    parser.add_argument(
        '--max-iter', type=int, default=2000, help='num of max iter')
    parser.add_argument(
        '--log-interval', type=int, default=50, help='interval of logging')
    parser.add_argument(
        '--fuse-conv-bn', action='store_true',
        help='Whether to fuse conv and bn, this will slightly increase'
        'the inference speed')
    parser.add_argument(
        '--fp16', action='store_true', help='run the forward pass in fp16')
    parser.add_argument(
        '--cfg-options', nargs='+', action=DictAction,
        help='override some settings in the used config')
    return parser.parse_args()


def build_model(cfg, checkpoint, fuse_conv_bn=False):
    model = MODELS.build(cfg.model)
    load_checkpoint(model, checkpoint, map_location='cpu')
    if fuse_conv_bn:
        from mmengine.model.utils import revert_sync_batchnorm
        from mmcv.cnn import fuse_conv_bn as _fuse
        model = _fuse(revert_sync_batchnorm(model))
    model = model.cuda()
    model.eval()
    return model


def measure_inference_speed(cfg, checkpoint, max_iter, log_interval,
                            fuse_conv_bn, fp16):
    # benchmark with a fixed input size for stable numbers
    torch.backends.cudnn.benchmark = True

    model = build_model(cfg, checkpoint, fuse_conv_bn)
    dataset = DATASETS.build(cfg.test_dataloader.dataset)
    pipeline = Compose(cfg.test_dataloader.dataset.pipeline)
    logger = MMLogger.get_current_instance()

    num_warmup = 5
    pure_inf_time = 0
    fps = 0
    torch.cuda.reset_peak_memory_stats()

    for i in range(max_iter):
        data = pseudo_collate([pipeline(dataset.get_data_info(i % len(dataset)))])
        data = model.data_preprocessor(data, False)

        torch.cuda.synchronize()
        start_time = time.perf_counter()

        with torch.no_grad():
            with torch.cuda.amp.autocast(enabled=fp16):
                model(data['inputs'], data['data_samples'], mode='predict')

        torch.cuda.synchronize()  # wait for the kernels before stopping the clock
        elapsed = time.perf_counter() - start_time

        if i >= num_warmup:
            pure_inf_time += elapsed
            if (i + 1) % log_interval == 0:
                fps = (i + 1 - num_warmup) / pure_inf_time
                mem_mb = torch.cuda.max_memory_allocated() / 1024 / 1024
                logger.info(f'Done image [{i + 1:<3}/ {max_iter}], '
                            f'fps: {fps:.1f} img / s, '
                            f'peak mem: {mem_mb:.0f} MB')

        if (i + 1) == max_iter:
            fps = (i + 1 - num_warmup) / pure_inf_time
            logger.info(f'Overall fps: {fps:.1f} img / s')
            break
    return fps


def repeat_measure_inference_speed(cfg, checkpoint, max_iter, log_interval,
                                   fuse_conv_bn, fp16, repeat_num=1):
    assert repeat_num >= 1
    fps_list = []
    for _ in range(repeat_num):
        fps_list.append(
            measure_inference_speed(cfg, checkpoint, max_iter, log_interval,
                                    fuse_conv_bn, fp16))
        torch.cuda.empty_cache()
    if repeat_num > 1:
        logger = MMLogger.get_current_instance()
        logger.info(f'Mean fps over {repeat_num} runs: {np.mean(fps_list):.1f}'
                    f' (std {np.std(fps_list):.2f})')
    return fps_list


def main():
    args = parse_args()
    register_all_modules()
    cfg = Config.fromfile(args.config)
    if args.cfg_options is not None:
        cfg.merge_from_dict(args.cfg_options)
    init_default_scope(cfg.get('default_scope', 'mmocr'))
    MMLogger.get_instance('mmocr', log_file=osp.join('work_dirs', 'bench.log'))

    if not torch.cuda.is_available():
        raise RuntimeError('The benchmark needs a CUDA device.')
    logger = MMLogger.get_current_instance()
    logger.info(f'Device: {torch.cuda.get_device_name(0)}')

    repeat_measure_inference_speed(cfg, args.checkpoint, args.max_iter,
                                   args.log_interval, args.fuse_conv_bn,
                                   args.fp16, args.repeat_num)


if __name__ == '__main__':
    main()
