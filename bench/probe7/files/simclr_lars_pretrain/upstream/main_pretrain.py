#!/usr/bin/env python
# Contrastive pre-training (SimCLR-style NT-Xent) with very large global batches:
# embeddings of every rank are gathered with a differentiable all_gather, LARS on top of SGD,
# SyncBN from apex, one process per GPU started with torch.multiprocessing.spawn.
import argparse
import builtins
import math
import os
import random
import shutil
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.data
import torch.utils.data.distributed
import torchvision.datasets as datasets
import torchvision.models as models

from apex.parallel import LARC, convert_syncbn_model

import simclr.loader
import simclr.builder

parser = argparse.ArgumentParser(description='SimCLR ImageNet Pre-Training')
parser.add_argument('data', metavar='DIR', help='path to dataset')
parser.add_argument('-a', '--arch', default='resnet50')
parser.add_argument('-j', '--workers', default=32, type=int)
parser.add_argument('--epochs', default=100, type=int)
parser.add_argument('-b', '--batch-size', default=4096, type=int,
                    help='total batch size over all GPUs on all nodes')
parser.add_argument('--lr', default=0.3, type=float, help='base learning rate (scaled by batch/256)')
parser.add_argument('--wd', default=1e-6, type=float)
parser.add_argument('--temperature', default=0.1, type=float)
parser.add_argument('--world-size', default=-1, type=int, help='number of nodes')
parser.add_argument('--rank', default=-1, type=int, help='node rank')
parser.add_argument('--dist-url', default='tcp://224.66.41.62:23456', type=str)
parser.add_argument('--dist-backend', default='nccl', type=str, help='distributed backend')
parser.add_argument('--seed', default=None, type=int)
parser.add_argument('--gpu', default=None, type=int, help='GPU id to use.')
parser.add_argument('--multiprocessing-distributed', action='store_true')
parser.add_argument('--print-freq', default=10, type=int)


class GatherLayer(torch.autograd.Function):
    """all_gather with gradient: every rank gets the gradient of its own slice back."""

    @staticmethod
    def forward(ctx, x):
        output = [torch.zeros_like(x) for _ in range(dist.get_world_size())]
        dist.all_gather(output, x)
        return tuple(output)

    @staticmethod
    def backward(ctx, *grads):
        all_gradients = torch.stack(grads)
        dist.all_reduce(all_gradients)
        return all_gradients[dist.get_rank()]


def nt_xent(z1, z2, temperature):
    z1 = F.normalize(z1, dim=1)
    z2 = F.normalize(z2, dim=1)
    z1_all = torch.cat(GatherLayer.apply(z1), dim=0)
    z2_all = torch.cat(GatherLayer.apply(z2), dim=0)
    n = z1.size(0)
    rank = dist.get_rank()
    labels = torch.arange(n, device=z1.device) + rank * n
    # positives on the diagonal of the cross-view block; same-view similarities masked out
    logits_12 = z1 @ z2_all.t() / temperature
    logits_11 = z1 @ z1_all.t() / temperature
    mask = F.one_hot(labels, z1_all.size(0)).to(logits_11.dtype) * 1e9
    logits = torch.cat([logits_12, logits_11 - mask], dim=1)
    return F.cross_entropy(logits, labels) * 2 * temperature


def main():
    args = parser.parse_args()
    # large gathered batches fragment the allocator; expandable segments keep the peak down
    os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")

    if args.seed is not None:
        random.seed(args.seed)
        torch.manual_seed(args.seed)

    if args.dist_url == "env://" and args.world_size == -1:
        args.world_size = int(os.environ["WORLD_SIZE"])

    args.distributed = args.world_size > 1 or args.multiprocessing_distributed

    ngpus_per_node = torch.cuda.device_count()
    if args.multiprocessing_distributed:
        # Since we have ngpus_per_node processes per node, the total world_size
        # needs to be adjusted accordingly
        args.world_size = ngpus_per_node * args.world_size
        # Use torch.multiprocessing.spawn to launch distributed processes: the
        # main_worker process function
        mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))
    else:
        # Simply call main_worker function
        main_worker(args.gpu, ngpus_per_node, args)


