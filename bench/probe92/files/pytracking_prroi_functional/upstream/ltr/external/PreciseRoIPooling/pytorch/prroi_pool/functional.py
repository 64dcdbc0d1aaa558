#! /usr/bin/env python3
# -*- coding: utf-8 -*-
# File   : functional.py
#
# Precise RoI Pooling: the pooled value of every bin is the exact integral of the bilinearly
# interpolated feature map over that bin, divided by the bin area. Unlike RoIAlign there is no
# sampling-point hyper-parameter, and the gradient w.r.t. the RoI coordinates is continuous, which
# is what the IoU-Net / ATOM / DiMP bounding-box refinement relies on.
#
# The kernels live in src/prroi_pooling_gpu.c (THC glue) and src/prroi_pooling_gpu_impl.cu and are
# compiled on first use.

import os
import os.path as osp

import torch
import torch.autograd as ag

__all__ = ['prroi_pool2d']


_prroi_pooling = None


def _import_prroi_pooling():
    global _prroi_pooling

    if _prroi_pooling is None:
        try:
            from os.path import join as pjoin, dirname
            from torch.utils.cpp_extension import load as load_extension
            root_dir = pjoin(dirname(__file__), 'src')

            _prroi_pooling = load_extension(
                '_prroi_pooling',
                [pjoin(root_dir, 'prroi_pooling_gpu.c'), pjoin(root_dir, 'prroi_pooling_gpu_impl.cu')],
                extra_cuda_cflags=['-O3', '--use_fast_math'],
                build_directory=os.environ.get('PRROI_BUILD_DIR', None),
                verbose=True
            )
        except ImportError:
            raise ImportError('Can not compile Precise RoI Pooling library.')

    return _prroi_pooling


class PrRoIPool2DFunction(ag.Function):
    @staticmethod
    def forward(ctx, features, rois, pooled_height, pooled_width, spatial_scale):
        _prroi_pooling = _import_prroi_pooling()

        assert 'FloatTensor' in features.type() and 'FloatTensor' in rois.type(), \
                'Precise RoI Pooling only takes float input, got {} for features and {} for rois.'.format(features.type(), rois.type())

        pooled_height = int(pooled_height)
        pooled_width = int(pooled_width)
        spatial_scale = float(spatial_scale)

        features = features.contiguous()
        rois = rois.contiguous()
        params = (pooled_height, pooled_width, spatial_scale)

        if features.is_cuda:
            output = _prroi_pooling.prroi_pooling_forward_cuda(features, rois, *params)
            ctx.params = params
            # everything here is contiguous.
            ctx.save_for_backward(features, rois, output)
        else:
            raise NotImplementedError('Precise RoI Pooling only supports GPU (cuda) implememtations.')

        return output

    @staticmethod
    def backward(ctx, grad_output):
        _prroi_pooling = _import_prroi_pooling()

        features, rois, output = ctx.saved_tensors
        grad_input = grad_coor = None

        if features.requires_grad:
            grad_output = grad_output.contiguous()
            grad_input = _prroi_pooling.prroi_pooling_backward_cuda(features, rois, output, grad_output, *ctx.params)
        if rois.requires_grad:
            grad_output = grad_output.contiguous()
            grad_coor = _prroi_pooling.prroi_pooling_coor_backward_cuda(features, rois, output, grad_output, *ctx.params)

        return grad_input, grad_coor, None, None, None


prroi_pool2d = PrRoIPool2DFunction.apply


def prroi_pool2d_reference(features, rois, pooled_height, pooled_width, spatial_scale, samples_per_bin=8):
    """Slow pure-PyTorch approximation used by the unit test only (dense bilinear sampling, no integral).

    Not used at training time: it is ~50x slower than the CUDA kernel on a 1024-RoI batch.
    """
    import torch.nn.functional as F
    n_rois = rois.shape[0]
    _, c, h, w = features.shape
    out = features.new_zeros((n_rois, c, pooled_height, pooled_width))
    for i in range(n_rois):
        b = int(rois[i, 0].item())
        x0, y0, x1, y1 = [float(v) * spatial_scale for v in rois[i, 1:]]
        bin_w = (x1 - x0) / pooled_width
        bin_h = (y1 - y0) / pooled_height
        ys = y0 + (torch.arange(pooled_height * samples_per_bin, device=features.device, dtype=features.dtype) + 0.5) \
            * bin_h / samples_per_bin
        xs = x0 + (torch.arange(pooled_width * samples_per_bin, device=features.device, dtype=features.dtype) + 0.5) \
            * bin_w / samples_per_bin
        gy, gx = torch.meshgrid(ys, xs, indexing='ij')
        grid = torch.stack(((gx / (w - 1)) * 2 - 1, (gy / (h - 1)) * 2 - 1), dim=-1).unsqueeze(0)
        sampled = F.grid_sample(features[b:b + 1], grid, mode='bilinear', align_corners=True)
        out[i] = F.avg_pool2d(sampled, samples_per_bin)[0]
    return out
