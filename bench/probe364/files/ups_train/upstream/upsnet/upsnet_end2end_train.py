# ---------------------------------------------------------------------------
# Unified Panoptic Segmentation Network
#
# Copyright (c) 2018-2019 Uber Technologies, Inc.
#
# Licensed under the Uber Non-Commercial License (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at the root directory of this project.
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
#
# Written by Yuwen Xiong
# ---------------------------------------------------------------------------

from __future__ import print_function, division
import os
import sys
import logging
import pprint
import time
import numpy as np

import torch
import torch.nn as nn
import torch.optim as optim

from upsnet.config.config import config
from upsnet.config.parse_args import parse_args
from lib.utils.logging import create_logger
from lib.utils.timer import Timer

args = parse_args()
logger, final_output_path = create_logger(config.output_path, args.cfg, config.dataset.image_set)

from upsnet.dataset import *
from upsnet.models import *
from upsnet.metrics.metric import AvgMetric
from upsnet.metrics.callback import Speedometer

from lib.utils.callback import Speedometer as SpeedometerLegacy

if config.train.use_horovod:
    import horovod.torch as hvd
    hvd.init()
    torch.cuda.set_device(hvd.local_rank())
    is_master = hvd.rank() == 0
else:
    is_master = True
    torch.cuda.set_device(int(config.gpus.split(',')[0]))

seed = config.seed if hasattr(config, 'seed') else 1234
np.random.seed(seed)
torch.manual_seed(seed)
torch.cuda.manual_seed_all(seed)


class lr_poly(object):
    """Polynomial decay with linear warm-up, the step schedule used for all UPSNet experiments."""

    def __init__(self, base_lr, warmup_lr, warmup_step, max_step, power=0.9):
        self.base_lr = base_lr
        self.warmup_lr = warmup_lr
        self.warmup_step = warmup_step
        self.max_step = max_step
        self.power = power
        self.step_count = 0

    def step(self):
        self.step_count += 1

    def get_lr(self):
        if self.step_count < self.warmup_step:
            alpha = self.step_count / self.warmup_step
            return self.warmup_lr * (1 - alpha) + self.base_lr * alpha
        return self.base_lr * (1 - (self.step_count - self.warmup_step)
                               / (self.max_step - self.warmup_step)) ** self.power


class lr_step(object):
    def __init__(self, base_lr, warmup_lr, warmup_step, decay_iters, gamma=0.1):
        self.base_lr = base_lr
        self.warmup_lr = warmup_lr
        self.warmup_step = warmup_step
        self.decay_iters = decay_iters
        self.gamma = gamma
        self.step_count = 0

    def step(self):
        self.step_count += 1

    def get_lr(self):
        if self.step_count < self.warmup_step:
            alpha = self.step_count / self.warmup_step
            return self.warmup_lr * (1 - alpha) + self.base_lr * alpha
        lr = self.base_lr
        for it in self.decay_iters:
            if self.step_count >= it:
                lr *= self.gamma
        return lr


def get_optimizer(params_lr, config):
    from upsnet.operators.sgd import SGD
    # we use a custom SGD and pass lr=1 so that per-parameter lr multipliers work
    return SGD(params_lr, lr=1, momentum=config.train.momentum, weight_decay=config.train.wd)


