import torch
import torch.nn as nn
from torch.autograd import Function
from torch.nn.modules.module import Module
from torch.nn.functional import avg_pool2d, max_pool2d

from .._ext import roi_align


class RoIAlignFunction(Function):
    """RoIAlign on the cffi extension (C for CPU tensors, THC/CUDA kernel for GPU tensors).

    rois: (num_rois, 5) as (batch_idx, x1, y1, x2, y2) in image coordinates.
    """

    @staticmethod
    def forward(ctx, features, rois, aligned_height, aligned_width, spatial_scale):
        ctx.aligned_height = int(aligned_height)
        ctx.aligned_width = int(aligned_width)
        ctx.spatial_scale = float(spatial_scale)
        ctx.feature_size = features.size()
        ctx.save_for_backward(rois)

        batch_size, num_channels, data_height, data_width = features.size()
        num_rois = rois.size(0)

        output = features.new(num_rois, num_channels, ctx.aligned_height, ctx.aligned_width).zero_()
        if features.is_cuda:
            roi_align.roi_align_forward_cuda(ctx.aligned_height, ctx.aligned_width,
                                             ctx.spatial_scale, features, rois, output)
        else:
            roi_align.roi_align_forward(ctx.aligned_height, ctx.aligned_width,
                                        ctx.spatial_scale, features, rois, output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        assert(ctx.feature_size is not None and grad_output.is_cuda)
        rois, = ctx.saved_tensors
        batch_size, num_channels, data_height, data_width = ctx.feature_size

        grad_input = rois.new(batch_size, num_channels, data_height, data_width).zero_()
        roi_align.roi_align_backward_cuda(ctx.aligned_height, ctx.aligned_width,
                                          ctx.spatial_scale, grad_output.contiguous(), rois, grad_input)
        return grad_input, None, None, None, None


class RoIAlign(Module):
    def __init__(self, aligned_height, aligned_width, spatial_scale):
        super(RoIAlign, self).__init__()
        self.aligned_width = int(aligned_width)
        self.aligned_height = int(aligned_height)
        self.spatial_scale = float(spatial_scale)

    def forward(self, features, rois):
        return RoIAlignFunction.apply(features, rois, self.aligned_height, self.aligned_width,
                                      self.spatial_scale)


class RoIAlignAvg(Module):
    """Samples a (h+1, w+1) grid and average-pools it down to (h, w), like the TF crop_and_resize trick."""

    def __init__(self, aligned_height, aligned_width, spatial_scale):
        super(RoIAlignAvg, self).__init__()
        self.aligned_width = int(aligned_width)
        self.aligned_height = int(aligned_height)
        self.spatial_scale = float(spatial_scale)

    def forward(self, features, rois):
        x = RoIAlignFunction.apply(features, rois, self.aligned_height + 1, self.aligned_width + 1,
                                   self.spatial_scale)
        return avg_pool2d(x, kernel_size=2, stride=1)


class RoIAlignMax(Module):
    def __init__(self, aligned_height, aligned_width, spatial_scale):
        super(RoIAlignMax, self).__init__()
        self.aligned_width = int(aligned_width)
        self.aligned_height = int(aligned_height)
        self.spatial_scale = float(spatial_scale)

    def forward(self, features, rois):
        x = RoIAlignFunction.apply(features, rois, self.aligned_height + 1, self.aligned_width + 1,
                                   self.spatial_scale)
        return max_pool2d(x, kernel_size=2, stride=1)


def roi_align_reference(features, rois, aligned_height, aligned_width, spatial_scale):
    """Slow pure-PyTorch reference used by the unit test (grid_sample based, device-agnostic)."""
    outputs = []
    for roi in rois:
        b = int(roi[0].item())
        x1, y1, x2, y2 = [float(v) * spatial_scale for v in roi[1:]]
        h, w = features.shape[-2:]
        ys = torch.linspace(y1, y2, aligned_height, device=features.device)
        xs = torch.linspace(x1, x2, aligned_width, device=features.device)
        gy, gx = torch.meshgrid(ys, xs)
        grid = torch.stack([gx / (w - 1) * 2 - 1, gy / (h - 1) * 2 - 1], dim=-1)[None]
        outputs.append(nn.functional.grid_sample(features[b:b + 1], grid, align_corners=True))
    return torch.cat(outputs, 0)
