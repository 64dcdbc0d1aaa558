"""Losses and metrics for point-cloud upsampling (PU-GAN / PU-GCN style).

All nearest-neighbour queries go through pytorch3d.ops, whose CUDA kernels are
much faster than torch.cdist for N > 8k.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from pytorch3d.loss import chamfer_distance
from pytorch3d.ops import ball_query, knn_gather, knn_points, sample_farthest_points
from pytorch3d.ops.points_normals import estimate_pointcloud_normals


def normalize_point_cloud(pc):
    """Center to the centroid and scale into the unit sphere. pc: [B, N, 3]."""
    centroid = pc.mean(dim=1, keepdim=True)
    pc = pc - centroid
    furthest = pc.norm(dim=-1, keepdim=True).max(dim=1, keepdim=True)[0]
    return pc / furthest, centroid, furthest


class ChamferLoss(nn.Module):
    """Symmetric chamfer distance (squared L2), averaged over the batch."""

    def __init__(self, point_reduction="mean"):
        super().__init__()
        self.point_reduction = point_reduction

    def forward(self, pred, gt, pcd_radius=None):
        loss, _ = chamfer_distance(pred, gt, point_reduction=self.point_reduction)
        if pcd_radius is not None:
            loss = loss / pcd_radius.mean()
        return loss


class RepulsionLoss(nn.Module):
    """Penalises generated points that are too close to their neighbours."""

    def __init__(self, nn_size=5, radius=0.07, h=0.03, eps=1e-12):
        super().__init__()
        self.nn_size = nn_size
        self.radius = radius
        self.h = h
        self.eps = eps

    def forward(self, pred):
        # K+1 because the closest point is the point itself
        dists, _, _ = knn_points(pred, pred, K=self.nn_size + 1, return_sorted=True)
        dists = dists[:, :, 1:]  # squared distances
        dists = torch.clamp(dists, min=self.eps)
        dist = torch.sqrt(dists)
        weight = torch.exp(-dists / self.h ** 2)
        uniform_loss = torch.mean((self.radius - dist) * weight)
        return uniform_loss


class UniformLoss(nn.Module):
    """PU-GAN uniform loss over seed patches picked with FPS + ball query."""

    def __init__(self, percentages=(0.004, 0.006, 0.008, 0.010, 0.012), radius=1.0, n_seeds=None):
        super().__init__()
        self.percentages = percentages
        self.radius = radius
        self.n_seeds = n_seeds

    def forward(self, pcd):
        B, N, _ = pcd.shape
        npoint = self.n_seeds or int(N * 0.05)
        loss = 0.0
        seeds, _ = sample_farthest_points(pcd, K=npoint, random_start_point=True)
        for p in self.percentages:
            nsample = int(N * p)
            r = math.sqrt(p * self.radius)
            disk_area = math.pi * (self.radius ** 2) * p / nsample
            _, idx, grouped = ball_query(seeds, pcd, K=nsample, radius=r, return_nn=True)

            # imbalance of the number of points in each disk
            valid = (idx >= 0).float()
            num_points = valid.sum(dim=-1)
            expect_len = float(nsample)
            loss_num = torch.mean((num_points - expect_len) ** 2 / expect_len)

            # distance to the nearest neighbour inside each disk
            grouped = grouped.reshape(B * npoint, nsample, 3)
            d, _, _ = knn_points(grouped, grouped, K=2)
            uniform_dis = torch.sqrt(torch.abs(d[:, :, 1] + 1e-8))
            expect_d = math.sqrt(2 * disk_area / 1.732)
            loss_dis = torch.mean((uniform_dis - expect_d) ** 2 / (expect_d + 1e-8))
            loss = loss + loss_num * loss_dis * math.pow(p * 100, 2)
        return loss / len(self.percentages)


class NormalConsistencyLoss(nn.Module):
    """1 - |cos| between normals estimated on the prediction and the GT normals of
    the nearest GT point."""

    def __init__(self, neighborhood_size=16):
        super().__init__()
        self.k = neighborhood_size

    def forward(self, pred, gt, gt_normals):
        pred_normals = estimate_pointcloud_normals(pred, neighborhood_size=self.k)
        _, idx, _ = knn_points(pred, gt, K=1)
        nn_normals = knn_gather(gt_normals, idx)[:, :, 0]
        cos = F.cosine_similarity(pred_normals, nn_normals, dim=-1).abs()
        return (1.0 - cos).mean()


@torch.no_grad()
def hausdorff_distance(pred, gt):
    d_pg, _, _ = knn_points(pred, gt, K=1)
    d_gp, _, _ = knn_points(gt, pred, K=1)
    return torch.maximum(d_pg.squeeze(-1).max(dim=1)[0], d_gp.squeeze(-1).max(dim=1)[0]).sqrt()


@torch.no_grad()
def point_to_surface(pred, gt_dense):
    """Approximate P2F with a dense GT sampling (1M points) instead of the mesh."""
    d, _, _ = knn_points(pred, gt_dense, K=1)
    return d.squeeze(-1).sqrt().mean(dim=1)


class PULoss(nn.Module):
    def __init__(self, w_cd=100.0, w_rep=1.0, w_uni=10.0, w_normal=0.0):
        super().__init__()
        self.cd = ChamferLoss()
        self.rep = RepulsionLoss()
        self.uni = UniformLoss()
        self.normal = NormalConsistencyLoss()
        self.w = dict(cd=w_cd, rep=w_rep, uni=w_uni, normal=w_normal)

    def forward(self, pred, gt, radius=None, gt_normals=None):
        terms = {"cd": self.cd(pred, gt, radius), "rep": self.rep(pred)}
        if self.w["uni"] > 0:
            terms["uni"] = self.uni(pred)
        if self.w["normal"] > 0 and gt_normals is not None:
            terms["normal"] = self.normal(pred, gt, gt_normals)
        total = sum(self.w[k] * v for k, v in terms.items())
        return total, {k: v.detach() for k, v in terms.items()}


if __name__ == "__main__":
    torch.manual_seed(0)
    gt = torch.rand(2, 8192, 3).cuda()
    pred = (gt + 0.01 * torch.randn_like(gt)).requires_grad_()
    gt_n, _, _ = normalize_point_cloud(gt)
    loss, parts = PULoss(w_normal=0.0)(pred, gt_n)
    loss.backward()
    print({k: float(v) for k, v in parts.items()}, "grad", pred.grad.abs().mean().item())
    print("hausdorff", hausdorff_distance(pred.detach(), gt).tolist())
