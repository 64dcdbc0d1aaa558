# coding=utf-8

# SPDX-FileCopyrightText: Copyright (c) 2024 The torch-harmonics Authors. All rights reserved.
# SPDX-License-Identifier: BSD-3-Clause
#

"""Discrete-continuous (DISCO) convolutions on the sphere, as used by SFNO-style weather models.

The filter is a linear combination of localized basis functions; the contraction of the input with
the precomputed (sparse) filter tensor psi is done either by a custom CUDA kernel or, as a fallback,
by a dense/sparse torch implementation.
"""

import abc
import math
from functools import partial
from typing import List, Optional, Tuple, Union

import torch
import torch.nn as nn

from torch_harmonics.quadrature import _precompute_latitudes
from torch_harmonics._filter_basis import get_filter_basis

try:
    import disco_cuda_extension

    _cuda_extension_available = True
except ImportError as err:
    disco_cuda_extension = None
    _cuda_extension_available = False


def _normalize_convolution_tensor_s2(psi_idx, psi_vals, in_shape, out_shape, kernel_size, quad_weights,
                                     transpose_normalization=False, basis_norm_mode="mean", merge_quadrature=False, eps=1e-9):
    """Normalizes the filter so that each basis function integrates to one over its support."""
    nlat_in, nlon_in = in_shape
    nlat_out, nlon_out = out_shape
    idx = psi_idx
    ikernel, ilat_out, ilat_in = idx[0], idx[1], idx[2] // nlon_in
    q = quad_weights[ilat_in].reshape(-1)
    # integral of every (kernel, out-latitude) slice
    norm = torch.zeros(kernel_size, nlat_out, dtype=psi_vals.dtype, device=psi_vals.device)
    norm.index_put_((ikernel, ilat_out), (psi_vals * q).abs(), accumulate=True)
    if basis_norm_mode == "mean":
        norm = norm.mean(dim=1, keepdim=True).expand_as(norm)
    psi_vals = psi_vals / (norm[ikernel, ilat_out] + eps)
    if merge_quadrature:
        psi_vals = psi_vals * q
    return psi_vals


def _precompute_convolution_tensor_s2(in_shape, out_shape, filter_basis, grid_in="equiangular", grid_out="equiangular",
                                      theta_cutoff=0.01 * math.pi):
    """Precomputes the rotated filters at positions phi = 0 for every output latitude (done once, on the CPU, in float64)."""
    nlat_in, nlon_in = in_shape
    nlat_out, nlon_out = out_shape
    lats_in, win = _precompute_latitudes(nlat_in, grid=grid_in)
    lats_out, wout = _precompute_latitudes(nlat_out, grid=grid_out)
    lats_in = torch.from_numpy(lats_in).double()
    lats_out = torch.from_numpy(lats_out).double()
    lons_in = torch.linspace(0, 2 * math.pi, nlon_in + 1, dtype=torch.float64)[:-1]

    out_idx, out_vals = [], []
    for t in range(nlat_out):
        alpha = -lats_out[t]
        beta = lons_in
        gamma = lats_in.reshape(-1, 1)
        # rotated coordinates
        z = -torch.cos(beta) * torch.sin(alpha) * torch.sin(gamma) + torch.cos(alpha) * torch.cos(gamma)
        x = torch.cos(alpha) * torch.cos(beta) * torch.sin(gamma) + torch.cos(gamma) * torch.sin(alpha)
        y = torch.sin(beta) * torch.sin(gamma)
        theta = torch.arccos(z.clamp(-1.0, 1.0))
        phi = torch.arctan2(y, x) + math.pi
        iidx, vals = filter_basis.compute_support_vals(theta, phi, r_cutoff=theta_cutoff)
        idx = torch.stack([iidx[:, 0], t * torch.ones_like(iidx[:, 0]), iidx[:, 1] * nlon_in + iidx[:, 2]], dim=0)
        out_idx.append(idx)
        out_vals.append(vals)
    out_idx = torch.cat(out_idx, dim=-1).to(torch.long).contiguous()
    out_vals = torch.cat(out_vals, dim=-1).to(torch.float32).contiguous()
    quad_weights = torch.from_numpy(win).float().reshape(-1, 1) * 2 * math.pi / nlon_in
    return out_idx, out_vals, quad_weights


def _disco_s2_contraction_torch(x: torch.Tensor, psi: torch.Tensor, nlon_out: int):
    """Reference contraction with a sparse psi [K, nlat_out, nlat_in * nlon_in]; rolls the input in longitude."""
    assert len(psi.shape) == 3
    assert len(x.shape) == 4
    psi = psi.to(x.device)

    batch_size, n_chans, nlat_in, nlon_in = x.shape
    kernel_size, nlat_out, _ = psi.shape

    assert psi.shape[-1] == nlat_in * nlon_in
    assert nlon_in % nlon_out == 0
    assert nlon_in >= nlat_out
    pscale = nlon_in // nlon_out

    # add a dummy dimension for nkernel and move the batch and channel dims to the end
    x = x.reshape(1, batch_size * n_chans, nlat_in, nlon_in).permute(0, 2, 3, 1)
    x = x.expand(kernel_size, -1, -1, -1)

    y = torch.zeros(nlon_out, kernel_size, nlat_out, batch_size * n_chans, device=x.device, dtype=x.dtype)

    for pout in range(nlon_out):
        # sparse contraction with psi
        y[pout] = torch.bmm(psi, x.reshape(kernel_size, nlat_in * nlon_in, -1))
        # we need to repeatedly roll the input tensor to faciliate the shifted multiplication
        x = torch.roll(x, -pscale, dims=2)

    # reshape y back to expose the correct dimensions
    y = y.permute(3, 1, 2, 0).reshape(batch_size, n_chans, kernel_size, nlat_out, nlon_out)

    return y


