#!/usr/bin/env python
# -*- coding: utf-8 -*-
# @Filename:    train.py
# @Project:     GuideNet
# @Time:        2020/12/18
#
# Single node:      python train.py --config GN.yaml
# Multi GPU (DDP):  sh dist_train.sh GN.yaml 4

import os
import sys
import time
import argparse

import yaml
from easydict import EasyDict as edict

import torch
import torch.distributed as dist
from torch.utils.tensorboard import SummaryWriter


def init_config():
    parser = argparse.ArgumentParser(description='GuideNet training')
    parser.add_argument('--config', type=str, default='GN.yaml', help='config file in configs/')
    parser.add_argument('--local_rank', type=int, default=0, help='set by torch.distributed.launch')
    parser.add_argument('--resume', type=str, default='', help='checkpoint to resume from')
    args = parser.parse_args()
    with open(os.path.join('configs', args.config), 'r') as file:
        config_data = yaml.load(file, Loader=yaml.FullLoader)
    config = edict(config_data)
    config.local_rank = args.local_rank
    if args.resume:
        config.resume = args.resume
    return config


def train(epoch):
    global iters
    Avg = AverageMeter()
    if config.distributed:
        trainloader.sampler.set_epoch(epoch)
    t_start = time.time()
    for batch_idx, (rgb, lidar, depth) in enumerate(trainloader):
        if epoch >= config.test_epoch and iters % config.test_iters == 0:
            test()
        net.train()
        rgb, lidar, depth = rgb.cuda(), lidar.cuda(), depth.cuda()
        optimizer.zero_grad()
        output = net(rgb, lidar)
        loss = criterion(output, depth).mean()
        loss.backward()
        if config.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(net.parameters(), config.grad_clip)
        optimizer.step()
        Avg.update(loss.item())
        iters += 1
        if is_main_process() and iters % config.vis_iters == 0:
            lr = optimizer.param_groups[0]['lr']
            writer.add_scalar('train/loss', loss.item(), iters)
            writer.add_scalar('train/lr', lr, iters)
            elapsed = time.time() - t_start
            print('Epoch {} Idx {} Loss {:.4f} ({:.4f}) lr {:.2e} | {:.1f} it/s | {:.0f} MiB'.format(
                epoch, batch_idx, Avg.val, Avg.avg, lr,
                (batch_idx + 1) / max(elapsed, 1e-6),
                torch.cuda.memory_allocated() / 1024 ** 2))
    return Avg.avg


def test():
    global best_metric
    Avg = AverageMeter()
    net.eval()
    for batch_idx, (rgb, lidar, depth) in enumerate(testloader):
        rgb, lidar, depth = rgb.cuda(non_blocking=True), lidar.cuda(non_blocking=True), depth.cuda(non_blocking=True)
        with torch.no_grad():
            output = net(rgb, lidar)
            prec = metric(output, depth).mean()
        Avg.update(prec.item(), rgb.size(0))
    Avg.all_reduce()
    if is_main_process():
        writer.add_scalar('test/rmse', Avg.avg, iters)
        if Avg.avg < best_metric:
            best_metric = Avg.avg
            save_state(config, net, optimizer, epoch=config.start_epoch, best=True)
            print('Best Result: {:.4f}\n'.format(best_metric))


if __name__ == '__main__':
    config = init_config()
    if not config.get('distributed_launch', False):
        os.environ["CUDA_VISIBLE_DEVICES"] = ','.join([str(gpu_id) for gpu_id in config.gpu_ids])
    from utils import *

    config = init_dist(config)
    init_seed(config)
    trainloader, testloader = init_dataset(config)
    net = init_net(config)
    criterion = init_loss(config)
    metric = init_metric(config)
    net, criterion, metric = init_cuda(net, criterion, metric, config)
    optimizer = init_optim(config, net)
    lr_scheduler = init_lr_scheduler(config, optimizer)
    resume_state(config, net, optimizer)

    writer = SummaryWriter(os.path.join(config.save_dir, 'tb')) if is_main_process() else None
    if is_main_process():
        print('=> {} GPU(s), world size {}, batch/GPU {}'.format(
            torch.cuda.device_count(), config.world_size, config.batch_size))

    iters = 0
    best_metric = 100
    for epoch in range(config.start_epoch, config.nepoch):
        train(epoch)
        config.start_epoch = epoch
        lr_scheduler.step()
    if is_main_process():
        print('Best Results: {:.3f}\n'.format(best_metric))
    if config.distributed:
        dist.destroy_process_group()