def upsnet_train():

    if is_master:
        logger.info('training config:{}\n'.format(pprint.pformat(config)))
    gpus = [torch.device('cuda', int(_)) for _ in config.gpus.split(',')]
    num_replica = hvd.size() if config.train.use_horovod else len(gpus)
    num_gpus = 1 if config.train.use_horovod else len(gpus)

    # create models
    train_model = eval(config.symbol)().cuda()

    # create optimizer
    params_lr = train_model.get_params_lr()
    optimizer = get_optimizer(params_lr, config)
    if config.train.use_horovod:
        optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=train_model.named_parameters())
    optimizer.zero_grad()

    # create data loader
    train_dataset = eval(config.dataset.dataset)(image_sets=config.dataset.image_set.split('+'), flip=config.train.flip,
                                                 result_path=final_output_path)
    val_dataset = eval(config.dataset.dataset)(image_sets=config.dataset.test_image_set.split('+'), flip=False,
                                               result_path=final_output_path, phase='val')
    if config.train.use_horovod:
        train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset, num_replicas=hvd.size(), rank=hvd.rank())
        val_sampler = torch.utils.data.distributed.DistributedSampler(val_dataset, num_replicas=hvd.size(), rank=hvd.rank())
        train_loader = torch.utils.data.DataLoader(dataset=train_dataset, batch_size=config.train.batch_size,
                                                   sampler=train_sampler, num_workers=num_gpus * 4, drop_last=False,
                                                   collate_fn=train_dataset.collate, pin_memory=True)
        val_loader = torch.utils.data.DataLoader(dataset=val_dataset, batch_size=config.train.batch_size,
                                                 sampler=val_sampler, num_workers=num_gpus * 4, drop_last=False,
                                                 collate_fn=val_dataset.collate)
    else:
        train_loader = torch.utils.data.DataLoader(dataset=train_dataset, batch_size=config.train.batch_size,
                                                   shuffle=config.train.shuffle,
                                                   num_workers=num_gpus * 4 if not config.debug_mode else num_gpus * 4,
                                                   drop_last=False, collate_fn=train_dataset.collate)
        val_loader = torch.utils.data.DataLoader(dataset=val_dataset, batch_size=config.train.batch_size, shuffle=False,
                                                 num_workers=num_gpus * 4 if not config.debug_mode else num_gpus * 4,
                                                 drop_last=False, collate_fn=val_dataset.collate)

    # preparing
    curr_iter = config.train.begin_iteration
    batch_end_callback = [Speedometer(num_replica * config.train.batch_size, config.train.display_iter)]
    metrics = []
    metrics_name = []
    if config.network.has_rpn:
        metrics.extend([AvgMetric(name='rpn_cls_loss'), AvgMetric(name='rpn_bbox_loss'), ])
        metrics_name.extend(['rpn_cls_loss', 'rpn_bbox_loss'])
    if config.network.has_rcnn:
        metrics.extend([AvgMetric(name='rcnn_accuracy'), AvgMetric(name='cls_loss'), AvgMetric(name='bbox_loss'), ])
        metrics_name.extend(['rcnn_accuracy', 'cls_loss', 'bbox_loss'])
    if config.network.has_mask_head:
        metrics.extend([AvgMetric(name='mask_loss'), ])
        metrics_name.extend(['mask_loss'])
    if config.network.has_fcn_head:
        metrics.extend([AvgMetric(name='fcn_loss'), ])
        metrics_name.extend(['fcn_loss'])
        if config.train.fcn_with_roi_loss:
            metrics.extend([AvgMetric(name='fcn_roi_loss'), ])
            metrics_name.extend(['fcn_roi_loss'])
    if config.network.has_panoptic_head:
        metrics.extend([AvgMetric(name='panoptic_accuracy'), AvgMetric(name='panoptic_loss'), ])
        metrics_name.extend(['panoptic_accuracy', 'panoptic_loss'])

    if config.train.resume:
        train_model.load_state_dict(torch.load(os.path.join(final_output_path, config.model_prefix + str(curr_iter) + '.pth')), resume=True)
        optimizer.load_state_dict(torch.load(os.path.join(final_output_path, config.model_prefix + str(curr_iter) + '.state.pth')))
    else:
        if is_master:
            train_model.load_state_dict(torch.load(config.network.pretrained, map_location=lambda storage, loc: storage))

    if config.train.use_horovod:
        hvd.broadcast_parameters(train_model.state_dict(), root_rank=0)

    if config.train.lr_schedule == 'step':
        lr_schedule = lr_step(config.train.lr, config.train.warmup_lr, config.train.warmup_step,
                              config.train.decay_iteration)
    elif config.train.lr_schedule == 'poly':
        lr_schedule = lr_poly(config.train.lr, config.train.warmup_lr, config.train.warmup_step,
                              config.train.max_iteration)
    else:
        raise NotImplementedError('unknown lr schedule {}'.format(config.train.lr_schedule))
    for _ in range(curr_iter):
        lr_schedule.step()

    train_model.train()

    # ---------- start training ----------
    data_timer = Timer()
    net_timer = Timer()
    while curr_iter < config.train.max_iteration:
        if config.train.use_horovod:
            train_sampler.set_epoch(curr_iter)

        data_timer.tic()
        for inner_iter, batch in enumerate(train_loader):
            data, label, _ = batch
            for k, v in data.items():
                data[k] = v if not torch.is_tensor(v) else v.cuda(non_blocking=True)
            for k, v in label.items():
                label[k] = v if not torch.is_tensor(v) else v.cuda(non_blocking=True)
            data_time = data_timer.toc()

            lr = lr_schedule.get_lr()
            net_timer.tic()
            output = train_model(data, label)

            loss = 0
            if config.network.has_rpn:
                loss = loss + output['rpn_cls_loss'].mean() + output['rpn_bbox_loss'].mean()
            if config.network.has_rcnn:
                loss = loss + output['cls_loss'].mean() + output['bbox_loss'].mean() * config.train.bbox_loss_weight
            if config.network.has_mask_head:
                loss = loss + output['mask_loss'].mean()
            if config.network.has_fcn_head:
                loss = loss + output['fcn_loss'].mean() * config.train.fcn_loss_weight
                if config.train.fcn_with_roi_loss:
                    loss = loss + output['fcn_roi_loss'].mean() * config.train.fcn_loss_weight * 0.2
            if config.network.has_panoptic_head:
                loss = loss + output['panoptic_loss'].mean() * config.train.panoptic_loss_weight

            optimizer.zero_grad()
            loss.backward()
            optimizer.step(lr)
            lr_schedule.step()
            net_time = net_timer.toc()

            losses = []
            losses.append(loss.detach())
            for l in metrics_name:
                losses.append(output[l].mean().detach())

            if config.train.use_horovod:
                losses = [hvd.allreduce(l) for l in losses]
            loss = losses[0].item()

            for i, (metric, l) in enumerate(zip(metrics, losses[1:])):
                metric.update(_, _, l.item())

            curr_iter += 1

            if curr_iter in config.train.decay_iteration:
                if is_master:
                    logger.info('decay momentum buffer')
                for k in optimizer.state_dict()['state'].keys():
                    if 'momentum_buffer' in optimizer.state_dict()['state'][k]:
                        optimizer.state_dict()['state'][k]['momentum_buffer'].div_(10)

            if is_master:
                if curr_iter % config.train.display_iter == 0:
                    for callback in batch_end_callback:
                        callback(curr_iter, metrics)
                    logger.info('iter {}: lr {:.6f} loss {:.4f} data {:.3f}s net {:.3f}s mem {:.0f}MB'.format(
                        curr_iter, lr, loss, data_time, net_time,
                        torch.cuda.max_memory_allocated() / 1024 / 1024))

                if curr_iter % config.train.snapshot_step == 0:
                    logger.info('taking snapshot ...')
                    torch.save(train_model.state_dict(), os.path.join(final_output_path, config.model_prefix + str(curr_iter) + '.pth'))
                    torch.save(optimizer.state_dict(), os.path.join(final_output_path, config.model_prefix + str(curr_iter) + '.state.pth'))

            if curr_iter >= config.train.max_iteration:
                break
            data_timer.tic()

    if is_master:
        logger.info('finished training, final model saved to {}'.format(final_output_path))
        torch.save(train_model.state_dict(), os.path.join(final_output_path, config.model_prefix + 'final.pth'))


if __name__ == '__main__':
    upsnet_train()
