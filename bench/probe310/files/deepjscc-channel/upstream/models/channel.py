"""Differentiable channel layers for Deep JSCC.

All channels operate on complex baseband symbols.  The encoder output (real,
shape [B, 2c, H, W]) is flattened and paired up into complex symbols
z = x[..., :k] + j x[..., k:], power-normalised, passed through the channel and
converted back to the real layout expected by the decoder.
"""
import math

import torch
import torch.nn as nn

from models.ofdm import OFDMChannel


def snr_to_noise_std(snr_db, signal_power=1.0):
    """Per-complex-dimension noise std for a given SNR (dB) and signal power."""
    n0 = signal_power / (10 ** (snr_db / 10.0))
    return math.sqrt(n0 / 2.0)


def to_complex(x):
    """[B, C, H, W] real -> [B, C*H*W/2] complex64."""
    b = x.shape[0]
    z = x.reshape(b, -1)
    k = z.shape[1] // 2
    return torch.complex(z[:, :k], z[:, k:])


def to_real(z, shape):
    return torch.cat([z.real, z.imag], dim=1).reshape(shape)


def power_normalize(z, mode="avg", P=1.0):
    """Normalise to average power P per complex symbol ('avg') or per image ('peak')."""
    k = z.shape[1]
    if mode == "avg":
        pwr = torch.sum(z.real ** 2 + z.imag ** 2, dim=1, keepdim=True)
        return math.sqrt(P * k) * z / torch.sqrt(pwr)
    elif mode == "peak":
        amp = torch.sqrt(z.real ** 2 + z.imag ** 2).amax(dim=1, keepdim=True)
        return math.sqrt(P) * z / amp
    raise ValueError(mode)


class AWGN(nn.Module):
    def forward(self, z, snr_db):
        std = snr_to_noise_std(snr_db)
        noise = torch.complex(torch.randn_like(z.real), torch.randn_like(z.imag)) * std
        return z + noise


class RayleighBlockFading(nn.Module):
    """Slow (per-image) Rayleigh fading with perfect CSI at the receiver.

    y = h z + n,  h ~ CN(0, 1) constant over the whole codeword.
    The receiver applies zero-forcing (or MMSE) equalisation.
    """

    def __init__(self, equalizer="zf"):
        super().__init__()
        self.equalizer = equalizer

    def forward(self, z, snr_db):
        b = z.shape[0]
        h_re = torch.randn(b, 1) / math.sqrt(2)
        h_im = torch.randn(b, 1) / math.sqrt(2)
        h = torch.complex(h_re, h_im).cuda()
        std = snr_to_noise_std(snr_db)
        noise = torch.complex(torch.randn_like(z.real), torch.randn_like(z.imag)) * std
        y = h * z + noise
        if self.equalizer == "zf":
            return y / h
        n0 = 2 * std ** 2
        w = h.conj() / (h.abs() ** 2 + n0)
        return w * y


class FastFading(nn.Module):
    """Symbol-wise i.i.d. Rayleigh fading (fast fading)."""

    def forward(self, z, snr_db):
        h = torch.randn(z.shape, dtype=torch.cfloat, device="cuda")
        std = snr_to_noise_std(snr_db)
        noise = torch.randn(z.shape, dtype=torch.cfloat, device=z.device) * std
        y = h * z + noise
        return y * h.conj() / (h.real ** 2 + h.imag ** 2 + 1e-8)


class PhaseNoise(nn.Module):
    """Wiener phase noise with linewidth-symbol-time product `beta`."""

    def __init__(self, beta=1e-4):
        super().__init__()
        self.beta = beta

    def forward(self, z, snr_db):
        dphi = torch.randn(z.shape, device=z.device) * math.sqrt(2 * math.pi * self.beta)
        phi = torch.cumsum(dphi, dim=1)
        return z * torch.exp(1j * phi)


class MIMOSVDChannel(nn.Module):
    """Nt x Nr MIMO Rayleigh channel with SVD precoding (parallel eigen-channels).

    The complex symbols are split into min(Nt, Nr) streams; with perfect CSI at
    both ends the channel reduces to y_i = s_i x_i + n_i.  Power allocation is
    uniform (water-filling is left to the encoder, which sees the singular values).
    """

    def __init__(self, nt=2, nr=2):
        super().__init__()
        self.nt, self.nr = nt, nr
        self.ns = min(nt, nr)

    def forward(self, z, snr_db):
        b, k = z.shape
        pad = (-k) % self.ns
        if pad:
            z = torch.cat([z, z.new_zeros(b, pad)], dim=1)
        x = z.view(b, self.ns, -1)  # [B, Ns, L]
        h = torch.complex(torch.randn(b, self.nr, self.nt, device=z.device),
                          torch.randn(b, self.nr, self.nt, device=z.device)) / math.sqrt(2)
        u, s, vh = torch.linalg.svd(h)
        v = vh.mH[..., :self.ns]
        tx = v @ x  # precoding
        std = snr_to_noise_std(snr_db)
        y = h @ tx
        y = y + torch.complex(torch.randn_like(y.real), torch.randn_like(y.imag)) * std
        r = u.mH[:, :self.ns] @ y  # combining
        x_hat = r / s[:, :self.ns].unsqueeze(-1).to(r.dtype)
        return x_hat.reshape(b, -1)[:, :k]


class Channel(nn.Module):
    def __init__(self, kind="awgn", ofdm_cfg=None, power_norm="avg"):
        super().__init__()
        self.kind = kind
        self.power_norm = power_norm
        if kind == "awgn":
            self.layer = AWGN()
        elif kind == "rayleigh":
            self.layer = RayleighBlockFading()
        elif kind == "fast":
            self.layer = FastFading()
        elif kind == "phase":
            self.layer = PhaseNoise()
        elif kind == "ofdm":
            self.layer = OFDMChannel(**(ofdm_cfg or {}))
        else:
            raise NotImplementedError("unknown channel %s" % kind)

    def forward(self, x, snr_db):
        shape = x.shape
        z = to_complex(x)
        z = power_normalize(z, self.power_norm)
        z = self.layer(z, snr_db)
        return to_real(z, shape)

    def extra_repr(self):
        return "kind=%s, power_norm=%s" % (self.kind, self.power_norm)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(16, 16, 8, 8, device="cuda")
    for kind in ("awgn", "rayleigh", "fast", "phase"):
        ch = Channel(kind)
        for snr in (0, 10, 20):
            y = ch(x, snr)
            mse = torch.mean((y - x) ** 2).item()
            print("%-8s SNR %2d dB  mse %.4f" % (kind, snr, mse))
