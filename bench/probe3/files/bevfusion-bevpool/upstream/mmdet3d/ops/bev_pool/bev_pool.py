"""BEV pooling for the LSS camera branch: sum the frustum features that fall into the same BEV cell.

Two implementations:
  * QuickCumsum      - the cumsum trick from Lift-Splat-Shoot, pure PyTorch, any device;
  * QuickCumsumCuda  - interval-based CUDA kernel (bev_pool_ext), ~40x faster on large grids.
"""
import torch

from . import bev_pool_ext

__all__ = ["bev_pool", "BEVPoolTransform"]


class QuickCumsum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, geom_feats, ranks):
        x = x.cumsum(0)
        kept = torch.ones(x.shape[0], device=x.device, dtype=torch.bool)
        kept[:-1] = ranks[1:] != ranks[:-1]

        x, geom_feats = x[kept], geom_feats[kept]
        x = torch.cat((x[:1], x[1:] - x[:-1]))

        # save kept for backward
        ctx.save_for_backward(kept)
        # no gradient for geom_feats
        ctx.mark_non_differentiable(geom_feats)
        return x, geom_feats

    @staticmethod
    def backward(ctx, gradx, gradgeom):
        (kept,) = ctx.saved_tensors
        back = torch.cumsum(kept, 0)
        back[kept] -= 1
        val = gradx[back]
        return val, None, None


class QuickCumsumCuda(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, geom_feats, ranks, B, D, H, W):
        kept = torch.ones(x.shape[0], device=x.device, dtype=torch.bool)
        kept[1:] = ranks[1:] != ranks[:-1]
        interval_starts = torch.where(kept)[0].int()
        interval_lengths = torch.zeros_like(interval_starts)
        interval_lengths[:-1] = interval_starts[1:] - interval_starts[:-1]
        interval_lengths[-1] = x.shape[0] - interval_starts[-1]
        geom_feats = geom_feats.int()

        out = bev_pool_ext.bev_pool_forward(
            x, geom_feats, interval_lengths, interval_starts, B, D, H, W,
        )

        ctx.save_for_backward(interval_starts, interval_lengths, geom_feats)
        ctx.saved_shapes = B, D, H, W
        return out

    @staticmethod
    def backward(ctx, out_grad):
        interval_starts, interval_lengths, geom_feats = ctx.saved_tensors
        B, D, H, W = ctx.saved_shapes

        out_grad = out_grad.contiguous()
        x_grad = bev_pool_ext.bev_pool_backward(
            out_grad, geom_feats, interval_lengths, interval_starts, B, D, H, W,
        )
        return x_grad, None, None, None, None, None, None


def _dense_from_intervals(x, geom_feats, B, D, H, W):
    """Scatter pooled cells (output of QuickCumsum) into a dense (B, D, H, W, C) grid."""
    C = x.shape[1]
    out = torch.zeros((B, D, H, W, C), device=x.device, dtype=x.dtype)
    out[geom_feats[:, 3], geom_feats[:, 2], geom_feats[:, 0], geom_feats[:, 1]] = x
    return out


def bev_pool(feats, coords, B, D, H, W):
    """feats: (N, C) frustum features; coords: (N, 4) integer (x, y, z, batch) cell indices."""
    assert feats.shape[0] == coords.shape[0]

    ranks = (
        coords[:, 0] * (W * D * B)
        + coords[:, 1] * (D * B)
        + coords[:, 2] * B
        + coords[:, 3]
    )
    indices = ranks.argsort()
    feats, coords, ranks = feats[indices], coords[indices], ranks[indices]

    if feats.is_cuda:
        x = QuickCumsumCuda.apply(feats, coords, ranks, B, D, H, W)
    else:
        # reference path (CPU unit tests); correct but slow on big grids
        x, coords = QuickCumsum.apply(feats, coords, ranks)
        x = _dense_from_intervals(x, coords, B, D, H, W)
    x = x.permute(0, 4, 1, 2, 3).contiguous()
    return x


