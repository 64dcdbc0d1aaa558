# SPDX-FileCopyrightText: Copyright (c) 2024 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
"""Spectral convolutions for the Spherical Fourier Neural Operator (SFNO).

The forward SHT / FFT maps the input to spectral coefficients, a (block-)diagonal complex
multiplication mixes channels per mode (diagonal in l and m, or "dhconv": diagonal in m,
shared over l), and the inverse transform maps back. All spectral work is done in fp32: the
coefficient tensors are complex and the transforms are not autocast-safe.
"""

import math
from typing import Optional

import torch
import torch.nn as nn
from torch.cuda import amp

from torch_harmonics import RealSHT, InverseRealSHT

from makani.models.common.contractions import _contract_diagonal, _contract_dhconv
from makani.models.common.factorizations import get_contract_fun


@torch.jit.script
def compl_mul_add_fwd(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    """complex a*b + c on real tensors with a trailing (re, im) dimension"""
    tmp = torch.einsum("bkixys,kiox->skboxy", a, b)
    res = torch.stack([tmp[0, 0, ...] - tmp[1, 1, ...], tmp[1, 0, ...] + tmp[0, 1, ...]], dim=-1) + c
    return res


class RealFFT2(nn.Module):
    """Helper routine to wrap FFT similarly to the SHT"""

    def __init__(self, nlat, nlon, lmax=None, mmax=None):
        super().__init__()
        self.nlat = nlat
        self.nlon = nlon
        self.lmax = lmax or self.nlat
        self.mmax = mmax or self.nlon // 2 + 1

    def forward(self, x):
        y = torch.fft.rfft2(x, dim=(-2, -1), norm="ortho")
        y = torch.cat((y[..., : math.ceil(self.lmax / 2), : self.mmax], y[..., -math.floor(self.lmax / 2):, : self.mmax]), dim=-2)
        return y


class InverseRealFFT2(nn.Module):
    """Helper routine to wrap FFT similarly to the SHT"""

    def __init__(self, nlat, nlon, lmax=None, mmax=None):
        super().__init__()
        self.nlat = nlat
        self.nlon = nlon
        self.lmax = lmax or self.nlat
        self.mmax = mmax or self.nlon // 2 + 1

    def forward(self, x):
        return torch.fft.irfft2(x, dim=(-2, -1), s=(self.nlat, self.nlon), norm="ortho")


class SpectralConvS2(nn.Module):
    """Spectral convolution on the sphere: SHT -> diagonal / dhconv contraction -> inverse SHT."""

    def __init__(
        self,
        forward_transform,
        inverse_transform,
        in_channels,
        out_channels,
        operator_type="diagonal",
        separable=False,
        bias=False,
        gain=1.0,
    ):
        super().__init__()

        self.forward_transform = forward_transform
        self.inverse_transform = inverse_transform

        self.modes_lat = self.inverse_transform.lmax
        self.modes_lon = self.inverse_transform.mmax

        self.scale_residual = (self.forward_transform.nlat != self.inverse_transform.nlat) or (
            self.forward_transform.nlon != self.inverse_transform.nlon
        )
        if hasattr(self.forward_transform, "grid"):
            self.scale_residual = self.scale_residual or (self.forward_transform.grid != self.inverse_transform.grid)

        # remember factorization details
        self.operator_type = operator_type
        self.separable = separable

        assert self.inverse_transform.lmax == self.modes_lat
        assert self.inverse_transform.mmax == self.modes_lon

        weight_shape = [out_channels]
        if not self.separable:
            weight_shape += [in_channels]

        if self.operator_type == "diagonal":
            weight_shape += [self.modes_lat, self.modes_lon]
        elif self.operator_type == "dhconv":
            weight_shape += [self.modes_lat]
        else:
            raise ValueError(f"Unsupported operator type f{self.operator_type}")

        # Compute scaling factor for correct initialization
        scale = math.sqrt(gain / in_channels) * torch.ones(self.modes_lat, dtype=torch.complex64)
        # seemingly the first weight is not really complex, so we need to account for that
        scale[0] *= math.sqrt(2.0)
        init = scale * torch.randn(*weight_shape, dtype=torch.complex64)
        self.weight = nn.Parameter(torch.view_as_real(init))

        self._contract = get_contract_fun(self.weight, implementation="factorized", separable=separable,
                                          complex=True, operator_type=operator_type)

        if bias == "constant":
            self.bias = nn.Parameter(torch.zeros(1, out_channels, 1, 1))
        elif bias == "position":
            self.bias = nn.Parameter(torch.zeros(1, out_channels, self.inverse_transform.nlat, self.inverse_transform.nlon))
        else:
            self.bias = None

    def forward(self, x):
        dtype = x.dtype
        residual = x
        x = x.float()

        with amp.autocast(enabled=False):
            x = self.forward_transform(x).contiguous()
            if self.scale_residual:
                residual = self.inverse_transform(x)
                residual = residual.to(dtype)

            x = torch.view_as_real(x)
            xp = self._contract(x, self.weight, separable=self.separable, operator_type=self.operator_type)
            x = torch.view_as_complex(xp.contiguous())
            x = self.inverse_transform(x)

        if self.bias is not None:
            x = x + self.bias

        x = x.type(dtype)
        return x, residual


class FactorizedSpectralConvS2(SpectralConvS2):
    """Low-rank (CP) factorised variant: the dense weight is never materialised."""

    def __init__(self, forward_transform, inverse_transform, in_channels, out_channels, operator_type="diagonal",
                 rank=0.2, separable=False, bias=False, gain=1.0):
        super().__init__(forward_transform, inverse_transform, in_channels, out_channels, operator_type, separable,
                         bias, gain)
        modes = self.modes_lat if operator_type == "dhconv" else self.modes_lat * self.modes_lon
        r = max(1, int(rank * min(in_channels, out_channels, modes)))
        self.factor_in = nn.Parameter(torch.view_as_real(torch.randn(in_channels, r, dtype=torch.complex64) / math.sqrt(in_channels)))
        self.factor_out = nn.Parameter(torch.view_as_real(torch.randn(out_channels, r, dtype=torch.complex64) / math.sqrt(r)))
        self.factor_modes = nn.Parameter(torch.view_as_real(torch.randn(self.modes_lat, r, dtype=torch.complex64)))

    def forward(self, x):
        dtype = x.dtype
        residual = x
        x = x.float()

        with torch.autocast(device_type="cuda", enabled=False):
            x = self.forward_transform(x).contiguous()
            if self.scale_residual:
                residual = self.inverse_transform(x).to(dtype)
            fin = torch.view_as_complex(self.factor_in)
            fout = torch.view_as_complex(self.factor_out)
            fl = torch.view_as_complex(self.factor_modes)
            # x: (b, c, l, m) complex -> project to rank space, scale per degree l, project back
            xr = torch.einsum("bclm,cr->brlm", x, fin)
            xr = xr * fl.t().unsqueeze(0).unsqueeze(-1)
            x = torch.einsum("brlm,or->bolm", xr, fout)
            x = self.inverse_transform(x)

        if self.bias is not None:
            x = x + self.bias

        return x.type(dtype), residual


def build_transforms(nlat, nlon, grid="equiangular", hard_thresholding_fraction=1.0, spectral_transform="sht"):
    modes_lat = int(nlat * hard_thresholding_fraction)
    modes_lon = int((nlon // 2 + 1) * hard_thresholding_fraction)
    if spectral_transform == "sht":
        fwd = RealSHT(nlat, nlon, lmax=modes_lat, mmax=modes_lon, grid=grid).float()
        inv = InverseRealSHT(nlat, nlon, lmax=modes_lat, mmax=modes_lon, grid=grid).float()
    elif spectral_transform == "fft":
        fwd = RealFFT2(nlat, nlon, lmax=modes_lat, mmax=modes_lon)
        inv = InverseRealFFT2(nlat, nlon, lmax=modes_lat, mmax=modes_lon)
    else:
        raise ValueError(f"Unknown spectral transform {spectral_transform}")
    return fwd, inv
