"""Point-cloud reconstruction losses for the completion network.

Wraps two compiled extensions:
  * chamfer_3D  (ChamferDistancePytorch, "chamfer3D" variant)
  * emd         (MSN auction-based approximate Earth Mover's Distance)
Both are built by `python setup.py install` inside extensions/chamfer3D and
extensions/emd and only ship CUDA kernels.
"""
import time

import torch
import torch.nn as nn
from torch.autograd import Function

import chamfer_3D
import emd


# --------------------------------------------------------------------------
# Chamfer distance
# --------------------------------------------------------------------------

class chamfer_3DFunction(Function):
    @staticmethod
    def forward(ctx, xyz1, xyz2):
        batchsize, n, dim = xyz1.size()
        assert dim == 3, "Wrong last dimension for the chamfer distance 's input! Check with .size()"
        _, m, dim = xyz2.size()
        assert dim == 3, "Wrong last dimension for the chamfer distance 's input! Check with .size()"
        device = xyz1.device

        dist1 = torch.zeros(batchsize, n)
        dist2 = torch.zeros(batchsize, m)

        idx1 = torch.zeros(batchsize, n).type(torch.IntTensor)
        idx2 = torch.zeros(batchsize, m).type(torch.IntTensor)

        dist1 = dist1.to(device)
        dist2 = dist2.to(device)
        idx1 = idx1.to(device)
        idx2 = idx2.to(device)
        torch.cuda.set_device(device)

        chamfer_3D.forward(xyz1, xyz2, dist1, dist2, idx1, idx2)
        ctx.save_for_backward(xyz1, xyz2, idx1, idx2)
        return dist1, dist2, idx1, idx2

    @staticmethod
    def backward(ctx, graddist1, graddist2, gradidx1, gradidx2):
        xyz1, xyz2, idx1, idx2 = ctx.saved_tensors
        graddist1 = graddist1.contiguous()
        graddist2 = graddist2.contiguous()
        device = graddist1.device

        gradxyz1 = torch.zeros(xyz1.size())
        gradxyz2 = torch.zeros(xyz2.size())

        gradxyz1 = gradxyz1.to(device)
        gradxyz2 = gradxyz2.to(device)
        chamfer_3D.backward(
            xyz1, xyz2, gradxyz1, gradxyz2, graddist1, graddist2, idx1, idx2
        )
        return gradxyz1, gradxyz2


class chamfer_3DDist(nn.Module):
    def __init__(self):
        super(chamfer_3DDist, self).__init__()

    def forward(self, input1, input2):
        input1 = input1.contiguous()
        input2 = input2.contiguous()
        return chamfer_3DFunction.apply(input1, input2)


# --------------------------------------------------------------------------
# Earth Mover's Distance (auction algorithm, approximate)
# --------------------------------------------------------------------------

class emdFunction(Function):
    @staticmethod
    def forward(ctx, xyz1, xyz2, eps, iters):
        batchsize, n, _ = xyz1.size()
        _, m, _ = xyz2.size()

        assert n == m
        assert xyz1.size()[0] == xyz2.size()[0]
        assert n % 1024 == 0
        assert batchsize <= 512

        xyz1 = xyz1.contiguous().float().cuda()
        xyz2 = xyz2.contiguous().float().cuda()
        dist = torch.zeros(batchsize, n, device="cuda").contiguous()
        assignment = torch.zeros(batchsize, n, device="cuda", dtype=torch.int32).contiguous() - 1
        assignment_inv = torch.zeros(batchsize, m, device="cuda", dtype=torch.int32).contiguous() - 1
        price = torch.zeros(batchsize, m, device="cuda").contiguous()
        bid = torch.zeros(batchsize, n, device="cuda", dtype=torch.int32).contiguous()
        bid_increments = torch.zeros(batchsize, n, device="cuda").contiguous()
        max_increments = torch.zeros(batchsize, m, device="cuda").contiguous()
        unass_idx = torch.zeros(batchsize * n, device="cuda", dtype=torch.int32).contiguous()
        max_idx = torch.zeros(batchsize * m, device="cuda", dtype=torch.int32).contiguous()
        unass_cnt = torch.zeros(512, dtype=torch.int32, device="cuda").contiguous()
        unass_cnt_sum = torch.zeros(512, dtype=torch.int32, device="cuda").contiguous()
        cnt_tmp = torch.zeros(512, dtype=torch.int32, device="cuda").contiguous()

        emd.forward(xyz1, xyz2, dist, assignment, price, assignment_inv, bid, bid_increments, max_increments,
                    unass_idx, unass_cnt, unass_cnt_sum, cnt_tmp, max_idx, eps, iters)

        ctx.save_for_backward(xyz1, xyz2, assignment)
        return dist, assignment

    @staticmethod
    def backward(ctx, graddist, gradidx):
        xyz1, xyz2, assignment = ctx.saved_tensors
        graddist = graddist.contiguous()

        gradxyz1 = torch.zeros(xyz1.size(), device="cuda").contiguous()
        gradxyz2 = torch.zeros(xyz2.size(), device="cuda").contiguous()

        emd.backward(xyz1, xyz2, gradxyz1, graddist, assignment)
        return gradxyz1, gradxyz2, None, None


class emdModule(nn.Module):
    def __init__(self):
        super(emdModule, self).__init__()

    def forward(self, input1, input2, eps, iters):
        return emdFunction.apply(input1, input2, eps, iters)


# --------------------------------------------------------------------------
# Loss helpers used by the trainer
# --------------------------------------------------------------------------

CD = chamfer_3DDist()
EMD = emdModule()


def chamfer_l2(pred, gt):
    d1, d2, _, _ = CD(pred, gt)
    return torch.mean(d1) + torch.mean(d2)


def chamfer_l1(pred, gt):
    d1, d2, _, _ = CD(pred, gt)
    return (torch.mean(torch.sqrt(d1)) + torch.mean(torch.sqrt(d2))) / 2


def emd_loss(pred, gt, eps=0.005, iters=50):
    dist, _ = EMD(pred, gt, eps, iters)
    return torch.sqrt(dist).mean(1).mean()


if __name__ == "__main__":
    x1 = torch.rand(20, 8192, 3).cuda()
    x2 = torch.rand(20, 8192, 3).cuda()
    t = time.perf_counter()
    print("cd_l2:", chamfer_l2(x1, x2).item())
    print("emd  :", emd_loss(x1, x2).item())
    print(f"took {time.perf_counter() - t:.3f}s on {x1.device}")
