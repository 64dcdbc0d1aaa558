import math

import torch
import torch.nn as nn
from torch.autograd import Function
from torch.nn.modules.utils import _pair

import shift_cuda


class ShiftFunction(Function):
    """Per-channel learnable (fractional) shift along the temporal axis.

    forward/backward are the kernels in shift_cuda_kernel.cu; xpos/ypos are the learnable
    shift amounts, the output is bilinearly interpolated between the two neighbouring frames.
    """

    @staticmethod
    def forward(ctx, input, xpos, ypos, stride=1):
        if stride == 1:
            xpos = xpos
            ypos = ypos
        else:
            ypos = ypos + 0.5
            # ypos = ypos + 0.5
        output = shift_cuda.forward(input, xpos, ypos, stride)
        ctx.save_for_backward(input, output, xpos, ypos)
        ctx.stride = stride
        return output

    @staticmethod
    def backward(ctx, grad_output):
        grad_output = grad_output.contiguous()
        input, output, xpos, ypos = ctx.saved_variables
        grad_input, grad_xpos, grad_ypos = shift_cuda.backward(grad_output, input, output, xpos, ypos, ctx.stride)
        return grad_input, grad_xpos, grad_ypos, None


class Shift(nn.Module):

    def __init__(self, channel, stride, init_scale=3):
        super(Shift, self).__init__()

        self.stride = stride

        self.xpos = nn.Parameter(torch.zeros(channel, requires_grad=True, device='cuda') * 1.5)
        self.ypos = nn.Parameter(torch.zeros(channel, requires_grad=True, device='cuda') * 1.5)

        self.xpos.data.uniform_(-1e-8, 1e-8)
        self.ypos.data.uniform_(-init_scale, init_scale)

    def forward(self, input):
        # input: N, C, T, V ; the kernel only supports contiguous fp32
        return ShiftFunction.apply(input.contiguous().float(), self.xpos, self.ypos, self.stride)


def test_shift():
    torch.manual_seed(0)
    m = Shift(channel=8, stride=1, init_scale=1)
    x = torch.randn(2, 8, 16, 25, device='cuda', requires_grad=True)
    y = m(x)
    y.sum().backward()
    print(y.shape, m.ypos.grad.abs().sum().item())


if __name__ == '__main__':
    test_shift()
