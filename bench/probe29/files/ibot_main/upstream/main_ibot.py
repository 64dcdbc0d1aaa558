# Copyright (c) ByteDance, Inc. and its affiliates.
# All rights reserved.
#
# Modified from DINO (https://github.com/facebookresearch/dino)
import argparse
import os
import sys
import datetime
import time
import math
import json
import numpy as np
import utils
import models
import torch
import torch.nn as nn
import torch.distributed as dist
import torch.backends.cudnn as cudnn
import torch.nn.functional as F

from pathlib import Path
from torchvision import datasets, transforms
from models.head import iBOTHead
from loader import ImageFolderMask


def get_args_parser():
    parser = argparse.ArgumentParser('iBOT', add_help=False)
    parser.add_argument('--arch', default='vit_small', type=str)
    parser.add_argument('--patch_size', default=16, type=int)
    parser.add_argument('--out_dim', default=8192, type=int)
    parser.add_argument('--patch_out_dim', default=8192, type=int)
    parser.add_argument('--shared_head', default=False, type=utils.bool_flag)
    parser.add_argument('--shared_head_teacher', default=True, type=utils.bool_flag)
    parser.add_argument('--seed', default=0, type=int)
    parser.add_argument('--pred_ratio', default=0.3, type=float, nargs='+')
    parser.add_argument('--use_fp16', type=utils.bool_flag, default=True)
    parser.add_argument('--clip_grad', type=float, default=3.0)
    parser.add_argument('--batch_size_per_gpu', default=128, type=int)
    parser.add_argument('--epochs', default=100, type=int)
    parser.add_argument('--global_crops_number', type=int, default=2)
    parser.add_argument('--local_crops_number', type=int, default=0)
    parser.add_argument('--data_path', default='/path/to/imagenet/train/', type=str)
    parser.add_argument('--output_dir', default=".", type=str)
    parser.add_argument('--num_workers', default=10, type=int)
    parser.add_argument("--dist_url", default="env://", type=str)
    parser.add_argument("--local_rank", default=0, type=int)
    return parser


def train_ibot(args):
    utils.init_distributed_mode(args)
    utils.fix_random_seeds(args.seed)
    cudnn.benchmark = True

    dataset = ImageFolderMask(args.data_path, patch_size=args.patch_size, pred_ratio=args.pred_ratio)
    sampler = torch.utils.data.DistributedSampler(dataset, shuffle=True)
    data_loader = torch.utils.data.DataLoader(
        dataset, sampler=sampler, batch_size=args.batch_size_per_gpu,
        num_workers=args.num_workers, pin_memory=True, drop_last=True)

    student = models.__dict__[args.arch](patch_size=args.patch_size, return_all_tokens=True, masked_im_modeling=True)
    teacher = models.__dict__[args.arch](patch_size=args.patch_size, return_all_tokens=True)
    embed_dim = student.embed_dim
    student = utils.MultiCropWrapper(student, iBOTHead(embed_dim, args.out_dim, patch_out_dim=args.patch_out_dim))
    teacher = utils.MultiCropWrapper(teacher, iBOTHead(embed_dim, args.out_dim, patch_out_dim=args.patch_out_dim))
    # move networks to gpu
    student, teacher = student.cuda(), teacher.cuda()
    student = nn.parallel.DistributedDataParallel(student, device_ids=[args.gpu], broadcast_buffers=False) if \
        'swin' in args.arch else nn.parallel.DistributedDataParallel(student, device_ids=[args.gpu])
    teacher_without_ddp = teacher
    teacher_without_ddp.load_state_dict(student.module.state_dict(), strict=False)
    for p in teacher.parameters():
        p.requires_grad = False

    same_dim = args.shared_head or args.shared_head_teacher
    ibot_loss = iBOTLoss(args.out_dim, args.out_dim if same_dim else args.patch_out_dim,
                         args.global_crops_number, args.local_crops_number).cuda()

    params_groups = utils.get_params_groups(student)
    optimizer = torch.optim.AdamW(params_groups)
    fp16_scaler = None
    if args.use_fp16:
        fp16_scaler = torch.cuda.amp.GradScaler()

    for epoch in range(args.epochs):
        data_loader.sampler.set_epoch(epoch)
        train_one_epoch(student, teacher, teacher_without_ddp, ibot_loss, data_loader, optimizer, epoch, fp16_scaler, args)


