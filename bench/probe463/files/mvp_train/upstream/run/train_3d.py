# ------------------------------------------------------------------------------
# Multi-view Pose transformer
# Copyright (c) 2021 Sea AI Lab. All Rights Reserved.
# Licensed under the Apache License, Version 2.0 [see LICENSE for details]
# ------------------------------------------------------------------------------
# Modified from Deformable DETR
# (https://github.com/fundamentalvision/Deformable-DETR)
# and VoxelPose (https://github.com/microsoft/voxelpose-pytorch)
# ------------------------------------------------------------------------------

from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

import argparse
import os
import pprint
import logging
import json
import time
import random

import numpy as np
import torch
import torch.backends.cudnn as cudnn
import torch.utils.data
import torch.utils.data.distributed
import torchvision.transforms as transforms
from tensorboardX import SummaryWriter

import _init_paths
from core.config import config
from core.config import update_config
from core.function import train_3d, validate_3d
from utils.utils import create_logger
from utils.utils import save_checkpoint, load_checkpoint, load_backbone_panoptic
import utils.misc as utils
from models.util.misc import is_main_process, collect_results
import dataset
import models


def parse_args():
    parser = argparse.ArgumentParser(description='Train keypoints network')
    parser.add_argument('--cfg', help='experiment configure file name',
                        required=True, type=str)
    parser.add_argument('--device', default='cuda',
                        help='device to use for training / testing')
    parser.add_argument('--seed', default=42, type=int)
    parser.add_argument('--world_size', default=1, type=int,
                        help='number of distributed processes')
    parser.add_argument('--dist_url', default='env://',
                        help='url used to set up distributed training')
    parser.add_argument('--num_workers', default=4, type=int)
    parser.add_argument('--model', type=str, default='multi_view_pose_transformer')

    args, rest = parser.parse_known_args()
    update_config(args.cfg)

    return args


def get_optimizer(model_without_ddp, weight_decay, optim_type):
    lr = config.TRAIN.LR
    if model_without_ddp.backbone is not None:
        for params in model_without_ddp.backbone.parameters():
            # Set it to be True to train the whole model jointly
            params.requires_grad = False

    lr_linear_proj_mult = config.DECODER.lr_linear_proj_mult
    lr_linear_proj_names = ['reference_points', 'sampling_offsets']
    param_dicts = [
        {"params":
            [p for n, p in model_without_ddp.named_parameters()
             if not match_name_keywords(n, lr_linear_proj_names) and p.requires_grad],
         "lr": lr,
         },
        {"params":
            [p for n, p in model_without_ddp.named_parameters()
             if match_name_keywords(n, lr_linear_proj_names) and p.requires_grad],
         "lr": lr * lr_linear_proj_mult,
         }
    ]

    if optim_type == 'adam':
        optimizer = torch.optim.Adam(param_dicts, lr=lr)
    elif optim_type == 'adamw':
        optimizer = torch.optim.AdamW(param_dicts, lr=lr, weight_decay=1e-4)

    return optimizer


def match_name_keywords(n, name_keywords):
    out = False
    for b in name_keywords:
        if b in n:
            out = True
            break
    return out


