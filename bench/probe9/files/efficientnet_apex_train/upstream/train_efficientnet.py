"""Train EfficientNet-B0..B3 on ImageNet with apex mixed precision.

Launch with:
    python -m torch.distributed.launch --nproc_per_node=8 train_efficientnet.py \
        --arch efficientnet-b0 --opt-level O1 /data/imagenet
"""
import argparse
import math
import os
import shutil
import time

import numpy as np
import torch
import torch.nn as nn
import torch.distributed as dist
import torch.backends.cudnn as cudnn
import torchvision.datasets as datasets
import torchvision.transforms as transforms

from efficientnet_pytorch import EfficientNet

try:
    from apex import amp
    from apex.parallel import DistributedDataParallel as ApexDDP
    from apex.parallel import convert_syncbn_model
    from apex.optimizers import FusedSGD
except ImportError:
    raise ImportError("Please install apex from https://www.github.com/nvidia/apex to run this example.")


def parse():
    parser = argparse.ArgumentParser(description='EfficientNet ImageNet Training')
    parser.add_argument('data', metavar='DIR')
    parser.add_argument('--arch', '-a', default='efficientnet-b0')
    parser.add_argument('-j', '--workers', default=10, type=int)
    parser.add_argument('--epochs', default=350, type=int)
    parser.add_argument('-b', '--batch-size', default=128, type=int, help='per-process batch size')
    parser.add_argument('--lr', default=0.1, type=float, help='base lr for a global batch of 256')
    parser.add_argument('--momentum', default=0.9, type=float)
    parser.add_argument('--weight-decay', '--wd', default=1e-5, type=float)
    parser.add_argument('--warmup-epochs', default=5, type=int)
    parser.add_argument('--print-freq', '-p', default=100, type=int)
    parser.add_argument('--resume', default='', type=str)
    parser.add_argument('--ema-decay', default=0.9999, type=float)
    parser.add_argument('--sync-bn', action='store_true')
    parser.add_argument('--channels-last', action='store_true', default=False)
    parser.add_argument('--opt-level', type=str, default='O1')
    parser.add_argument('--keep-batchnorm-fp32', type=str, default=None)
    parser.add_argument('--loss-scale', type=str, default='dynamic')
    parser.add_argument('--local_rank', default=0, type=int)
    return parser.parse_args()


def fast_collate(batch, memory_format):
    imgs = [img[0] for img in batch]
    targets = torch.tensor([target[1] for target in batch], dtype=torch.int64)
    w, h = imgs[0].size[0], imgs[0].size[1]
    tensor = torch.zeros((len(imgs), 3, h, w), dtype=torch.uint8).contiguous(memory_format=memory_format)
    for i, img in enumerate(imgs):
        nump_array = np.asarray(img, dtype=np.uint8)
        if nump_array.ndim < 3:
            nump_array = np.expand_dims(nump_array, axis=-1)
        nump_array = np.rollaxis(nump_array, 2)
        tensor[i] += torch.from_numpy(nump_array)
    return tensor, targets


class data_prefetcher():
    """Overlaps host-to-device copies and normalisation with compute on a side stream."""

    def __init__(self, loader):
        self.loader = iter(loader)
        self.stream = torch.cuda.Stream()
        self.mean = torch.tensor([0.485 * 255, 0.456 * 255, 0.406 * 255]).cuda().view(1, 3, 1, 1)
        self.std = torch.tensor([0.229 * 255, 0.224 * 255, 0.225 * 255]).cuda().view(1, 3, 1, 1)
        self.preload()

    def preload(self):
        try:
            self.next_input, self.next_target = next(self.loader)
        except StopIteration:
            self.next_input = None
            self.next_target = None
            return
        with torch.cuda.stream(self.stream):
            self.next_input = self.next_input.cuda(non_blocking=True)
            self.next_target = self.next_target.cuda(non_blocking=True)
            self.next_input = self.next_input.float()
            self.next_input = self.next_input.sub_(self.mean).div_(self.std)

    def next(self):
        torch.cuda.current_stream().wait_stream(self.stream)
        input = self.next_input
        target = self.next_target
        if input is not None:
            input.record_stream(torch.cuda.current_stream())
        if target is not None:
            target.record_stream(torch.cuda.current_stream())  # labels
        self.preload()
        return input, target


class ModelEma:
    """Exponential moving average of model weights, kept on the same device."""

    def __init__(self, model, decay=0.9999, device=None):
        import copy
        self.ema = copy.deepcopy(model)
        self.ema.eval()
        if device:
            self.ema.to(device=device)
        self.decay = decay
        for p in self.ema.parameters():
            p.requires_grad_(False)

    def update(self, model):
        with torch.no_grad():
            msd = model.state_dict()
            for k, ema_v in self.ema.state_dict().items():
                model_v = msd['module.' + k] if 'module.' + k in msd else msd[k]
                if ema_v.dtype.is_floating_point:
                    ema_v.mul_(self.decay).add_(model_v.detach(), alpha=1. - self.decay)