def train_one_epoch(student, teacher, teacher_without_ddp, ibot_loss, data_loader,
                    optimizer, epoch, fp16_scaler, args):
    metric_logger = utils.MetricLogger(delimiter="  ")
    for it, (images, labels, masks) in enumerate(data_loader):
        # move images to gpu
        images = [im.cuda(non_blocking=True) for im in images]
        masks = [msk.cuda(non_blocking=True) for msk in masks]

        with torch.cuda.amp.autocast(fp16_scaler is not None):
            # get global views
            teacher_output = teacher(images[:args.global_crops_number])
            student_output = student(images[:args.global_crops_number], mask=masks[:args.global_crops_number])
            all_loss = ibot_loss(student_output, teacher_output, None, masks, epoch)
            loss = all_loss.pop('loss')

        if not math.isfinite(loss.item()):
            print("Loss is {}, stopping training".format(loss.item()), force=True)
            sys.exit(1)

        optimizer.zero_grad()
        if fp16_scaler is None:
            loss.backward()
            optimizer.step()
        else:
            fp16_scaler.scale(loss).backward()
            fp16_scaler.unscale_(optimizer)
            utils.clip_gradients(student, args.clip_grad)
            fp16_scaler.step(optimizer)
            fp16_scaler.update()
        metric_logger.update(loss=loss.item())


class iBOTLoss(nn.Module):
    def __init__(self, out_dim, patch_out_dim, ngcrops, nlcrops, student_temp=0.1,
                 center_momentum=0.9, center_momentum2=0.9, lambda1=1.0, lambda2=1.0):
        super().__init__()
        self.student_temp = student_temp
        self.center_momentum = center_momentum
        self.center_momentum2 = center_momentum2
        self.ngcrops = ngcrops
        self.nlcrops = nlcrops
        self.ncrops = ngcrops + nlcrops
        self.register_buffer("center", torch.zeros(1, out_dim))
        self.register_buffer("center2", torch.zeros(1, 1, patch_out_dim))
        self.lambda1 = lambda1
        self.lambda2 = lambda2

    def forward(self, student_output, teacher_output, student_local_cls, student_mask, epoch):
        student_cls, student_patch = student_output
        teacher_cls, teacher_patch = teacher_output
        student_cls_c = (student_cls / self.student_temp).chunk(self.ncrops)
        teacher_cls_c = F.softmax((teacher_cls - self.center) / 0.04, dim=-1).detach().chunk(self.ngcrops)
        total_loss1, n_loss_terms1 = 0, 0
        for q in range(len(teacher_cls_c)):
            for v in range(len(student_cls_c)):
                if v == q:
                    continue
                loss1 = torch.sum(-teacher_cls_c[q] * F.log_softmax(student_cls_c[v], dim=-1), dim=-1)
                total_loss1 += loss1.mean()
                n_loss_terms1 += 1
        total_loss1 = total_loss1 / n_loss_terms1 * self.lambda1
        self.update_center(teacher_cls, teacher_patch)
        return dict(cls=total_loss1, loss=total_loss1)

    @torch.no_grad()
    def update_center(self, teacher_cls, teacher_patch):
        cls_center = torch.sum(teacher_cls, dim=0, keepdim=True)
        dist.all_reduce(cls_center)
        cls_center = cls_center / (len(teacher_cls) * dist.get_world_size())
        self.center = self.center * self.center_momentum + cls_center * (1 - self.center_momentum)


if __name__ == '__main__':
    parser = argparse.ArgumentParser('iBOT', parents=[get_args_parser()])
    args = parser.parse_args()
    Path(args.output_dir).mkdir(parents=True, exist_ok=True)
    train_ibot(args)
