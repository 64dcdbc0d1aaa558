#!/usr/bin/env python
# -*- coding: utf-8 -*-
# @Filename:    utils.py
# @Project:     GuideNet
# @Time:        2020/12/18

import os
import random
import shutil

import numpy as np
import torch
import torch.nn as nn
import torch.distributed as dist

import criteria
import datasets
import models
import optimizers

__all__ = [
    'AverageMeter',
    'init_seed',
    'init_dist',
    'init_dataset',
    'init_net',
    'init_loss',
    'init_metric',
    'init_cuda',
    'init_optim',
    'init_lr_scheduler',
    'resume_state',
    'save_state',
    'is_main_process',
]


class AverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self):
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

    def all_reduce(self):
        """Average the meter over all ranks (DDP evaluation)."""
        if not (dist.is_available() and dist.is_initialized()):
            return
        t = torch.tensor([self.sum, self.count], dtype=torch.float64,
                         device=torch.device('cuda', torch.cuda.current_device()))
        dist.all_reduce(t)
        self.sum, self.count = t.tolist()
        self.avg = self.sum / max(self.count, 1)


def is_main_process():
    return (not dist.is_available()) or (not dist.is_initialized()) or dist.get_rank() == 0


def init_seed(config):
    if config.manual_seed == 0:
        config.manual_seed = random.randint(1, 10000)
    print("Random Seed: ", config.manual_seed)
    torch.initial_seed()
    random.seed(config.manual_seed)
    np.random.seed(config.manual_seed)
    torch.manual_seed(config.manual_seed)
    torch.cuda.manual_seed_all(config.manual_seed)


def init_dist(config):
    """torch.distributed.launch passes --local_rank; torchrun sets LOCAL_RANK."""
    config.local_rank = int(os.environ.get('LOCAL_RANK', config.get('local_rank', 0)))
    config.world_size = int(os.environ.get('WORLD_SIZE', 1))
    config.distributed = config.world_size > 1
    if config.distributed:
        torch.cuda.set_device(config.local_rank)
        dist.init_process_group(backend=config.dist_backend, init_method='env://')
        config.batch_size = config.batch_size // config.world_size
    return config


def init_dataset(config):
    trainset = getattr(datasets, config.dataset)(**config.train_params)
    testset = getattr(datasets, config.dataset)(**config.test_params)
    if config.distributed:
        train_sampler = torch.utils.data.distributed.DistributedSampler(trainset, shuffle=True)
        test_sampler = torch.utils.data.distributed.DistributedSampler(testset, shuffle=False)
    else:
        train_sampler, test_sampler = None, None
    trainloader = torch.utils.data.DataLoader(trainset, batch_size=config.batch_size,
                                              shuffle=(train_sampler is None),
                                              num_workers=config.num_workers, pin_memory=True,
                                              drop_last=True, sampler=train_sampler)
    testloader = torch.utils.data.DataLoader(testset, batch_size=config.batch_size_test,
                                             shuffle=False, num_workers=config.num_workers,
                                             pin_memory=True, drop_last=False, sampler=test_sampler)
    return trainloader, testloader


def init_net(config):
    return getattr(models, config.model)()


def init_loss(config):
    return getattr(criteria, config.loss)()


def init_metric(config):
    return getattr(criteria, config.metric)()


def init_cuda(net, criterion, metric, config):
    torch.backends.cudnn.deterministic = config.cudnn_deterministic
    torch.backends.cudnn.benchmark = config.cudnn_benchmark
    if config.distributed:
        if config.sync_bn:
            net = nn.SyncBatchNorm.convert_sync_batchnorm(net)
        net = net.cuda(config.local_rank)
        net = nn.parallel.DistributedDataParallel(net, device_ids=[config.local_rank],
                                                  output_device=config.local_rank)
    else:
        net = torch.nn.DataParallel(net).cuda()
    criterion = criterion.cuda()
    metric = metric.cuda()
    return net, criterion, metric


def init_optim(config, net):
    params = [p for p in net.parameters() if p.requires_grad]
    if config.optim == 'FusedAdam':
        # apex fused kernel, ~10% faster per step on V100
        from apex.optimizers import FusedAdam
        return FusedAdam(params, lr=config.lr, betas=config.betas,
                         weight_decay=config.weight_decay)
    return getattr(optimizers, config.optim)(params, **config.optim_params)


def init_lr_scheduler(config, optimizer):
    return getattr(torch.optim.lr_scheduler, config.lr_scheduler)(optimizer, **config.lr_params)


def resume_state(config, net, optimizer=None):
    if not config.resume:
        return
    assert os.path.isfile(config.resume), 'resume file not found: {}'.format(config.resume)
    cp = torch.load(config.resume, map_location=lambda storage, loc: storage.cuda())
    target = net.module if hasattr(net, 'module') else net
    target.load_state_dict(cp['net'], strict=True)
    if optimizer is not None and 'optimizer' in cp:
        optimizer.load_state_dict(cp['optimizer'])
    config.start_epoch = cp.get('epoch', config.start_epoch)
    print('Resumed from {} (epoch {})'.format(config.resume, config.start_epoch))


def save_state(config, net, optimizer=None, epoch=0, best=False):
    if not is_main_process():
        return
    os.makedirs(config.save_dir, exist_ok=True)
    target = net.module if hasattr(net, 'module') else net
    state = {'net': target.state_dict(), 'epoch': epoch}
    if optimizer is not None and config.save_optim:
        state['optimizer'] = optimizer.state_dict()
    path = os.path.join(config.save_dir, 'checkpoint_{}.pth.tar'.format(epoch))
    torch.save(state, path)
    if best:
        shutil.copyfile(path, os.path.join(config.save_dir, 'result_ema.pth'))
