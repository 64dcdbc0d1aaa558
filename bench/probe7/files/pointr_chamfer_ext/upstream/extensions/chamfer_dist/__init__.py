# -*- coding: utf-8 -*-
# Chamfer distance for point cloud completion (PoinTr / GRNet style), backed by a compiled op library.
#
# The CUDA kernels live in chamfer_cuda.cu and are registered under the ``pcn_ext`` namespace by
# TORCH_LIBRARY in chamfer.cpp; ``python setup.py install`` puts the shared library next to this file.
import glob
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

_HERE = os.path.dirname(os.path.abspath(__file__))


def _load_ops():
    libs = sorted(glob.glob(os.path.join(_HERE, "_C*.so")))
    if not libs:
        raise ImportError("pcn_ext is not built; run `python setup.py install` in extensions/")
    torch.ops.load_library(libs[0])


_load_ops()


class ChamferFunction(torch.autograd.Function):

    @staticmethod
    def forward(ctx, xyz1, xyz2):
        dist1, dist2, idx1, idx2 = torch.ops.pcn_ext.chamfer_forward(xyz1, xyz2)
        ctx.save_for_backward(xyz1, xyz2, idx1, idx2)
        return dist1, dist2

    @staticmethod
    def backward(ctx, grad_dist1, grad_dist2):
        xyz1, xyz2, idx1, idx2 = ctx.saved_tensors
        grad_xyz1, grad_xyz2 = torch.ops.pcn_ext.chamfer_backward(
            xyz1, xyz2, idx1, idx2, grad_dist1.contiguous(), grad_dist2.contiguous())
        return grad_xyz1, grad_xyz2


class ChamferDistanceL2(nn.Module):
    """Squared-L2 Chamfer distance, averaged over points and batch."""

    def __init__(self, ignore_zeros=False):
        super().__init__()
        self.ignore_zeros = ignore_zeros

    def forward(self, xyz1, xyz2):
        batch_size = xyz1.size(0)
        if batch_size == 1 and self.ignore_zeros:
            non_zeros1 = torch.sum(xyz1, dim=2).ne(0)
            non_zeros2 = torch.sum(xyz2, dim=2).ne(0)
            xyz1 = xyz1[non_zeros1].unsqueeze(dim=0)
            xyz2 = xyz2[non_zeros2].unsqueeze(dim=0)
        dist1, dist2 = ChamferFunction.apply(xyz1.float().contiguous(), xyz2.float().contiguous())
        return torch.mean(dist1) + torch.mean(dist2)


class ChamferDistanceL2_split(nn.Module):

    def __init__(self, ignore_zeros=False):
        super().__init__()
        self.ignore_zeros = ignore_zeros

    def forward(self, xyz1, xyz2):
        dist1, dist2 = ChamferFunction.apply(xyz1.float().contiguous(), xyz2.float().contiguous())
        return torch.mean(dist1), torch.mean(dist2)


class ChamferDistanceL1(nn.Module):
    """L1 (sqrt) Chamfer distance as used for the PCN / ShapeNet-55 metrics."""

    def __init__(self, ignore_zeros=False):
        super().__init__()
        self.ignore_zeros = ignore_zeros

    def forward(self, xyz1, xyz2):
        batch_size = xyz1.size(0)
        if batch_size == 1 and self.ignore_zeros:
            non_zeros1 = torch.sum(xyz1, dim=2).ne(0)
            non_zeros2 = torch.sum(xyz2, dim=2).ne(0)
            xyz1 = xyz1[non_zeros1].unsqueeze(dim=0)
            xyz2 = xyz2[non_zeros2].unsqueeze(dim=0)
        dist1, dist2 = ChamferFunction.apply(xyz1.float().contiguous(), xyz2.float().contiguous())
        dist1 = torch.sqrt(dist1)
        dist2 = torch.sqrt(dist2)
        return (torch.mean(dist1) + torch.mean(dist2)) / 2


def chamfer_reference(xyz1, xyz2):
    """Dense O(N*M) reference implementation used by the unit tests (small clouds only)."""
    d = torch.cdist(xyz1.float(), xyz2.float(), p=2.0) ** 2
    dist1, idx1 = d.min(dim=2)
    dist2, idx2 = d.min(dim=1)
    return dist1, dist2, idx1, idx2


class FScore(nn.Module):
    """F-score at a distance threshold, computed from the same nearest-neighbour op."""

    def __init__(self, threshold=0.01):
        super().__init__()
        self.threshold = threshold

    def forward(self, pred, gt):
        b = pred.size(0)
        assert pred.size(0) == gt.size(0)
        if b != 1:
            scores = [self.forward(pred[i:i + 1], gt[i:i + 1]) for i in range(b)]
            return sum(scores) / len(scores)
        dist1, dist2, _, _ = torch.ops.pcn_ext.chamfer_forward(pred.float().contiguous(), gt.float().contiguous())
        recall = float(torch.sum(dist2 < self.threshold)) / float(dist2.numel())
        precision = float(torch.sum(dist1 < self.threshold)) / float(dist1.numel())
        return 2 * recall * precision / (recall + precision) if recall + precision else 0.0


class DensityAwareChamfer(nn.Module):
    """Density-aware Chamfer distance (DCD): exp(-alpha * d) with per-neighbour frequency weighting."""

    def __init__(self, alpha=1000, n_lambda=1, non_reg=False):
        super().__init__()
        self.alpha = alpha
        self.n_lambda = n_lambda
        self.non_reg = non_reg

    def forward(self, x, gt):
        x = x.float().contiguous()
        gt = gt.float().contiguous()
        batch_size, n_x, _ = x.shape
        _, n_gt, _ = gt.shape
        if self.non_reg:
            frac_12 = max(1, n_x / n_gt)
            frac_21 = max(1, n_gt / n_x)
        else:
            frac_12 = n_x / n_gt
            frac_21 = n_gt / n_x
        dist1, dist2, idx1, idx2 = torch.ops.pcn_ext.chamfer_forward(x, gt)
        exp_dist1, exp_dist2 = torch.exp(-dist1 * self.alpha), torch.exp(-dist2 * self.alpha)

        count1 = torch.zeros_like(idx2)
        count1.scatter_add_(1, idx1.long(), torch.ones_like(idx1))
        weight1 = count1.gather(1, idx1.long()).float().detach() ** self.n_lambda
        weight1 = (weight1 + 1e-6) ** (-1) * frac_21
        loss1 = (1 - exp_dist1 * weight1).mean(dim=1)

        count2 = torch.zeros_like(idx1)
        count2.scatter_add_(1, idx2.long(), torch.ones_like(idx2))
        weight2 = count2.gather(1, idx2.long()).float().detach() ** self.n_lambda
        weight2 = (weight2 + 1e-6) ** (-1) * frac_12
        loss2 = (1 - exp_dist2 * weight2).mean(dim=1)

        return (loss1 + loss2) / 2
