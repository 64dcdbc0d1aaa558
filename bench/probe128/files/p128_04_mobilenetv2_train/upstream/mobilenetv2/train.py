# Copyright (c) 2020, NVIDIA CORPORATION & contributors. All rights reserved.
#
# Licensed under the BSD 3-Clause License  (the "License");
# you may not use this file except in compliance with the License.
#
"""MobileNetV2 ImageNet training (GPU baseline).

Derived from pytorch/examples imagenet/main.py with:
  * apex amp (O1/O2) and static loss scale,
  * label smoothing,
  * linear warm-up + cosine learning-rate schedule,
  * explicit ``--device-list`` so that the same script can run 1p / 8p.

8p example::

    python train.py /data/imagenet --device-list 0,1,2,3,4,5,6,7 \
        --multiprocessing-distributed --world-size 1 --rank 0 \
        --amp --opt-level O2 --loss-scale-value 128 -b 2048 --lr 0.8
"""
import argparse
import math
import os
import random
import shutil
import time
import warnings

import torch
import torch.backends.cudnn as cudnn
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
import torch.optim
import torch.utils.data
import torch.utils.data.distributed
import torchvision.datasets as datasets
import torchvision.transforms as transforms

from models.mobilenetv2 import mobilenet_v2

try:
    from apex import amp
except ImportError:
    amp = None

parser = argparse.ArgumentParser(description='PyTorch MobileNetV2 ImageNet Training')
parser.add_argument('data', metavar='DIR', help='path to dataset')
parser.add_argument('-j', '--workers', default=32, type=int, metavar='N')
parser.add_argument('--epochs', default=600, type=int, metavar='N')
parser.add_argument('--start-epoch', default=0, type=int, metavar='N')
parser.add_argument('-b', '--batch-size', default=512, type=int, metavar='N',
                    help='total batch size of all GPUs on the current node')
parser.add_argument('--lr', '--learning-rate', default=0.2, type=float, metavar='LR', dest='lr')
parser.add_argument('--momentum', default=0.9, type=float, metavar='M')
parser.add_argument('--wd', '--weight-decay', default=4e-5, type=float, metavar='W', dest='weight_decay')
parser.add_argument('--no-bias-decay', action='store_true', help='exclude bias and bn from weight decay')
parser.add_argument('--label-smoothing', default=0.1, type=float)
parser.add_argument('--warm_up_epochs', default=5, type=int)
parser.add_argument('-p', '--print-freq', default=10, type=int, metavar='N')
parser.add_argument('--resume', default='', type=str, metavar='PATH')
parser.add_argument('-e', '--evaluate', dest='evaluate', action='store_true')
parser.add_argument('--pretrained', default='', type=str, help='path to a pretrained state_dict')
parser.add_argument('--world-size', default=-1, type=int)
parser.add_argument('--rank', default=-1, type=int)
parser.add_argument('--dist-url', default='env://', type=str)
parser.add_argument('--dist-backend', default='nccl', type=str)
parser.add_argument('--addr', default='127.0.0.1', type=str, help='master addr')
parser.add_argument('--port', default='29688', type=str, help='master port')
parser.add_argument('--seed', default=None, type=int)
parser.add_argument('--gpu', default=None, type=int, help='GPU id to use (single card run)')
parser.add_argument('--device-list', default='0,1,2,3,4,5,6,7', type=str, help='comma separated GPU ids')
parser.add_argument('--multiprocessing-distributed', action='store_true')
# apex amp
parser.add_argument('--amp', default=False, action='store_true', help='use apex amp for mixed precision training')
parser.add_argument('--opt-level', default='O2', type=str, help='apex amp opt level: O0/O1/O2/O3')
parser.add_argument('--loss-scale-value', default=1024., type=float, help='static loss scale (or "dynamic")')
parser.add_argument('--benchmark', default=0, type=int, help='1: only report throughput for 100 steps')

best_acc1 = 0


