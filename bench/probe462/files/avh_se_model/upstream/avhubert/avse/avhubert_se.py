# Copyright (c) Facebook, Inc. and its affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.
#
# Audio-visual speech separation / enhancement head on top of a pre-trained
# AV-HuBERT encoder. The encoder sees the (noisy) audio features and the lip
# ROI video of the target speaker; a light mask estimator predicts a
# magnitude mask on the STFT of the mixture which is inverted with iSTFT.

import logging
import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from omegaconf import II, MISSING

from fairseq import checkpoint_utils, tasks, utils
from fairseq.dataclass import FairseqDataclass
from fairseq.models import BaseFairseqModel, register_model
from fairseq.modules import LayerNorm

logger = logging.getLogger(__name__)


def mel_filterbank(sr, n_fft, n_mels, fmin=0.0, fmax=None):
    # Slaney-style triangular filters, returned as (n_fft // 2 + 1, n_mels)
    fmax = fmax or sr / 2.0

    def hz_to_mel(f):
        return 2595.0 * np.log10(1.0 + f / 700.0)

    def mel_to_hz(m):
        return 700.0 * (10 ** (m / 2595.0) - 1.0)

    mels = np.linspace(hz_to_mel(fmin), hz_to_mel(fmax), n_mels + 2)
    hz = mel_to_hz(mels)
    bins = np.floor((n_fft + 1) * hz / sr).astype(int)
    fb = np.zeros((n_fft // 2 + 1, n_mels), dtype=np.float32)
    for m in range(1, n_mels + 1):
        left, center, right = bins[m - 1], bins[m], bins[m + 1]
        for k in range(left, center):
            fb[k, m - 1] = (k - left) / max(center - left, 1)
        for k in range(center, right):
            fb[k, m - 1] = (right - k) / max(right - center, 1)
    return torch.from_numpy(fb)


@dataclass
class AVHubertSeConfig(FairseqDataclass):
    w2v_path: str = field(default=MISSING, metadata={"help": "path to pre-trained AV-HuBERT checkpoint"})
    no_pretrained_weights: bool = field(default=False, metadata={"help": "if true, does not load pretrained weights"})
    freeze_finetune_updates: int = field(default=0, metadata={"help": "dont finetune the encoder for this many updates"})
    feature_grad_mult: float = field(default=0.0, metadata={"help": "reset feature grad mult in hubert to this"})
    dropout: float = field(default=0.1)
    attention_dropout: float = field(default=0.0)
    activation_dropout: float = field(default=0.0)
    encoder_layerdrop: float = field(default=0.0)
    mask_prob: float = field(default=0.0)
    mask_channel_prob: float = field(default=0.0)

    # STFT / mask head
    sample_rate: int = field(default=16000)
    n_fft: int = field(default=640)
    hop_length: int = field(default=160)
    win_length: int = field(default=640)
    n_mels: int = field(default=80)
    mask_head_layers: int = field(default=3)
    mask_head_dim: int = field(default=512)
    mask_activation: str = field(default="sigmoid", metadata={"help": "sigmoid | relu | softplus"})
    compress_power: float = field(default=0.3, metadata={"help": "power-law compression of magnitudes"})
    data: str = II("task.data")
    normalize: bool = II("task.normalize")


class MaskHead(nn.Module):
    """BLSTM mask estimator conditioned on AV-HuBERT features and log-mel of the mixture."""

    def __init__(self, in_dim, n_freq, n_mels, hidden, layers, activation):
        super().__init__()
        self.proj = nn.Linear(in_dim + n_mels, hidden)
        self.norm = LayerNorm(hidden)
        self.blstm = nn.LSTM(hidden, hidden // 2, num_layers=layers, batch_first=True, bidirectional=True)
        self.out = nn.Linear(hidden, n_freq)
        self.activation = activation

    def forward(self, feats, logmel):
        x = torch.cat([feats, logmel], dim=-1)
        x = self.norm(F.relu(self.proj(x)))
        x, _ = self.blstm(x)
        m = self.out(x)
        if self.activation == "sigmoid":
            return torch.sigmoid(m)
        if self.activation == "relu":
            return F.relu(m)
        return F.softplus(m)


@register_model("av_hubert_se", dataclass=AVHubertSeConfig)
class AVHubertSeModel(BaseFairseqModel):
    def __init__(self, cfg: AVHubertSeConfig, encoder, encoder_dim):
        super().__init__()
        self.cfg = cfg
        self.encoder = encoder
        self.freeze_finetune_updates = cfg.freeze_finetune_updates
        self.num_updates = 0
        self.n_freq = cfg.n_fft // 2 + 1
        self.register_buffer("window", torch.hann_window(cfg.win_length), persistent=False)
        self.register_buffer("mel_fb", mel_filterbank(cfg.sample_rate, cfg.n_fft, cfg.n_mels), persistent=False)
        self.mask_head = MaskHead(encoder_dim, self.n_freq, cfg.n_mels, cfg.mask_head_dim,
                                  cfg.mask_head_layers, cfg.mask_activation)

    @classmethod
    def build_model(cls, cfg: AVHubertSeConfig, task):
        arg_overrides = {
            "dropout": cfg.dropout,
            "activation_dropout": cfg.activation_dropout,
            "dropout_input": 0.0,
            "attention_dropout": cfg.attention_dropout,
            "mask_prob": cfg.mask_prob,
            "mask_channel_prob": cfg.mask_channel_prob,
            "encoder_layerdrop": cfg.encoder_layerdrop,
            "feature_grad_mult": cfg.feature_grad_mult,
        }
        # the checkpoint is materialised on the CPU and moved with the model later on
        state = checkpoint_utils.load_checkpoint_to_cpu(cfg.w2v_path, arg_overrides)
        w2v_args = state.get("cfg", None)
        w2v_args.task.data = cfg.data
        pretrain_task = tasks.setup_task(w2v_args.task)
        encoder = pretrain_task.build_model(w2v_args.model)
        if state is not None and not cfg.no_pretrained_weights:
            # set strict=False because we omit some modules
            del state["model"]["label_embs_concat"]
            encoder.load_state_dict(state["model"], strict=False)
        encoder.remove_pretraining_modules()
        return cls(cfg, encoder, w2v_args.model.encoder_embed_dim)

    def set_num_updates(self, num_updates):
        super().set_num_updates(num_updates)
        self.num_updates = num_updates

    def stft(self, wav):
        # Spectral front-end is kept in fp32 even when the rest of the model runs under AMP:
        # the log-mel projection overflows/underflows in half precision.
        with torch.cuda.amp.autocast(enabled=False):
            spec = torch.stft(wav.float(), n_fft=self.cfg.n_fft, hop_length=self.cfg.hop_length,
                              win_length=self.cfg.win_length, window=self.window,
                              center=True, return_complex=True)
            mag = spec.abs()
            logmel = torch.log(torch.matmul(mag.transpose(1, 2) ** 2, self.mel_fb) + 1e-6)
        return spec, mag, logmel

    def istft(self, spec, length):
        return torch.istft(spec, n_fft=self.cfg.n_fft, hop_length=self.cfg.hop_length,
                           win_length=self.cfg.win_length, window=self.window,
                           center=True, length=length)

    def encode(self, source, padding_mask):
        ft = self.freeze_finetune_updates <= self.num_updates
        with torch.no_grad() if not ft else contextlib_nullcontext():
            x, padding_mask = self.encoder.extract_finetune(source, padding_mask=padding_mask, mask=False)
        return x, padding_mask

    def forward(self, source, padding_mask, mix_wav, **kwargs):
        # AV-HuBERT runs at 25 fps (40 ms), the STFT at hop 10 ms -> upsample x4
        feats, feat_padding_mask = self.encode(source, padding_mask)
        spec, mag, logmel = self.stft(mix_wav)
        T = logmel.size(1)
        feats = F.interpolate(feats.transpose(1, 2), size=T, mode="nearest").transpose(1, 2)
        mask = self.mask_head(feats, logmel).transpose(1, 2)  # B x F x T
        mask = mask.float()

        p = self.cfg.compress_power
        est_mag = (mag.clamp(min=1e-8) ** p * mask) ** (1.0 / p)
        est_spec = torch.polar(est_mag, torch.angle(spec))
        est_wav = self.istft(est_spec, length=mix_wav.size(-1))
        return {"est_wav": est_wav, "mask": mask, "padding_mask": feat_padding_mask}

    def get_normalized_probs(self, net_output, log_probs, sample=None):
        raise NotImplementedError("speech enhancement model has no output distribution")


class contextlib_nullcontext(object):
    def __enter__(self):
        return None

    def __exit__(self, *excinfo):
        return False


def si_snr(est, ref, eps=1e-8):
    est = est - est.mean(dim=-1, keepdim=True)
    ref = ref - ref.mean(dim=-1, keepdim=True)
    proj = (est * ref).sum(-1, keepdim=True) * ref / (ref.pow(2).sum(-1, keepdim=True) + eps)
    noise = est - proj
    ratio = proj.pow(2).sum(-1) / (noise.pow(2).sum(-1) + eps)
    return 10 * torch.log10(ratio + eps)