def main():
    args = parse()
    cudnn.benchmark = True
    best_prec1 = 0

    args.distributed = int(os.environ.get('WORLD_SIZE', 1)) > 1
    args.world_size = 1
    if args.distributed:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend='nccl', init_method='env://')
        args.world_size = dist.get_world_size()

    memory_format = torch.channels_last if args.channels_last else torch.contiguous_format

    model = EfficientNet.from_name(args.arch)
    model.set_swish(memory_efficient=True)
    if args.sync_bn:
        print("using apex synced BN")
        model = convert_syncbn_model(model)

    model = model.cuda().to(memory_format=memory_format)

    args.lr = args.lr * float(args.batch_size * args.world_size) / 256.
    optimizer = FusedSGD(model.parameters(), args.lr, momentum=args.momentum,
                         weight_decay=args.weight_decay, nesterov=True)

    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level,
                                      keep_batchnorm_fp32=args.keep_batchnorm_fp32,
                                      loss_scale=args.loss_scale)
    if args.distributed:
        model = ApexDDP(model, delay_allreduce=True)
    ema = ModelEma(model, args.ema_decay, device='cuda:%d' % args.local_rank)

    criterion = nn.CrossEntropyLoss().cuda()

    if args.resume and os.path.isfile(args.resume):
        checkpoint = torch.load(args.resume, map_location=lambda storage, loc: storage.cuda(args.local_rank))
        model.load_state_dict(checkpoint['state_dict'])
        optimizer.load_state_dict(checkpoint['optimizer'])
        best_prec1 = checkpoint['best_prec1']

    image_size = EfficientNet.get_image_size(args.arch)
    train_dataset = datasets.ImageFolder(os.path.join(args.data, 'train'), transforms.Compose([
        transforms.RandomResizedCrop(image_size),
        transforms.RandomHorizontalFlip(),
    ]))
    val_dataset = datasets.ImageFolder(os.path.join(args.data, 'val'), transforms.Compose([
        transforms.Resize(int(image_size / 0.875)),
        transforms.CenterCrop(image_size),
    ]))
    train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset) if args.distributed else None
    val_sampler = torch.utils.data.distributed.DistributedSampler(val_dataset) if args.distributed else None
    collate_fn = lambda b: fast_collate(b, memory_format)
    train_loader = torch.utils.data.DataLoader(
        train_dataset, batch_size=args.batch_size, shuffle=(train_sampler is None),
        num_workers=args.workers, pin_memory=True, sampler=train_sampler, collate_fn=collate_fn)
    val_loader = torch.utils.data.DataLoader(
        val_dataset, batch_size=args.batch_size, shuffle=False,
        num_workers=args.workers, pin_memory=True, sampler=val_sampler, collate_fn=collate_fn)

    for epoch in range(args.epochs):
        if args.distributed:
            train_sampler.set_epoch(epoch)
        train(train_loader, model, ema, criterion, optimizer, epoch, args)
        prec1 = validate(val_loader, ema.ema, criterion, args)
        if args.local_rank == 0:
            is_best = prec1 > best_prec1
            best_prec1 = max(prec1, best_prec1)
            torch.save({'epoch': epoch + 1, 'arch': args.arch, 'state_dict': model.state_dict(),
                        'ema': ema.ema.state_dict(), 'best_prec1': best_prec1,
                        'optimizer': optimizer.state_dict()}, 'checkpoint.pth.tar')
            if is_best:
                shutil.copyfile('checkpoint.pth.tar', 'model_best.pth.tar')


def adjust_learning_rate(optimizer, epoch, step, len_epoch, args):
    if epoch < args.warmup_epochs:
        lr = args.lr * float(1 + step + epoch * len_epoch) / (args.warmup_epochs * len_epoch)
    else:
        e = epoch - args.warmup_epochs
        lr = 0.5 * args.lr * (1 + math.cos(math.pi * e / (args.epochs - args.warmup_epochs)))
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr


def train(train_loader, model, ema, criterion, optimizer, epoch, args):
    batch_time, losses = AverageMeter(), AverageMeter()
    model.train()
    end = time.time()
    prefetcher = data_prefetcher(train_loader)
    input, target = prefetcher.next()
    i = 0
    while input is not None:
        i += 1
        adjust_learning_rate(optimizer, epoch, i, len(train_loader), args)
        output = model(input)
        loss = criterion(output, target)

        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        ema.update(model)

        if i % args.print_freq == 0:
            reduced_loss = reduce_tensor(loss.data, args) if args.distributed else loss.data
            losses.update(reduced_loss.item(), input.size(0))
            torch.cuda.synchronize()
            batch_time.update((time.time() - end) / args.print_freq)
            end = time.time()
            if args.local_rank == 0:
                print('Epoch: [{0}][{1}/{2}]\t'
                      'Time {batch_time.val:.3f} ({batch_time.avg:.3f})\t'
                      'Speed {3:.1f} img/s\t'
                      'Loss {loss.val:.4f} ({loss.avg:.4f})'.format(
                          epoch, i, len(train_loader),
                          args.world_size * args.batch_size / batch_time.val,
                          batch_time=batch_time, loss=losses))
        input, target = prefetcher.next()


def validate(val_loader, model, criterion, args):
    top1, top5 = AverageMeter(), AverageMeter()
    model.eval()
    prefetcher = data_prefetcher(val_loader)
    input, target = prefetcher.next()
    while input is not None:
        with torch.no_grad():
            output = model(input)
        prec1, prec5 = accuracy(output.data, target, topk=(1, 5))
        if args.distributed:
            prec1 = reduce_tensor(prec1, args)
            prec5 = reduce_tensor(prec5, args)
        top1.update(prec1.item(), input.size(0))
        top5.update(prec5.item(), input.size(0))
        input, target = prefetcher.next()
    if args.local_rank == 0:
        print(' * Prec@1 {top1.avg:.3f} Prec@5 {top5.avg:.3f}'.format(top1=top1, top5=top5))
    return top1.avg


class AverageMeter(object):
    def __init__(self):
        self.val = self.avg = self.sum = self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def accuracy(output, target, topk=(1,)):
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


def reduce_tensor(tensor, args):
    rt = tensor.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    rt /= args.world_size
    return rt


if __name__ == '__main__':
    main()
