#
# torchsionna -- a PyTorch port of selected NVIDIA Sionna link-level components.
# SPDX-License-Identifier: Apache-2.0
#
"""Rayleigh block fading and flat-fading channel layers.

Port of ``sionna.channel.RayleighBlockFading`` / ``sionna.channel.FlatFadingChannel``
/ ``sionna.channel.AWGN``.  Tensors follow the Sionna conventions:

    a   : [batch, num_rx, num_rx_ant, num_tx, num_tx_ant, num_paths, num_time_steps]  complex
    tau : [batch, num_rx, num_tx, num_paths]                                        real
"""
import math

import torch
import torch.nn as nn

from torchsionna import config
from torchsionna.utils import complex_normal, expand_to_rank, ebnodb2no


class AWGN(nn.Module):
    r"""Add complex AWGN with variance ``no`` to the input.

    ``no`` can be a scalar or broadcastable to the input shape.
    """

    def __init__(self, dtype=None):
        super().__init__()
        self.dtype = dtype or config.cdtype
        self.real_dtype = torch.float32 if self.dtype == torch.complex64 else torch.float64

    def forward(self, x, no):
        noise = complex_normal(x.shape, dtype=self.dtype, device=x.device, generator=config.generator)
        no = torch.as_tensor(no, dtype=self.real_dtype, device=x.device)
        no = expand_to_rank(no, x.dim(), axis=-1)
        return x + torch.sqrt(no) * noise


class RayleighBlockFading(nn.Module):
    r"""Generate channel impulse responses of a Rayleigh block-fading model.

    All coefficients are i.i.d. CN(0,1) and constant over ``num_time_steps``;
    there is a single path with zero delay.
    """

    def __init__(self, num_rx, num_rx_ant, num_tx, num_tx_ant, dtype=None, device=None):
        super().__init__()
        self.num_rx = num_rx
        self.num_rx_ant = num_rx_ant
        self.num_tx = num_tx
        self.num_tx_ant = num_tx_ant
        self.dtype = dtype or config.cdtype
        self.device = device or config.device

    def forward(self, batch_size, num_time_steps, sampling_frequency=None):
        delays = torch.zeros(batch_size, self.num_rx, self.num_tx, 1,
                             dtype=torch.float32, device=self.device)
        shape = [batch_size, self.num_rx, self.num_rx_ant, self.num_tx, self.num_tx_ant, 1, 1]
        h = complex_normal(shape, dtype=self.dtype, device=self.device, generator=config.generator)
        h = h.expand(*shape[:-1], num_time_steps)
        return h, delays


class GenerateFlatFadingChannel(nn.Module):
    r"""Random flat-fading channel matrices with optional spatial correlation.

    H = R_rx^{1/2} H_w R_tx^{1/2}
    """

    def __init__(self, num_tx_ant, num_rx_ant, spatial_corr=None, dtype=None):
        super().__init__()
        self.num_tx_ant = num_tx_ant
        self.num_rx_ant = num_rx_ant
        self.spatial_corr = spatial_corr
        self.dtype = dtype or config.cdtype

    def forward(self, batch_size, device=None):
        device = device or config.device
        shape = [batch_size, self.num_rx_ant, self.num_tx_ant]
        h = complex_normal(shape, dtype=self.dtype, device=device, generator=config.generator)
        if self.spatial_corr is not None:
            h = self.spatial_corr(h)
        return h


class KroneckerModel(nn.Module):
    """Kronecker spatial correlation with exponential correlation matrices."""

    def __init__(self, r_tx=None, r_rx=None):
        super().__init__()
        self.r_tx_sqrt = None if r_tx is None else self._sqrtm(r_tx)
        self.r_rx_sqrt = None if r_rx is None else self._sqrtm(r_rx)

    @staticmethod
    def _sqrtm(r):
        # Hermitian PSD square root via eigendecomposition (done once on the GPU)
        r = r.to("cuda")
        w, v = torch.linalg.eigh(r)
        w = torch.clamp(w, min=0).sqrt().to(r.dtype)
        return (v * w.unsqueeze(-2)) @ v.conj().transpose(-2, -1)

    def forward(self, h):
        if self.r_rx_sqrt is not None:
            h = self.r_rx_sqrt.to(h.device) @ h
        if self.r_tx_sqrt is not None:
            h = h @ self.r_tx_sqrt.to(h.device)
        return h


