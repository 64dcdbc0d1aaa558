# Copyright (c) OpenMMLab. All rights reserved.
"""Run a fusion (LiDAR + camera) detector on one nuScenes / KITTI sample.

Example:
    python demo/multi_modality_demo.py demo/data/kitti/000008.bin \
        demo/data/kitti/000008.png demo/data/kitti/000008.pkl \
        configs/mvxnet/dv_mvx-fpn_second_secfpn_adamw_2x8_80e_kitti-3d-3class.py \
        checkpoints/mvxnet.pth --out-dir demo/results
"""
import os
import time
from argparse import ArgumentParser

import mmcv

from mmdet3d.apis import (inference_multi_modality_detector, init_model,
                          show_result_meshlab)


def parse_args():
    parser = ArgumentParser()
    parser.add_argument('pcd', help='Point cloud file')
    parser.add_argument('image', help='image file')
    parser.add_argument('ann', help='ann file')
    parser.add_argument('config', help='Config file')
    parser.add_argument('checkpoint', help='Checkpoint file')
    parser.add_argument(
        '--device', default='cuda:0', help='Device used for inference')
    parser.add_argument(
        '--score-thr', type=float, default=0.0, help='bbox score threshold')
    parser.add_argument(
        '--out-dir', type=str, default='demo', help='dir to save results')
    parser.add_argument(
        '--show',
        action='store_true',
        help='show online visualization results')
    parser.add_argument(
        '--snapshot',
        action='store_true',
        help='whether to save online visualization results')
    parser.add_argument(
        '--repeat',
        type=int,
        default=1,
        help='run the sample N times and report the mean latency '
        '(the first run includes kernel warm-up)')
    return parser.parse_args()


def main(args):
    # build the model from a config file and a checkpoint file
    model = init_model(args.config, args.checkpoint, device=args.device)

    latencies = []
    for i in range(args.repeat):
        t0 = time.perf_counter()
        # test a single image
        result, data = inference_multi_modality_detector(model, args.pcd,
                                                         args.image, args.ann)
        latencies.append(time.perf_counter() - t0)
    if args.repeat > 1:
        mean_ms = 1000 * sum(latencies[1:]) / (len(latencies) - 1)
        print(f'mean latency over {args.repeat - 1} runs: {mean_ms:.1f} ms')

    mmcv.mkdir_or_exist(args.out_dir)
    # show the results
    show_result_meshlab(
        data,
        result,
        args.out_dir,
        args.score_thr,
        show=args.show,
        snapshot=args.snapshot,
        task='multi_modality-det')
    print(f'results written to {os.path.abspath(args.out_dir)}')


if __name__ == '__main__':
    args = parse_args()
    main(args)