class _DiscoS2ContractionCuda(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, x, roff_idx, ker_idx, row_idx, col_idx, vals, kernel_size, nlat_out, nlon_out):
        ctx.save_for_backward(roff_idx, ker_idx, row_idx, col_idx, vals)
        ctx.kernel_size = kernel_size
        ctx.nlat_in = x.shape[-2]
        ctx.nlon_in = x.shape[-1]
        output = disco_cuda_extension.forward(x.contiguous(), roff_idx, ker_idx, row_idx, col_idx, vals, kernel_size, nlat_out, nlon_out)
        return output

    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(ctx, grad_output):
        roff_idx, ker_idx, row_idx, col_idx, vals = ctx.saved_tensors
        grad_input = disco_cuda_extension.backward(grad_output.contiguous(), roff_idx, ker_idx, row_idx, col_idx, vals,
                                                   ctx.kernel_size, ctx.nlat_in, ctx.nlon_in)
        return grad_input, None, None, None, None, None, None, None, None


class DiscreteContinuousConvS2(nn.Module):
    """Discrete-continuous (DISCO) convolution on the 2-Sphere as described in [1].

    [1] Ocampo, Price, McEwen, Scalable and equivariant spherical CNNs by discrete-continuous (DISCO) convolutions, ICLR (2023), arXiv:2209.13603
    """

    def __init__(self, in_channels: int, out_channels: int, in_shape: Tuple[int], out_shape: Tuple[int],
                 kernel_shape: Union[int, List[int]], basis_type: Optional[str] = "piecewise linear",
                 groups: Optional[int] = 1, grid_in: Optional[str] = "equiangular", grid_out: Optional[str] = "equiangular",
                 bias: Optional[bool] = True, theta_cutoff: Optional[float] = None):
        super().__init__()
        self.nlat_in, self.nlon_in = in_shape
        self.nlat_out, self.nlon_out = out_shape
        self.filter_basis = get_filter_basis(kernel_shape=kernel_shape, basis_type=basis_type)
        self.kernel_size = self.filter_basis.kernel_size
        self.groups = groups
        if in_channels % groups != 0 or out_channels % groups != 0:
            raise ValueError("Error, the number of input and output channels has to be an integer multiple of the group size")
        self.groupsize = in_channels // groups
        scale = math.sqrt(1.0 / self.groupsize / self.kernel_size)
        self.weight = nn.Parameter(scale * torch.randn(out_channels, self.groupsize, self.kernel_size))
        self.bias = nn.Parameter(torch.zeros(out_channels)) if bias else None

        if theta_cutoff is None:
            theta_cutoff = (self.kernel_size + 1) * torch.pi / float(self.nlat_in - 1)
        idx, vals, quad_weights = _precompute_convolution_tensor_s2(in_shape, out_shape, self.filter_basis, grid_in, grid_out, theta_cutoff)
        vals = _normalize_convolution_tensor_s2(idx, vals, in_shape, out_shape, self.kernel_size, quad_weights)

        # sort the values
        ker_idx = idx[0, ...].contiguous()
        row_idx = idx[1, ...].contiguous()
        col_idx = idx[2, ...].contiguous()
        vals = vals.contiguous()

        if _cuda_extension_available:
            # preprocessed data-structure for GPU kernel
            roff_idx = disco_cuda_extension.preprocess_psi(self.kernel_size, self.nlat_out, ker_idx, row_idx, col_idx, vals).contiguous()
            self.register_buffer("psi_roff_idx", roff_idx, persistent=False)

        # save all datastructures
        self.register_buffer("psi_ker_idx", ker_idx, persistent=False)
        self.register_buffer("psi_row_idx", row_idx, persistent=False)
        self.register_buffer("psi_col_idx", col_idx, persistent=False)
        self.register_buffer("psi_vals", vals, persistent=False)

    def get_psi(self):
        psi = torch.sparse_coo_tensor(
            torch.stack([self.psi_ker_idx, self.psi_row_idx, self.psi_col_idx]), self.psi_vals,
            size=(self.kernel_size, self.nlat_out, self.nlat_in * self.nlon_in),
        ).coalesce()
        return psi

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.is_cuda and _cuda_extension_available:
            x = _DiscoS2ContractionCuda.apply(x, self.psi_roff_idx, self.psi_ker_idx, self.psi_row_idx, self.psi_col_idx,
                                              self.psi_vals, self.kernel_size, self.nlat_out, self.nlon_out)
        else:
            psi = self.get_psi()
            x = _disco_s2_contraction_torch(x, psi, self.nlon_out)

        # extract shape
        B, C, K, H, W = x.shape
        x = x.reshape(B, self.groups, self.groupsize, K, H, W)

        # do weight multiplication
        out = torch.einsum("bgckxy,gock->bgoxy", x, self.weight.reshape(self.groups, -1, self.weight.shape[1], self.weight.shape[2])).contiguous()
        out = out.reshape(B, -1, H, W)

        if self.bias is not None:
            out = out + self.bias.reshape(1, -1, 1, 1)

        return out
