# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.
import argparse
import datetime
import json
import os
import time
from collections import defaultdict, deque
from pathlib import Path

import numpy as np
import torch
import torch.backends.cudnn as cudnn
import torch.distributed as dist
import torch.nn as nn
from timm.data.mixup import Mixup
from timm.loss import LabelSmoothingCrossEntropy, SoftTargetCrossEntropy
from timm.models import create_model
from timm.utils import ModelEma

from datasets import build_dataset
from optim_factory import LayerDecayValueAssigner, create_optimizer
from utils import NativeScalerWithGradNormCount as NativeScaler
import utils


def str2bool(v):
    if isinstance(v, bool):
        return v
    return v.lower() in ("yes", "true", "t", "y", "1")


def get_args_parser():
    parser = argparse.ArgumentParser('ConvNeXt training and evaluation script for image classification', add_help=False)
    parser.add_argument('--batch_size', default=64, type=int, help='Per GPU batch size')
    parser.add_argument('--epochs', default=300, type=int)
    parser.add_argument('--update_freq', default=1, type=int, help='gradient accumulation steps')
    parser.add_argument('--model', default='convnext_tiny', type=str, metavar='MODEL')
    parser.add_argument('--drop_path', type=float, default=0.1, metavar='PCT')
    parser.add_argument('--input_size', default=224, type=int)
    parser.add_argument('--layer_scale_init_value', default=1e-6, type=float)
    parser.add_argument('--model_ema', type=str2bool, default=False)
    parser.add_argument('--model_ema_decay', type=float, default=0.9999)
    parser.add_argument('--model_ema_force_cpu', type=str2bool, default=False)
    parser.add_argument('--opt', default='adamw', type=str, metavar='OPTIMIZER')
    parser.add_argument('--lr', type=float, default=4e-3, metavar='LR')
    parser.add_argument('--weight_decay', type=float, default=0.05)
    parser.add_argument('--smoothing', type=float, default=0.1)
    parser.add_argument('--mixup', type=float, default=0.8)
    parser.add_argument('--cutmix', type=float, default=1.0)
    parser.add_argument('--data_path', default='/datasets01/imagenet_full_size/061417/', type=str)
    parser.add_argument('--nb_classes', default=1000, type=int)
    parser.add_argument('--output_dir', default='', help='path where to save, empty for no saving')
    parser.add_argument('--device', default='cuda', help='device to use for training / testing')
    parser.add_argument('--seed', default=0, type=int)
    parser.add_argument('--num_workers', default=10, type=int)
    parser.add_argument('--pin_mem', type=str2bool, default=True,
                        help='Pin CPU memory in DataLoader for more efficient (sometimes) transfer to GPU.')
    parser.add_argument('--channels_last', type=str2bool, default=False)
    parser.add_argument('--sync_bn', type=str2bool, default=False)
    parser.add_argument('--use_amp', type=str2bool, default=False, help="Use PyTorch's AMP (Automatic Mixed Precision) or not")
    parser.add_argument('--nvtx', type=str2bool, default=False, help='emit NVTX ranges for nsys')
    parser.add_argument('--world_size', default=1, type=int, help='number of distributed processes')
    parser.add_argument('--local_rank', default=-1, type=int)
    parser.add_argument('--dist_url', default='env://', help='url used to set up distributed training')
    return parser


class SmoothedValue(object):
    """Track a series of values and provide access to smoothed values over a window or the global average."""

    def __init__(self, window_size=20, fmt=None):
        self.deque = deque(maxlen=window_size)
        self.total = 0.0
        self.count = 0
        self.fmt = fmt or "{median:.4f} ({global_avg:.4f})"

    def update(self, value, n=1):
        self.deque.append(value)
        self.count += n
        self.total += value * n

    def synchronize_between_processes(self):
        """Warning: does not synchronize the deque!"""
        if not utils.is_dist_avail_and_initialized():
            return
        t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')
        dist.barrier()
        dist.all_reduce(t)
        t = t.tolist()
        self.count = int(t[0])
        self.total = t[1]

    @property
    def global_avg(self):
        return self.total / max(self.count, 1)


