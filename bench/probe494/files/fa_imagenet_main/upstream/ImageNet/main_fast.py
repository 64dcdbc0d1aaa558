# This module is adapted from https://github.com/mahyarnajibi/FreeAdversarialTraining/blob/master/main_free.py
# Which in turn was adapted from https://github.com/pytorch/examples/blob/master/imagenet/main.py
import argparse
import os
import time
import sys
import shutil
import logging

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.parallel
import torch.backends.cudnn as cudnn
import torch.distributed as dist
import torch.optim
import torch.utils.data
import torch.utils.data.distributed
import torchvision.transforms as transforms
import torchvision.datasets as datasets
import torchvision.models as models
from torch.nn.parallel import DistributedDataParallel as DDP

from utils import *
from validation import validate, validate_pgd

logger = logging.getLogger(__name__)


def parse_args():
    parser = argparse.ArgumentParser(description='PyTorch ImageNet Training')
    parser.add_argument('data', metavar='DIR',
                        help='path to dataset')
    parser.add_argument('--output_prefix', default='fast_adv', type=str,
                        help='prefix used to define output path')
    parser.add_argument('-c', '--config', default='configs.yml', type=str, metavar='Path',
                        help='path to the config file (default: configs.yml)')
    parser.add_argument('--resume', default='', type=str, metavar='PATH',
                        help='path to latest checkpoint (default: none)')
    parser.add_argument('-e', '--evaluate', dest='evaluate', action='store_true',
                        help='evaluate model on validation set')
    parser.add_argument('--pretrained', dest='pretrained', action='store_true',
                        help='use pre-trained model')
    parser.add_argument('--restarts', default=1, type=int)
    parser.add_argument('--local_rank', default=0, type=int,
                        help='rank of this process on the node, set by torch.distributed.launch')
    parser.add_argument('--amp', action='store_true', default=True,
                        help='use native mixed precision (torch.cuda.amp)')
    return parser.parse_args()


# Parase config file and initiate logging
configs = parse_config_file(parse_args())
args = parse_args()
logger = initiate_logger(configs.output_name, configs.evaluate)
print = logger.info
cudnn.benchmark = True


def fast_collate(batch):
    imgs = [img[0] for img in batch]
    targets = torch.tensor([target[1] for target in batch], dtype=torch.int64)
    w = imgs[0].size[0]
    h = imgs[0].size[1]
    tensor = torch.zeros((len(imgs), 3, h, w), dtype=torch.uint8)
    for i, img in enumerate(imgs):
        nump_array = np.asarray(img, dtype=np.uint8)
        if nump_array.ndim < 3:
            nump_array = np.expand_dims(nump_array, axis=-1)
        nump_array = np.rollaxis(nump_array, 2)
        tensor[i] += torch.from_numpy(nump_array)
    return tensor, targets


class data_prefetcher():
    """Overlaps host-to-GPU copies and normalisation with the forward pass of the previous batch."""

    def __init__(self, loader, mean, std):
        self.loader = iter(loader)
        self.stream = torch.cuda.Stream()
        self.mean = torch.tensor([m * 255 for m in mean]).cuda().view(1, 3, 1, 1)
        self.std = torch.tensor([s * 255 for s in std]).cuda().view(1, 3, 1, 1)
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
            target.record_stream(torch.cuda.current_stream())
        self.preload()
        return input, target


def reduce_tensor(tensor, world_size):
    rt = tensor.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    rt /= world_size
    return rt


