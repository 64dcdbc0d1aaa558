"""CIDER: compactness + dispersion on the hypersphere (Ming et al., ICLR'23).

Multi-GPU training follows the torchvision ImageNet reference: one process per
GPU, spawned with torch.multiprocessing, DDP with NCCL. Single-GPU runs just
pass --gpu 0.
"""
import argparse
import math
import os
import random
import shutil
import time
import warnings

import numpy as np
import torch
import torch.backends.cudnn as cudnn
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.data
import torch.utils.data.distributed
import tensorboard_logger as tb_logger

from models.resnet_supcon import SupCEHeadResNet
from utils import (AverageMeter, TwoCropTransform, adjust_learning_rate,
                   set_loader_small, set_loader_ImageNet, warmup_learning_rate)

try:
    import apex
    from apex import amp, optimizers
except ImportError:
    pass

parser = argparse.ArgumentParser(description='Training with CIDER and SupCon Loss')
parser.add_argument('--gpu', default=None, type=int, help='GPU id to use (None = all, via DDP/DP).')
parser.add_argument('--in-dataset', default='CIFAR-100', type=str, help='in-distribution dataset')
parser.add_argument('--model', default='resnet34', type=str, help='model architecture: [resnet18, resnet34, resnet50]')
parser.add_argument('--head', default='mlp', type=str, help='either mlp or linear head')
parser.add_argument('--loss', default='cider', type=str, choices=['supcon', 'cider'], help='name of experiment')
parser.add_argument('--epochs', default=500, type=int, help='number of total epochs to run')
parser.add_argument('--trial', type=str, default='0', help='trial id')
parser.add_argument('--save-epoch', default=100, type=int, help='save the model every save_epoch')
parser.add_argument('--feat_dim', default=128, type=int, help='feature dim')
parser.add_argument('--w', default=2, type=float, help='loss scale')
parser.add_argument('--proto_m', default=0.5, type=float, help='weight of prototype update')
parser.add_argument('--start-epoch', default=0, type=int, help='manual epoch number (useful on restarts)')
parser.add_argument('-b', '--batch-size', default=512, type=int, help='mini-batch size (default: 512), '
                    'this is the total batch size of all GPUs on the current node')
parser.add_argument('--learning_rate', '--lr', default=0.5, type=float, help='initial learning rate')
parser.add_argument('--lr_decay_epochs', type=str, default='100,150,180', help='where to decay lr, can be a list')
parser.add_argument('--lr_decay_rate', type=float, default=0.1, help='decay rate for learning rate')
parser.add_argument('--cosine', action='store_true', help='using cosine annealing')
parser.add_argument('--warm', action='store_true', help='warm-up for large batch training')
parser.add_argument('--momentum', default=0.9, type=float, help='momentum')
parser.add_argument('--weight-decay', '--wd', default=1e-4, type=float, help='weight decay')
parser.add_argument('--normalize', action='store_true', help='normalize feat embeddings')
parser.add_argument('--temp', type=float, default=0.1, help='temperature for loss function')
parser.add_argument('--workers', default=8, type=int, help='number of data loading workers')
parser.add_argument('--resume', default='', type=str, help='path to latest checkpoint')
parser.add_argument('--seed', default=None, type=int, help='seed for initializing training.')
parser.add_argument('--amp', action='store_true', help='mixed precision (torch.cuda.amp)')
parser.add_argument('--syncBN', action='store_true', help='using synchronized batch normalization (apex)')
# distributed
parser.add_argument('--world-size', default=-1, type=int, help='number of nodes for distributed training')
parser.add_argument('--rank', default=-1, type=int, help='node rank for distributed training')
parser.add_argument('--dist-url', default='tcp://127.0.0.1:23456', type=str, help='url used to set up distributed training')
parser.add_argument('--dist-backend', default='nccl', type=str, help='distributed backend')
parser.add_argument('--multiprocessing-distributed', action='store_true',
                    help='Use multi-processing distributed training to launch '
                         'N processes per node, which has N GPUs. This is the '
                         'fastest way to use PyTorch for either single node or '
                         'multi node data parallel training')


class CompLoss(nn.Module):
    """Compactness loss: pull each embedding to its class prototype."""
    def __init__(self, args, temperature=0.07, base_temperature=0.07):
        super(CompLoss, self).__init__()
        self.args = args
        self.temperature = temperature
        self.base_temperature = base_temperature

    def forward(self, features, prototypes, labels):
        device = features.device
        proxy_labels = torch.arange(0, self.args.n_cls).to(device)
        labels = labels.contiguous().view(-1, 1)
        mask = torch.eq(labels, proxy_labels.T).float().to(device)  # bz, cls

        # compute logits
        feat_dot_prototype = torch.div(torch.matmul(features, prototypes.T), self.temperature)
        # for numerical stability
        logits_max, _ = torch.max(feat_dot_prototype, dim=1, keepdim=True)
        logits = feat_dot_prototype - logits_max.detach()

        # compute log_prob
        exp_logits = torch.exp(logits)
        log_prob = logits - torch.log(exp_logits.sum(1, keepdim=True))

        # compute mean of log-likelihood over positive
        mean_log_prob_pos = (mask * log_prob).sum(1)

        # loss
        loss = - (self.temperature / self.base_temperature) * mean_log_prob_pos.mean()
        return loss