def main():
    args = parse_args()
    utils.init_distributed_mode(args)
    print("git:\n  {}\n".format(utils.get_sha()))

    logger, final_output_dir, tb_log_dir = create_logger(
        config, args.cfg, 'train')

    if is_main_process():
        logger.info(pprint.pformat(args))
        logger.info(pprint.pformat(config))

    device = torch.device(args.device)

    # fix the seed for reproducibility
    seed = args.seed + utils.get_rank()
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)

    print('=> Loading data ..')
    normalize = transforms.Normalize(
        mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train_dataset = eval('dataset.' + config.DATASET.TRAIN_DATASET)(
        config, config.DATASET.TRAIN_SUBSET, True,
        transforms.Compose([
            transforms.ToTensor(),
            normalize,
        ]))

    test_dataset = eval('dataset.' + config.DATASET.TEST_DATASET)(
        config, config.DATASET.TEST_SUBSET, False,
        transforms.Compose([
            transforms.ToTensor(),
            normalize,
        ]))

    if args.distributed:
        rank, world_size = utils.get_rank(), utils.get_world_size()
        sampler_train = torch.utils.data.distributed.DistributedSampler(train_dataset, rank=rank,
                                                                        num_replicas=world_size, shuffle=True)
        sampler_val = torch.utils.data.distributed.DistributedSampler(test_dataset, rank=rank,
                                                                      num_replicas=world_size, shuffle=False)
    else:
        sampler_train = torch.utils.data.RandomSampler(train_dataset)
        sampler_val = torch.utils.data.SequentialSampler(test_dataset)

    batch_sampler_train = torch.utils.data.BatchSampler(
        sampler_train, config.TRAIN.BATCH_SIZE, drop_last=True)

    train_loader = torch.utils.data.DataLoader(
        train_dataset,
        batch_sampler=batch_sampler_train,
        num_workers=config.WORKERS,
        pin_memory=True)

    test_loader = torch.utils.data.DataLoader(
        test_dataset,
        config.TEST.BATCH_SIZE,
        sampler=sampler_val,
        pin_memory=True,
        num_workers=config.WORKERS)

    cudnn.benchmark = config.CUDNN.BENCHMARK
    torch.backends.cudnn.deterministic = config.CUDNN.DETERMINISTIC
    torch.backends.cudnn.enabled = config.CUDNN.ENABLED

    print('=> Constructing models ..')
    model = eval('models.' + config.MODEL + '.get_mvp')(
        config, is_train=True)
    model.to(device)

    model_without_ddp = model
    if args.distributed:
        model = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[args.gpu], find_unused_parameters=True)
        model_without_ddp = model.module

    optimizer = get_optimizer(model_without_ddp, config.TRAIN.WEIGHT_DECAY, config.TRAIN.OPTIMIZER)

    end_epoch = config.TRAIN.END_EPOCH
    lr_scheduler = torch.optim.lr_scheduler.StepLR(
        optimizer, config.DECODER.lr_decay_epoch)

    n_parameters = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print('number of params:', n_parameters)

    last_epoch = -1
    best_precision = 0
    if config.NETWORK.PRETRAINED_BACKBONE:
        # load pretrained backbone
        # (weights on disk were saved from a CUDA DataParallel model)
        model = load_backbone_panoptic(model, config.NETWORK.PRETRAINED_BACKBONE)
    if config.TRAIN.RESUME:
        start_epoch, model, optimizer, best_precision, last_epoch = \
            load_checkpoint(model, optimizer, final_output_dir)
    else:
        start_epoch = config.TRAIN.BEGIN_EPOCH

    writer_dict = {
        'writer': SummaryWriter(log_dir=tb_log_dir),
        'train_global_steps': 0,
        'valid_global_steps': 0,
    }

    print('=> Training...')
    for epoch in range(start_epoch, end_epoch):
        print('Epoch: {}'.format(epoch))
        if args.distributed:
            sampler_train.set_epoch(epoch)
        t = time.time()
        train_3d(config, model, optimizer, train_loader, epoch,
                 final_output_dir, writer_dict, device=device,
                 num_views=train_dataset.num_views)
        lr_scheduler.step()
        print('epoch time: {:.2f}s'.format(time.time() - t))

        inference_time = time.time()
        preds = validate_3d(config, model, test_loader, final_output_dir,
                            epoch, device=device)
        torch.cuda.empty_cache()

        inference_time = time.time() - inference_time
        print('inference time: {:.2f}s'.format(inference_time))

        preds = collect_results(preds, len(test_dataset))

        if is_main_process():
            precision = None
            if 'panoptic' in config.DATASET.TEST_DATASET:
                tb = None
                aps, recs, mpjpe, _ = test_loader.dataset.evaluate(preds)
                logger.info(
                    'ap@25: {:.4f}\tap@50: {:.4f}\tap@75: {:.4f}\t'
                    'ap@100: {:.4f}\tap@125: {:.4f}\tap@150: {:.4f}\t'
                    'recall@500mm: {:.4f}\tmpjpe@500mm: {:.3f}'.format(
                        aps[0], aps[1], aps[2], aps[3], aps[4], aps[5],
                        recs[-1], mpjpe))
                precision = np.mean(aps[0])

            if precision > best_precision:
                best_precision = precision
                best_model = True
            else:
                best_model = False

            logger.info('=> saving checkpoint to {} (Best: {})'.format(
                final_output_dir, best_model))
            save_checkpoint({
                'epoch': epoch + 1,
                'state_dict': model.module.state_dict(),
                'precision': best_precision,
                'optimizer': optimizer.state_dict(),
            }, best_model, final_output_dir)

    final_model_state_file = os.path.join(final_output_dir,
                                          'final_state.pth.tar')
    logger.info('saving final model state to {}'.format(
        final_model_state_file))
    torch.save(model.module.state_dict(), final_model_state_file)

    writer_dict['writer'].close()


if __name__ == '__main__':
    main()
