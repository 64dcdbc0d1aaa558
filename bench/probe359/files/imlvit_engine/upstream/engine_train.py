# --------------------------------------------------------
# IML-ViT train / test loops, adapted from MAE engine_pretrain.py
# --------------------------------------------------------
import math
import sys
from typing import Iterable

import numpy as np
import torch
import torch.distributed as dist

import utils.misc as misc
import utils.lr_sched as lr_sched
import utils.evaluation as evaluation


def train_one_epoch(model: torch.nn.Module,
                    data_loader: Iterable, optimizer: torch.optim.Optimizer,
                    device: torch.device, epoch: int, loss_scaler,
                    log_writer=None,
                    args=None):
    model.train(True)
    metric_logger = misc.MetricLogger(delimiter="  ")
    metric_logger.add_meter('lr', misc.SmoothedValue(window_size=1, fmt='{value:.6f}'))
    header = 'Epoch: [{}]'.format(epoch)
    print_freq = 20

    accum_iter = args.accum_iter

    optimizer.zero_grad()

    if log_writer is not None:
        print('log_dir: {}'.format(log_writer.log_dir))

    total_step = len(data_loader)
    log_period = total_step / 10
    for data_iter_step, (samples, masks, edge_masks, shape) in enumerate(metric_logger.log_every(data_loader, print_freq, header)):

        # we use a per iteration (instead of per epoch) lr scheduler
        if data_iter_step % accum_iter == 0:
            lr_sched.adjust_learning_rate(optimizer, data_iter_step / len(data_loader) + epoch, args)

        samples = samples.to(device, non_blocking=True)
        masks = masks.to(device, non_blocking=True)
        edge_masks = edge_masks.to(device, non_blocking=True)

        with torch.cuda.amp.autocast():
            predict_loss, mask_pred, edge_loss = model(samples, masks, edge_masks, shape)
            predict_loss_value = predict_loss.item()
            edge_loss_value = edge_loss.item()

        if not math.isfinite(predict_loss_value):
            print("Loss is {}, stopping training".format(predict_loss_value))
            sys.exit(1)

        predict_loss /= accum_iter
        loss_scaler(predict_loss, optimizer, parameters=model.parameters(),
                    update_grad=(data_iter_step + 1) % accum_iter == 0)

        if (data_iter_step + 1) % accum_iter == 0:
            optimizer.zero_grad()

        torch.cuda.synchronize()

        lr = optimizer.param_groups[0]["lr"]
        metric_logger.update(lr=lr)
        metric_logger.update(predict_loss=predict_loss_value)
        metric_logger.update(edge_loss=edge_loss_value)

        predict_loss_value_reduce = misc.all_reduce_mean(predict_loss_value)
        edge_loss_value_reduce = misc.all_reduce_mean(edge_loss_value)

        if log_writer is not None and (data_iter_step + 1) % accum_iter == 0:
            """ We use epoch_1000x as the x-axis in tensorboard.
            This calibrates different curves when batch size changes.
            """
            epoch_1000x = int((data_iter_step / len(data_loader) + epoch) * 1000)
            log_writer.add_scalar('train_loss/predict_loss', predict_loss_value_reduce, epoch_1000x)
            log_writer.add_scalar('train_loss/edge_loss', edge_loss_value_reduce, epoch_1000x)
            log_writer.add_scalar('lr', lr, epoch_1000x)

    if log_writer is not None:
        log_writer.add_images('train/image', denormalize(samples), epoch)
        log_writer.add_images('train/predict', mask_pred, epoch)
        log_writer.add_images('train/masks', masks, epoch)
        log_writer.add_images('train/edge_mask', edge_masks, epoch)

    # gather the stats from all processes
    metric_logger.synchronize_between_processes()
    print("Averaged stats:", metric_logger)
    return {k: meter.global_avg for k, meter in metric_logger.meters.items()}


def denormalize(image):
    mean = torch.tensor([0.485, 0.456, 0.406], device=image.device).view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225], device=image.device).view(1, 3, 1, 1)
    return image * std + mean


def test_one_epoch(model: torch.nn.Module,
                   data_loader: Iterable,
                   device: torch.device,
                   epoch: int,
                   log_writer=None,
                   args=None):
    with torch.no_grad():
        model.zero_grad()
        model.eval()
        metric_logger = misc.MetricLogger(delimiter="  ")
        # F1 evaluation for an Epoch during training
        print_freq = 20
        header = 'Test: [{}]'.format(epoch)

        local_f1s = []
        for data_iter_step, (images, masks, edge_mask, shape) in enumerate(metric_logger.log_every(data_loader, print_freq, header)):

            images, masks, edge_mask = images.to(device), masks.to(device), edge_mask.to(device)
            predict_loss, mask_pred, edge_loss = model(images, masks, edge_mask)
            mask_pred = mask_pred.detach()
            # region of interest: crop the padded 1024x1024 canvas back to the real image
            region_mask = evaluation.genertate_region_mask(mask_pred, shape)
            TP, TN, FP, FN = evaluation.cal_confusion_matrix(mask_pred, masks, region_mask)

            local_f1 = evaluation.cal_F1(TP, TN, FP, FN)

            for i in local_f1:  # merge batch
                local_f1s.append(i)

        metric_logger.synchronize_between_processes()
        local_f1s = torch.tensor(local_f1s).to(device)
        gather_f1s = [torch.zeros_like(local_f1s) for _ in range(misc.get_world_size())]
        if misc.get_world_size() > 1:
            dist.all_gather(gather_f1s, local_f1s)
        else:
            gather_f1s = [local_f1s]
        gather_f1s = torch.cat(gather_f1s, dim=0)
        f1 = gather_f1s.mean().item()
        if log_writer is not None:
            log_writer.add_scalar('F1/test_average', f1, epoch)
            log_writer.add_images('test/image', denormalize(images), epoch)
            log_writer.add_images('test/predict', (mask_pred > 0.5) * 1.0, epoch)
            log_writer.add_images('test/masks', masks, epoch)
            log_writer.add_images('test/edge_mask', edge_mask, epoch)

    print("Averaged stats:", metric_logger)
    return {'average_f1': f1}