def main():
    # Distributed setup: one process per GPU, launched by torch.distributed.launch
    configs.distributed = int(os.environ.get('WORLD_SIZE', 1)) > 1
    configs.world_size = 1
    if configs.distributed:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend='nccl', init_method='env://')
        configs.world_size = dist.get_world_size()
    configs.rank = dist.get_rank() if configs.distributed else 0

    # Scale and initialize the parameters
    best_prec1 = 0
    configs.TRAIN.epochs = int(configs.TRAIN.epochs)
    configs.ADV.fgsm_step /= configs.DATA.max_color_value
    configs.ADV.clip_eps /= configs.DATA.max_color_value

    # Create output folder
    if not os.path.isdir(os.path.join('trained_models', configs.output_name)):
        os.makedirs(os.path.join('trained_models', configs.output_name), exist_ok=True)

    # Log the config details
    logger.info(pad_str(' ARGUMENTS '))
    for k, v in configs.items(): print('{}: {}'.format(k, v))
    logger.info(pad_str(''))

    # Create the model
    if configs.pretrained:
        print("=> using pre-trained model '{}'".format(configs.TRAIN.arch))
        model = models.__dict__[configs.TRAIN.arch](pretrained=True)
    else:
        print("=> creating model '{}'".format(configs.TRAIN.arch))
        model = models.__dict__[configs.TRAIN.arch]()
    model = model.cuda()

    # Criterion:
    criterion = nn.CrossEntropyLoss().cuda()

    # Optimizer:
    optimizer = torch.optim.SGD(model.parameters(), configs.TRAIN.lr,
                                momentum=configs.TRAIN.momentum,
                                weight_decay=configs.TRAIN.weight_decay)

    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    if configs.distributed:
        model = DDP(model, device_ids=[args.local_rank], output_device=args.local_rank)

    # Resume if a valid checkpoint path is provided
    if configs.resume:
        if os.path.isfile(configs.resume):
            print("=> loading checkpoint '{}'".format(configs.resume))
            checkpoint = torch.load(configs.resume,
                                    map_location=lambda storage, loc: storage.cuda(args.local_rank))
            configs.TRAIN.start_epoch = checkpoint['epoch']
            best_prec1 = checkpoint['best_prec1']
            model.load_state_dict(checkpoint['state_dict'])
            optimizer.load_state_dict(checkpoint['optimizer'])
            print("=> loaded checkpoint '{}' (epoch {})"
                  .format(configs.resume, checkpoint['epoch']))
        else:
            print("=> no checkpoint found at '{}'".format(configs.resume))

    # Initiate data loaders
    traindir = os.path.join(configs.data, 'train')
    valdir = os.path.join(configs.data, 'val')

    resize_transform = []

    if configs.DATA.img_size > 0:
        resize_transform = [transforms.Resize(configs.DATA.img_size)]

    train_dataset = datasets.ImageFolder(
        traindir,
        transforms.Compose(resize_transform + [
            transforms.RandomResizedCrop(configs.DATA.crop_size),
            transforms.RandomHorizontalFlip(),
        ]))

    train_sampler = None
    if configs.distributed:
        train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset)

    train_loader = torch.utils.data.DataLoader(
        train_dataset, batch_size=configs.DATA.batch_size, shuffle=(train_sampler is None),
        num_workers=configs.DATA.workers, pin_memory=True, sampler=train_sampler,
        collate_fn=fast_collate)

    normalize = transforms.Normalize(mean=configs.TRAIN.mean,
                                     std=configs.TRAIN.std)

    test_transform = transforms.Compose(resize_transform + [
        transforms.CenterCrop(configs.DATA.crop_size),
        transforms.ToTensor(),
    ])

    val_loader = torch.utils.data.DataLoader(
        datasets.ImageFolder(valdir, test_transform),
        batch_size=configs.DATA.batch_size, shuffle=False,
        num_workers=configs.DATA.workers, pin_memory=True)

    # If in evaluate mode: perform validation on PGD attacks as well as clean samples
    if configs.evaluate:
        logger.info(pad_str(' Performing PGD Attacks '))
        for pgd_param in configs.ADV.pgd_attack:
            validate_pgd(val_loader, model, criterion, pgd_param[0], pgd_param[1], configs, logger)
        validate(val_loader, model, criterion, configs, logger)
        return

    lr_schedule = lambda t: np.interp([t], configs.TRAIN.lr_epochs, configs.TRAIN.lr_values)[0]

    for epoch in range(configs.TRAIN.start_epoch, configs.TRAIN.epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)

        # train for one epoch
        train(train_loader, model, criterion, optimizer, scaler, epoch, lr_schedule, configs.TRAIN.half)

        # evaluate on validation set
        prec1 = validate(val_loader, model, criterion, configs, logger)

        # remember best prec@1 and save checkpoint
        is_best = prec1 > best_prec1
        best_prec1 = max(prec1, best_prec1)
        if configs.rank == 0:
            save_checkpoint({
                'epoch': epoch + 1,
                'arch': configs.TRAIN.arch,
                'state_dict': model.state_dict(),
                'best_prec1': best_prec1,
                'optimizer': optimizer.state_dict(),
            }, is_best, os.path.join('trained_models', f'{configs.output_name}'),
                epoch + 1)

    # Automatically perform PGD Attacks at the end of training
    logger.info(pad_str(' Performing PGD Attacks '))
    for pgd_param in configs.ADV.pgd_attack:
        validate_pgd(val_loader, model, criterion, pgd_param[0], pgd_param[1], configs, logger)


