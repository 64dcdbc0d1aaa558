"""Approximate Earth Mover's Distance between two point sets.

Python side of the `emd_cuda` extension (approxmatch + matchcost kernels, after
Fan et al., "A Point Set Generation Network for 3D Object Reconstruction").
Build it with `python setup.py install` inside extensions/emd.
"""
import time

import numpy as np
import torch
import torch.nn as nn

import emd_cuda


class EarthMoverDistanceFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, xyz1, xyz2):
        xyz1 = xyz1.contiguous()
        xyz2 = xyz2.contiguous()
        assert xyz1.is_cuda and xyz2.is_cuda, "Only support cuda currently."
        match = emd_cuda.approxmatch_forward(xyz1, xyz2)
        cost = emd_cuda.matchcost_forward(xyz1, xyz2, match)
        ctx.save_for_backward(xyz1, xyz2, match)
        return cost

    @staticmethod
    def backward(ctx, grad_cost):
        xyz1, xyz2, match = ctx.saved_tensors
        grad_cost = grad_cost.contiguous()
        grad_xyz1, grad_xyz2 = emd_cuda.matchcost_backward(grad_cost, xyz1, xyz2, match)
        return grad_xyz1, grad_xyz2


def earth_mover_distance(xyz1, xyz2, transpose=True):
    """Earth Mover Distance (Approx)

    Args:
        xyz1 (torch.Tensor): (b, 3, n1) or (b, n1, 3)
        xyz2 (torch.Tensor): (b, 3, n1) or (b, n1, 3)
        transpose (bool): whether to transpose inputs as it might be BCN format.
            Extensions only support BNC format.

    Returns:
        cost (torch.Tensor): (b)

    """
    if xyz1.dim() == 2:
        xyz1 = xyz1.unsqueeze(0)
    if xyz2.dim() == 2:
        xyz2 = xyz2.unsqueeze(0)
    if transpose:
        xyz1 = xyz1.transpose(1, 2)
        xyz2 = xyz2.transpose(1, 2)
    cost = EarthMoverDistanceFunction.apply(xyz1, xyz2)
    return cost


class EarthMoverDistance(nn.Module):
    """Loss module; normalises the matching cost by the number of points."""

    def __init__(self, transpose=False, reduction="mean"):
        super().__init__()
        self.transpose = transpose
        assert reduction in ("mean", "sum", "none")
        self.reduction = reduction

    def forward(self, xyz1, xyz2):
        n = xyz1.shape[2] if self.transpose else xyz1.shape[1]
        cost = earth_mover_distance(xyz1, xyz2, transpose=self.transpose) / n
        if self.reduction == "mean":
            return cost.mean()
        if self.reduction == "sum":
            return cost.sum()
        return cost


def test_emd():
    """Compare against the exact assignment from scipy on a tiny problem."""
    from scipy.optimize import linear_sum_assignment

    torch.manual_seed(0)
    p1 = torch.rand(2, 64, 3).cuda()
    p2 = torch.rand(2, 64, 3).cuda()
    p1.requires_grad_(True)

    start = time.perf_counter()
    d = earth_mover_distance(p1, p2, transpose=False)
    print("emd forward: %.3f ms" % ((time.perf_counter() - start) * 1e3))
    loss = d[0] / 2 + d[1] * 2
    loss.backward()
    print("grad norm", p1.grad.norm().item())

    for b in range(2):
        c = torch.cdist(p1[b].detach(), p2[b]).cpu().numpy()
        r, col = linear_sum_assignment(c)
        exact = c[r, col].sum()
        print("batch %d: approx %.4f exact %.4f" % (b, d[b].item(), exact))
        assert d[b].item() >= exact * 0.95


if __name__ == "__main__":
    test_emd()
    x1 = torch.rand(16, 2048, 3).cuda()  # benchmark size
    x2 = torch.rand(16, 2048, 3).cuda()  # benchmark size
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(10):
        earth_mover_distance(x1, x2, transpose=False)
    torch.cuda.synchronize()  # wait for the kernels
    print("EMD 16x2048: %.2f ms/iter" % ((time.perf_counter() - t0) * 100))
    print(np.round(earth_mover_distance(x1, x2, transpose=False).cpu().numpy(), 3))
