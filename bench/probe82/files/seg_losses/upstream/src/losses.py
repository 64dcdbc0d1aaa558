"""Loss functions shared by our segmentation / classification pipelines
(SIIM pneumothorax, HuBMAP, RSNA). Lovasz parts follow Berman et al.'s reference implementation.
"""
from itertools import filterfalse as ifilterfalse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


# --------------------------------------------------------------------------------------------
# Lovasz hinge
# --------------------------------------------------------------------------------------------
def lovasz_grad(gt_sorted):
    """Gradient of the Lovasz extension w.r.t sorted errors (see Alg. 1 in the paper)."""
    p = len(gt_sorted)
    gts = gt_sorted.sum()
    intersection = gts - gt_sorted.float().cumsum(0)
    union = gts + (1 - gt_sorted).float().cumsum(0)
    jaccard = 1.0 - intersection / union
    if p > 1:  # cover 1-pixel case
        jaccard[1:p] = jaccard[1:p] - jaccard[0:-1]
    return jaccard


def mean(values, ignore_nan=False, empty=0):
    values = iter(values)
    if ignore_nan:
        values = ifilterfalse(np.isnan, values)
    try:
        n = 1
        acc = next(values)
    except StopIteration:
        if empty == "raise":
            raise ValueError("Empty mean")
        return empty
    for n, v in enumerate(values, 2):
        acc += v
    if n == 1:
        return acc
    return acc / n


def flatten_binary_scores(scores, labels, ignore=None):
    scores = scores.view(-1)
    labels = labels.view(-1)
    if ignore is None:
        return scores, labels
    valid = labels != ignore
    return scores[valid], labels[valid]


def lovasz_hinge_flat(logits, labels):
    if len(labels) == 0:
        # only void pixels, the gradients should be 0
        return logits.sum() * 0.0
    signs = 2.0 * labels.float() - 1.0
    errors = 1.0 - logits * signs
    errors_sorted, perm = torch.sort(errors, dim=0, descending=True)
    perm = perm.data
    gt_sorted = labels[perm]
    grad = lovasz_grad(gt_sorted)
    loss = torch.dot(F.elu(errors_sorted) + 1, grad)
    return loss


def lovasz_hinge(logits, labels, per_image=True, ignore=None):
    if per_image:
        loss = mean(lovasz_hinge_flat(*flatten_binary_scores(log.unsqueeze(0), lab.unsqueeze(0), ignore))
                    for log, lab in zip(logits, labels))
    else:
        loss = lovasz_hinge_flat(*flatten_binary_scores(logits, labels, ignore))
    return loss


class _LovaszFp32(torch.autograd.Function):
    """Run the sort-based Lovasz loss in fp32 even inside an autocast region."""

    @staticmethod
    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, logits, targets):
        with torch.enable_grad():
            logits_ = logits.detach().requires_grad_(True)
            loss = lovasz_hinge(logits_, targets, per_image=True)
        (grad,) = torch.autograd.grad(loss, logits_)
        ctx.save_for_backward(grad)
        return loss.detach()

    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(ctx, grad_out):
        (grad,) = ctx.saved_tensors
        return grad * grad_out, None


class SymmetricLovaszLoss(nn.Module):
    def forward(self, logits, targets):
        logits = logits.squeeze(1)
        targets = targets.squeeze(1)
        return (_LovaszFp32.apply(logits, targets) + _LovaszFp32.apply(-logits, 1 - targets)) / 2


# --------------------------------------------------------------------------------------------
# Dice / BCE / Focal
# --------------------------------------------------------------------------------------------
def soft_dice_loss(logits, targets, eps=1.0, per_image=False):
    b = logits.size(0)
    probs = torch.sigmoid(logits)
    if per_image:
        probs, targets = probs.view(b, -1), targets.view(b, -1).float()
        inter = (probs * targets).sum(1)
        union = probs.sum(1) + targets.sum(1)
    else:
        probs, targets = probs.view(-1), targets.view(-1).float()
        inter = (probs * targets).sum()
        union = probs.sum() + targets.sum()
    return (1 - (2 * inter + eps) / (union + eps)).mean()


