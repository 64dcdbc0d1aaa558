# ------------------------------------------------------------------------------------------------
# Geometric Kernel Attention (GKT)
# Modified from Deformable DETR (https://github.com/fundamentalvision/Deformable-DETR)
# Copyright (c) 2020 SenseTime. All Rights Reserved.
# Licensed under the Apache License, Version 2.0 [see LICENSE for details]
# ------------------------------------------------------------------------------------------------

from __future__ import absolute_import
from __future__ import print_function
from __future__ import division

import torch
import torch.nn.functional as F
from torch.autograd import Function
from torch.autograd.function import once_differentiable

import GeometricKernelAttention as GKA


class GeometricKernelAttentionFunc(Function):
    @staticmethod
    def forward(ctx, value, value_spatial_shapes, value_level_start_index, sampling_locations, attention_weights, im2col_step):
        ctx.im2col_step = im2col_step
        output = GKA.geometric_kernel_attn_cuda_forward(
            value, value_spatial_shapes, value_level_start_index, sampling_locations, attention_weights, ctx.im2col_step)
        ctx.save_for_backward(value, value_spatial_shapes, value_level_start_index, sampling_locations, attention_weights)
        return output

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        value, value_spatial_shapes, value_level_start_index, sampling_locations, attention_weights = ctx.saved_tensors
        grad_value, grad_attn_weight = \
            GKA.geometric_kernel_attn_cuda_backward(
                value, value_spatial_shapes, value_level_start_index, sampling_locations, attention_weights, grad_output, ctx.im2col_step)

        return grad_value, None, None, None, grad_attn_weight, None


def geometric_kernel_attn_pytorch(value, value_spatial_shapes, sampling_locations, attention_weights):
    """Reference implementation: gathers the integer kernel locations (no bilinear interpolation).

    value: (N, S, M, D); sampling_locations: (N, Lq, M, L, P, 2) in pixels; attention_weights: (N, Lq, M, L, P)
    """
    N_, S_, M_, D_ = value.shape
    _, Lq_, M_, L_, P_, _ = sampling_locations.shape
    value_list = value.split([H_ * W_ for H_, W_ in value_spatial_shapes], dim=1)
    sampling_value_list = []
    for lid_, (H_, W_) in enumerate(value_spatial_shapes):
        value_l_ = value_list[lid_].flatten(2).transpose(1, 2).reshape(N_ * M_, D_, H_ * W_)
        loc = sampling_locations[:, :, :, lid_].transpose(1, 2).flatten(0, 1)  # N*M, Lq, P, 2
        x = loc[..., 0].round().long().clamp(0, W_ - 1)
        y = loc[..., 1].round().long().clamp(0, H_ - 1)
        idx = (y * W_ + x).flatten(1)  # N*M, Lq*P
        sampled = torch.gather(value_l_, 2, idx[:, None, :].expand(-1, D_, -1))
        sampling_value_list.append(sampled.view(N_ * M_, D_, Lq_, P_))
    attention_weights = attention_weights.transpose(1, 2).reshape(N_ * M_, 1, Lq_, L_ * P_)
    output = (torch.stack(sampling_value_list, dim=-2).flatten(-2) * attention_weights).sum(-1).view(N_, M_ * D_, Lq_)
    return output.transpose(1, 2).contiguous()
