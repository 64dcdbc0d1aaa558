# Audio processing, especially extracting and returning 3-second spectrograms.
# This code was copied from an older project and may need some cleanup.

import logging
import random
import warnings

import cv2
import librosa
import numpy as np
import scipy
import torch
import torchaudio as ta

from core import cfg

warnings.filterwarnings("ignore", category=UserWarning)


class Audio:
    def __init__(self, device="cuda", cfg=cfg):
        self.have_signal = False
        self.path = None
        self.signal = None
        self.device = device
        self.cfg = cfg

        self.linear_transform = ta.transforms.Spectrogram(
            n_fft=2 * cfg.audio.win_length,
            win_length=cfg.audio.win_length,
            hop_length=int(cfg.audio.sampling_rate * cfg.audio.segment_len / cfg.audio.spec_width),
            power=1,
        ).to(self.device)

        self.mel_transform = ta.transforms.MelSpectrogram(
            sample_rate=cfg.audio.sampling_rate,
            n_fft=2 * cfg.audio.win_length,
            win_length=cfg.audio.win_length,
            hop_length=int(cfg.audio.sampling_rate * cfg.audio.segment_len / cfg.audio.spec_width),
            f_min=cfg.audio.min_audio_freq,
            f_max=cfg.audio.max_audio_freq,
            n_mels=cfg.audio.spec_height,
            power=cfg.audio.power,
        ).to(self.device)

    # width of spectrogram is determined by input signal length, and height = cfg.audio.spec_height
    def _get_raw_spectrogram(self, signal, segment_len=cfg.audio.segment_len):
        min_audio_freq = self.cfg.audio.min_audio_freq
        max_audio_freq = self.cfg.audio.max_audio_freq
        spec_height = self.cfg.audio.spec_height
        mel_scale = self.cfg.audio.mel_scale

        block_size = self.cfg.audio.spec_block_seconds * self.cfg.audio.sampling_rate
        num_blocks = int(np.ceil(len(signal) / block_size))

        signal = torch.from_numpy(signal).to(self.device)
        specs = []
        for i in range(num_blocks):
            block = signal[int(i * block_size) : int((i + 1) * block_size)]
            if mel_scale:
                spec = self.mel_transform(block)
            else:
                spec = self.linear_transform(block)
                freqs = librosa.fft_frequencies(sr=self.cfg.audio.sampling_rate, n_fft=2 * self.cfg.audio.win_length)
                start_row = max(0, int(np.searchsorted(freqs, min_audio_freq)))
                end_row = min(len(freqs), int(np.searchsorted(freqs, max_audio_freq)))
                spec = spec[start_row:end_row, :]
                if spec.shape[0] != spec_height:
                    spec = torch.nn.functional.interpolate(
                        spec.unsqueeze(0).unsqueeze(0), size=(spec_height, spec.shape[1]), mode="bilinear"
                    ).squeeze(0).squeeze(0)
            specs.append(spec)

        spec = torch.cat(specs, dim=1)
        return spec.cpu().numpy()

    # normalize values between 0 and 1
    def _normalize(self, specs):
        for i in range(len(specs)):
            if specs[i] is None:
                continue

            max = specs[i].max()
            if max > 0:
                specs[i] = specs[i] / max

            specs[i] = specs[i].clip(0, 1)

    # stretch or squeeze the spectrogram to the configured width
    def _resize(self, spec):
        if spec.shape[1] != self.cfg.audio.spec_width:
            spec = cv2.resize(spec, dsize=(self.cfg.audio.spec_width, self.cfg.audio.spec_height), interpolation=cv2.INTER_AREA)
        return spec

    # return list of spectrograms for the given offsets (i.e. starting points in seconds);
    # you have to call load() before calling this;
    # if raw_spectrograms array is specified, populate it with spectrograms before normalization
    def get_spectrograms(self, offsets, segment_len=None, spec_exponent=None, low_band=False, raw_spectrograms=None):
        if not self.have_signal:
            return None

        if segment_len is None:
            segment_len = self.cfg.audio.segment_len

        if spec_exponent is None:
            spec_exponent = self.cfg.audio.spec_exponent

        specs = []
        sr = self.cfg.audio.sampling_rate
        # compute one spectrogram for the whole range, then slice it, which is much faster on a GPU
        first_offset = offsets[0]
        last_offset = offsets[-1]
        start_sample = int(first_offset * sr)
        end_sample = min(len(self.signal), int((last_offset + segment_len) * sr))
        spec = self._get_raw_spectrogram(self.signal[start_sample:end_sample], segment_len)
        frames_per_second = self.cfg.audio.spec_width / segment_len
        for i, offset in enumerate(offsets):
            start_frame = int((offset - first_offset) * frames_per_second)
            end_frame = start_frame + self.cfg.audio.spec_width
            if end_frame > spec.shape[1]:
                specs.append(None)
                continue
            segment = spec[:, start_frame:end_frame]
            if raw_spectrograms is not None and i < len(raw_spectrograms):
                raw_spectrograms[i] = segment
            specs.append(segment ** spec_exponent)

        self._normalize(specs)
        return specs

    def signal_len(self):
        return len(self.signal) if self.have_signal else 0

    def load(self, path, keep_bytes=False):
        self.have_signal = True
        self.path = path

        try:
            self.signal, _ = librosa.load(path, sr=self.cfg.audio.sampling_rate, mono=True)
            if len(self.signal) == 0:
                self.have_signal = False

        except Exception as e:
            self.have_signal = False
            self.signal = None
            logging.error(f'Caught exception in audio load of {path}: {e}')

        return self.signal, self.cfg.audio.sampling_rate

    # apply a low-pass and high-pass filter to remove noise outside the bird-call band
    def bandpass(self, low=None, high=None, order=5):
        if not self.have_signal:
            return
        sr = self.cfg.audio.sampling_rate
        low = self.cfg.audio.min_audio_freq if low is None else low
        high = self.cfg.audio.max_audio_freq if high is None else high
        sos = scipy.signal.butter(order, [low, high], btype="band", fs=sr, output="sos")
        self.signal = scipy.signal.sosfilt(sos, self.signal).astype(np.float32)
