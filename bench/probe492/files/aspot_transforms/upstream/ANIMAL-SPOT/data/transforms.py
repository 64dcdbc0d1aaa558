"""
Module: transforms.py
Authors: Christian Bergler, Hendrik Schroeter
GNU General Public License v3.0
Institution: Friedrich-Alexander-University Erlangen-Nuremberg, Department of Computer Science, Pattern Recognition Lab
Last Access: 26.04.2022
"""

import os
import io
import sys
import math
import random
import pickle
import resampy
import numpy as np
import soundfile as sf

import torch
import torch.nn.functional as F

from typing import List
from utils.FileIO import AsyncFileReader

""" Load audio file """
def load_audio_file(file_name, sr=None, mono=True):
    y, sr_orig = sf.read(file_name, always_2d=True, dtype="float32")
    if mono and y.ndim == 2 and y.shape[1] > 1:
        y = np.mean(y, axis=1, keepdims=True)
    if sr is not None and sr != sr_orig:
        y = resampy.resample(y, sr_orig, sr, axis=0, filter="kaiser_best")
    return torch.from_numpy(y).float().t()

"""Composes several transforms to one."""
class Compose(object):

    def __init__(self, *transforms):
        if len(transforms) == 1 and isinstance(transforms[0], list):
            self.transforms = transforms[0]
        else:
            self.transforms = transforms

    def __call__(self, x):
        for t in self.transforms:
            x = t(x)
        return x

"""Squeezes tensor at given dimension."""
class SqueezeDim0(object):
    def __call__(self, x):
        return x.squeeze(dim=0)

"""Unsqueezes tensor at given dimension."""
class UnsqueezeDim0(object):
    def __call__(self, x):
        return x.unsqueeze(dim=0)

""" Convert audio data into mono signal """
def _to_mono(x):
    if x.dim() > 1 and x.shape[0] > 1:
        x = torch.mean(x, dim=0, keepdim=True)
    return x

""" Pre-emphasize an audio signal with a first-order auto-regressive filter """
class PreEmphasize(object):
    def __init__(self, factor=0.97):
        self.factor = factor

    def __call__(self, y):
        if y.dim() != 2:
            raise ValueError(
                "PreEmphasize expects a 2 dimensional signal of size (c, n), "
                "but got size: {}.".format(y.size())
            )
        return torch.cat(
            (y[:, 0].unsqueeze(dim=-1), y[:, 1:] - self.factor * y[:, :-1]), dim=-1
        )

""" Converts a given audio to a spectrogram. """
class Spectrogram(object):

    def __init__(self, n_fft, hop_length, center=True):
        self.n_fft = n_fft
        self.hop_length = hop_length
        self.center = center
        self.window = torch.hann_window(self.n_fft)

    def __call__(self, y):
        if y.dim() != 2:
            raise ValueError(
                "Spectrogram expects a 2 dimensional signal of size (c, n), "
                "but got size: {}.".format(y.size())
            )
        S = torch.stft(
            input=y,
            n_fft=self.n_fft,
            hop_length=self.hop_length,
            window=self.window.to(y.device),
            center=self.center,
            onesided=True,
            return_complex=True,
        ).abs().pow(2).transpose(1, 2)
        return S

""" Randomly shifts the pitch of a spectrogram by a factor of 2**Uniform(log2(from), log2(to)). """
class RandomPitchSift(object):

    def __init__(self, from_=0.5, to_=1.5):
        self.from_ = math.log2(from_)
        self.to_ = math.log2(to_)

    def __call__(self, spectrogram: torch.Tensor):
        if spectrogram.dim() < 3:
            spectrogram = spectrogram.unsqueeze(dim=0)
        elif spectrogram.dim() > 3:
            raise ValueError(
                "Expected spectrogram with size (c t f) or (n t f)"
                ", but got {}".format(spectrogram.size())
            )
        factor = 2 ** random.uniform(self.from_, self.to_)
        median = spectrogram.median()
        size = list(spectrogram.shape)
        scaled = F.interpolate(
            spectrogram.unsqueeze(dim=0),
            scale_factor=(1, factor),
            align_corners=False,
            mode="bilinear",
        ).squeeze(dim=0)
        if factor > 1:
            out = scaled[:, :, : size[2]]
        else:
            out = torch.full(size, fill_value=median, dtype=spectrogram.dtype)
            new_f_bins = int(scaled.shape[2])
            out[:, :, :new_f_bins] = scaled
        return out

