"""Rotation-invariant RoI Align (RiRoI Align) used by ReDet.

Warps the rotated RoI into a canonical orientation and circularly shifts
the orientation channels of the rotation-equivariant (e2cnn) feature map,
so that the pooled feature is invariant to the RoI angle.
"""
import torch
import torch.nn as nn
from torch.autograd import Function
from torch.autograd.function import once_differentiable
from torch.nn.modules.utils import _pair

from . import riroi_align_cuda


class RiRoIAlignFunction(Function):

    @staticmethod
    def forward(ctx,
                features,
                rois,
                out_size,
                spatial_scale,
                sample_num=0,
                nOrientation=8):
        out_h, out_w = _pair(out_size)
        assert isinstance(out_h, int) and isinstance(out_w, int)
        ctx.spatial_scale = spatial_scale
        ctx.sample_num = sample_num
        ctx.nOrientation = nOrientation
        ctx.save_for_backward(rois)
        ctx.feature_size = features.size()

        batch_size, num_channels, data_height, data_width = features.size()
        num_rois = rois.size(0)

        output = features.new_zeros(num_rois, num_channels, out_h, out_w)
        if features.is_cuda:
            riroi_align_cuda.forward(features, rois, out_h, out_w,
                                     spatial_scale, sample_num, nOrientation,
                                     output)
        else:
            raise NotImplementedError

        return output

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        feature_size = ctx.feature_size
        spatial_scale = ctx.spatial_scale
        sample_num = ctx.sample_num
        nOrientation = ctx.nOrientation
        rois = ctx.saved_tensors[0]
        assert (feature_size is not None and grad_output.is_cuda)

        batch_size, num_channels, data_height, data_width = feature_size
        out_w = grad_output.size(3)
        out_h = grad_output.size(2)

        grad_input = grad_rois = None
        if ctx.needs_input_grad[0]:
            grad_input = rois.new_zeros(batch_size, num_channels, data_height,
                                        data_width)
            riroi_align_cuda.backward(grad_output.contiguous(), rois, out_h,
                                      out_w, spatial_scale, sample_num,
                                      nOrientation, grad_input)

        return grad_input, grad_rois, None, None, None, None


riroi_align = RiRoIAlignFunction.apply


class RiRoIAlign(nn.Module):
    """Rotation-invariant RoI align.

    Args:
        out_size (int | tuple): output spatial size (h, w).
        spatial_scale (float): scale of the input feature map w.r.t. image.
        sample_num (int): number of sampling points per bin; 0 = adaptive.
        nOrientation (int): number of orientation channels of the e2cnn
            regular representation (must match the backbone's N).
    """

    def __init__(self, out_size, spatial_scale, sample_num=0, nOrientation=8):
        super(RiRoIAlign, self).__init__()

        self.out_size = out_size
        self.spatial_scale = float(spatial_scale)
        self.sample_num = int(sample_num)
        self.nOrientation = int(nOrientation)

    def forward(self, features, rois):
        # rois: (n, 6) [batch_ind, cx, cy, w, h, theta]
        return RiRoIAlignFunction.apply(features, rois, self.out_size,
                                        self.spatial_scale, self.sample_num,
                                        self.nOrientation)

    def __repr__(self):
        format_str = self.__class__.__name__
        format_str += '(out_size={}, spatial_scale={}, sample_num={}'.format(
            self.out_size, self.spatial_scale, self.sample_num)
        format_str += ', nOrientation={})'.format(self.nOrientation)
        return format_str


def riroi_align_reference(features, rois, out_size, spatial_scale,
                          nOrientation=8):
    """Slow reference (used by the unit test on CPU only): rotated RoI align
    via affine_grid/grid_sample followed by the orientation channel shift."""
    out_h, out_w = _pair(out_size)
    n, c = rois.size(0), features.size(1)
    outputs = features.new_zeros(n, c, out_h, out_w)
    for i in range(n):
        b, cx, cy, w, h, theta = rois[i].tolist()
        img = features[int(b)][None]
        H, W = img.shape[-2:]
        cx, cy = cx * spatial_scale, cy * spatial_scale
        w, h = w * spatial_scale, h * spatial_scale
        cos_t, sin_t = torch.cos(rois.new_tensor(theta)), torch.sin(
            rois.new_tensor(theta))
        affine = rois.new_tensor([[w / W * cos_t, -h / H * sin_t,
                                   2 * cx / W - 1],
                                  [w / W * sin_t, h / H * cos_t,
                                   2 * cy / H - 1]])[None]
        grid = torch.nn.functional.affine_grid(
            affine, (1, c, out_h, out_w), align_corners=False)
        pooled = torch.nn.functional.grid_sample(
            img, grid, align_corners=False)[0]
        shift = int(round(theta / (2 * 3.141592653589793) * nOrientation))
        pooled = pooled.view(c // nOrientation, nOrientation, out_h, out_w)
        outputs[i] = torch.roll(pooled, shifts=-shift, dims=1).view(
            c, out_h, out_w)
    return outputs
