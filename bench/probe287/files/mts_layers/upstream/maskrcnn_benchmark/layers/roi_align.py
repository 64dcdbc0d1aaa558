# Copyright (c) Facebook, Inc. and its affiliates. All Rights Reserved.
import torch
from torch import nn
from torch.autograd import Function
from torch.autograd.function import once_differentiable
from torch.nn.modules.utils import _pair

from maskrcnn_benchmark import _C

# Only valid with fp32 inputs - give AMP the hint
from apex import amp

# nms lives in the same compiled extension (csrc/cuda/nms.cu)
nms = amp.float_function(_C.nms)


class _ROIAlign(Function):
    @staticmethod
    def forward(ctx, input, roi, output_size, spatial_scale, sampling_ratio):
        ctx.save_for_backward(roi)
        ctx.output_size = _pair(output_size)
        ctx.spatial_scale = spatial_scale
        ctx.sampling_ratio = sampling_ratio
        ctx.input_shape = input.size()
        output = _C.roi_align_forward(
            input, roi, spatial_scale, output_size[0], output_size[1], sampling_ratio
        )
        return output

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        rois, = ctx.saved_tensors
        output_size = ctx.output_size
        spatial_scale = ctx.spatial_scale
        sampling_ratio = ctx.sampling_ratio
        bs, ch, h, w = ctx.input_shape
        grad_input = _C.roi_align_backward(
            grad_output,
            rois,
            spatial_scale,
            output_size[0],
            output_size[1],
            bs,
            ch,
            h,
            w,
            sampling_ratio,
        )
        return grad_input, None, None, None, None


roi_align = _ROIAlign.apply


class ROIAlign(nn.Module):
    def __init__(self, output_size, spatial_scale, sampling_ratio):
        super(ROIAlign, self).__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio

    @amp.float_function
    def forward(self, input, rois):
        return roi_align(
            input, rois, self.output_size, self.spatial_scale, self.sampling_ratio
        )

    def __repr__(self):
        tmpstr = self.__class__.__name__ + "("
        tmpstr += "output_size=" + str(self.output_size)
        tmpstr += ", spatial_scale=" + str(self.spatial_scale)
        tmpstr += ", sampling_ratio=" + str(self.sampling_ratio)
        tmpstr += ")"
        return tmpstr


def boxlist_nms_indices(boxes, scores, nms_thresh, max_proposals=-1):
    """Thin wrapper used by the text-proposal and char-mask heads.
    boxes: (N, 4) xyxy on the same device as scores."""
    keep = nms(boxes, scores, nms_thresh)
    if max_proposals > 0:
        keep = keep[:max_proposals]
    return keep


def roi_align_reference(input, rois, output_size, spatial_scale, sampling_ratio):
    """Pure-PyTorch (slow) ROIAlign used only by tests/test_roi_align.py to
    check the CUDA kernel; assumes aligned=False semantics of the kernel."""
    out_h, out_w = _pair(output_size)
    n_rois = rois.size(0)
    out = input.new_zeros((n_rois, input.size(1), out_h, out_w))
    for i in range(n_rois):
        b = int(rois[i, 0].item())
        x1, y1, x2, y2 = (rois[i, 1:] * spatial_scale).tolist()
        roi_w = max(x2 - x1, 1.0)
        roi_h = max(y2 - y1, 1.0)
        ys = torch.linspace(y1, y1 + roi_h, out_h + 1, device=input.device)
        xs = torch.linspace(x1, x1 + roi_w, out_w + 1, device=input.device)
        yc = (ys[:-1] + ys[1:]) / 2
        xc = (xs[:-1] + xs[1:]) / 2
        gy = yc / max(input.size(2) - 1, 1) * 2 - 1
        gx = xc / max(input.size(3) - 1, 1) * 2 - 1
        grid = torch.stack(torch.meshgrid(gy, gx)[::-1], dim=-1).unsqueeze(0)
        out[i] = torch.nn.functional.grid_sample(
            input[b:b + 1], grid, mode="bilinear", align_corners=True)[0]
    return out