def device_id_to_process_device_map(device_list):
    devices = device_list.split(",")
    devices = [int(x) for x in devices]
    devices.sort()

    process_device_map = dict()
    for process_id, device_id in enumerate(devices):
        process_device_map[process_id] = device_id

    return process_device_map


class LabelSmoothingCrossEntropy(nn.Module):
    """NLL loss with label smoothing (same formulation as timm)."""

    def __init__(self, smoothing=0.1):
        super(LabelSmoothingCrossEntropy, self).__init__()
        assert smoothing < 1.0
        self.smoothing = smoothing
        self.confidence = 1. - smoothing

    def forward(self, x, target):
        logprobs = F.log_softmax(x, dim=-1)
        nll_loss = -logprobs.gather(dim=-1, index=target.unsqueeze(1))
        nll_loss = nll_loss.squeeze(1)
        smooth_loss = -logprobs.mean(dim=-1)
        loss = self.confidence * nll_loss + self.smoothing * smooth_loss
        return loss.mean()


def main():
    args = parser.parse_args()

    os.environ['MASTER_ADDR'] = args.addr
    os.environ['MASTER_PORT'] = args.port

    if args.seed is not None:
        random.seed(args.seed)
        torch.manual_seed(args.seed)
        torch.cuda.manual_seed_all(args.seed)
        cudnn.deterministic = True
        warnings.warn('You have chosen to seed training. '
                      'This will turn on the CUDNN deterministic setting, '
                      'which can slow down your training considerably!')

    if args.amp and amp is None:
        raise RuntimeError("--amp requires apex (https://github.com/NVIDIA/apex)")

    if args.dist_url == "env://" and args.world_size == -1:
        args.world_size = int(os.environ["WORLD_SIZE"])

    args.distributed = args.world_size > 1 or args.multiprocessing_distributed
    args.process_device_map = device_id_to_process_device_map(args.device_list)

    ngpus_per_node = len(args.process_device_map)
    if ngpus_per_node > torch.cuda.device_count():
        raise ValueError("--device-list asks for {} GPUs but only {} are visible".format(
            ngpus_per_node, torch.cuda.device_count()))

    if args.multiprocessing_distributed:
        args.world_size = ngpus_per_node * args.world_size
        mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))
    else:
        main_worker(args.gpu, ngpus_per_node, args)


