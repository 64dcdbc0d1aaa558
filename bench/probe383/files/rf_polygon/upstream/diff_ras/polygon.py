"""
Differentiable rasterization of polygons (soft rasterizer), used by RoomFormer's
rasterization loss. The heavy lifting is done by the `native_rasterizer` CUDA
extension built from diff_ras/csrc (python setup.py build develop).
"""
import torch
import torch.nn as nn
from torch.autograd import Function

import native_rasterizer

MODE_BOUNDARY = "boundary"
MODE_MASK = "mask"
MODE_HARD_MASK = "hard_mask"

MODE_MAPPING = {
    MODE_BOUNDARY: 0,
    MODE_MASK: 1,
    MODE_HARD_MASK: 2,
}


class SoftPolygonFunction(Function):
    @staticmethod
    def forward(ctx, vertices, width, height, inv_smoothness=1.0, mode=MODE_BOUNDARY):
        ctx.width = width
        ctx.height = height
        ctx.inv_smoothness = inv_smoothness
        ctx.mode = MODE_MAPPING[mode]

        vertices = vertices.clone()
        ctx.device = vertices.device
        ctx.batch_size, ctx.number_vertices = vertices.shape[:2]

        rasterized = torch.FloatTensor(ctx.batch_size, ctx.height, ctx.width).fill_(0.0).to(device=ctx.device)
        contribution_map = torch.IntTensor(
            ctx.batch_size,
            ctx.height,
            ctx.width).fill_(0).to(device=ctx.device)
        rasterized, contribution_map = native_rasterizer.forward_rasterize(
            vertices, rasterized, contribution_map, width, height, inv_smoothness, ctx.mode)
        ctx.save_for_backward(vertices, rasterized, contribution_map)

        return rasterized

    @staticmethod
    def backward(ctx, grad_output):
        vertices, rasterized, contribution_map = ctx.saved_tensors

        grad_output = grad_output.contiguous()
        grad_vertices = torch.FloatTensor(
            ctx.batch_size, ctx.height, ctx.width, ctx.number_vertices, 2).fill_(0.0).to(device=ctx.device)
        grad_vertices = native_rasterizer.backward_rasterize(
            vertices, rasterized, contribution_map, grad_output, grad_vertices, ctx.width, ctx.height,
            ctx.inv_smoothness, ctx.mode)

        return grad_vertices, None, None, None, None


class SoftPolygon(nn.Module):
    MODES = [MODE_BOUNDARY, MODE_MASK, MODE_HARD_MASK]

    def __init__(self, inv_smoothness=1.0, mode=MODE_BOUNDARY):
        super(SoftPolygon, self).__init__()

        self.inv_smoothness = inv_smoothness

        if not (mode in SoftPolygon.MODES):
            raise ValueError("invalid mode: {0}".format(mode))

        self.mode = mode

    def forward(self, vertices, width, height, p, color=False):
        return SoftPolygonFunction.apply(vertices, width, height, self.inv_smoothness, self.mode)


def rasterize_polygons(polys, size=256, inv_smoothness=0.75, mode=MODE_MASK):
    """
    polys: list of [N_i, 2] tensors in pixel coordinates (already on the training device)
    returns: [len(polys), size, size] soft masks
    """
    rasterizer = SoftPolygon(inv_smoothness=inv_smoothness, mode=mode)
    masks = []
    for poly in polys:
        if poly.shape[0] < 3:
            masks.append(torch.zeros(size, size, device=poly.device))
            continue
        # the CUDA kernel expects a contiguous float32 [B, N, 2] buffer
        verts = poly.float().contiguous().unsqueeze(0)
        masks.append(rasterizer(verts, size, size, 1.0)[0])
    return torch.stack(masks, dim=0)
