"""spectrogram.py -- front-end layers (log-mel / log-spec) used by YourMT3 encoders.

The spectrogram is always computed in fp32: under bf16 autocast the mel filterbank matmul
loses enough precision to hurt onset F1 on quiet passages (see issue #12).
"""
from typing import Dict, Optional, Tuple

import torch
import torch.nn as nn
import torchaudio
from torchaudio.transforms import MelSpectrogram, Spectrogram


class Melspectrogram(nn.Module):

    def __init__(self,
                 audio_backend: str = 'torchaudio',
                 sample_rate: int = 16000,
                 n_fft: int = 2048,
                 hop_length: int = 128,
                 f_min: float = 50.0,
                 f_max: Optional[float] = 8000.0,
                 n_mels: int = 512,
                 eps: float = 1e-5,
                 **kwargs):
        """
        Log-Melspectrogram Layer, output (B, T, F)

        audio_backend: 'torchaudio' (default) or 'nnAudio' (deprecated)
        """
        super().__init__()
        self.audio_backend = audio_backend.lower()
        self.eps = eps
        if self.audio_backend == 'torchaudio':
            self.mel_stft = MelSpectrogram(
                sample_rate=sample_rate,
                n_fft=n_fft,
                hop_length=hop_length,
                f_min=f_min,
                f_max=f_max,
                n_mels=n_mels,
                power=1.0,
                center=True,
                pad_mode='reflect',
                mel_scale='htk',
                norm=None,
            )
        elif self.audio_backend == 'nnaudio':
            from nnAudio.features.mel import MelSpectrogram as NNAudioMelSpectrogram
            self.mel_stft = NNAudioMelSpectrogram(sr=sample_rate, win_length=n_fft, n_mels=n_mels, hop_length=hop_length,
                                                  fmin=20, fmax=None, window='hann', center=True, pad_mode='reflect',
                                                  htk=True, power=1.0, trainable_mel=False, trainable_STFT=False,
                                                  verbose=False)
        else:
            raise NotImplementedError(self.audio_backend)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: (B, 1, T) -> (B, T, F)
        with torch.autocast(device_type='cuda', enabled=False):
            x = x.float()
            x = self.mel_stft(x)
            x = torch.clamp(x, min=self.eps).log()
        return x.squeeze(1).permute(0, 2, 1)


class Spectrogram2(nn.Module):

    def __init__(self,
                 audio_backend: str = 'torchaudio',
                 n_fft: int = 2048,
                 hop_length: int = 300,
                 eps: float = 1e-5,
                 **kwargs):
        """Log-magnitude spectrogram, output (B, T, F) with the DC bin removed."""
        super().__init__()
        self.eps = eps
        self.spec = Spectrogram(n_fft=n_fft, hop_length=hop_length, power=1.0, center=True, pad_mode='reflect')

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.cuda.amp.autocast(enabled=False):
            x = self.spec(x.float())
            x = torch.clamp(x, min=self.eps).log()
        x = x.squeeze(1)[:, 1:, :]
        return x.permute(0, 2, 1)


def get_spectrogram_layer_from_audio_cfg(audio_cfg: Dict) -> Tuple[nn.Module, Tuple[int, int]]:
    """Build the front-end and compute its output shape (T, F) for a dummy input."""
    if audio_cfg['codec'] == 'melspec':
        layer = Melspectrogram(**audio_cfg)
    elif audio_cfg['codec'] == 'spec':
        layer = Spectrogram2(**audio_cfg)
    else:
        raise ValueError(audio_cfg['codec'])
    with torch.no_grad():
        dummy = torch.zeros(1, 1, audio_cfg['input_frames'])
        out = layer(dummy)
    return layer, (out.shape[1], out.shape[2])


def compute_db_normalizer(spec: torch.Tensor, top_db: float = 80.0) -> torch.Tensor:
    """Per-item dB normalisation used by the visualisation callback (CPU only)."""
    db = torchaudio.functional.amplitude_to_DB(spec, multiplier=20.0, amin=1e-5, db_multiplier=0.0, top_db=top_db)
    return (db - db.amax(dim=(-2, -1), keepdim=True)) / top_db + 1.0