def train_one_epoch(model, criterion, data_loader, optimizer, device, epoch, loss_scaler, max_norm=0,
                    model_ema=None, mixup_fn=None, amp_dtype=torch.float16, use_amp=False, update_freq=1, nvtx=False):
    model.train(True)
    loss_meter = SmoothedValue()
    optimizer.zero_grad()
    for data_iter_step, (samples, targets) in enumerate(data_loader):
        samples = samples.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        if mixup_fn is not None:
            samples, targets = mixup_fn(samples, targets)
        if nvtx:
            torch.cuda.nvtx.range_push(f"step{data_iter_step}")
        with torch.cuda.amp.autocast(enabled=use_amp, dtype=amp_dtype):
            output = model(samples)
            loss = criterion(output, targets)
        loss /= update_freq
        grad_norm = loss_scaler(loss, optimizer, clip_grad=max_norm, parameters=model.parameters(),
                                create_graph=False, update_grad=(data_iter_step + 1) % update_freq == 0)
        if (data_iter_step + 1) % update_freq == 0:
            optimizer.zero_grad()
            if model_ema is not None:
                model_ema.update(model)
        if nvtx:
            torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        loss_meter.update(loss.item() * update_freq)
    loss_meter.synchronize_between_processes()
    return {"loss": loss_meter.global_avg}


def main(args):
    utils.init_distributed_mode(args)
    print(args)
    device = torch.device(args.device)

    seed = args.seed + utils.get_rank()
    torch.manual_seed(seed)
    np.random.seed(seed)
    cudnn.benchmark = True

    dataset_train, args.nb_classes = build_dataset(is_train=True, args=args)
    sampler_train = torch.utils.data.DistributedSampler(
        dataset_train, num_replicas=utils.get_world_size(), rank=utils.get_rank(), shuffle=True, seed=args.seed)
    data_loader_train = torch.utils.data.DataLoader(
        dataset_train, sampler=sampler_train, batch_size=args.batch_size, num_workers=args.num_workers,
        pin_memory=args.pin_mem, drop_last=True)

    mixup_fn = None
    if args.mixup > 0 or args.cutmix > 0.:
        mixup_fn = Mixup(mixup_alpha=args.mixup, cutmix_alpha=args.cutmix, label_smoothing=args.smoothing,
                         num_classes=args.nb_classes)

    model = create_model(args.model, pretrained=False, num_classes=args.nb_classes, drop_path_rate=args.drop_path,
                         layer_scale_init_value=args.layer_scale_init_value)
    if args.sync_bn and dist.is_initialized() and dist.get_backend() == "nccl":
        # SyncBN is only worth it (and only implemented) for the NCCL backend
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model.to(device)
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)

    model_ema = None
    if args.model_ema:
        model_ema = ModelEma(model, decay=args.model_ema_decay, device='cpu' if args.model_ema_force_cpu else '',
                             resume='')

    model_without_ddp = model
    if args.distributed:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu], find_unused_parameters=False)
        model_without_ddp = model.module

    amp_dtype = torch.float16
    if args.use_amp and torch.cuda.get_device_capability()[0] >= 8:
        amp_dtype = torch.bfloat16
    optimizer = create_optimizer(args, model_without_ddp, skip_list=None)
    loss_scaler = NativeScaler()

    criterion = SoftTargetCrossEntropy() if mixup_fn is not None else LabelSmoothingCrossEntropy(args.smoothing)
    print("criterion = %s" % str(criterion))

    start_time = time.time()
    for epoch in range(args.epochs):
        data_loader_train.sampler.set_epoch(epoch)
        train_stats = train_one_epoch(model, criterion, data_loader_train, optimizer, device, epoch, loss_scaler,
                                      model_ema=model_ema, mixup_fn=mixup_fn, amp_dtype=amp_dtype,
                                      use_amp=args.use_amp, update_freq=args.update_freq, nvtx=args.nvtx)
        if args.output_dir and utils.is_main_process():
            utils.save_model(args=args, model=model, model_without_ddp=model_without_ddp, optimizer=optimizer,
                             loss_scaler=loss_scaler, epoch=epoch, model_ema=model_ema)
            log_stats = {**{f'train_{k}': v for k, v in train_stats.items()}, 'epoch': epoch,
                         'max_mem_mb': torch.cuda.max_memory_allocated() // 2 ** 20}
            with open(os.path.join(args.output_dir, "log.txt"), mode="a", encoding="utf-8") as f:
                f.write(json.dumps(log_stats) + "\n")

    total_time = time.time() - start_time
    print('Training time {}'.format(str(datetime.timedelta(seconds=int(total_time)))))


if __name__ == '__main__':
    parser = argparse.ArgumentParser('ConvNeXt training and evaluation script', parents=[get_args_parser()])
    args = parser.parse_args()
    if args.output_dir:
        Path(args.output_dir).mkdir(parents=True, exist_ok=True)
    main(args)