""" Randomly stretches the time of a spectrogram by a factor of 2**Uniform(log2(from), log2(to)). """
class RandomTimeStretch(object):

    def __init__(self, from_=0.5, to_=2):
        self.from_ = math.log2(from_)
        self.to_ = math.log2(to_)

    def __call__(self, spectrogram: torch.Tensor):
        factor = 2 ** random.uniform(self.from_, self.to_)
        if spectrogram.dim() < 3:
            spectrogram = spectrogram.unsqueeze(dim=0)
        return F.interpolate(
            spectrogram.unsqueeze(dim=0),
            scale_factor=(factor, 1),
            mode="bilinear",
            align_corners=False,
        ).squeeze(dim=0)

""" Scales the amplitude of a spectrogram by a factor of 10**Uniform(from, to) (dB). """
class RandomAmplitude(object):

    def __init__(self, increase_db=3, decrease_db=None):
        self.inc_db = increase_db
        if decrease_db is None:
            decrease_db = -increase_db
        elif decrease_db > 0:
            decrease_db *= -1
        self.dec_db = decrease_db

    def __call__(self, spec):
        db_change = torch.randint(self.dec_db, self.inc_db, size=(1,), dtype=torch.float)
        return spec.mul(10 ** (db_change / 10))

""" Adds a random background noise file (e.g. boat or flow noise) to the spectrogram at a random SNR. """
class RandomAddNoise(object):

    def __init__(self, noise_files: List[str], spectrogram_transform, transform,
                 min_length=0, min_snr=12, max_snr=-3, return_original=False):
        if not noise_files:
            raise ValueError("No noise files found")
        self.noise_files = noise_files
        self.t_spectrogram = spectrogram_transform
        self.noise_file_locks = {file: 0 for file in noise_files}
        self.transform = transform
        self.min_length = min_length
        self.t_pad = PaddedSubsequenceSampler(sequence_length=min_length, dim=1)
        self.min_snr = min_snr if min_snr > max_snr else max_snr
        self.max_snr = max_snr if min_snr > max_snr else min_snr
        self.return_original = return_original

    def __call__(self, spectrogram):
        if len(self.noise_files) == 1:
            idx = 0
        else:
            idx = random.randint(0, len(self.noise_files) - 1)
        noise_file = self.noise_files[idx]
        noise_spec = self.t_spectrogram(load_audio_file(noise_file))
        noise_spec = self.t_pad._maybe_sample_subsequence(noise_spec, spectrogram.size(1) * 2)
        noise_spec = self.transform(noise_spec)

        if self.min_length > 0:
            spectrogram = self.t_pad._maybe_pad(spectrogram)

        if spectrogram.size(1) > noise_spec.size(1):
            n_repeat = int(math.ceil(spectrogram.size(1) / noise_spec.size(1)))
            noise_spec = noise_spec.repeat(1, n_repeat, 1)
        if spectrogram.size(1) < noise_spec.size(1):
            high = noise_spec.size(1) - spectrogram.size(1)
            start = random.randint(0, high)
            noise_spec = noise_spec[:, start : start + spectrogram.size(1), :]

        snr = random.uniform(self.min_snr, self.max_snr)
        noise_spec = noise_spec * 10 ** (-snr / 10) * spectrogram.mean() / noise_spec.mean().clamp(min=1e-8)
        spectrogram_aug = spectrogram + noise_spec
        if self.return_original:
            return spectrogram_aug, spectrogram
        return spectrogram_aug