class DisLoss(nn.Module):
    """Dispersion loss: push class prototypes apart on the unit sphere."""
    def __init__(self, args, model, loader, temperature=0.1, base_temperature=0.1):
        super(DisLoss, self).__init__()
        self.args = args
        self.temperature = temperature
        self.base_temperature = base_temperature
        self.register_buffer("prototypes", torch.zeros(self.args.n_cls, self.args.feat_dim))
        self.model = model
        self.loader = loader
        self.init_class_prototypes()

    def forward(self, features, labels):
        prototypes = self.prototypes
        num_cls = self.args.n_cls
        for j in range(len(features)):
            prototypes[labels[j].item()] = F.normalize(
                prototypes[labels[j].item()] * self.args.proto_m + features[j] * (1 - self.args.proto_m), dim=0)
        self.prototypes = prototypes.detach()
        labels = torch.arange(0, num_cls).cuda()
        labels = labels.contiguous().view(-1, 1)

        mask = (1 - torch.eq(labels, labels.T).float()).cuda()

        logits = torch.div(
            torch.matmul(prototypes, prototypes.T),
            self.temperature)

        logits_mask = torch.scatter(
            torch.ones_like(mask),
            1,
            torch.arange(num_cls).view(-1, 1).cuda(),
            0
        )
        mask = mask * logits_mask
        mean_prob_neg = torch.log((mask * torch.exp(logits)).sum(1) / mask.sum(1))
        mean_prob_neg = mean_prob_neg[~torch.isnan(mean_prob_neg)]
        loss = self.temperature / self.base_temperature * mean_prob_neg.mean()
        return loss

    def init_class_prototypes(self):
        """Initialize class prototypes"""
        self.model.eval()
        start = time.time()
        prototype_counts = [0] * self.args.n_cls
        with torch.no_grad():
            prototypes = torch.zeros(self.args.n_cls, self.args.feat_dim).cuda()
            for i, (input, target) in enumerate(self.loader):
                input, target = input.cuda(), target.cuda()
                features = self.model(input)
                for j, feature in enumerate(features):
                    prototypes[target[j].item()] += feature
                    prototype_counts[target[j].item()] += 1
            for cls in range(self.args.n_cls):
                prototypes[cls] /= prototype_counts[cls]
            # measure elapsed time
            duration = time.time() - start
            print(f'Time to initialize prototypes: {duration:.3f}')
            prototypes = F.normalize(prototypes, dim=1)
            self.prototypes = prototypes


