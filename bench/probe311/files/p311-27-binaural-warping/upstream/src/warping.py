"""
Copyright (c) Facebook, Inc. and its affiliates.
All rights reserved.

This source code is licensed under the license found in the
LICENSE file in the root directory of this source tree.

Geometric / neural time warping of a mono signal into two ear signals.

The fractional-delay interpolation is the hot spot of training (it runs on 48 kHz audio for every
receiver position), so an optional fused CUDA kernel is provided in csrc/warp_cuda_kernel.cu.
Build it with `python setup.py build_ext --inplace` or let `use_cuda_warp=True` JIT-compile it.
"""
import os

import numpy as np
import scipy.linalg
import torch as th
import torch.nn as nn
import torch.nn.functional as F

try:
    import warp_cuda  # compiled extension from setup.py
    _HAS_WARP_CUDA = True
except ImportError:
    warp_cuda = None
    _HAS_WARP_CUDA = False

_CSRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "csrc")


def _load_warp_cuda_jit():
    """JIT-compile the CUDA warping kernel (takes ~1 min the first time, cached in ~/.cache/torch_extensions)."""
    from torch.utils.cpp_extension import load
    return load(name="warp_cuda",
                sources=[os.path.join(_CSRC, "warp_cuda.cpp"), os.path.join(_CSRC, "warp_cuda_kernel.cu")],
                extra_cuda_cflags=["-O3", "--use_fast_math", "-gencode=arch=compute_70,code=sm_70",
                                   "-gencode=arch=compute_80,code=sm_80"],
                verbose=True)


class TimeWarperFunction(th.autograd.Function):

    @staticmethod
    def forward(ctx, input, warpfield):
        '''
        :param ctx: autograd context
        :param input: input signal (B x 2 x T)
        :param warpfield: the corresponding warpfield (B x 2 x T)
        :return: the warped signal (B x 2 x T)
        '''
        ctx.save_for_backward(input, warpfield)
        if input.is_cuda and warp_cuda is not None:
            return warp_cuda.forward(input.contiguous(), warpfield.contiguous())
        # compute index list to lookup warped input values
        idx_left = warpfield.floor().type(th.long)
        idx_right = th.clamp(warpfield.ceil().type(th.long), max=input.shape[-1]-1)
        # compute weight for linear interpolation
        alpha = warpfield - warpfield.floor()
        # linear interpolation
        output = (1 - alpha) * th.gather(input, 2, idx_left) + alpha * th.gather(input, 2, idx_right)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, warpfield = ctx.saved_tensors
        if grad_output.is_cuda and warp_cuda is not None:
            grad_input, grad_warpfield = warp_cuda.backward(grad_output.contiguous(), input, warpfield)
            return grad_input, grad_warpfield
        # compute index list to lookup warped input values
        idx_left = warpfield.floor().type(th.long)
        idx_right = th.clamp(warpfield.ceil().type(th.long), max=input.shape[-1]-1)
        # warpfield gradient
        grad_warpfield = th.gather(input, 2, idx_right) - th.gather(input, 2, idx_left)
        grad_warpfield = grad_output * grad_warpfield
        # input gradient
        grad_input = th.zeros(input.shape, device=input.device)
        alpha = warpfield - warpfield.floor()
        grad_input = grad_input.scatter_add(2, idx_left, grad_output * (1 - alpha)) + \
                     grad_input.scatter_add(2, idx_right, grad_output * alpha)
        return grad_input, grad_warpfield


class TimeWarper(nn.Module):

    def __init__(self):
        super().__init__()
        self.warper = TimeWarperFunction().apply

    def _to_absolute_positions(self, warpfield, seq_length):
        # translate warpfield from relative warp indices to absolute indices ([1...T] + warpfield)
        temp_range = th.arange(seq_length, dtype=th.float)
        temp_range = temp_range.to(warpfield.device)
        return th.clamp(warpfield + temp_range[None, None, :], min=0, max=seq_length-1)

    def forward(self, input, warpfield):
        '''
        :param input: audio signal to be warped (B x 2 x T)
        :param warpfield: the corresponding warpfield (B x 2 x T)
        :return: the warped signal (B x 2 x T)
        '''
        warpfield = self._to_absolute_positions(warpfield, input.shape[-1])
        warped = self.warper(input, warpfield)
        return warped


