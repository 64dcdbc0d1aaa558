"""OFDM channel for Deep JSCC (after Yang, Kurka, Gunduz -- "Deep JSCC of images
over OFDM channels with PAPR control").

Symbols are mapped onto `n_subcarriers` x `n_symbols` resource grid, preceded by
`n_pilots` pilot OFDM symbols, transformed with an IFFT, a cyclic prefix is
added, optional clipping controls PAPR, and the signal is passed through a
multipath channel with `n_taps` exponentially decaying taps plus AWGN.  The
receiver removes the CP, FFTs, estimates the channel from the pilots (LS or
MMSE) and equalises.
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def zadoff_chu(n, root=25):
    k = np.arange(n)
    return np.exp(-1j * np.pi * root * k * (k + 1) / n).astype(np.complex64)


class OFDMChannel(nn.Module):
    def __init__(self, n_subcarriers=64, cp_len=16, n_pilots=2, n_taps=8, decay=4.0,
                 clip_ratio=None, equalizer="mmse", centered=False):
        super().__init__()
        self.M = n_subcarriers
        self.K = cp_len
        self.P = n_pilots
        self.L = n_taps
        self.decay = decay
        self.clip_ratio = clip_ratio
        self.equalizer = equalizer
        self.centered = centered
        pilot = torch.from_numpy(zadoff_chu(self.M))
        self.pilot = pilot.unsqueeze(0).repeat(self.P, 1)  # [P, M]
        self.pilot = self.pilot.cuda()
        pdp = torch.exp(-torch.arange(self.L, dtype=torch.float32) / self.decay)
        self.register_buffer("pdp", pdp / pdp.sum())

    # ------------------------------------------------------------------ helpers
    def grid(self, z):
        """[B, N] complex -> [B, S, M] complex (zero-padded to full OFDM symbols)."""
        b, n = z.shape
        s = math.ceil(n / self.M)
        pad = s * self.M - n
        if pad:
            z = torch.cat([z, z.new_zeros(b, pad)], dim=1)
        return z.view(b, s, self.M), n

    def ifft(self, X):
        if self.centered:
            X = torch.fft.ifftshift(X, dim=-1)
        return torch.fft.ifft(X, dim=-1, norm="ortho")

    def fft(self, x):
        X = torch.fft.fft(x, dim=-1, norm="ortho")
        if self.centered:
            X = torch.fft.fftshift(X, dim=-1)
        return X

    def add_cp(self, x):
        return torch.cat([x[..., -self.K:], x], dim=-1)

    def remove_cp(self, y):
        return y[..., self.K:self.K + self.M]

    def clip(self, x):
        if self.clip_ratio is None:
            return x
        amp = x.abs()
        a_max = self.clip_ratio * torch.sqrt(torch.mean(amp ** 2, dim=-1, keepdim=True))
        scale = torch.clamp(a_max / (amp + 1e-8), max=1.0)
        return x * scale

    def papr_db(self, x):
        p = x.real ** 2 + x.imag ** 2
        return 10 * torch.log10(p.amax(dim=-1) / p.mean(dim=-1))

    def multipath(self, b, device):
        std = torch.sqrt(self.pdp / 2).to(device)
        taps = torch.complex(torch.randn(b, self.L, device=device), torch.randn(b, self.L, device=device))
        return taps * std  # [B, L]

    def convolve(self, x, h):
        """Linear convolution along time of each OFDM symbol with the per-sample taps h."""
        b, s, t = x.shape
        xr = x.reshape(1, b * s, t)
        hr = h.repeat_interleave(s, dim=0).flip(-1).unsqueeze(1)  # [B*S, 1, L]
        yr = F.conv1d(F.pad(xr.real, (self.L - 1, 0)), hr.real, groups=b * s) - \
            F.conv1d(F.pad(xr.imag, (self.L - 1, 0)), hr.imag, groups=b * s)
        yi = F.conv1d(F.pad(xr.real, (self.L - 1, 0)), hr.imag, groups=b * s) + \
            F.conv1d(F.pad(xr.imag, (self.L - 1, 0)), hr.real, groups=b * s)
        return torch.complex(yr, yi).reshape(b, s, t)

    # ------------------------------------------------------------------ forward
    def forward(self, z, snr_db):
        b = z.shape[0]
        X, n = self.grid(z)
        X = torch.cat([self.pilot.unsqueeze(0).expand(b, -1, -1), X], dim=1)  # [B, P+S, M]
        x = self.clip(self.add_cp(self.ifft(X)))

        h = self.multipath(b, z.device)
        y = self.convolve(x, h)
        n0 = 10 ** (-snr_db / 10.0)
        noise = torch.complex(torch.randn_like(y.real), torch.randn_like(y.imag)) * math.sqrt(n0 / 2)
        Y = self.fft(self.remove_cp(y + noise))

        # channel estimation from the pilot symbols
        H_ls = (Y[:, :self.P] / self.pilot.unsqueeze(0)).mean(dim=1, keepdim=True)  # [B, 1, M]
        if self.equalizer == "ls":
            X_hat = Y[:, self.P:] / H_ls
        else:
            H_pw = H_ls.real ** 2 + H_ls.imag ** 2
            X_hat = Y[:, self.P:] * H_ls.conj() / (H_pw + n0)
        return X_hat.reshape(b, -1)[:, :n]


@torch.no_grad()
def papr_ccdf(channel, n_frames=2000, n_symbols=1024, thresholds_db=None, device="cpu"):
    """Empirical CCDF Pr(PAPR > x) of the transmitted OFDM frames (with / without clipping)."""
    if thresholds_db is None:
        thresholds_db = torch.arange(4.0, 13.0, 0.25)
    z = torch.complex(torch.randn(n_frames, n_symbols, device=device),
                      torch.randn(n_frames, n_symbols, device=device)) / math.sqrt(2)
    X, _ = channel.grid(z)
    x = channel.add_cp(channel.ifft(X))
    p_raw = channel.papr_db(x).flatten()
    p_clip = channel.papr_db(channel.clip(x)).flatten()
    th = thresholds_db.to(p_raw.device).view(-1, 1)
    ccdf_raw = (p_raw.view(1, -1) > th).float().mean(dim=1)
    ccdf_clip = (p_clip.view(1, -1) > th).float().mean(dim=1)
    return thresholds_db, ccdf_raw, ccdf_clip


if __name__ == "__main__":
    ch = OFDMChannel(clip_ratio=1.5)
    z = torch.randn(8, 1024, dtype=torch.complex64).cuda()
    z = z / z.abs().pow(2).mean().sqrt()
    for snr in (0, 10, 20, 30):
        z_hat = ch(z, snr)
        err = (z_hat - z).abs().pow(2).mean() / z.abs().pow(2).mean()
        print("SNR %2d dB  NMSE %.2f dB" % (snr, 10 * torch.log10(err).item()))
    x = ch.add_cp(ch.ifft(ch.grid(z)[0]))
    print("PAPR before clipping: %.2f dB" % ch.papr_db(x).mean().item())