def exp_corr_mat(a, n, dtype=torch.complex64):
    """Exponential correlation matrix R[i,j] = a^{|i-j|} (a may be complex)."""
    idx = torch.arange(n)
    d = (idx.unsqueeze(0) - idx.unsqueeze(1)).abs()
    a = torch.as_tensor(a, dtype=dtype)
    r = a ** d.to(dtype)
    # keep Hermitian symmetry for complex a
    r = torch.triu(r) + torch.triu(r, 1).conj().transpose(0, 1)
    return r


class ApplyFlatFadingChannel(nn.Module):
    r"""y = H x + n"""

    def __init__(self, add_awgn=True, dtype=None):
        super().__init__()
        self.add_awgn = add_awgn
        self.awgn = AWGN(dtype=dtype)

    def forward(self, x, h, no=None):
        y = torch.einsum("...ij,...j->...i", h, x)
        if self.add_awgn:
            y = self.awgn(y, no)
        return y


class FlatFadingChannel(nn.Module):
    """Generate + apply a flat-fading MIMO channel (returns y and, optionally, H)."""

    def __init__(self, num_tx_ant, num_rx_ant, spatial_corr=None, add_awgn=True, return_channel=False,
                 dtype=None):
        super().__init__()
        self.gen = GenerateFlatFadingChannel(num_tx_ant, num_rx_ant, spatial_corr, dtype)
        self.apply_ch = ApplyFlatFadingChannel(add_awgn, dtype)
        self.return_channel = return_channel

    def forward(self, x, no=None):
        h = self.gen(x.shape[0], device=x.device)
        y = self.apply_ch(x, h, no)
        return (y, h) if self.return_channel else y


def subcarrier_frequencies(num_subcarriers, subcarrier_spacing, device=None):
    """Baseband frequencies of the subcarriers, DC-centred (Sionna convention)."""
    device = device or config.device
    if num_subcarriers % 2 == 0:
        start, limit = -num_subcarriers / 2, num_subcarriers / 2
    else:
        start, limit = -(num_subcarriers - 1) / 2, (num_subcarriers - 1) / 2 + 1
    return torch.arange(start, limit, dtype=torch.float32, device=device) * subcarrier_spacing


def cir_to_ofdm_channel(frequencies, a, tau, normalize=False):
    r"""Channel frequency response H(f) = sum_l a_l exp(-j 2 pi f tau_l).

    a   : [..., num_paths, num_time_steps] complex
    tau : [..., num_paths] real (broadcast over antennas)
    returns [..., num_time_steps, num_subcarriers]
    """
    tau = tau.unsqueeze(-1)  # [..., P, 1]
    e = torch.exp(-2j * math.pi * tau * frequencies)  # [..., P, F]
    e = e.unsqueeze(-3) if e.dim() < a.dim() else e
    h_f = torch.einsum("...pt,...pf->...tf", a, e.to(a.dtype))
    if normalize:
        c = torch.mean(h_f.real ** 2 + h_f.imag ** 2, dim=(-1, -2), keepdim=True)
        h_f = h_f / torch.sqrt(c)
    return h_f


def apply_ofdm_channel(x, h_freq, no=None, awgn=None):
    """Element-wise y = H x (+ n) on the resource grid."""
    y = h_freq * x
    if awgn is not None and no is not None:
        y = awgn(y, no)
    return y


if __name__ == "__main__":
    config.seed = 1
    ch = FlatFadingChannel(4, 8, spatial_corr=KroneckerModel(exp_corr_mat(0.5, 4), exp_corr_mat(0.7, 8)),
                           return_channel=True)
    x = complex_normal([1024, 4], dtype=torch.complex64, device="cuda")
    no = ebnodb2no(10.0, num_bits_per_symbol=2, coderate=0.5)
    y, h = ch(x, no)
    print(y.shape, h.shape, "E|h|^2 = %.3f" % (h.abs() ** 2).mean().item())
    torch.cuda.manual_seed(1)
    blk = RayleighBlockFading(1, 8, 1, 4)
    a, tau = blk(32, 14)
    print(a.shape, tau.shape)
