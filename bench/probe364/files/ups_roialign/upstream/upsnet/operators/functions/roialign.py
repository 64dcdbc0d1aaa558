# ---------------------------------------------------------------------------
# Unified Panoptic Segmentation Network
#
# Copyright (c) 2018-2019 Uber Technologies, Inc.
#
# Licensed under the Uber Non-Commercial License (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at the root directory of this project.
#
# Written by Yuwen Xiong
# ---------------------------------------------------------------------------

import torch
from torch.autograd import Function
from torch.nn.modules.module import Module

from upsnet.operators import roi_align_cuda


class RoIAlignFunction(Function):

    @staticmethod
    def forward(ctx, features, rois, pooled_height, pooled_width, spatial_scale, sampling_ratio):
        ctx.pooled_height = pooled_height
        ctx.pooled_width = pooled_width
        ctx.spatial_scale = spatial_scale
        ctx.sampling_ratio = sampling_ratio
        ctx.feature_size = features.size()
        batch_size, num_channels, data_height, data_width = features.size()
        num_rois = rois.size(0)

        output = features.new_zeros(num_rois, num_channels, pooled_height, pooled_width)
        if features.is_cuda:
            roi_align_cuda.forward(features, rois, pooled_height, pooled_width, spatial_scale,
                                   sampling_ratio, output)
        else:
            raise NotImplementedError('RoIAlign is only implemented for CUDA tensors')
        ctx.save_for_backward(rois)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        rois, = ctx.saved_tensors
        batch_size, num_channels, data_height, data_width = ctx.feature_size
        grad_input = grad_output.new_zeros(batch_size, num_channels, data_height, data_width)
        roi_align_cuda.backward(grad_output.contiguous(), rois, ctx.pooled_height, ctx.pooled_width,
                                ctx.spatial_scale, ctx.sampling_ratio, grad_input)
        return grad_input, None, None, None, None, None


class RoIAlign(Module):
    def __init__(self, pooled_height, pooled_width, spatial_scale, sampling_ratio=0):
        super(RoIAlign, self).__init__()
        self.pooled_height = int(pooled_height)
        self.pooled_width = int(pooled_width)
        self.spatial_scale = float(spatial_scale)
        self.sampling_ratio = int(sampling_ratio)

    def forward(self, features, rois):
        # rois: [K, 5] (batch_idx, x1, y1, x2, y2) in image coordinates
        return RoIAlignFunction.apply(features, rois, self.pooled_height, self.pooled_width,
                                      self.spatial_scale, self.sampling_ratio)

    def __repr__(self):
        return '{}(pooled_size=({}, {}), spatial_scale={}, sampling_ratio={})'.format(
            self.__class__.__name__, self.pooled_height, self.pooled_width,
            self.spatial_scale, self.sampling_ratio)
