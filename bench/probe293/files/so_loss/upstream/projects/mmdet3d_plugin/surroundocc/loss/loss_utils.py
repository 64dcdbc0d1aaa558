import torch
import torch.nn as nn
import torch.nn.functional as F
import numpy as np
from mmcv.runner import BaseModule, force_fp32
from torch.cuda.amp import autocast


def multiscale_supervision(gt_occ, ratio, gt_shape):
    '''
    change ground truth shape as (B, W, H, Z) for each level supervision
    '''

    gt = torch.zeros([gt_shape[0], gt_shape[2], gt_shape[3], gt_shape[4]]).to(gt_occ.device).type(torch.float)
    for i in range(gt.shape[0]):
        coords = gt_occ[i][:, :3].type(torch.long) // ratio
        gt[i, coords[:, 0], coords[:, 1], coords[:, 2]] = gt_occ[i][:, 3]

    return gt


def geo_scal_loss(pred, ssc_target, semantic=False):

    # Get softmax probabilities
    if semantic:
        pred = F.softmax(pred, dim=1)

        # Compute empty and nonempty probabilities
        empty_probs = pred[:, 0, :, :, :]
    else:
        empty_probs = 1 - torch.sigmoid(pred)
    nonempty_probs = 1 - empty_probs

    # Remove unknown voxels
    mask = ssc_target != 255
    nonempty_target = ssc_target != 0
    nonempty_target = nonempty_target[mask].float()
    nonempty_probs = nonempty_probs[mask]
    empty_probs = empty_probs[mask]

    intersection = (nonempty_target * nonempty_probs).sum()
    precision = intersection / nonempty_probs.sum()
    recall = intersection / nonempty_target.sum()
    spec = ((1 - nonempty_target) * (empty_probs)).sum() / (1 - nonempty_target).sum()
    return (
        F.binary_cross_entropy(precision, torch.ones_like(precision))
        + F.binary_cross_entropy(recall, torch.ones_like(recall))
        + F.binary_cross_entropy(spec, torch.ones_like(spec))
    )


def sem_scal_loss(pred, ssc_target):
    # Get softmax probabilities
    with autocast(False):
        pred = F.softmax(pred, dim=1)
        loss = 0
        count = 0
        mask = ssc_target != 255
        n_classes = pred.shape[1]
        for i in range(0, n_classes):

            # Get probability of class i
            p = pred[:, i, :, :, :]

            # Remove unknown voxels
            target_ori = ssc_target
            p = p[mask]
            target = ssc_target[mask]

            completion_target = torch.ones_like(target)
            completion_target[target != i] = 0
            completion_target_ori = torch.ones_like(target_ori).float()
            completion_target_ori[target_ori != i] = 0
            if torch.sum(completion_target) > 0:
                count += 1.0
                nominator = torch.sum(p * completion_target)
                loss_class = 0
                if torch.sum(p) > 0:
                    precision = nominator / (torch.sum(p))
                    loss_precision = F.binary_cross_entropy(
                        precision, torch.ones_like(precision)
                    )
                    loss_class += loss_precision
                if torch.sum(completion_target) > 0:
                    recall = nominator / (torch.sum(completion_target))
                    loss_recall = F.binary_cross_entropy(recall, torch.ones_like(recall))
                    loss_class += loss_recall
                if torch.sum(1 - completion_target) > 0:
                    specificity = torch.sum((1 - p) * (1 - completion_target)) / (
                        torch.sum(1 - completion_target)
                    )
                    loss_specificity = F.binary_cross_entropy(
                        specificity, torch.ones_like(specificity)
                    )
                    loss_class += loss_specificity
                loss += loss_class
        return loss / count


def CE_ssc_loss(pred, target, class_weights=None, ignore_index=255):
    """Weighted cross entropy used by the MonoScene-style baselines.

    class_weights is a numpy array (computed offline from the nuScenes
    class frequencies) or None.
    """
    if class_weights is not None:
        class_weights = torch.from_numpy(class_weights).float().cuda()
    criterion = nn.CrossEntropyLoss(
        weight=class_weights, ignore_index=ignore_index, reduction="mean"
    )
    loss = criterion(pred, target.long())

    return loss


class OccLossWrapper(BaseModule):
    """Small wrapper so the head can keep one loss object per scale."""

    def __init__(self, num_classes=17, use_semantic=True, class_weights=None,
                 loss_weight=1.0, init_cfg=None):
        super().__init__(init_cfg)
        self.num_classes = num_classes
        self.use_semantic = use_semantic
        self.class_weights = class_weights
        self.loss_weight = loss_weight
        self.fp16_enabled = False

    @force_fp32(apply_to=('pred', ))
    def forward(self, pred, gt_occ, ratio):
        gt = multiscale_supervision(gt_occ.clone(), ratio, pred.shape)
        if not self.use_semantic:
            pred = pred[:, 0]
            loss = F.binary_cross_entropy_with_logits(pred, gt) + \
                geo_scal_loss(pred, gt.long(), semantic=False)
        else:
            loss = CE_ssc_loss(pred, gt, self.class_weights) + \
                sem_scal_loss(pred, gt.long()) + \
                geo_scal_loss(pred, gt.long(), semantic=True)
        return loss * self.loss_weight