class DiceBCELoss(nn.Module):
    def __init__(self, bce_weight=0.5, pos_weight=None):
        super().__init__()
        self.bce_weight = bce_weight
        pw = torch.tensor([pos_weight]) if pos_weight is not None else None
        self.bce = nn.BCEWithLogitsLoss(pos_weight=pw)

    def forward(self, logits, targets):
        return self.bce_weight * self.bce(logits, targets) + (1 - self.bce_weight) * soft_dice_loss(logits, targets)


class FocalLoss2d(nn.Module):
    def __init__(self, gamma=2.0, ignore_index=255, eps=1e-6):
        super().__init__()
        self.gamma = gamma
        self.ignore_index = ignore_index
        self.eps = eps

    def forward(self, outputs, targets):
        outputs = torch.sigmoid(outputs.contiguous())
        targets = targets.contiguous()
        non_ignored = targets.view(-1) != self.ignore_index
        targets = targets.view(-1)[non_ignored].float()
        outputs = outputs.view(-1)[non_ignored]
        outputs = torch.clamp(outputs, self.eps, 1.0 - self.eps)
        targets = torch.clamp(targets, self.eps, 1.0 - self.eps)
        pt = (1 - targets) * (1 - outputs) + targets * outputs
        return (-((1.0 - pt) ** self.gamma) * torch.log(pt)).mean()


class ComboLoss(nn.Module):
    """Weighted sum of bce / dice / focal / lovasz, as in the SIIM 4th-place solution."""

    def __init__(self, weights, per_image=False):
        super().__init__()
        self.weights = weights
        self.bce = nn.BCEWithLogitsLoss()
        self.focal = FocalLoss2d()
        self.lovasz = SymmetricLovaszLoss()
        self.per_image = per_image
        self.values = {}

    def forward(self, outputs, targets):
        loss = 0
        for k, w in self.weights.items():
            if not w:
                continue
            if k == "bce":
                val = self.bce(outputs, targets)
            elif k == "dice":
                val = soft_dice_loss(outputs, targets, per_image=self.per_image)
            elif k == "focal":
                val = self.focal(outputs, targets)
            elif k == "lovasz":
                val = self.lovasz(outputs, targets)
            else:
                raise KeyError(k)
            self.values[k] = val
            loss = loss + w * val
        return loss.clamp(min=1e-5)


# --------------------------------------------------------------------------------------------
# Classification
# --------------------------------------------------------------------------------------------
class OneHotFocalLoss(nn.Module):
    """Multi-class focal loss with per-class alpha (used for the Bengali / Cassava heads)."""

    def __init__(self, n_classes, alpha=None, gamma=2.0, smoothing=0.0):
        super().__init__()
        self.n_classes = n_classes
        self.gamma = gamma
        self.smoothing = smoothing
        alpha = alpha if alpha is not None else [1.0] * n_classes
        self.alpha = torch.cuda.FloatTensor(alpha)

    def forward(self, logits, target):
        n = logits.size(0)
        one_hot = torch.cuda.FloatTensor(n, self.n_classes).zero_()
        one_hot.scatter_(1, target.view(-1, 1), 1.0)
        if self.smoothing > 0:
            one_hot = one_hot * (1 - self.smoothing) + self.smoothing / self.n_classes
        logp = F.log_softmax(logits.float(), dim=1)
        p = logp.exp()
        loss = -self.alpha[None] * ((1 - p) ** self.gamma) * one_hot * logp
        return loss.sum(1).mean()


def ohem_bce(logits, targets, keep_ratio=0.7):
    """Online hard example mining over pixels."""
    loss = F.binary_cross_entropy_with_logits(logits, targets, reduction="none").view(-1)
    k = max(1, int(keep_ratio * loss.numel()))
    loss, _ = torch.topk(loss, k)
    return loss.mean()


def class_weights_from_counts(counts, beta=0.999):
    """Effective-number class weights (Cui et al. 2019)."""
    effective = 1.0 - np.power(beta, counts)
    w = (1.0 - beta) / np.array(effective)
    w = w / w.sum() * len(counts)
    return torch.from_numpy(w).type(torch.cuda.FloatTensor)
