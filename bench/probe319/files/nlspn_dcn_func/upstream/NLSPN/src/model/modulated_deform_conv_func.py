"""
    Modulated deformable convolution (DCNv2) autograd wrapper.

    The CUDA kernels live in ./deformconv and are compiled with
        cd model/deformconv && sh make.sh
    which installs the `MDCN` extension into the current environment.
    Only CUDA tensors are supported (there is no CPU implementation).
"""

from __future__ import absolute_import
from __future__ import print_function
from __future__ import division

import math
import torch
from torch import nn
from torch.autograd import Function
from torch.nn.modules.utils import _pair
from torch.autograd.function import once_differentiable

import MDCN


class ModulatedDeformConvFunction(Function):

    @staticmethod
    def forward(ctx, input, offset, mask, weight, bias, stride, padding,
                dilation, groups, deformable_groups, im2col_step):
        if not input.is_cuda:
            raise NotImplementedError('MDCN: only CUDA tensors are supported')
        ctx.stride = _pair(stride)
        ctx.padding = _pair(padding)
        ctx.dilation = _pair(dilation)
        ctx.kernel_size = _pair(weight.shape[2:4])
        ctx.groups = groups
        ctx.deformable_groups = deformable_groups
        ctx.im2col_step = im2col_step
        output = MDCN.modulated_deform_conv_forward(input, weight, bias, offset, mask,
                                                    ctx.kernel_size[0], ctx.kernel_size[1],
                                                    ctx.stride[0], ctx.stride[1],
                                                    ctx.padding[0], ctx.padding[1],
                                                    ctx.dilation[0], ctx.dilation[1],
                                                    ctx.groups,
                                                    ctx.deformable_groups,
                                                    ctx.im2col_step)
        ctx.save_for_backward(input, offset, mask, weight, bias)
        return output

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        input, offset, mask, weight, bias = ctx.saved_tensors
        grad_input, grad_offset, grad_mask, grad_weight, grad_bias = \
            MDCN.modulated_deform_conv_backward(input, weight, bias, offset, mask, grad_output,
                                                ctx.kernel_size[0], ctx.kernel_size[1],
                                                ctx.stride[0], ctx.stride[1],
                                                ctx.padding[0], ctx.padding[1],
                                                ctx.dilation[0], ctx.dilation[1],
                                                ctx.groups,
                                                ctx.deformable_groups,
                                                ctx.im2col_step)

        return grad_input, grad_offset, grad_mask, grad_weight, grad_bias, \
            None, None, None, None, None, None


modulated_deform_conv = ModulatedDeformConvFunction.apply


class ModulatedDeformConv(nn.Module):

    def __init__(self, in_channels, out_channels,
                 kernel_size, stride, padding, dilation=1, groups=1,
                 deformable_groups=1, im2col_step=64, bias=True):
        super(ModulatedDeformConv, self).__init__()

        if in_channels % groups != 0:
            raise ValueError('in_channels {} must be divisible by groups {}'.format(in_channels, groups))
        if out_channels % groups != 0:
            raise ValueError('out_channels {} must be divisible by groups {}'.format(out_channels, groups))

        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _pair(kernel_size)
        self.stride = _pair(stride)
        self.padding = _pair(padding)
        self.dilation = _pair(dilation)
        self.groups = groups
        self.deformable_groups = deformable_groups
        self.im2col_step = im2col_step
        self.use_bias = bias

        self.weight = nn.Parameter(torch.Tensor(
            out_channels, in_channels // groups, *self.kernel_size))
        self.bias = nn.Parameter(torch.Tensor(out_channels))
        self.reset_parameters()
        if not self.use_bias:
            self.bias.requires_grad = False

    def reset_parameters(self):
        n = self.in_channels
        init_range = 1.0 / math.sqrt(n)
        for k in self.kernel_size:
            n *= k
        stdv = 1. / math.sqrt(n)
        self.weight.data.uniform_(-stdv, stdv)
        if self.bias is not None:
            self.bias.data.zero_()

    def forward(self, input, offset, mask):
        assert 2 * self.deformable_groups * self.kernel_size[0] * self.kernel_size[1] == \
            offset.shape[1]
        assert self.deformable_groups * self.kernel_size[0] * self.kernel_size[1] == \
            mask.shape[1]
        return modulated_deform_conv(input, offset, mask,
                                     self.weight,
                                     self.bias,
                                     self.stride,
                                     self.padding,
                                     self.dilation,
                                     self.groups,
                                     self.deformable_groups,
                                     self.im2col_step)


class ModulatedDeformConvPack(ModulatedDeformConv):
    """DCNv2 layer that predicts its own offsets and masks."""

    def __init__(self, in_channels, out_channels,
                 kernel_size, stride, padding,
                 dilation=1, groups=1, deformable_groups=1, im2col_step=64, bias=True, lr_mult=0.1):
        super(ModulatedDeformConvPack, self).__init__(in_channels, out_channels,
                                                      kernel_size, stride, padding, dilation,
                                                      groups, deformable_groups, im2col_step, bias)

        out_channels = self.deformable_groups * 3 * self.kernel_size[0] * self.kernel_size[1]
        self.conv_offset_mask = nn.Conv2d(self.in_channels,
                                          out_channels,
                                          kernel_size=self.kernel_size,
                                          stride=self.stride,
                                          padding=self.padding,
                                          bias=True)
        self.conv_offset_mask.lr_mult = lr_mult
        self.init_offset()

    def init_offset(self):
        self.conv_offset_mask.weight.data.zero_()
        self.conv_offset_mask.bias.data.zero_()

    def forward(self, input):
        out = self.conv_offset_mask(input)
        o1, o2, mask = torch.chunk(out, 3, dim=1)
        offset = torch.cat((o1, o2), dim=1)
        mask = torch.sigmoid(mask)
        return modulated_deform_conv(input, offset, mask,
                                     self.weight,
                                     self.bias,
                                     self.stride,
                                     self.padding,
                                     self.dilation,
                                     self.groups,
                                     self.deformable_groups,
                                     self.im2col_step)


def _check_forward(N=2, inC=4, inH=8, inW=8, outC=4, kH=3, kW=3, deformable_groups=1):
    """Quick self-test: with zero offsets and unit masks DCN == Conv2d."""
    torch.manual_seed(0)
    x = torch.randn(N, inC, inH, inW).cuda()
    offset = torch.zeros(N, deformable_groups * 2 * kH * kW, inH, inW, device='cuda')
    mask = torch.ones(N, deformable_groups * kH * kW, inH, inW, device='cuda')

    dcn = ModulatedDeformConv(inC, outC, (kH, kW), stride=1, padding=1, dilation=1,
                              groups=1, deformable_groups=deformable_groups, im2col_step=1).cuda()
    conv = nn.Conv2d(inC, outC, (kH, kW), stride=1, padding=1, bias=True).to(x.device)
    conv.weight.data.copy_(dcn.weight.data)
    conv.bias.data.copy_(dcn.bias.data)

    out_dcn = dcn(x, offset, mask)
    out_conv = conv(x)
    d = (out_dcn - out_conv).abs().max()
    print('max abs diff between DCN and Conv2d: {:.6f}'.format(d.item()))
    return d.item() < 1e-4


if __name__ == '__main__':
    if torch.cuda.is_available():
        ok = _check_forward()
        print('forward check passed' if ok else 'forward check FAILED')
    else:
        print('MDCN self-test needs a CUDA device, skipping')
