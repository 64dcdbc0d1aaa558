"""BirdCLEF - on-device feature extraction.

Decoding stays on CPU workers (soundfile), everything after the waveform batch is built on the
accelerator: log-mel via torchaudio, PCEN via a small CuPy kernel (the per-channel IIR smoother is
sequential over time, so we run one thread per (sample, mel-bin) row), SpecAugment-style masking and
batch mixup. This took our epoch time on the 2021 train_short_audio set from 41 to 9 minutes.
"""
import math

import cupy as cp
import numpy as np
import torch
import torch.nn as nn
import torchaudio
from torch.utils.dlpack import from_dlpack, to_dlpack

SR = 32000
N_FFT = 2048
HOP = 512
N_MELS = 128
FMIN, FMAX = 50, 14000

_PCEN_SRC = r"""
extern "C" __global__
void pcen_rows(const float* __restrict__ E, float* __restrict__ out,
               const int n_rows, const int n_frames,
               const float s, const float alpha, const float delta, const float r, const float eps)
{
    const int row = blockDim.x * blockIdx.x + threadIdx.x;
    if (row >= n_rows) return;
    const float* e = E + (long)row * n_frames;
    float* o = out + (long)row * n_frames;
    float m = e[0];
    const float dr = powf(delta, r);
    for (int t = 0; t < n_frames; ++t) {
        m = (1.f - s) * m + s * e[t];
        const float smooth = powf(eps + m, alpha);
        o[t] = powf(e[t] / smooth + delta, r) - dr;
    }
}
"""
_pcen_kernel = cp.RawKernel(_PCEN_SRC, "pcen_rows")


def pcen_cupy(mel, s=0.025, alpha=0.98, delta=2.0, r=0.5, eps=1e-6):
    """mel: (B, n_mels, T) float32 CUDA tensor -> PCEN, same shape."""
    b, f, t = mel.shape
    mel = mel.contiguous()
    e = cp.fromDlpack(to_dlpack(mel))
    out = cp.empty_like(e)
    n_rows = b * f
    threads = 128
    blocks = (n_rows + threads - 1) // threads
    _pcen_kernel((blocks,), (threads,), (e, out, np.int32(n_rows), np.int32(t), np.float32(s),
                                          np.float32(alpha), np.float32(delta), np.float32(r), np.float32(eps)))
    return from_dlpack(out.toDlpack())


class SpecAugment(nn.Module):
    def __init__(self, time_mask=40, freq_mask=16, n_time=2, n_freq=2, p=0.5):
        super().__init__()
        self.time_mask, self.freq_mask = time_mask, freq_mask
        self.n_time, self.n_freq, self.p = n_time, n_freq, p

    def forward(self, x):
        if not self.training:
            return x
        b, f, t = x.shape
        for i in range(b):
            if torch.rand(1).item() > self.p:
                continue
            for _ in range(self.n_time):
                w = int(torch.randint(0, self.time_mask + 1, (1,)))
                t0 = int(torch.randint(0, max(1, t - w), (1,)))
                x[i, :, t0:t0 + w] = 0
            for _ in range(self.n_freq):
                w = int(torch.randint(0, self.freq_mask + 1, (1,)))
                f0 = int(torch.randint(0, max(1, f - w), (1,)))
                x[i, f0:f0 + w, :] = 0
        return x


class GPUFeatureExtractor(nn.Module):
    """Waveform batch (B, L) on device -> 3-channel image (B, 3, n_mels, T): [log-mel, pcen, delta]."""

    def __init__(self, use_pcen=True, spec_augment=True):
        super().__init__()
        self.mel = torchaudio.transforms.MelSpectrogram(
            sample_rate=SR, n_fft=N_FFT, hop_length=HOP, n_mels=N_MELS, f_min=FMIN, f_max=FMAX, power=2.0,
        )
        self.to_db = torchaudio.transforms.AmplitudeToDB(top_db=80)
        self.delta = torchaudio.transforms.ComputeDeltas(win_length=5)
        self.use_pcen = use_pcen
        self.augment = SpecAugment() if spec_augment else nn.Identity()

    @torch.no_grad()
    def forward(self, wav):
        mel = self.mel(wav.float())
        logmel = self.to_db(mel)
        if self.use_pcen:
            pcen = pcen_cupy(mel * (2 ** 31))
        else:
            pcen = logmel
        delta = self.delta(logmel)
        x = torch.stack([logmel, pcen, delta], dim=1)
        # per-sample standardisation
        mean = x.mean(dim=(2, 3), keepdim=True)
        std = x.std(dim=(2, 3), keepdim=True) + 1e-6
        x = (x - mean) / std
        if self.training:
            x = torch.stack([self.augment(c) for c in x.unbind(1)], dim=1)
        return x


def mixup_batch(x, y, alpha=0.4):
    lam = np.random.beta(alpha, alpha)
    idx = torch.randperm(x.size(0), device=x.device)
    return lam * x + (1 - lam) * x[idx], lam * y + (1 - lam) * y[idx]


def build_extractor(cfg):
    extractor = GPUFeatureExtractor(use_pcen=cfg.get("pcen", True), spec_augment=cfg.get("specaug", True))
    return extractor.cuda()


def random_crop_batch(wav, length):
    """Random crop of a (B, L) waveform batch to ``length`` samples, done on device."""
    b, l = wav.shape
    if l <= length:
        pad = torch.zeros((b, length - l), dtype=wav.dtype, device=wav.device)
        return torch.cat([wav, pad], dim=1)
    starts = torch.randint(0, l - length + 1, (b,), device=wav.device)
    ar = torch.arange(length, device=wav.device)[None]
    return torch.gather(wav, 1, starts[:, None] + ar)


class SoundscapeChunker:
    """Split a long soundscape (1-D numpy waveform) into overlapping 5 s windows for inference.

    Predictions for window i are reported for the segment ending at (i + 1) * 5 s, as the
    competition's row_id format expects; with ``overlap`` > 0 neighbouring windows are averaged.
    """

    def __init__(self, seconds=5, overlap=0.0, sr=SR):
        self.win = int(seconds * sr)
        self.hop = int(self.win * (1 - overlap))
        self.seconds = seconds

    def __call__(self, wav):
        n = max(1, int(np.ceil((len(wav) - self.win) / self.hop)) + 1)
        total = (n - 1) * self.hop + self.win
        if len(wav) < total:
            wav = np.pad(wav, (0, total - len(wav)))
        frames = np.lib.stride_tricks.sliding_window_view(wav, self.win)[:: self.hop][:n]
        return torch.from_numpy(np.ascontiguousarray(frames, dtype=np.float32))

    def end_times(self, n_windows):
        return [int((i * self.hop) / SR) + self.seconds for i in range(n_windows)]


def secondary_label_weights(primary, secondary, n_classes, w=0.5):
    y = torch.zeros((len(primary), n_classes), device="cuda")
    for i, (p, sec) in enumerate(zip(primary, secondary)):
        y[i, p] = 1.0
        for s in sec:
            y[i, s] = max(y[i, s].item(), w)
    return y
