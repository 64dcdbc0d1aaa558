"""l_p-distance neurons (Zhang et al., "Towards Certifying l_inf Robustness
using Neural Networks with l_inf-dist Neurons", ICML 2021).

y_j = || x - w_j ||_p  for every output unit j (and every spatial position in
the convolutional variant). For p = inf the network is 1-Lipschitz w.r.t. the
l_inf norm, so the certified radius is margin / 2 and interval bounds are
exact and cheap (lower/upper propagate through the same kernel).

The forward/backward passes use a custom CUDA kernel (norm_dist_cuda.cu),
JIT-compiled the first time this module is imported. A pure-PyTorch
implementation is kept for CPU tensors and for unit tests.
"""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load

_dir = os.path.dirname(os.path.realpath(__file__))
norm_dist_cpp = load(name='norm_dist',
                     sources=[os.path.join(_dir, 'norm_dist.cpp'), os.path.join(_dir, 'norm_dist_cuda.cu')],
                     extra_cuda_cflags=['-O3', '--use_fast_math', '-gencode=arch=compute_70,code=sm_70',
                                        '-gencode=arch=compute_80,code=sm_80'],
                     verbose=False)


def _norm_dist_torch(x, weight, p, groups):
    """Reference implementation. x: [B, C_in, N], weight: [C_out, C_in / groups] -> [B, C_out, N]."""
    B, C_in, N = x.shape
    C_out = weight.size(0)
    x = x.view(B, groups, 1, C_in // groups, N)
    w = weight.view(1, groups, C_out // groups, C_in // groups, 1)
    diff = (x - w).abs()
    if math.isinf(p):
        y = diff.max(dim=3)[0]
    else:
        y = diff.pow(p).sum(dim=3).pow(1.0 / p)
    return y.view(B, C_out, N)


class NormDistFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, p, groups):
        x = x.contiguous()
        weight = weight.contiguous()
        output = torch.empty(x.size(0), weight.size(0), x.size(2), device=x.device, dtype=x.dtype)
        if math.isinf(p):
            index = torch.empty(output.shape, device=x.device, dtype=torch.int32)
            norm_dist_cpp.inf_dist_forward(x, weight, output, index, groups)
            ctx.save_for_backward(index)
        else:
            norm_dist_cpp.norm_dist_forward(x, weight, output, groups, p)
            ctx.save_for_backward(x, weight, output)
        ctx.groups = groups
        ctx.p = p
        ctx.in_shape = (x.shape, weight.shape)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        grad_output = grad_output.contiguous()
        x_shape, w_shape = ctx.in_shape
        grad_input = torch.zeros(x_shape, device=grad_output.device, dtype=grad_output.dtype)
        grad_weight = torch.zeros(w_shape, device=grad_output.device, dtype=grad_output.dtype)
        if math.isinf(ctx.p):
            index, = ctx.saved_tensors
            norm_dist_cpp.inf_dist_backward_input(grad_output, index, grad_input, ctx.groups)
            norm_dist_cpp.inf_dist_backward_weight(grad_output, index, grad_weight, ctx.groups)
        else:
            x, weight, output = ctx.saved_tensors
            norm_dist_cpp.norm_dist_backward_input(grad_output, x, weight, output, grad_input, ctx.groups, ctx.p)
            norm_dist_cpp.norm_dist_backward_weight(grad_output, x, weight, output, grad_weight, ctx.groups, ctx.p)
        return grad_input, grad_weight, None, None


class BoundInfDistFunction(torch.autograd.Function):
    """Interval bound propagation through an l_inf-dist layer (lower, upper) -> (lower, upper)."""

    @staticmethod
    def forward(ctx, lower, upper, weight, groups):
        lower, upper, weight = lower.contiguous(), upper.contiguous(), weight.contiguous()
        out_shape = (lower.size(0), weight.size(0), lower.size(2))
        out_lower = torch.empty(out_shape, device=lower.device, dtype=lower.dtype)
        out_upper = torch.empty(out_shape, device=lower.device, dtype=lower.dtype)
        index_l = torch.empty(out_shape, device=lower.device, dtype=torch.int32)
        index_u = torch.empty(out_shape, device=lower.device, dtype=torch.int32)
        norm_dist_cpp.bound_inf_dist_forward(lower, upper, weight, out_lower, out_upper, index_l, index_u, groups)
        ctx.save_for_backward(index_l, index_u)
        ctx.groups = groups
        ctx.shapes = (lower.shape, weight.shape)
        return out_lower, out_upper

    @staticmethod
    def backward(ctx, grad_l, grad_u):
        index_l, index_u = ctx.saved_tensors
        in_shape, w_shape = ctx.shapes
        grad_lower = torch.zeros(in_shape, device=grad_l.device, dtype=grad_l.dtype)
        grad_upper = torch.zeros(in_shape, device=grad_l.device, dtype=grad_l.dtype)
        grad_weight = torch.zeros(w_shape, device=grad_l.device, dtype=grad_l.dtype)
        norm_dist_cpp.bound_inf_dist_backward(grad_l.contiguous(), grad_u.contiguous(), index_l, index_u,
                                              grad_lower, grad_upper, grad_weight, ctx.groups)
        return grad_lower, grad_upper, grad_weight, None


def norm_dist(x, weight, p, groups=1, use_custom_kernel=True):
    if use_custom_kernel and x.is_cuda:
        return NormDistFunction.apply(x, weight, p, groups)
    return _norm_dist_torch(x, weight, p, groups)


def bound_inf_dist(lower, upper, weight, groups=1, use_custom_kernel=True):
    if use_custom_kernel and lower.is_cuda:
        return BoundInfDistFunction.apply(lower, upper, weight, groups)
    # |x - w| over the box [l, u]: upper = max(|l - w|, |u - w|), lower = dist(w, box)
    B, C_in, N = lower.shape
    C_out = weight.size(0)
    l = lower.view(B, groups, 1, C_in // groups, N)
    u = upper.view(B, groups, 1, C_in // groups, N)
    w = weight.view(1, groups, C_out // groups, C_in // groups, 1)
    up = torch.max((l - w).abs(), (u - w).abs()).max(dim=3)[0]
    lo = torch.max(F.relu(l - w), F.relu(w - u)).max(dim=3)[0]
    return lo.view(B, C_out, N), up.view(B, C_out, N)


class MeanNorm(nn.Module):
    """Mean shift (no variance scaling) so the layer stays 1-Lipschitz."""

    def __init__(self, out_channels, momentum=0.1):
        super(MeanNorm, self).__init__()
        self.out_channels = out_channels
        self.momentum = momentum
        self.register_buffer('running_mean', torch.zeros(out_channels))

    def forward(self, x):
        y = x.view(x.size(0), x.size(1), -1)
        if self.training:
            mean = y.mean(dim=-1).mean(dim=0)
            with torch.no_grad():
                self.running_mean.mul_(1 - self.momentum).add_(mean, alpha=self.momentum)
        else:
            mean = self.running_mean
        return (y - mean.unsqueeze(-1)).view_as(x)

    def extra_repr(self):
        return '{num_features}'.format(num_features=self.out_channels)


class NormDistConv(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=1, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, p=float('inf'), mean_normalize=False, identity_val=None):
        super(NormDistConv, self).__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.groups = groups
        self.p = p
        self.weight = nn.Parameter(torch.randn(out_channels, in_channels * kernel_size * kernel_size // groups))
        self.normalize = MeanNorm(out_channels) if mean_normalize else None
        self.bias = nn.Parameter(torch.zeros(out_channels)) if bias and not mean_normalize else None

        if identity_val is not None and in_channels <= out_channels:
            for i in range(in_channels):
                weight = self.weight.data.view(out_channels, -1, kernel_size, kernel_size)
                weight[i, :, :, :] = identity_val
                weight[i, i, kernel_size // 2, kernel_size // 2] = -identity_val

    def _unfold(self, x):
        h, w = x.size(2), x.size(3)
        x = F.unfold(x, self.kernel_size, self.dilation, self.padding, self.stride)
        h = (h + 2 * self.padding - self.dilation * (self.kernel_size - 1) - 1) // self.stride + 1
        w = (w + 2 * self.padding - self.dilation * (self.kernel_size - 1) - 1) // self.stride + 1
        return x, h, w

    def forward(self, x, lower=None, upper=None):
        x_unf, h, w = self._unfold(x)
        y = norm_dist(x_unf, self.weight, self.p, self.groups)
        if self.normalize is not None:
            y = self.normalize(y)
        if self.bias is not None:
            y = y + self.bias.view(1, -1, 1)
        y = y.view(x.size(0), -1, h, w)
        if lower is None or upper is None:
            return y, None, None
        assert math.isinf(self.p), 'interval bounds are only implemented for p = inf'
        l_unf, _, _ = self._unfold(lower)
        u_unf, _, _ = self._unfold(upper)
        lo, up = bound_inf_dist(l_unf, u_unf, self.weight, self.groups)
        if self.normalize is not None:
            shift = self.normalize.running_mean.view(1, -1, 1) if not self.training else 0
            lo, up = lo - shift, up - shift
        if self.bias is not None:
            lo = lo + self.bias.view(1, -1, 1)
            up = up + self.bias.view(1, -1, 1)
        return y, lo.view_as(y), up.view_as(y)

    def extra_repr(self):
        s = 'in_channels={in_channels}, out_channels={out_channels}, p={p}'
        if self.kernel_size != 1:
            s += ', kernel_size={kernel_size}, padding={padding}, stride={stride}'
        return s.format(**self.__dict__)


class NormDist(NormDistConv):
    """Fully-connected l_p-dist layer."""

    def __init__(self, in_features, out_features, bias=True, p=float('inf'), mean_normalize=False,
                 identity_val=None):
        super(NormDist, self).__init__(in_features, out_features, 1, bias=bias, p=p,
                                       mean_normalize=mean_normalize, identity_val=identity_val)

    def forward(self, x, lower=None, upper=None):
        x = x.unsqueeze(-1).unsqueeze(-1)
        if lower is not None:
            lower = lower.unsqueeze(-1).unsqueeze(-1)
            upper = upper.unsqueeze(-1).unsqueeze(-1)
        y, lo, up = super(NormDist, self).forward(x, lower, upper)
        y = y.flatten(1)
        if lo is not None:
            lo, up = lo.flatten(1), up.flatten(1)
        return y, lo, up