class MonotoneTimeWarper(TimeWarper):

    def forward(self, input, warpfield):
        '''
        :param input: audio signal to be warped (B x 2 x T)
        :param warpfield: the corresponding warpfield (B x 2 x T)
        :return: the warped signal (B x 2 x T), ensured to be monotonous
        '''
        warpfield = self._to_absolute_positions(warpfield, input.shape[-1])
        # ensure monotonicity: each warp must be at least as big as previous_warp-1
        warpfield = th.cummax(warpfield, dim=-1)[0]
        # print('warpfield ', warpfield.shape)
        # warp
        warped = self.warper(input, warpfield)
        return warped


class GeometricTimeWarper(TimeWarper):

    def __init__(self, sampling_rate=48000):
        super().__init__()
        self.sampling_rate = sampling_rate

    def displacements2warpfield(self, displacements, seq_length):
        distance = th.sum(displacements**2, dim=2) ** 0.5
        distance = F.interpolate(distance, size=seq_length)
        warpfield = -distance / 343.0 * self.sampling_rate
        return warpfield

    def forward(self, input, displacements):
        '''
        :param input: audio signal to be warped (B x 1 x T)
        :param displacements: sequence of 3D displacement vectors for geometric warping (B x 3 x T)
        :return: the warped signal (B x 1 x T)
        '''
        warpfield = self.displacements2warpfield(displacements, input.shape[-1])
        warped = super().forward(input, warpfield)
        return warped


class Warpnet(nn.Module):

    def __init__(self, layers=4, channels=64, view_dim=7, use_cuda_warp=False):
        super().__init__()
        self.layers = [nn.Conv1d(view_dim if l == 0 else channels, channels, kernel_size=2) for l in range(layers)]
        self.layers = nn.ModuleList(self.layers)
        self.linear = nn.Conv1d(channels, 2, kernel_size=1)
        self.neural_warper = MonotoneTimeWarper()
        self.geometric_warper = GeometricTimeWarper()
        if use_cuda_warp and not _HAS_WARP_CUDA:
            global warp_cuda
            warp_cuda = _load_warp_cuda_jit()

    def neural_warpfield(self, view, seq_length):
        warpfield = view
        for layer in self.layers:
            warpfield = F.pad(warpfield, pad=[1, 0])
            warpfield = th.relu(layer(warpfield))
        warpfield = self.linear(warpfield)
        warpfield = F.interpolate(warpfield, size=seq_length)
        return warpfield

    def forward(self, mono, view):
        '''
        :param mono: input signal as tensor of shape B x 1 x T
        :param view: rx/tx position/orientation as tensor of shape B x 7 x K (K = T / 400)
        :return: warped: warped left/right ear signal as tensor of shape B x 2 x T
        '''
        return self._forward(mono, view)

    def _forward(self, mono, view):
        # neural warping
        neural_warpfield = self.neural_warpfield(view, mono.shape[-1])
        # geometric warping
        left = view[:, 0:3] - th.tensor([-0.08, 0.0, 0.0], device=view.device)[None, :, None]
        right = view[:, 0:3] - th.tensor([0.08, 0.0, 0.0], device=view.device)[None, :, None]
        displacements = th.stack([left, right], dim=1)
        geometric_warpfield = self.geometric_warper.displacements2warpfield(displacements, mono.shape[-1])
        # combine warpfields and apply to input signal
        warpfield = geometric_warpfield + neural_warpfield
        warped = self.neural_warper(th.cat([mono, mono], dim=1), warpfield)
        return warped
