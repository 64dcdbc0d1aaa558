# ------------------------------------------------------------------------------------------------
# Geometric Kernel Attention (GKT) op for MapTR
# Modified from Deformable DETR (https://github.com/fundamentalvision/Deformable-DETR)
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
    """Reference implementation used only in the unit tests to check the
    CUDA kernel (slow, gathers every kernel point explicitly).

    value:              (N, S, M, D)
    sampling_locations: (N, Lq, M, L, P, 2), integer pixel coords (x, y)
    attention_weights:  (N, Lq, M, L, P)
    """
    N_, S_, M_, D_ = value.shape
    _, Lq_, M_, L_, P_, _ = sampling_locations.shape
    value_list = value.split([H_ * W_ for H_, W_ in value_spatial_shapes], dim=1)
    sampling_value_list = []
    for lid_, (H_, W_) in enumerate(value_spatial_shapes):
        # N_, H_*W_, M_, D_ -> N_*M_, H_*W_, D_
        value_l_ = value_list[lid_].flatten(2).transpose(1, 2).reshape(N_ * M_, D_, H_ * W_).transpose(1, 2)
        # N_, Lq_, M_, P_, 2 -> N_*M_, Lq_*P_
        loc_l_ = sampling_locations[:, :, :, lid_].transpose(1, 2).flatten(0, 1).flatten(1, 2)
        index_l_ = (loc_l_[..., 1] * W_ + loc_l_[..., 0]).long()
        # N_*M_, Lq_*P_, D_
        sampling_value_l_ = torch.gather(value_l_, 1, index_l_[..., None].expand(-1, -1, D_))
        sampling_value_list.append(sampling_value_l_.view(N_ * M_, Lq_, P_, D_))
    # (N_, Lq_, M_, L_, P_) -> (N_*M_, 1, Lq_, L_*P_)
    attention_weights = attention_weights.transpose(1, 2).reshape(N_ * M_, Lq_, L_ * P_)
    sampling_values = torch.cat(sampling_value_list, dim=2)
    output = (sampling_values * attention_weights[..., None]).sum(2).view(N_, M_, Lq_, D_)
    return output.permute(0, 2, 1, 3).reshape(N_, Lq_, M_ * D_).contiguous()
