"""Differentiable front-ends and losses shared by the AntiFake optimisation loop."""
import os
import glob
import functools

import numpy as np
import torch
import torch.nn.functional as F
import torchaudio
import librosa

from rtvc.encoder import inference as rtvc_encoder
from rtvc.encoder import audio as rtvc_audio
from rtvc.encoder.params_data import (
    sampling_rate, mel_window_length, mel_window_step, mel_n_channels, partials_n_frames,
)


# --------------------------------------------------------------------------- RTVC
def rtvc_mel(wav):
    """Torch re-implementation of rtvc.encoder.audio.wav_to_mel_spectrogram (differentiable)."""
    n_fft = int(sampling_rate * mel_window_length / 1000)
    hop = int(sampling_rate * mel_window_step / 1000)
    mel = torchaudio.transforms.MelSpectrogram(
        sample_rate=sampling_rate, n_fft=n_fft, hop_length=hop, n_mels=mel_n_channels,
    ).to(wav.device)(wav)
    return mel.transpose(-1, -2)  # T x n_mels


def rtvc_embed(wav):
    """Utterance embedding, averaged over partial windows like the original encoder."""
    frames = rtvc_mel(wav)
    n = frames.shape[0]
    starts = list(range(0, max(1, n - partials_n_frames + 1), partials_n_frames // 2))
    partials = torch.stack([frames[s:s + partials_n_frames] for s in starts
                            if frames[s:s + partials_n_frames].shape[0] == partials_n_frames])
    embeds = rtvc_encoder.get_model().forward(partials)
    embed = embeds.mean(dim=0)
    return embed / torch.norm(embed, p=2)


# --------------------------------------------------------------------------- AdaIN-VC
@functools.lru_cache(maxsize=4)
def _avc_mel_basis(sr, n_fft, n_mels):
    basis = librosa.filters.mel(sr=sr, n_fft=n_fft, n_mels=n_mels)
    return torch.from_numpy(basis).float().cuda()


def load_avc_mel(wav, config):
    """Log-mel in the AdaIN-VC convention (preemphasis, 80 mels, normalised to [0, 1])."""
    pre = config["preprocess"] if "preprocess" in config else {"sr": 16000, "n_fft": 1024, "hop_length": 256,
                                                               "win_length": 1024, "n_mels": 80,
                                                               "ref_db": 20, "max_db": 100, "preemphasis": 0.97}
    x = torch.cat([wav[:1], wav[1:] - pre["preemphasis"] * wav[:-1]])
    window = torch.hann_window(pre["win_length"], device=wav.device)
    spec = torch.stft(x, n_fft=pre["n_fft"], hop_length=pre["hop_length"], win_length=pre["win_length"],
                      window=window, return_complex=True).abs()
    mel = torch.matmul(_avc_mel_basis(pre["sr"], pre["n_fft"], pre["n_mels"]), spec)
    mel = 20 * torch.log10(torch.clamp(mel, min=1e-5))
    mel = torch.clamp((mel - pre["ref_db"] + pre["max_db"]) / pre["max_db"], 1e-8, 1)
    return mel.unsqueeze(0)  # 1 x n_mels x T


def avc_embed(model, mel):
    emb = model.speaker_encoder(mel)
    return F.normalize(emb, dim=-1)


# --------------------------------------------------------------------------- coqui / YourTTS
def coqui_embed(encoder, wav):
    # H/ASP speaker encoder works at 16 kHz on raw waveform
    emb = encoder.forward(wav.unsqueeze(0), l2_norm=True)
    return emb.squeeze(0)


# --------------------------------------------------------------------------- quality
def snr_db(clean, noisy):
    noise = noisy - clean
    return (10 * torch.log10(clean.pow(2).sum() / (noise.pow(2).sum() + 1e-12))).item()


def frequency_penalty(delta, sr, cutoff_hz=6000):
    """Penalise perturbation energy above cutoff_hz, where it is most audible for speech."""
    spec = torch.fft.rfft(delta)
    freqs = torch.linspace(0, sr / 2, spec.shape[-1], device=delta.device)
    weight = (freqs > cutoff_hz).float()
    return (spec.abs() * weight).pow(2).mean()


def pick_target_speaker(pool_dir, src_embed, device):
    """Return the wav in pool_dir whose RTVC embedding is the least similar to src_embed."""
    files = sorted(glob.glob(os.path.join(pool_dir, "*.wav")))
    if not files:
        raise FileNotFoundError(f"no target speakers in {pool_dir}")
    best_path, best_sim = None, 2.0
    for path in files:
        wav = rtvc_audio.preprocess_wav(path)
        with torch.no_grad():
            emb = rtvc_embed(torch.from_numpy(wav).float().to(device))
        sim = F.cosine_similarity(emb, src_embed, dim=-1).item()
        if sim < best_sim:
            best_path, best_sim = path, sim
    return best_path