def gen_dx_bx(xbound, ybound, zbound):
    dx = torch.Tensor([row[2] for row in [xbound, ybound, zbound]])
    bx = torch.Tensor([row[0] + row[2] / 2.0 for row in [xbound, ybound, zbound]])
    nx = torch.LongTensor([(row[1] - row[0]) / row[2] for row in [xbound, ybound, zbound]])
    return dx, bx, nx


class BEVPoolTransform(torch.nn.Module):
    """The geometry + pooling half of BEVFusion's LSS view transform."""

    def __init__(self, image_size, feature_size, xbound, ybound, zbound, dbound):
        super().__init__()
        self.image_size = image_size
        self.feature_size = feature_size
        dx, bx, nx = gen_dx_bx(xbound, ybound, zbound)
        self.dx = torch.nn.Parameter(dx, requires_grad=False)
        self.bx = torch.nn.Parameter(bx, requires_grad=False)
        self.nx = torch.nn.Parameter(nx, requires_grad=False)
        self.frustum = self.create_frustum(dbound)
        self.D = self.frustum.shape[0]

    def create_frustum(self, dbound):
        iH, iW = self.image_size
        fH, fW = self.feature_size
        ds = torch.arange(*dbound, dtype=torch.float).view(-1, 1, 1).expand(-1, fH, fW)
        D, _, _ = ds.shape
        xs = torch.linspace(0, iW - 1, fW, dtype=torch.float).view(1, 1, fW).expand(D, fH, fW)
        ys = torch.linspace(0, iH - 1, fH, dtype=torch.float).view(1, fH, 1).expand(D, fH, fW)
        frustum = torch.stack((xs, ys, ds), -1)
        return torch.nn.Parameter(frustum, requires_grad=False)

    def get_geometry(self, camera2lidar_rots, camera2lidar_trans, intrins, post_rots, post_trans):
        B, N, _ = camera2lidar_trans.shape
        # geometry must stay in fp32: half precision shifts points across cell borders
        with torch.cuda.amp.autocast(enabled=False):
            points = self.frustum - post_trans.view(B, N, 1, 1, 1, 3)
            points = torch.inverse(post_rots).view(B, N, 1, 1, 1, 3, 3).matmul(points.unsqueeze(-1))
            points = torch.cat((points[:, :, :, :, :, :2] * points[:, :, :, :, :, 2:3], points[:, :, :, :, :, 2:3]), 5)
            combine = camera2lidar_rots.matmul(torch.inverse(intrins))
            points = combine.view(B, N, 1, 1, 1, 3, 3).matmul(points).squeeze(-1)
            points += camera2lidar_trans.view(B, N, 1, 1, 1, 3)
        return points

    def forward(self, geom_feats, x):
        B, N, D, H, W, C = x.shape
        Nprime = B * N * D * H * W

        # flatten x
        x = x.reshape(Nprime, C)

        # flatten indices
        geom_feats = ((geom_feats - (self.bx - self.dx / 2.0)) / self.dx).long()
        geom_feats = geom_feats.view(Nprime, 3)
        batch_ix = torch.cat(
            [torch.full([Nprime // B, 1], ix, device=x.device, dtype=torch.long) for ix in range(B)]
        )
        geom_feats = torch.cat((geom_feats, batch_ix), 1)

        # filter out points that are outside box
        kept = (
            (geom_feats[:, 0] >= 0) & (geom_feats[:, 0] < self.nx[0])
            & (geom_feats[:, 1] >= 0) & (geom_feats[:, 1] < self.nx[1])
            & (geom_feats[:, 2] >= 0) & (geom_feats[:, 2] < self.nx[2])
        )
        x = x[kept]
        geom_feats = geom_feats[kept]

        x = bev_pool(x, geom_feats, B, self.nx[2], self.nx[0], self.nx[1])

        # collapse Z
        final = torch.cat(x.unbind(dim=2), 1)
        return final
