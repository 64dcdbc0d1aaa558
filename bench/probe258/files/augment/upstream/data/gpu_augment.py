"""
Batched waveform augmentation on the GPU for spoofing-countermeasure training.

RawBoost (numpy/scipy, one utterance at a time in the DataLoader workers) was the
bottleneck with 8 workers feeding an A100, so the common pieces are re-implemented
here on batched tensors:

  * additive coloured noise at a random SNR          (RawBoost algo 3 style)
  * impulsive signal-dependent noise                  (RawBoost algo 2 style)
  * random band-stop (notch) filtering via FFT masks  (approx. RawBoost algo 1)
  * random gain / polarity flip
  * mu-law companding "codec" simulation
  * room impulse response convolution with a bank of RIRs kept on the GPU

All functions take x: (B, T) float tensors and return tensors of the same shape.
"""
import math
import random
from typing import Optional

import torch
import torch.nn.functional as F
import torchaudio


def _rand_uniform(lo, hi, n, device):
    return torch.rand(n, device=device) * (hi - lo) + lo


def add_coloured_noise(x, snr_min=10.0, snr_max=40.0, beta_max=2.0):
    """Additive 1/f^beta noise at a random SNR per utterance."""
    B, T = x.shape
    white = torch.cuda.FloatTensor(B, T).normal_()
    spec = torch.fft.rfft(white, dim=-1)
    freqs = torch.arange(spec.size(-1), device=x.device, dtype=x.dtype).clamp(min=1.0)
    beta = _rand_uniform(0.0, beta_max, B, x.device).unsqueeze(-1)
    spec = spec / freqs.unsqueeze(0) ** (beta / 2.0)
    noise = torch.fft.irfft(spec, n=T, dim=-1)

    snr = _rand_uniform(snr_min, snr_max, B, x.device).unsqueeze(-1)
    p_sig = x.pow(2).mean(dim=-1, keepdim=True).clamp(min=1e-8)
    p_noise = noise.pow(2).mean(dim=-1, keepdim=True).clamp(min=1e-8)
    scale = torch.sqrt(p_sig / (p_noise * 10 ** (snr / 10.0)))
    return x + scale * noise


def add_impulsive_noise(x, p_max=10.0, g_sd=2.0):
    """Signal-dependent impulsive noise on up to p_max % of the samples."""
    B, T = x.shape
    p = _rand_uniform(0.0, p_max / 100.0, B, x.device).unsqueeze(-1)
    mask = torch.rand(B, T, device=x.device) < p
    r = g_sd * (2 * torch.rand(B, T, device=x.device) - 1)
    return x + mask * x * r


def band_stop(x, n_bands=5, min_f=20.0, max_f=8000.0, min_bw=100.0, max_bw=1000.0, sr=16000):
    """Zero out n random bands in the spectrum (cheap approximation of the
    RawBoost linear/non-linear convolutive noise)."""
    B, T = x.shape
    spec = torch.fft.rfft(x, dim=-1)
    n_bins = spec.size(-1)
    hz_per_bin = (sr / 2.0) / (n_bins - 1)
    mask = torch.ones(B, n_bins, device=x.device)
    for _ in range(n_bands):
        fc = _rand_uniform(min_f, max_f, B, x.device)
        bw = _rand_uniform(min_bw, max_bw, B, x.device)
        lo = ((fc - bw / 2) / hz_per_bin).long().clamp(0, n_bins - 1)
        hi = ((fc + bw / 2) / hz_per_bin).long().clamp(0, n_bins - 1)
        idx = torch.arange(n_bins, device=x.device).unsqueeze(0)
        mask = mask * ~((idx >= lo.unsqueeze(-1)) & (idx <= hi.unsqueeze(-1)))
    return torch.fft.irfft(spec * mask, n=T, dim=-1)


def random_gain(x, min_db=-6.0, max_db=6.0, p_flip=0.5):
    B = x.size(0)
    g = 10 ** (_rand_uniform(min_db, max_db, B, x.device) / 20.0)
    flip = torch.where(torch.rand(B, device=x.device) < p_flip, -1.0, 1.0)
    return x * (g * flip).unsqueeze(-1)


def mulaw_codec(x, quantization_channels=256):
    """Encode/decode with mu-law to mimic telephone-band codecs."""
    peak = x.abs().amax(dim=-1, keepdim=True).clamp(min=1e-5)
    y = torchaudio.functional.mu_law_encoding(x / peak, quantization_channels)
    y = torchaudio.functional.mu_law_decoding(y, quantization_channels)
    return y * peak


class RIRBank:
    """Keeps a set of room impulse responses resident on the GPU."""

    def __init__(self, rir_paths, max_len=16000, device="cuda"):
        rirs = []
        for p in rir_paths:
            r, sr = torchaudio.load(p)
            r = r[0, :max_len]
            r = r / r.norm().clamp(min=1e-8)
            rirs.append(F.pad(r, (0, max_len - r.numel())))
        self.rirs = torch.stack(rirs).to(device) if rirs else None

    def __call__(self, x):
        if self.rirs is None:
            return x
        B, T = x.shape
        idx = torch.randint(0, self.rirs.size(0), (B,), device=self.rirs.device)
        rir = self.rirs[idx]
        n = T + rir.size(-1) - 1
        n_fft = 1 << (n - 1).bit_length()
        y = torch.fft.irfft(torch.fft.rfft(x, n_fft) * torch.fft.rfft(rir, n_fft), n_fft)[:, :T]
        scale = x.abs().amax(-1, keepdim=True) / y.abs().amax(-1, keepdim=True).clamp(min=1e-8)
        return y * scale


class GPUAugment:
    """Apply a random subset of the augmentations above to a batch.

    Usage in the training loop:

        aug = GPUAugment(rir_paths=glob("RIRS_NOISES/simulated_rirs/*/*/*.wav"))
        for batch_x, batch_y in loader:
            batch_x = aug(batch_x)          # moves to the GPU if needed
    """

    def __init__(self, p_noise=0.5, p_impulse=0.3, p_band=0.5, p_gain=0.5, p_codec=0.2,
                 p_rir=0.3, rir_paths=None, device=None):
        self.p = dict(noise=p_noise, impulse=p_impulse, band=p_band, gain=p_gain,
                      codec=p_codec, rir=p_rir)
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.rir = RIRBank(rir_paths or [], device=self.device)

    @torch.no_grad()
    def __call__(self, x: torch.Tensor, lengths: Optional[torch.Tensor] = None):
        if not x.is_cuda:
            x = x.cuda(non_blocking=True)
        if random.random() < self.p["band"]:
            x = band_stop(x)
        if random.random() < self.p["rir"]:
            x = self.rir(x)
        if random.random() < self.p["noise"]:
            x = add_coloured_noise(x)
        if random.random() < self.p["impulse"]:
            x = add_impulsive_noise(x)
        if random.random() < self.p["codec"]:
            x = mulaw_codec(x)
        if random.random() < self.p["gain"]:
            x = random_gain(x)
        if lengths is not None:
            # keep padding at exactly zero
            mask = torch.arange(x.size(1), device=x.device)[None, :] < lengths[:, None].to(x.device)
            x = x * mask
        return x.clamp_(-1.0, 1.0)
