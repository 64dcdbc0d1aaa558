"""
3D correlation layer + coarse-to-fine flow decoder.

The heavy lifting is done by the `corr3d_backend` extension (ext/corr3d, CUDA kernel). When the
extension is not installed we fall back to a pure PyTorch implementation that gives identical
results but is much slower and needs (2d+1)^3 shifted copies of the moving features.
"""
import os
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Function
from torch.autograd.function import once_differentiable

_HERE = os.path.dirname(os.path.abspath(__file__))
_SOURCES = [os.path.join(_HERE, "..", "ext", "corr3d", "src", f)
            for f in ("corr3d.cpp", "corr3d_cpu.cpp", "corr3d_cuda_kernel.cu")]

try:
    import corr3d_backend as _backend
    _HAS_BACKEND = True
except ImportError:
    _HAS_BACKEND = False
    if os.environ.get("CORR3D_JIT", "0") == "1":
        try:
            from torch.utils.cpp_extension import load
            _backend = load(name="corr3d_backend", sources=_SOURCES, extra_cuda_cflags=["-O3", "--use_fast_math"], verbose=False)
            _HAS_BACKEND = True
        except Exception as err:  # compiler missing, wrong CUDA version, ...
            warnings.warn(f"JIT build of corr3d failed ({err}); using the PyTorch fallback")
    else:
        warnings.warn("corr3d extension not found; using the slow PyTorch correlation. "
                      "Build it with `cd ext/corr3d && python setup.py install`.")


class Corr3dFunction(Function):
    @staticmethod
    def forward(ctx, fea_fixed, fea_moving, max_disp, dilation):
        ctx.save_for_backward(fea_fixed, fea_moving)
        ctx.max_disp = max_disp
        ctx.dilation = dilation
        output = _backend.forward(fea_fixed, fea_moving, max_disp, dilation)
        return output

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        fea_fixed, fea_moving = ctx.saved_tensors
        grad_fixed, grad_moving = _backend.backward(fea_fixed, fea_moving, grad_output.contiguous(),
                                                    ctx.max_disp, ctx.dilation)
        return grad_fixed, grad_moving, None, None


def correlation_torch(fea_fixed, fea_moving, max_disp, dilation=1):
    """Reference implementation: explicit shifts, mean over channels."""
    pad = max_disp * dilation
    moving_p = F.pad(fea_moving, [pad] * 6)
    D, H, W = fea_fixed.shape[2:]
    costs = []
    rng = range(-max_disp, max_disp + 1)
    for dz in rng:
        for dy in rng:
            for dx in rng:
                z0 = pad + dz * dilation
                y0 = pad + dy * dilation
                x0 = pad + dx * dilation
                shifted = moving_p[:, :, z0:z0 + D, y0:y0 + H, x0:x0 + W]
                costs.append((fea_fixed * shifted).mean(1, keepdim=True))
    return torch.cat(costs, 1)


class Correlation3d(nn.Module):
    def __init__(self, max_disp=3, dilation=1, use_cuda_kernel=True):
        super().__init__()
        self.max_disp = max_disp
        self.dilation = dilation
        self.use_cuda_kernel = use_cuda_kernel

    @property
    def out_channels(self):
        return (2 * self.max_disp + 1) ** 3

    def forward(self, fea_fixed, fea_moving):
        if self.use_cuda_kernel and _HAS_BACKEND and fea_fixed.is_cuda:
            out = Corr3dFunction.apply(fea_fixed.contiguous(), fea_moving.contiguous(),
                                       self.max_disp, self.dilation)
        else:
            out = correlation_torch(fea_fixed, fea_moving, self.max_disp, self.dilation)
        return F.leaky_relu(out, 0.1)


def conv_block(in_ch, out_ch, stride=1):
    return nn.Sequential(
        nn.Conv3d(in_ch, out_ch, 3, stride=stride, padding=1),
        nn.InstanceNorm3d(out_ch),
        nn.LeakyReLU(0.1, inplace=True),
    )


class FeaturePyramid(nn.Module):
    def __init__(self, in_ch=1, chs=(16, 32, 48, 64)):
        super().__init__()
        layers = []
        prev = in_ch
        for c in chs:
            layers.append(nn.Sequential(conv_block(prev, c, stride=2), conv_block(c, c)))
            prev = c
        self.levels = nn.ModuleList(layers)

    def forward(self, x):
        feats = []
        for level in self.levels:
            x = level(x)
            feats.append(x)
        return feats


def warp(x, flow):
    """Backward warp with a displacement field in voxels (channel order z, y, x)."""
    B, _, D, H, W = flow.shape
    zz, yy, xx = torch.meshgrid(
        torch.arange(D, device=flow.device, dtype=flow.dtype),
        torch.arange(H, device=flow.device, dtype=flow.dtype),
        torch.arange(W, device=flow.device, dtype=flow.dtype),
        indexing="ij",
    )
    grid = torch.stack((zz, yy, xx))[None] + flow
    grid = torch.stack([
        2 * grid[:, 2] / (W - 1) - 1,
        2 * grid[:, 1] / (H - 1) - 1,
        2 * grid[:, 0] / (D - 1) - 1,
    ], dim=-1)
    return F.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=True)


class FlowEstimator(nn.Module):
    def __init__(self, in_ch):
        super().__init__()
        self.net = nn.Sequential(
            conv_block(in_ch, 64), conv_block(64, 48), conv_block(48, 32),
            nn.Conv3d(32, 3, 3, padding=1),
        )
        nn.init.normal_(self.net[-1].weight, 0, 1e-5)
        nn.init.zeros_(self.net[-1].bias)

    def forward(self, x):
        return self.net(x)


class PyramidCorrRegNet(nn.Module):
    """Coarse-to-fine registration with a local 3D cost volume at every level."""

    def __init__(self, chs=(16, 32, 48, 64), max_disp=3):
        super().__init__()
        self.encoder = FeaturePyramid(1, chs)
        self.corr = Correlation3d(max_disp=max_disp)
        self.estimators = nn.ModuleList(
            [FlowEstimator(self.corr.out_channels + c + 3) for c in chs]
        )

    def forward(self, moving, fixed):
        feats_m = self.encoder(moving)
        feats_f = self.encoder(fixed)
        flow = None
        for level in reversed(range(len(feats_m))):
            fm, ff = feats_m[level], feats_f[level]
            if flow is None:
                flow = torch.zeros((ff.shape[0], 3, *ff.shape[2:]), device=ff.device, dtype=ff.dtype)
            else:
                flow = 2 * F.interpolate(flow, size=ff.shape[2:], mode="trilinear", align_corners=True)
            fm_w = warp(fm, flow)
            cost = self.corr(ff, fm_w)
            flow = flow + self.estimators[level](torch.cat([cost, ff, flow], dim=1))
        flow = 2 * F.interpolate(flow, size=fixed.shape[2:], mode="trilinear", align_corners=True)
        return warp(moving, flow), flow
