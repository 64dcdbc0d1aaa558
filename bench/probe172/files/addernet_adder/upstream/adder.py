'''
Copyright (C) 2020. Huawei Technologies Co., Ltd. All rights reserved.

This program is free software; you can redistribute it and/or modify
it under the terms of BSD 3-Clause License.

This program is distributed in the hope that it will be useful,
but WITHOUT ANY WARRANTY; without even the implied warranty of
MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE. See the
BSD 3-Clause License for more details.

Adder layer. The forward/backward of the L1-distance "convolution" run in a hand-written CUDA kernel
(adder_cuda/, build with `cd adder_cuda && python setup.py install`). The unfold-based PyTorch
reference below is ~10x slower and needs O(C*k*k*H*W*N*F) memory, so it is only used to check the
kernel (`python adder.py`).
'''
import math

import torch
import torch.nn as nn
from torch.autograd import Function

import adder_cuda


def adder2d_function_reference(X, W, stride=1, padding=0, eta=0.2):
    """Pure PyTorch reference of the adder layer (the original AdderNet implementation)."""
    n_filters, d_filter, h_filter, w_filter = W.size()
    n_x, d_x, h_x, w_x = X.size()

    h_out = (h_x - h_filter + 2 * padding) / stride + 1
    w_out = (w_x - w_filter + 2 * padding) / stride + 1

    h_out, w_out = int(h_out), int(w_out)
    X_col = torch.nn.functional.unfold(X.view(1, -1, h_x, w_x), h_filter, dilation=1, padding=padding,
                                       stride=stride).view(n_x, -1, h_out * w_out)
    X_col = X_col.permute(1, 2, 0).contiguous().view(X_col.size(1), -1)
    W_col = W.view(n_filters, -1)

    out = AdderReference.apply(W_col, X_col, eta)

    out = out.view(n_filters, h_out, w_out, n_x)
    out = out.permute(3, 0, 1, 2).contiguous()
    return out


class AdderReference(Function):
    @staticmethod
    def forward(ctx, W_col, X_col, eta):
        ctx.save_for_backward(W_col, X_col)
        ctx.eta = eta
        output = -(W_col.unsqueeze(2) - X_col.unsqueeze(0)).abs().sum(1)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        W_col, X_col = ctx.saved_tensors
        # full-precision gradient for W, HardTanh gradient for X (Eq. 5 / Eq. 6 in the paper)
        grad_W_col = ((X_col.unsqueeze(0) - W_col.unsqueeze(2)) * grad_output.unsqueeze(1)).sum(2)
        # adaptive learning rate scaling (Eq. 8)
        grad_W_col = grad_W_col / grad_W_col.norm(p=2).clamp(min=1e-12) * math.sqrt(W_col.size(1) * W_col.size(0)) * ctx.eta
        grad_X_col = (-(X_col.unsqueeze(0) - W_col.unsqueeze(2)).clamp(-1, 1) * grad_output.unsqueeze(1)).sum(0)
        return grad_W_col, grad_X_col, None


class Adder2DFunction(Function):
    """CUDA implementation: one thread per output element, no im2col buffer."""

    @staticmethod
    def forward(ctx, X, W, stride, padding, eta):
        X = X.contiguous()
        W = W.contiguous()
        output = adder_cuda.forward(X, W, stride, padding)
        ctx.save_for_backward(X, W)
        ctx.stride, ctx.padding, ctx.eta = stride, padding, eta
        return output

    @staticmethod
    def backward(ctx, grad_output):
        X, W = ctx.saved_tensors
        grad_output = grad_output.contiguous()
        grad_X = adder_cuda.backward_input(grad_output, X, W, ctx.stride, ctx.padding)
        grad_W = adder_cuda.backward_weight(grad_output, X, W, ctx.stride, ctx.padding)
        # adaptive learning rate scaling (Eq. 8), same as the reference
        grad_W = grad_W / grad_W.norm(p=2).clamp(min=1e-12) * math.sqrt(W.numel()) * ctx.eta
        return grad_X, grad_W, None, None, None


class adder2d(nn.Module):

    def __init__(self, input_channel, output_channel, kernel_size, stride=1, padding=0, bias=False, eta=0.2):
        super(adder2d, self).__init__()
        self.stride = stride
        self.padding = padding
        self.input_channel = input_channel
        self.output_channel = output_channel
        self.kernel_size = kernel_size
        self.eta = eta
        self.adder = torch.nn.Parameter(
            nn.init.normal_(torch.randn(output_channel, input_channel, kernel_size, kernel_size)))
        self.bias = bias
        if bias:
            self.b = torch.nn.Parameter(nn.init.uniform_(torch.zeros(output_channel)))

    def forward(self, x):
        output = Adder2DFunction.apply(x, self.adder, self.stride, self.padding, self.eta)
        if self.bias:
            output += self.b.unsqueeze(0).unsqueeze(2).unsqueeze(3)
        return output

    def extra_repr(self):
        return '{}, {}, kernel_size={}, stride={}, padding={}, bias={}'.format(
            self.input_channel, self.output_channel, self.kernel_size, self.stride, self.padding, self.bias)


if __name__ == '__main__':
    # gradient / value check of the CUDA kernel against the PyTorch reference
    torch.manual_seed(0)
    x = torch.randn(4, 16, 8, 8).cuda().requires_grad_()
    layer = adder2d(16, 32, 3, stride=1, padding=1).cuda()

    out_cuda = layer(x)
    out_cuda.sum().backward()
    gx_cuda, gw_cuda = x.grad.clone(), layer.adder.grad.clone()

    x.grad = None
    layer.adder.grad = None
    out_ref = adder2d_function_reference(x, layer.adder, 1, 1, layer.eta)
    out_ref.sum().backward()

    print('forward  max abs diff: %.3e' % (out_cuda - out_ref).abs().max().item())
    print('grad_x   max abs diff: %.3e' % (gx_cuda - x.grad).abs().max().item())
    print('grad_w   max abs diff: %.3e' % (gw_cuda - layer.adder.grad).abs().max().item())