""" Samples a random subsequence of a given length, padding when the input is too short. """
class PaddedSubsequenceSampler(object):

    def __init__(self, sequence_length: int, dim: int = 0, random=True):
        assert isinstance(sequence_length, int)
        assert isinstance(dim, int)
        self.sequence_length = sequence_length
        self.dim = dim
        if random:
            self._sampler = lambda x: torch.randint(0, x, size=(1,), dtype=torch.long).item()
        else:
            self._sampler = lambda x: x // 2

    def _maybe_sample_subsequence(self, spectrogram, sequence_length=None):
        if sequence_length is None:
            sequence_length = self.sequence_length
        sample_length = spectrogram.shape[self.dim]
        if sample_length > sequence_length:
            start = self._sampler(sample_length - sequence_length)
            end = start + sequence_length
            indices = torch.arange(start, end, dtype=torch.long)
            return torch.index_select(spectrogram, self.dim, indices)
        return spectrogram

    def _maybe_pad(self, spectrogram, sequence_length=None):
        if sequence_length is None:
            sequence_length = self.sequence_length
        sample_length = spectrogram.shape[self.dim]
        if sample_length < sequence_length:
            start = self._sampler(sequence_length - sample_length)
            end = start + sample_length
            shape = list(spectrogram.shape)
            shape[self.dim] = sequence_length
            padded_spectrogram = torch.zeros(shape, dtype=spectrogram.dtype)
            if self.dim == 0:
                padded_spectrogram[start:end] = spectrogram
            elif self.dim == 1:
                padded_spectrogram[:, start:end] = spectrogram
            elif self.dim == 2:
                padded_spectrogram[:, :, start:end] = spectrogram
            return padded_spectrogram
        return spectrogram

    def __call__(self, spectrogram):
        spectrogram = self._maybe_pad(spectrogram)
        spectrogram = self._maybe_sample_subsequence(spectrogram)
        return spectrogram

""" Converts power spectrogram to decibel. """
class Amp2Db(object):

    def __init__(self, min_level_db=-100, stype="power"):
        self.stype = stype
        self.multiplier = 10.0 if stype == "power" else 20.0
        if min_level_db is None:
            self.min_level = None
        else:
            min_level_db = -min_level_db if min_level_db > 0 else min_level_db
            self.min_level = torch.tensor(np.exp(min_level_db / self.multiplier * np.log(10)))

    def __call__(self, spec):
        if self.min_level is not None:
            spec_ = torch.max(spec, self.min_level.to(spec.device))
        else:
            spec_ = spec
        spec_db = self.multiplier * torch.log10(spec_)
        return spec_db

""" Normalizes a decibel spectrogram to [0, 1] given a reference and a minimum level. """
class Normalize(object):

    def __init__(self, min_level_db=-100, ref_level_db=20):
        self.min_level_db = min_level_db
        self.ref_level_db = ref_level_db

    def __call__(self, spec):
        return torch.clamp(
            (spec - self.ref_level_db - self.min_level_db) / -self.min_level_db, 0, 1
        )

""" Min-max normalization of a spectrogram. """
class MinMaxNormalize(object):

    def __call__(self, spectrogram):
        spectrogram -= spectrogram.min()
        if spectrogram.max().item() == 0.0:
            return spectrogram
        spectrogram /= spectrogram.max()
        return spectrogram

""" Linear frequency compression: keeps the band [f_min, f_max] and resamples to n_bins. """
class Interpolate(object):

    def __init__(self, n_freqs, sr=None, f_min=0, f_max=None):
        self.n_freqs = n_freqs
        self.sr = sr
        self.f_min = f_min
        self.f_max = f_max

    def __call__(self, spec):
        n_fft = (spec.size(2) - 1) * 2

        if self.sr is not None and n_fft is not None:
            min_bin = int(max(0, math.floor(n_fft * self.f_min / self.sr)))
            max_bin = int(min(n_fft - 1, math.ceil(n_fft * self.f_max / self.sr)))
            spec = spec[:, :, min_bin:max_bin]

        spec.unsqueeze_(dim=0)
        spec = F.interpolate(spec, size=(spec.size(2), self.n_freqs), mode="nearest")
        return spec.squeeze(dim=0)

""" Energy in the target band relative to the full spectrum; used to pre-screen
long hydrophone recordings (whale/orca) before running the network. """
class BandEnergyDetector(object):

    def __init__(self, sr, n_fft, f_min, f_max, threshold_db=6.0):
        self.sr = sr
        self.n_fft = n_fft
        self.f_min = f_min
        self.f_max = f_max
        self.threshold_db = threshold_db

    def band_mask(self, device):
        freqs = torch.fft.rfftfreq(self.n_fft, d=1.0 / self.sr, device=device)
        return (freqs >= self.f_min) & (freqs <= self.f_max)

    def __call__(self, spec):
        # spec: (c, t, f) power spectrogram
        mask = self.band_mask(spec.device)
        band = spec[..., mask].sum(dim=-1)
        rest = spec[..., ~mask].sum(dim=-1).clamp(min=1e-10)
        ratio_db = 10.0 * torch.log10(band / rest + 1e-10)
        return ratio_db > self.threshold_db