# Fast Adversarial Training Module
global global_noise_data
global_noise_data = torch.zeros([configs.DATA.batch_size, 3, configs.DATA.crop_size, configs.DATA.crop_size]).cuda()


def train(train_loader, model, criterion, optimizer, scaler, epoch, lr_schedule, half=False):
    global global_noise_data

    mean = torch.Tensor(np.array(configs.TRAIN.mean)[:, np.newaxis, np.newaxis])
    mean = mean.expand(3, configs.DATA.crop_size, configs.DATA.crop_size).cuda()
    std = torch.Tensor(np.array(configs.TRAIN.std)[:, np.newaxis, np.newaxis])
    std = std.expand(3, configs.DATA.crop_size, configs.DATA.crop_size).cuda()

    # Initialize the meters
    batch_time = AverageMeter()
    data_time = AverageMeter()
    losses = AverageMeter()
    top1 = AverageMeter()
    top5 = AverageMeter()
    # switch to train mode
    model.train()
    prefetcher = data_prefetcher(train_loader, [0., 0., 0.], [1 / 255.] * 3)
    input, target = prefetcher.next()
    i = 0
    end = time.time()
    while input is not None:
        input = input.div_(255.)
        # measure data loading time
        data_time.update(time.time() - end)

        if configs.TRAIN.random_init:
            global_noise_data.uniform_(-configs.ADV.clip_eps, configs.ADV.clip_eps)

        # update learning rate
        lr = lr_schedule(epoch + (i + 1) / len(train_loader))
        for param_group in optimizer.param_groups:
            param_group['lr'] = lr

        noise_batch = global_noise_data[0:input.size(0)].clone().requires_grad_(True)
        in1 = input + noise_batch
        in1.clamp_(0, 1.0)
        in1.sub_(mean).div_(std)
        with torch.cuda.amp.autocast(enabled=args.amp):
            output = model(in1)
            loss = criterion(output, target)

        scaler.scale(loss).backward()

        # Update the noise for the next iteration
        pert = fgsm(noise_batch.grad, configs.ADV.fgsm_step)
        global_noise_data[0:input.size(0)] += pert.data
        global_noise_data.clamp_(-configs.ADV.clip_eps, configs.ADV.clip_eps)

        # Descend on global noise
        noise_batch = global_noise_data[0:input.size(0)].clone().requires_grad_(False)
        in1 = input + noise_batch
        in1.clamp_(0, 1.0)
        in1.sub_(mean).div_(std)
        with torch.cuda.amp.autocast(enabled=args.amp, dtype=torch.float16):
            output = model(in1)
            loss = criterion(output, target)

        # compute gradient and do SGD step
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

        # measure accuracy and record loss
        prec1, prec5 = accuracy(output, target, topk=(1, 5))
        if configs.distributed:
            reduced_loss = reduce_tensor(loss.data, configs.world_size)
            prec1 = reduce_tensor(prec1, configs.world_size)
            prec5 = reduce_tensor(prec5, configs.world_size)
        else:
            reduced_loss = loss.data
        losses.update(reduced_loss.item(), input.size(0))
        top1.update(prec1[0], input.size(0))
        top5.update(prec5[0], input.size(0))

        # measure elapsed time (wait for queued GPU work so the number is honest)
        torch.cuda.synchronize()
        batch_time.update(time.time() - end)
        end = time.time()

        if i % configs.TRAIN.print_freq == 0 and configs.rank == 0:
            print('Train Epoch: [{0}][{1}/{2}]\t'
                  'Time {batch_time.val:.3f} ({batch_time.avg:.3f})\t'
                  'Data {data_time.val:.3f} ({data_time.avg:.3f})\t'
                  'Loss {loss.val:.4f} ({loss.avg:.4f})\t'
                  'Prec@1 {top1.val:.3f} ({top1.avg:.3f})\t'
                  'Prec@5 {top5.val:.3f} ({top5.avg:.3f})\t'
                  'LR {lr:.3f}\t'
                  'Mem {mem:.1f} GB'.format(
                   epoch, i, len(train_loader), batch_time=batch_time,
                   data_time=data_time, top1=top1, top5=top5, loss=losses, lr=lr,
                   mem=torch.cuda.max_memory_allocated() / 1024 ** 3))
            sys.stdout.flush()

        input, target = prefetcher.next()
        i += 1


if __name__ == '__main__':
    main()
