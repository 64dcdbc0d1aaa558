# Copyright (c) 2021-2022, NVIDIA Corporation & Affiliates. All rights reserved.
#
# This work is made available under the Nvidia Source Code License-NC.
# To view a copy of this license, visit
# https://github.com/NVlabs/A-ViT/blob/master/LICENSE
"""
Train and eval functions used in main_act.py
"""
import math
import sys
from typing import Iterable, Optional

import numpy as np
import torch

from timm.data import Mixup
from timm.utils import accuracy, ModelEma

from losses import DistillationLoss
import utils


def train_one_epoch(model: torch.nn.Module, criterion: DistillationLoss,
                    data_loader: Iterable, optimizer: torch.optim.Optimizer,
                    device: torch.device, epoch: int, loss_scaler, max_norm: float = 0,
                    model_ema: Optional[ModelEma] = None, mixup_fn: Optional[Mixup] = None,
                    set_training_mode=True, args=None, tf_writer=None):

    model.train(set_training_mode)
    metric_logger = utils.MetricLogger(delimiter="  ")
    metric_logger.add_meter('lr', utils.SmoothedValue(window_size=1, fmt='{value:.6f}'))
    header = 'Epoch: [{}]'.format(epoch)
    print_freq = 10

    cnt_token, cnt_token_diff = None, None

    # the module is wrapped by DDP in multi-GPU runs
    raw_model = model.module if hasattr(model, 'module') else model

    if args.distr_prior_alpha > 0.:
        kl_loss = raw_model.kl_loss
        target_depth = raw_model.distr_target

    for batch_idx, (samples, targets) in enumerate(metric_logger.log_every(data_loader, print_freq, header)):
        samples = samples.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)

        if mixup_fn is not None:
            samples, targets = mixup_fn(samples, targets)

        if args.amp:
            with torch.cuda.amp.autocast():
                outputs = model(samples)
                loss = criterion(samples, outputs, targets)
        else:
            outputs = model(samples)
            loss = criterion(samples, outputs, targets)

        if args.ponder_token_scale > 0.:
            ponder_loss_token = torch.mean(raw_model.rho_token) * args.ponder_token_scale
        else:
            ponder_loss_token = 0.

        if args.distr_prior_alpha > 0.:
            # KL between the measured per-layer halting distribution and the Gaussian target
            halting_score_distr = torch.stack(raw_model.halting_score_layer)
            halting_score_distr = halting_score_distr / torch.sum(halting_score_distr)
            halting_score_distr = torch.clamp(halting_score_distr, 0.01, 0.99)
            distr_prior_loss = args.distr_prior_alpha * kl_loss(halting_score_distr.log(), target_depth)
        else:
            distr_prior_loss = torch.zeros(1).cuda()

        loss_value = loss.item()
        loss = loss + ponder_loss_token + distr_prior_loss

        if not math.isfinite(loss_value):
            print("Loss is {}, stopping training".format(loss_value))
            sys.exit(1)

        optimizer.zero_grad()

        # this attribute is added by timm on one optimizer (adahessian)
        is_second_order = hasattr(optimizer, 'is_second_order') and optimizer.is_second_order
        if args.amp:
            loss_scaler(loss, optimizer, clip_grad=max_norm,
                        parameters=model.parameters(), create_graph=is_second_order)
        else:
            loss.backward()
            if max_norm is not None and max_norm > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            optimizer.step()

        torch.cuda.synchronize()
        if model_ema is not None:
            model_ema.update(model)

        metric_logger.update(loss=loss_value)
        metric_logger.update(lr=optimizer.param_groups[0]["lr"])

        # token-depth statistics for the logs
        if batch_idx % print_freq == 0:
            cnt_token = raw_model.counter_token.data.cpu().numpy()
            cnt_token_diff = (np.max(cnt_token, axis=-1) - np.min(cnt_token, axis=-1)).mean()
            metric_logger.update(avg_depth=float(np.mean(cnt_token)))
            metric_logger.update(depth_spread=float(cnt_token_diff))

        if tf_writer is not None and utils.is_main_process() and batch_idx % 50 == 0:
            step = epoch * len(data_loader) + batch_idx
            tf_writer.add_scalar('train/loss_cls', loss_value, step)
            tf_writer.add_scalar('train/ponder_loss_token', float(ponder_loss_token), step)
            tf_writer.add_scalar('train/distr_prior_loss', float(distr_prior_loss), step)
            if cnt_token is not None:
                tf_writer.add_scalar('train/avg_token_depth', float(np.mean(cnt_token)), step)
            tf_writer.add_scalar('train/max_mem_gb', torch.cuda.max_memory_allocated() / 2 ** 30, step)

    # gather the stats from all processes
    metric_logger.synchronize_between_processes()
    print("Averaged stats:", metric_logger)
    return {k: meter.global_avg for k, meter in metric_logger.meters.items()}


@torch.no_grad()
def evaluate(data_loader, model, device, epoch=None, tf_writer=None, args=None):
    criterion = torch.nn.CrossEntropyLoss()

    metric_logger = utils.MetricLogger(delimiter="  ")
    header = 'Test:'

    # switch to evaluation mode
    model.eval()
    raw_model = model.module if hasattr(model, 'module') else model

    depth_hist = torch.zeros(len(raw_model.blocks) + 1, device=device)

    for images, target in metric_logger.log_every(data_loader, 10, header):
        images = images.to(device, non_blocking=True)
        target = target.to(device, non_blocking=True)

        # compute output
        with torch.cuda.amp.autocast(enabled=args is not None and args.amp):
            output = model(images)
            loss = criterion(output, target)

        acc1, acc5 = accuracy(output, target, topk=(1, 5))

        # per-token depth histogram (how many layers each token used)
        depth = raw_model.counter_token.long().clamp(max=len(raw_model.blocks))
        depth_hist += torch.bincount(depth.flatten(), minlength=len(raw_model.blocks) + 1).float()

        batch_size = images.shape[0]
        metric_logger.update(loss=loss.item())
        metric_logger.meters['acc1'].update(acc1.item(), n=batch_size)
        metric_logger.meters['acc5'].update(acc5.item(), n=batch_size)
        metric_logger.meters['avg_depth'].update(raw_model.counter_token.float().mean().item(), n=batch_size)

    # gather the stats from all processes
    metric_logger.synchronize_between_processes()
    if utils.is_dist_avail_and_initialized():
        torch.distributed.all_reduce(depth_hist)
    print('* Acc@1 {top1.global_avg:.3f} Acc@5 {top5.global_avg:.3f} loss {losses.global_avg:.3f} '
          'avg token depth {d.global_avg:.2f}'
          .format(top1=metric_logger.acc1, top5=metric_logger.acc5, losses=metric_logger.loss,
                  d=metric_logger.avg_depth))

    if tf_writer is not None and epoch is not None:
        tf_writer.add_scalar('test/acc_top1', metric_logger.acc1.global_avg, epoch)
        tf_writer.add_scalar('test/avg_depth', metric_logger.avg_depth.global_avg, epoch)
        tf_writer.add_histogram('test/token_depth', depth_hist.cpu().numpy(), epoch)

    return {k: meter.global_avg for k, meter in metric_logger.meters.items()}
