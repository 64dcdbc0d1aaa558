import torch
from torch.autograd import Function
from torch.nn.modules.module import Module
from torch.nn import Parameter

import shift_cuda_linear_cpp


class ShiftFunction(Function):
    """Learnable fractional temporal shift (Shift-GCN, "adaptive temporal shift").

    Every channel c is moved along the temporal axis by a real-valued offset
    ypos[c]; values between frames are linearly interpolated in the kernel.
    xpos is kept for API compatibility with the 2-D spatial shift op.
    """

    @staticmethod
    def forward(ctx, input, xpos, ypos, stride=1):
        if not input.is_cuda:
            raise NotImplementedError('ShiftFunction only supports CUDA tensors')
        if input.dtype == torch.half:
            # the kernel only has a float instantiation
            input = input.float()
        ctx.stride = stride
        ctx.save_for_backward(input, xpos, ypos)
        output = shift_cuda_linear_cpp.forward(input.contiguous(), xpos, ypos, stride)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        grad_output = grad_output.contiguous()
        input, xpos, ypos = ctx.saved_tensors
        grad_input, grad_xpos, grad_ypos = shift_cuda_linear_cpp.backward(
            grad_output, input, xpos, ypos, ctx.stride)
        return grad_input, grad_xpos, grad_ypos, None


class Shift(Module):

    def __init__(self, channel, stride, init_scale=3):
        super(Shift, self).__init__()

        self.stride = stride

        self.xpos = Parameter(torch.zeros(channel, requires_grad=True, device='cuda') * 1.5)
        self.ypos = Parameter(torch.zeros(channel, requires_grad=True, device='cuda') * 1.5)

        self.xpos.data.uniform_(-1e-8, 1e-8)
        self.ypos.data.uniform_(-init_scale, init_scale)

    def forward(self, input):
        return ShiftFunction.apply(input, self.xpos, self.ypos, self.stride)

    def extra_repr(self):
        return 'channel={}, stride={}'.format(self.xpos.numel(), self.stride)


def _reference_shift(x, ypos, stride=1):
    """Slow pure-PyTorch reference used by the self test below (float64, CPU)."""
    n, c, t, v = x.shape
    out = torch.zeros(n, c, (t + stride - 1) // stride, v, dtype=x.dtype)
    for ci in range(c):
        for ti in range(0, t, stride):
            pos = ti + ypos[ci].item()
            lo = int(torch.floor(torch.tensor(pos)).item())
            w = pos - lo
            for src, wt in ((lo, 1 - w), (lo + 1, w)):
                if 0 <= src < t:
                    out[:, ci, ti // stride] += wt * x[:, ci, src]
    return out


if __name__ == '__main__':
    # quick numerical check of the extension against the reference
    torch.manual_seed(0)
    shift = Shift(channel=8, stride=1, init_scale=1)
    x = torch.randn(2, 8, 16, 25).cuda()
    y = shift(x)
    torch.cuda.synchronize()
    ref = _reference_shift(x.double().cpu(), shift.ypos.detach().double().cpu())
    print('max abs diff:', (y.double().cpu() - ref).abs().max().item())