def main_worker(gpu, ngpus_per_node, args):
    global best_acc1
    args.gpu = args.process_device_map[gpu] if gpu is not None else 0

    print("Use GPU: {} for training".format(args.gpu))

    if args.distributed:
        if args.dist_url == "env://" and args.rank == -1:
            args.rank = int(os.environ["RANK"])
        if args.multiprocessing_distributed:
            args.rank = args.rank * ngpus_per_node + gpu
        dist.init_process_group(backend=args.dist_backend, init_method=args.dist_url,
                                world_size=args.world_size, rank=args.rank)

    loc = 'cuda:{}'.format(args.gpu)
    torch.cuda.set_device(loc)

    model = mobilenet_v2(num_classes=1000)
    if args.pretrained:
        print("=> loading pretrained weights '{}'".format(args.pretrained))
        state_dict = torch.load(args.pretrained, map_location='cpu')
        model.load_state_dict(state_dict, strict=False)

    model = model.to(loc)

    if args.distributed:
        args.batch_size = int(args.batch_size / ngpus_per_node)
        args.workers = int((args.workers + ngpus_per_node - 1) / ngpus_per_node)

    criterion = LabelSmoothingCrossEntropy(args.label_smoothing).to(loc)
    val_criterion = nn.CrossEntropyLoss().to(loc)

    if args.no_bias_decay:
        decay, no_decay = [], []
        for name, param in model.named_parameters():
            if not param.requires_grad:
                continue
            if len(param.shape) == 1 or name.endswith(".bias"):
                no_decay.append(param)
            else:
                decay.append(param)
        params = [{'params': no_decay, 'weight_decay': 0.},
                  {'params': decay, 'weight_decay': args.weight_decay}]
    else:
        params = model.parameters()

    optimizer = torch.optim.SGD(params, args.lr, momentum=args.momentum,
                                weight_decay=args.weight_decay, nesterov=True)

    if args.amp:
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level,
                                          loss_scale=args.loss_scale_value)

    if args.distributed:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu],
                                                          broadcast_buffers=False)

    if args.resume:
        if os.path.isfile(args.resume):
            print("=> loading checkpoint '{}'".format(args.resume))
            checkpoint = torch.load(args.resume, map_location=loc)
            args.start_epoch = checkpoint['epoch']
            best_acc1 = checkpoint['best_acc1']
            model.load_state_dict(checkpoint['state_dict'])
            optimizer.load_state_dict(checkpoint['optimizer'])
            if args.amp and 'amp' in checkpoint:
                amp.load_state_dict(checkpoint['amp'])
            print("=> loaded checkpoint '{}' (epoch {})".format(args.resume, checkpoint['epoch']))
        else:
            print("=> no checkpoint found at '{}'".format(args.resume))

    cudnn.benchmark = True

    traindir = os.path.join(args.data, 'train')
    valdir = os.path.join(args.data, 'val')
    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])

    train_dataset = datasets.ImageFolder(traindir, transforms.Compose([
        transforms.RandomResizedCrop(224),
        transforms.RandomHorizontalFlip(),
        transforms.ColorJitter(0.4, 0.4, 0.4),
        transforms.ToTensor(),
        normalize,
    ]))
    val_dataset = datasets.ImageFolder(valdir, transforms.Compose([
        transforms.Resize(256),
        transforms.CenterCrop(224),
        transforms.ToTensor(),
        normalize,
    ]))

    train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset) if args.distributed else None

    train_loader = torch.utils.data.DataLoader(
        train_dataset, batch_size=args.batch_size, shuffle=(train_sampler is None),
        num_workers=args.workers, pin_memory=True, sampler=train_sampler, drop_last=True)
    val_loader = torch.utils.data.DataLoader(
        val_dataset, batch_size=args.batch_size, shuffle=False,
        num_workers=args.workers, pin_memory=True, drop_last=False)

    if args.evaluate:
        validate(val_loader, model, val_criterion, args, loc)
        return

    for epoch in range(args.start_epoch, args.epochs):
        if args.distributed:
            train_sampler.set_epoch(epoch)

        train(train_loader, model, criterion, optimizer, epoch, args, loc)
        if args.benchmark == 1:
            return

        acc1 = validate(val_loader, model, val_criterion, args, loc)

        is_best = acc1 > best_acc1
        best_acc1 = max(acc1, best_acc1)

        if not args.multiprocessing_distributed or (args.multiprocessing_distributed
                                                    and args.rank % ngpus_per_node == 0):
            state = {
                'epoch': epoch + 1,
                'arch': 'mobilenet_v2',
                'state_dict': model.state_dict(),
                'best_acc1': best_acc1,
                'optimizer': optimizer.state_dict(),
            }
            if args.amp:
                state['amp'] = amp.state_dict()
            save_checkpoint(state, is_best)


def train(train_loader, model, criterion, optimizer, epoch, args, loc):
    batch_time = AverageMeter('Time', ':6.3f')
    data_time = AverageMeter('Data', ':6.3f')
    losses = AverageMeter('Loss', ':.4e')
    top1 = AverageMeter('Acc@1', ':6.2f')
    top5 = AverageMeter('Acc@5', ':6.2f')
    progress = ProgressMeter(len(train_loader), [batch_time, data_time, losses, top1, top5],
                             prefix="Epoch: [{}]".format(epoch))

    model.train()
    steps_per_epoch = len(train_loader)
    end = time.time()
    for i, (images, target) in enumerate(train_loader):
        if args.benchmark == 1 and i > 100:
            break
        adjust_learning_rate(optimizer, epoch, i, steps_per_epoch, args)
        data_time.update(time.time() - end)

        images = images.to(loc, non_blocking=True)
        target = target.to(loc, non_blocking=True)

        output = model(images)
        loss = criterion(output, target)

        acc1, acc5 = accuracy(output, target, topk=(1, 5))
        losses.update(loss.item(), images.size(0))
        top1.update(acc1[0], images.size(0))
        top5.update(acc5[0], images.size(0))

        optimizer.zero_grad()
        if args.amp:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()

        if args.benchmark == 1:
            # make sure all kernels of this step are finished before we stop the clock
            torch.cuda.synchronize()
        batch_time.update(time.time() - end)
        end = time.time()

        if i % args.print_freq == 0:
            progress.display(i)

    if not args.multiprocessing_distributed or args.rank % 8 == 0:
        # skip the first 5 steps (warm-up / graph build)
        if batch_time.count > 5:
            fps = args.batch_size * args.world_size / batch_time.avg
            print("[gpu id: {}] * FPS@all {:.3f}, TIME@all {:.3f}".format(args.gpu, fps, batch_time.avg))