def main_worker(gpu, ngpus_per_node, args):
    args.gpu = gpu

    # suppress printing if not first GPU on each node
    if args.multiprocessing_distributed and (args.gpu != 0 or args.rank != 0):
        def print_pass(*args, **kwargs):
            pass
        builtins.print = print_pass

    if args.gpu is not None:
        print("Use GPU: {} for training".format(args.gpu))

    if args.distributed:
        if args.dist_url == "env://" and args.rank == -1:
            args.rank = int(os.environ["RANK"])
        if args.multiprocessing_distributed:
            # For multiprocessing distributed training, rank needs to be the
            # global rank among all the processes
            args.rank = args.rank * ngpus_per_node + gpu
        dist.init_process_group(backend=args.dist_backend, init_method=args.dist_url,
                                world_size=args.world_size, rank=args.rank)
        torch.distributed.barrier()

    print("=> creating model '{}'".format(args.arch))
    model = simclr.builder.SimCLR(models.__dict__[args.arch], dim=128, mlp_dim=2048)

    # infer learning rate before changing batch size
    args.lr = args.lr * args.batch_size / 256

    model = convert_syncbn_model(model)

    if args.distributed:
        if args.gpu is not None:
            torch.cuda.set_device(args.gpu)
            model.cuda(args.gpu)
            # When using a single GPU per process and per
            # DistributedDataParallel, we need to divide the batch size
            # ourselves based on the total number of GPUs we have
            args.batch_size = int(args.batch_size / args.world_size)
            args.workers = int((args.workers + ngpus_per_node - 1) / ngpus_per_node)
            model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
        else:
            model.cuda()
            model = torch.nn.parallel.DistributedDataParallel(model)
    else:
        raise NotImplementedError("Only DistributedDataParallel is supported.")

    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=0.9, weight_decay=args.wd)
    optimizer = LARC(optimizer, trust_coefficient=0.001, clip=False)
    scaler = torch.cuda.amp.GradScaler()

    traindir = os.path.join(args.data, 'train')
    augmentation = simclr.loader.simclr_augmentation(224)
    train_dataset = datasets.ImageFolder(traindir, simclr.loader.TwoCropsTransform(augmentation))
    train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset)
    train_loader = torch.utils.data.DataLoader(
        train_dataset, batch_size=args.batch_size, shuffle=(train_sampler is None),
        num_workers=args.workers, pin_memory=True, sampler=train_sampler, drop_last=True)

    for epoch in range(args.epochs):
        train_sampler.set_epoch(epoch)
        train(train_loader, model, optimizer, scaler, epoch, args)
        if args.rank % ngpus_per_node == 0:
            torch.save({'epoch': epoch + 1, 'arch': args.arch, 'state_dict': model.state_dict(),
                        'optimizer': optimizer.state_dict(), 'scaler': scaler.state_dict()},
                       'checkpoint_%04d.pth.tar' % epoch)


def adjust_learning_rate(optimizer, epoch, args):
    """Decays the learning rate with half-cycle cosine after warmup"""
    warmup_epochs = 10
    if epoch < warmup_epochs:
        lr = args.lr * epoch / warmup_epochs
    else:
        lr = args.lr * 0.5 * (1. + math.cos(math.pi * (epoch - warmup_epochs) / (args.epochs - warmup_epochs)))
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr
    return lr


def train(train_loader, model, optimizer, scaler, epoch, args):
    model.train()
    end = time.time()
    iters_per_epoch = len(train_loader)
    for i, (images, _) in enumerate(train_loader):
        data_time = time.time() - end
        lr = adjust_learning_rate(optimizer, epoch + i / iters_per_epoch, args)

        if args.gpu is not None:
            images[0] = images[0].cuda(args.gpu, non_blocking=True)
            images[1] = images[1].cuda(args.gpu, non_blocking=True)

        with torch.cuda.amp.autocast(True):
            z1, z2 = model(images[0], images[1])
            loss = nt_xent(z1, z2, args.temperature)

        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

        batch_time = time.time() - end
        end = time.time()
        if i % args.print_freq == 0:
            print(f"Epoch [{epoch}][{i}/{iters_per_epoch}] lr {lr:.4f} loss {loss.item():.4f} "
                  f"data {data_time:.3f}s batch {batch_time:.3f}s")


if __name__ == '__main__':
    main()