def main():
    args = parser.parse_args()
    args.n_cls = 100 if args.in_dataset == 'CIFAR-100' else (1000 if args.in_dataset == 'ImageNet-100' else 10)
    if args.in_dataset == 'ImageNet-100':
        args.n_cls = 100

    if args.seed is not None:
        random.seed(args.seed)
        np.random.seed(args.seed)
        torch.manual_seed(args.seed)
        cudnn.deterministic = True
        warnings.warn('You have chosen to seed training. '
                      'This will turn on the CUDNN deterministic setting, '
                      'which can slow down your training considerably! '
                      'You may see unexpected behavior when restarting '
                      'from checkpoints.')

    if args.gpu is not None:
        warnings.warn('You have chosen a specific GPU. This will completely '
                      'disable data parallelism.')

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

    args.name = f"{args.loss}_{args.in_dataset}_{args.model}_lr_{args.learning_rate}_w_{args.w}_e_{args.epochs}_{args.trial}"
    args.model_directory = "checkpoints/{in_dataset}/{name}/".format(in_dataset=args.in_dataset, name=args.name)
    os.makedirs(args.model_directory, exist_ok=True)

    # create model
    model = SupCEHeadResNet(args)

    if args.syncBN:
        model = apex.parallel.convert_syncbn_model(model)

    if args.distributed:
        # For multiprocessing distributed, DistributedDataParallel constructor
        # should always set the single device scope, otherwise,
        # DistributedDataParallel will use all available devices.
        if args.gpu is not None:
            torch.cuda.set_device(args.gpu)
            model.cuda(args.gpu)
            # When using a single GPU per process and per
            # DistributedDataParallel, we need to divide the batch size
            # ourselves based on the total number of GPUs we have
            args.batch_size = int(args.batch_size / ngpus_per_node)
            args.workers = int((args.workers + ngpus_per_node - 1) / ngpus_per_node)
            model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
        else:
            model.cuda()
            # DistributedDataParallel will divide and allocate batch_size to all
            # available GPUs if device_ids are not set
            model = torch.nn.parallel.DistributedDataParallel(model)
    elif args.gpu is not None:
        torch.cuda.set_device(gpu)
        model = model.cuda(args.gpu)
    else:
        # DataParallel will divide and allocate batch_size to all available GPUs
        model = torch.nn.DataParallel(model).cuda()

    optimizer = torch.optim.SGD(model.parameters(), args.learning_rate,
                                momentum=args.momentum,
                                nesterov=True,
                                weight_decay=args.weight_decay)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    # optionally resume from a checkpoint
    if args.resume:
        if os.path.isfile(args.resume):
            print("=> loading checkpoint '{}'".format(args.resume))
            if args.gpu is None:
                checkpoint = torch.load(args.resume)
            else:
                # Map model to be loaded to specified single gpu.
                loc = 'cuda:{}'.format(args.gpu)
                checkpoint = torch.load(args.resume, map_location=loc)
            args.start_epoch = checkpoint['epoch']
            model.load_state_dict(checkpoint['state_dict'])
            optimizer.load_state_dict(checkpoint['optimizer'])
            if 'scaler' in checkpoint:
                scaler.load_state_dict(checkpoint['scaler'])
            print("=> loaded checkpoint '{}' (epoch {})".format(args.resume, checkpoint['epoch']))
        else:
            print("=> no checkpoint found at '{}'".format(args.resume))

    cudnn.benchmark = True

    # Data loading code
    if args.in_dataset == 'ImageNet-100':
        train_loader, val_loader, train_sampler = set_loader_ImageNet(args)
    else:
        train_loader, val_loader, train_sampler = set_loader_small(args)

    criterion_comp = CompLoss(args, temperature=args.temp).cuda(args.gpu)
    # V2: EMA style prototypes
    criterion_dis = DisLoss(args, model, val_loader, temperature=args.temp).cuda(args.gpu)

    if args.rank <= 0:
        logger = tb_logger.Logger(logdir=args.model_directory, flush_secs=2)

    for epoch in range(args.start_epoch, args.epochs):
        if args.distributed:
            train_sampler.set_epoch(epoch)
        adjust_learning_rate(args, optimizer, epoch)

        # train for one epoch
        dis_loss, comp_loss = train_cider(args, train_loader, model, criterion_comp, criterion_dis,
                                          optimizer, scaler, epoch)

        if args.rank <= 0:
            logger.log_value('dis_loss', dis_loss, epoch)
            logger.log_value('comp_loss', comp_loss, epoch)
            logger.log_value('learning_rate', optimizer.param_groups[0]['lr'], epoch)
            logger.log_value('max_mem_GB', torch.cuda.max_memory_allocated() / 1024 ** 3, epoch)

        if not args.multiprocessing_distributed or (args.multiprocessing_distributed
                                                    and args.rank % ngpus_per_node == 0):
            if (epoch + 1) % args.save_epoch == 0:
                save_checkpoint(args, {
                    'epoch': epoch + 1,
                    'state_dict': model.state_dict(),
                    'optimizer': optimizer.state_dict(),
                    'scaler': scaler.state_dict(),
                }, epoch + 1)


def train_cider(args, train_loader, model, criterion_comp, criterion_dis, optimizer, scaler, epoch):
    """Train for one epoch on the in-distribution dataset"""
    batch_time = AverageMeter()
    supcon_losses = AverageMeter()
    dis_losses = AverageMeter()
    comp_losses = AverageMeter()

    model.train()
    end = time.time()
    for i, (input, target) in enumerate(train_loader):
        warmup_learning_rate(args, epoch, i, len(train_loader), optimizer)
        bsz = target.shape[0]
        input = torch.cat([input[0], input[1]], dim=0).cuda(args.gpu, non_blocking=True)
        target = target.repeat(2).cuda(args.gpu, non_blocking=True)

        with torch.cuda.amp.autocast(enabled=args.amp):
            penultimate = model.module.encoder(input).squeeze()
            if args.normalize:  # default: False
                penultimate = F.normalize(penultimate, dim=1)
            features = model.module.head(penultimate)
            features = F.normalize(features, dim=1)

        # prototype losses are computed in fp32
        features = features.float()
        dis_loss = criterion_dis(features, target)  # V2: EMA style
        comp_loss = criterion_comp(features, criterion_dis.prototypes, target)
        loss = args.w * comp_loss + dis_loss

        dis_losses.update(dis_loss.data, input.size(0))
        comp_losses.update(comp_loss.data, input.size(0))

        # compute gradient and do SGD step
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

        # measure elapsed time
        batch_time.update(time.time() - end)
        end = time.time()

        if i % 10 == 0 and args.rank <= 0:
            print('Epoch: [{0}][{1}/{2}]\t'
                  'Time {batch_time.val:.3f} ({batch_time.avg:.3f})\t'
                  'Dis Loss {dloss.val:.4f} ({dloss.avg:.4f})\t'
                  'Comp Loss {closs.val:.4f} ({closs.avg:.4f})'.format(
                      epoch, i, len(train_loader), batch_time=batch_time,
                      dloss=dis_losses, closs=comp_losses))

    return dis_losses.avg, comp_losses.avg


def save_checkpoint(args, state, epoch):
    """Saves checkpoint to disk"""
    filename = args.model_directory + 'checkpoint_{}.pth.tar'.format(epoch)
    torch.save(state, filename)


if __name__ == '__main__':
    main()
