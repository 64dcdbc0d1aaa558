# ------------------------------------------------------------------------------
# Face X-ray training / validation loops
# ------------------------------------------------------------------------------

import logging
import os
import time

import numpy as np
from tqdm import tqdm
from sklearn.metrics import roc_auc_score, accuracy_score

import torch
import torch.nn as nn
from torch.nn import functional as F

from utils.utils import AverageMeter
from utils.utils import adjust_learning_rate

try:
    from apex import amp
except ImportError:
    amp = None


def xray_iou(pred, target, thres=0.5):
    """IoU between the predicted blending boundary and the ground-truth x-ray (per batch)."""
    pred = (pred > thres).float()
    target = (target > thres).float()
    inter = (pred * target).sum(dim=(1, 2, 3))
    union = ((pred + target) > 0).float().sum(dim=(1, 2, 3))
    iou = inter / union.clamp(min=1.0)
    return iou.mean().item()


def train(config, epoch, num_epoch, epoch_iters, base_lr,
          num_iters, trainloader, optimizer, model, writer_dict, amp_enabled=False):
    # Training
    model.train()
    batch_time = AverageMeter()
    ave_loss = AverageMeter()
    ave_cls_loss = AverageMeter()
    ave_xray_loss = AverageMeter()
    tic = time.time()
    cur_iters = epoch * epoch_iters
    writer = writer_dict['writer']
    global_steps = writer_dict['train_global_steps']

    for i_iter, batch in enumerate(trainloader):
        images, labels, xray_gt, _ = batch
        images = images.cuda(non_blocking=True)
        labels = labels.float().cuda(non_blocking=True)
        xray_gt = xray_gt.float().cuda(non_blocking=True)

        losses, cls_loss, xray_loss, _, _ = model(images, labels, xray_gt)
        loss = losses.mean()

        model.zero_grad()
        if amp_enabled:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()

        # measure elapsed time
        batch_time.update(time.time() - tic)
        tic = time.time()

        # update average loss
        ave_loss.update(loss.item())
        ave_cls_loss.update(cls_loss.mean().item())
        ave_xray_loss.update(xray_loss.mean().item())

        lr = adjust_learning_rate(optimizer,
                                  base_lr,
                                  num_iters,
                                  i_iter + cur_iters)

        if i_iter % config.PRINT_FREQ == 0:
            msg = 'Epoch: [{}/{}] Iter:[{}/{}], Time: {:.2f}, ' \
                  'lr: {:.6f}, Loss: {:.6f} (cls {:.4f}, xray {:.4f})'.format(
                      epoch, num_epoch, i_iter, epoch_iters,
                      batch_time.average(), lr, ave_loss.average(),
                      ave_cls_loss.average(), ave_xray_loss.average())
            logging.info(msg)

    writer.add_scalar('train_loss', ave_loss.average(), global_steps)
    writer.add_scalar('train_cls_loss', ave_cls_loss.average(), global_steps)
    writer.add_scalar('train_xray_loss', ave_xray_loss.average(), global_steps)
    writer_dict['train_global_steps'] = global_steps + 1


def validate(config, testloader, model, writer_dict):
    model.eval()
    ave_loss = AverageMeter()
    ave_iou = AverageMeter()
    all_probs = []
    all_labels = []
    with torch.no_grad():
        for _, batch in enumerate(tqdm(testloader)):
            image, label, xray_gt, _ = batch
            image = image.cuda()
            label = label.float().cuda()
            xray_gt = xray_gt.float().cuda()

            losses, _, _, pred_xray, pred_cls = model(image, label, xray_gt)

            if pred_xray.size()[-2:] != xray_gt.size()[-2:]:
                pred_xray = F.interpolate(
                    pred_xray, size=xray_gt.size()[-2:],
                    mode='bilinear', align_corners=config.MODEL.ALIGN_CORNERS
                )

            loss = losses.mean()
            ave_loss.update(loss.item())
            ave_iou.update(xray_iou(torch.sigmoid(pred_xray), xray_gt))

            prob = torch.sigmoid(pred_cls).view(-1)
            all_probs.append(prob.cpu().numpy())
            all_labels.append(label.view(-1).cpu().numpy())

    all_probs = np.concatenate(all_probs)
    all_labels = np.concatenate(all_labels)
    auc = roc_auc_score(all_labels, all_probs)
    acc = accuracy_score(all_labels, all_probs > 0.5)

    writer = writer_dict['writer']
    global_steps = writer_dict['valid_global_steps']
    writer.add_scalar('valid_loss', ave_loss.average(), global_steps)
    writer.add_scalar('valid_auc', auc, global_steps)
    writer.add_scalar('valid_xray_iou', ave_iou.average(), global_steps)
    writer_dict['valid_global_steps'] = global_steps + 1
    return ave_loss.average(), auc, acc, ave_iou.average()


def testval(config, test_dataset, testloader, model, sv_dir='', sv_pred=False):
    """Full-resolution evaluation that also dumps the predicted x-ray maps."""
    model.eval()
    all_probs = []
    all_labels = []
    with torch.no_grad():
        for index, batch in enumerate(tqdm(testloader)):
            image, label, xray_gt, name = batch
            size = xray_gt.size()
            pred_xray, pred_cls = test_dataset.inference(model, image, flip=config.TEST.FLIP_TEST)

            if pred_xray.size()[-2:] != size[-2:]:
                pred_xray = F.interpolate(
                    pred_xray, size[-2:],
                    mode='bilinear', align_corners=config.MODEL.ALIGN_CORNERS
                )

            all_probs.append(torch.sigmoid(pred_cls).view(-1).cpu().numpy())
            all_labels.append(label.view(-1).numpy())

            if sv_pred:
                sv_path = os.path.join(sv_dir, 'xray_results')
                if not os.path.exists(sv_path):
                    os.mkdir(sv_path)
                test_dataset.save_pred(torch.sigmoid(pred_xray), sv_path, name)

            if index % 100 == 0:
                logging.info('processing: %d images' % index)

    all_probs = np.concatenate(all_probs)
    all_labels = np.concatenate(all_labels)
    auc = roc_auc_score(all_labels, all_probs)
    acc = accuracy_score(all_labels, all_probs > 0.5)
    return auc, acc
