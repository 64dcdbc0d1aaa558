# Copyright (c) 2022 PaddlePaddle Authors. All Rights Reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
"""Training entry for EdgeFlow (HRNet18-OCR + edge-guided flow) interactive segmentation models."""

import os
import random
import argparse

import numpy as np
import paddle
import paddle.nn as nn
from paddleseg.utils import get_sys_env, logger

from models.is_hrnet_model import HRNetModel
from models.losses import NormalizedFocalLossSigmoid, SigmoidBinaryCrossEntropyLoss
from data.datasets import CocoLvisDataset
from data.points_sampler import MultiPointSampler
from util.trainer import ISTrainer


def parse_args():
    parser = argparse.ArgumentParser(description='EdgeFlow training')
    parser.add_argument('--config', dest='cfg', help='The config file.', default=None, type=str)
    parser.add_argument('--batch_size', type=int, default=16)
    parser.add_argument('--iters', type=int, default=50000)
    parser.add_argument('--learning_rate', type=float, default=5e-4)
    parser.add_argument('--save_dir', type=str, default='./output')
    parser.add_argument('--num_workers', type=int, default=4)
    parser.add_argument('--seed', type=int, default=None)
    parser.add_argument('--use_vdl', action='store_true',
                        help='Whether to record the data to VisualDL during training.')
    parser.add_argument('--fp16', action='store_true', help='Whether to use amp')
    parser.add_argument('--device', type=str, default='gpu', choices=['cpu', 'gpu', 'xpu', 'npu'],
                        help='Device place to be set, which can be GPU, XPU, NPU, CPU')
    return parser.parse_args()


def main(args):
    if args.seed is not None:
        paddle.seed(args.seed)
        np.random.seed(args.seed)
        random.seed(args.seed)

    env_info = get_sys_env()
    info = ['{}: {}'.format(k, v) for k, v in env_info.items()]
    info = '\n'.join(['', format('Environment Information', '-^48s')] + info + ['-' * 48])
    logger.info(info)

    if args.device == 'gpu' and env_info['Paddle compiled with cuda'] and env_info['GPUs used']:
        place = 'gpu'
    else:
        place = args.device if args.device != 'gpu' else 'cpu'
    paddle.set_device(place)

    nranks = paddle.distributed.ParallelEnv().nranks
    local_rank = paddle.distributed.ParallelEnv().local_rank
    if nranks > 1:
        paddle.distributed.init_parallel_env()

    model = HRNetModel(width=18, ocr_width=48, with_aux_output=True, use_leaky_relu=True,
                       use_rgb_conv=False, use_disks=True, norm_radius=5, with_prev_mask=True,
                       edge_guided=True)
    if nranks > 1:
        model = paddle.DataParallel(model)

    points_sampler = MultiPointSampler(24, prob_gamma=0.80, merge_objects_prob=0.15, max_num_merged_objects=2)
    trainset = CocoLvisDataset('data/LVIS', split='train', points_sampler=points_sampler, epoch_len=30000)
    valset = CocoLvisDataset('data/LVIS', split='val', points_sampler=points_sampler, epoch_len=2000)

    losses = {
        'instance_loss': NormalizedFocalLossSigmoid(alpha=0.5, gamma=2),
        'instance_aux_loss': SigmoidBinaryCrossEntropyLoss(),
        'edge_loss': nn.BCEWithLogitsLoss(),
    }
    loss_weights = {'instance_loss': 1.0, 'instance_aux_loss': 0.4, 'edge_loss': 0.5}

    lr = paddle.optimizer.lr.PolynomialDecay(args.learning_rate, decay_steps=args.iters, end_lr=0, power=0.9)
    optimizer = paddle.optimizer.Adam(lr, parameters=model.parameters(), weight_decay=1e-4)

    trainer = ISTrainer(model, optimizer, lr, losses, loss_weights, trainset, valset,
                        batch_size=args.batch_size, iters=args.iters, num_workers=args.num_workers,
                        save_dir=args.save_dir, use_vdl=args.use_vdl, fp16=args.fp16,
                        local_rank=local_rank, nranks=nranks)
    trainer.run()


if __name__ == '__main__':
    main(parse_args())
