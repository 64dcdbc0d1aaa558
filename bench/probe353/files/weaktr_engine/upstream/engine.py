"""
Train and eval functions used in main.py
"""
import math
import os
import sys
from typing import Iterable, Optional

import cv2
import numpy as np
import torch
import torch.nn.functional as F
from sklearn.metrics import average_precision_score
from timm.data import Mixup
from timm.utils import ModelEma

import utils


def train_one_epoch(model: torch.nn.Module, criterion,
                    data_loader: Iterable, optimizer: torch.optim.Optimizer,
                    device: torch.device, epoch: int, loss_scaler, max_norm: float = 0,
                    model_ema: Optional[ModelEma] = None, mixup_fn: Optional[Mixup] = None,
                    set_training_mode=True, use_amp=True):
    model.train(set_training_mode)
    metric_logger = utils.MetricLogger(delimiter="  ")
    metric_logger.add_meter('lr', utils.SmoothedValue(window_size=1, fmt='{value:.6f}'))
    header = 'Epoch: [{}]'.format(epoch)
    print_freq = 10

    for samples, targets in metric_logger.log_every(data_loader, print_freq, header):
        samples = samples.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)

        with torch.cuda.amp.autocast(enabled=use_amp):
            outputs = model(samples)
            x_cls_logits, x_patch_logits, x_fine_cam_logits = outputs
            loss = criterion(x_cls_logits, targets)
            loss = loss + criterion(x_patch_logits, targets)
            loss = loss + criterion(x_fine_cam_logits, targets)

        loss_value = loss.item()

        if not math.isfinite(loss_value):
            print("Loss is {}, stopping training".format(loss_value))
            sys.exit(1)

        optimizer.zero_grad()

        # this attribute is added by timm on one optimizer (adahessian)
        is_second_order = hasattr(optimizer, 'is_second_order') and optimizer.is_second_order
        loss_scaler(loss, optimizer, clip_grad=max_norm,
                    parameters=model.parameters(), create_graph=is_second_order)

        torch.cuda.synchronize()
        if model_ema is not None:
            model_ema.update(model)

        metric_logger.update(loss=loss_value)
        metric_logger.update(lr=optimizer.param_groups[0]["lr"])
    # gather the stats from all processes
    metric_logger.synchronize_between_processes()
    print("Averaged stats:", metric_logger)
    return {k: meter.global_avg for k, meter in metric_logger.meters.items()}


@torch.no_grad()
def evaluate(data_loader, model, device):
    criterion = torch.nn.MultiLabelSoftMarginLoss()
    mAP = []

    metric_logger = utils.MetricLogger(delimiter="  ")
    header = 'Test:'

    # switch to evaluation mode
    model.eval()

    for images, target in metric_logger.log_every(data_loader, 10, header):
        images = images.to(device, non_blocking=True)
        target = target.to(device, non_blocking=True)
        batch_size = images.shape[0]

        with torch.cuda.amp.autocast(enabled=True):
            output = model(images)

            x_cls_logits, x_patch_logits, x_fine_cam_logits = output
            loss = criterion(x_cls_logits, target)
            output = torch.sigmoid(x_cls_logits)

            mAP_list = compute_mAP(target, output)
            mAP = mAP + mAP_list
            metric_logger.meters['mAP'].update(np.mean(mAP_list), n=batch_size)

        metric_logger.update(loss=loss.item())

    metric_logger.synchronize_between_processes()

    print('* mAP {mAP.global_avg:.3f} loss {losses.global_avg:.3f}'
          .format(mAP=metric_logger.mAP, losses=metric_logger.loss))

    return {k: meter.global_avg for k, meter in metric_logger.meters.items()}


def compute_mAP(labels, outputs):
    y_true = labels.cpu().numpy()
    y_pred = outputs.float().cpu().numpy()
    AP = []
    for i in range(y_true.shape[0]):
        if np.sum(y_true[i]) > 0:
            ap_i = average_precision_score(y_true[i], y_pred[i])
            AP.append(ap_i)
    return AP