def validate(val_loader, model, criterion, args, loc):
    batch_time = AverageMeter('Time', ':6.3f')
    losses = AverageMeter('Loss', ':.4e')
    top1 = AverageMeter('Acc@1', ':6.2f')
    top5 = AverageMeter('Acc@5', ':6.2f')
    progress = ProgressMeter(len(val_loader), [batch_time, losses, top1, top5], prefix='Test: ')

    model.eval()
    with torch.no_grad():
        end = time.time()
        for i, (images, target) in enumerate(val_loader):
            images = images.to(loc, non_blocking=True)
            target = target.to(loc, non_blocking=True)

            output = model(images)
            loss = criterion(output, target)

            acc1, acc5 = accuracy(output, target, topk=(1, 5))
            losses.update(loss.item(), images.size(0))
            top1.update(acc1[0], images.size(0))
            top5.update(acc5[0], images.size(0))

            batch_time.update(time.time() - end)
            end = time.time()

            if i % args.print_freq == 0:
                progress.display(i)

        print('[gpu id:', args.gpu, ']', ' * Acc@1 {top1.avg:.3f} Acc@5 {top5.avg:.3f}'
              .format(top1=top1, top5=top5))

    return top1.avg


def save_checkpoint(state, is_best, filename='checkpoint.pth.tar'):
    torch.save(state, filename)
    if is_best:
        shutil.copyfile(filename, 'model_best.pth.tar')


class AverageMeter(object):
    def __init__(self, name, fmt=':f'):
        self.name = name
        self.fmt = fmt
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count

    def __str__(self):
        fmtstr = '{name} {val' + self.fmt + '} ({avg' + self.fmt + '})'
        return fmtstr.format(**self.__dict__)


class ProgressMeter(object):
    def __init__(self, num_batches, meters, prefix=""):
        self.batch_fmtstr = self._get_batch_fmtstr(num_batches)
        self.meters = meters
        self.prefix = prefix

    def display(self, batch):
        entries = [self.prefix + self.batch_fmtstr.format(batch)]
        entries += [str(meter) for meter in self.meters]
        print('\t'.join(entries))

    def _get_batch_fmtstr(self, num_batches):
        num_digits = len(str(num_batches // 1))
        fmt = '{:' + str(num_digits) + 'd}'
        return '[' + fmt + '/' + fmt.format(num_batches) + ']'


def adjust_learning_rate(optimizer, epoch, step, steps_per_epoch, args):
    """Linear warm-up for ``warm_up_epochs`` then cosine decay to zero."""
    total = args.epochs * steps_per_epoch
    cur = epoch * steps_per_epoch + step
    warm = args.warm_up_epochs * steps_per_epoch
    if cur < warm:
        lr = args.lr * float(cur + 1) / warm
    else:
        lr = 0.5 * args.lr * (1 + math.cos(math.pi * (cur - warm) / (total - warm)))
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr


def accuracy(output, target, topk=(1,)):
    with torch.no_grad():
        maxk = max(topk)
        batch_size = target.size(0)

        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))

        res = []
        for k in topk:
            correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
            res.append(correct_k.mul_(100.0 / batch_size))
        return res


if __name__ == '__main__':
    main()
