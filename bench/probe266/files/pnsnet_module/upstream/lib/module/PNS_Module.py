"""Normalized self-attention (NS) block of PNS-Net for video polyp segmentation.

The relevance measuring and spatial-temporal aggregation steps are local (radius r, dilation d)
attention over T neighbouring frames; they are implemented as CUDA kernels in lib/module/PNS
(build with `python setup.py build develop` there first).
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Function
from torch.autograd.function import once_differentiable

import self_cuda_backend as _ext


def _check_contiguous(*args):
    if not all([mod is None or mod.is_contiguous() for mod in args]):
        raise ValueError("Non-contiguous input")


class Relevance_Measuring(Function):
    @staticmethod
    def forward(ctx, query, key, radius=1, dilation=1):
        ctx.radius = radius
        ctx.dilation = dilation
        b, t, c, h, w = query.shape
        local_size = 2 * radius + 1
        size = (b, t, local_size * local_size * t, h, w)
        weight = torch.zeros(size, dtype=query.dtype, layout=query.layout, device=query.device)
        weight.fill_(-np.inf)
        _ext.weight_forward(query, key, weight, radius, dilation)

        ctx.save_for_backward(query, key)

        return weight

    @staticmethod
    @once_differentiable
    def backward(ctx, dw):
        query, key = ctx.saved_tensors
        dquery = torch.zeros_like(query)
        dkey = torch.zeros_like(key)
        _ext.weight_backward(dw.contiguous(), query, key, dquery, dkey, ctx.radius, ctx.dilation)
        _check_contiguous(dquery, dkey)

        return dquery, dkey, None, None


class Spatial_Temporal_Aggregation(Function):
    @staticmethod
    def forward(ctx, weight, proj, radius=1, dilation=1):
        ctx.radius = radius
        ctx.dilation = dilation
        out = torch.zeros_like(proj)
        _ext.map_forward(weight, proj, out, radius, dilation)

        ctx.save_for_backward(weight, proj)

        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, dout):
        weight, proj = ctx.saved_tensors
        dweight = torch.zeros_like(weight)
        dproj = torch.zeros_like(proj)
        _ext.map_backward(dout.contiguous(), weight, proj, dweight, dproj, ctx.radius, ctx.dilation)
        _check_contiguous(dweight, dproj)

        return dweight, dproj, None, None


relevance_measuring = Relevance_Measuring.apply
spatial_temporal_aggregation = Spatial_Temporal_Aggregation.apply


class NS_Block(nn.Module):
    def __init__(self, chan_in, chan_out=None, radius=[3, 3, 3, 3], dilation=[1, 3, 5, 7]):
        super(NS_Block, self).__init__()
        chan_out = chan_in if chan_out is None else chan_out
        self.chan_in = chan_in
        self.chan_out = chan_out
        self.radius = radius
        self.dilation = dilation
        assert len(radius) == len(dilation), "one radius per dilation rate"
        self.n_groups = len(dilation)
        self.query_conv = nn.Conv3d(chan_in, chan_out // 2, 1)
        self.key_conv = nn.Conv3d(chan_in, chan_out // 2, 1)
        self.value_conv = nn.Conv3d(chan_in, chan_in, 1)
        self.gamma = nn.Parameter(torch.zeros(1))
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x):
        # x: (B, T, C, H, W) -> conv3d expects (B, C, T, H, W)
        x_ = x.permute(0, 2, 1, 3, 4).contiguous()
        query = self.query_conv(x_).permute(0, 2, 1, 3, 4)
        key = self.key_conv(x_).permute(0, 2, 1, 3, 4)
        value = self.value_conv(x_).permute(0, 2, 1, 3, 4)

        # split channels into dilation groups
        c_q = query.shape[2] // self.n_groups
        c_v = value.shape[2] // self.n_groups
        outs = []
        for i in range(self.n_groups):
            q = query[:, :, i * c_q:(i + 1) * c_q].contiguous()
            k = key[:, :, i * c_q:(i + 1) * c_q].contiguous()
            v = value[:, :, i * c_v:(i + 1) * c_v].contiguous()
            # the "progressive normalization": scale by the channel count before softmax
            weight = relevance_measuring(q, k, self.radius[i], self.dilation[i]) / np.sqrt(c_q)
            weight = F.softmax(weight, -3)
            outs.append(spatial_temporal_aggregation(weight, v, self.radius[i], self.dilation[i]))
        out = torch.cat(outs, dim=2)
        return self.gamma * out + x


class NS_Stack(nn.Module):
    """Two stacked NS blocks sharing nothing; used between the Res2Net encoder and the decoder."""

    def __init__(self, channels, depth=2):
        super(NS_Stack, self).__init__()
        self.blocks = nn.ModuleList([NS_Block(channels) for _ in range(depth)])
        self.norm = nn.GroupNorm(num_groups=8, num_channels=channels)

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        b, t, c, h, w = x.shape
        x = self.norm(x.reshape(b * t, c, h, w)).reshape(b, t, c, h, w)
        return x


if __name__ == "__main__":
    x = torch.randn(2, 5, 32, 22, 22, device="cuda", requires_grad=True)
    blk = NS_Block(32).cuda()
    y = blk(x)
    y.mean().backward()
    print(y.shape, x.grad.abs().mean().item())