@torch.no_grad()
def generate_attention_maps_ms(data_loader, model, device, args):
    metric_logger = utils.MetricLogger(delimiter="  ")
    header = 'Generating attention maps:'
    if args.attention_dir is not None:
        os.makedirs(args.attention_dir, exist_ok=True)
    if args.cam_npy_dir is not None:
        os.makedirs(args.cam_npy_dir, exist_ok=True)

    # switch to evaluation mode
    model.eval()

    img_list = open(args.img_ms_list).readlines() if hasattr(args, 'img_ms_list') and args.img_ms_list else None
    index = 0
    for image_list, target in metric_logger.log_every(data_loader, 10, header):
        images1 = image_list[0].to(device, non_blocking=True)
        target = target.to(device, non_blocking=True)
        batch_size = images1.shape[0]
        img_name = img_list[index].strip() if img_list is not None else str(index)
        index += 1

        img_temp = images1.permute(0, 2, 3, 1).detach().cpu().numpy()
        orig_images = np.zeros_like(img_temp)
        orig_images[:, :, :, 0] = (img_temp[:, :, :, 0] * 0.229 + 0.485) * 255.
        orig_images[:, :, :, 1] = (img_temp[:, :, :, 1] * 0.224 + 0.456) * 255.
        orig_images[:, :, :, 2] = (img_temp[:, :, :, 2] * 0.225 + 0.406) * 255.

        w_orig, h_orig = orig_images.shape[1], orig_images.shape[2]

        cam_list = []
        for s in range(len(image_list)):
            images = image_list[s].to(device, non_blocking=True)
            w, h = images.shape[2] - images.shape[2] % args.patch_size, images.shape[3] - images.shape[3] % args.patch_size
            w_featmap = w // args.patch_size
            h_featmap = h // args.patch_size

            with torch.cuda.amp.autocast(enabled=args.amp):
                output, cams, patch_attn = model(images, return_att=True, attention_type=args.attention_type)
                patch_attn = torch.sum(patch_attn, dim=0)

            if args.patch_attn_refine:
                cams = torch.matmul(patch_attn.unsqueeze(1), cams.view(cams.shape[0], cams.shape[1], -1, 1)).reshape(cams.shape[0], cams.shape[1], w_featmap, h_featmap)

            cams = F.interpolate(cams, size=(w_orig, h_orig), mode='bilinear', align_corners=False)
            cams = cams * target.clone().view(-1, args.nb_classes, 1, 1)

            if s % 2 == 1:
                cams = torch.flip(cams, dims=[-1])

            cam_list.append(cams.float().cpu())

        sum_cam = torch.sum(torch.stack(cam_list), dim=0)
        sum_cam = sum_cam.numpy()[0]

        norm_cam = sum_cam / (np.max(sum_cam, (1, 2), keepdims=True) + 1e-5)

        cam_dict = {}
        for cls_ind in range(args.nb_classes):
            if target[0, cls_ind] > 0:
                cam_dict[cls_ind] = norm_cam[cls_ind]

        if args.cam_npy_dir is not None:
            np.save(os.path.join(args.cam_npy_dir, img_name + '.npy'), cam_dict)

        if args.attention_dir is not None and args.visualize_cls_attn:
            for cls_ind in cam_dict.keys():
                cam = (cam_dict[cls_ind] * 255).astype(np.uint8)
                heat = cv2.applyColorMap(cam, cv2.COLORMAP_JET)
                vis = cv2.addWeighted(orig_images[0].astype(np.uint8), 0.5, heat, 0.5, 0)
                cv2.imwrite(os.path.join(args.attention_dir, '{}_{}.png'.format(img_name, cls_ind)), vis)

    print("Finished generating CAMs for {} images".format(index))
