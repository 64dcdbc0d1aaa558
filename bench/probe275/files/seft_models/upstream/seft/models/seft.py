"""Set Functions for Time Series (SeFT), Horn et al., ICML 2020 -- PyTorch port.

The original implementation is TensorFlow 1.15 / tf.keras (BorgwardtLab/Set_Functions_for_Time_Series).
This port keeps the same structure: every observation (t, value, modality) is a set element,
encoded by phi, pooled with a multi-head attention-weighted aggregation, and decoded by rho.

Shapes follow the "flat" representation used in the data pipeline:
    times      (B, N)      float32, hours since admission
    values     (B, N)      float32, normalised measurement
    modalities (B, N)      int64,   index of the measured variable
    lengths    (B,)        int64,   number of valid set elements per sample
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class PaddedToSegments(nn.Module):
    """Convert a padded batch into a flat tensor + segment ids (what tf.math.segment_* wants)."""

    def forward(self, x, lengths):
        B, N = x.shape[0], x.shape[1]
        mask = torch.arange(N, device=x.device)[None, :] < lengths[:, None]
        valid = x[mask]
        segment_ids = torch.arange(B, device=x.device)[:, None].expand(B, N)[mask]
        return valid, segment_ids


def segment_sum(data, segment_ids, num_segments):
    out = data.new_zeros((num_segments,) + tuple(data.shape[1:]))
    return out.index_add_(0, segment_ids, data)


def segment_mean(data, segment_ids, num_segments):
    s = segment_sum(data, segment_ids, num_segments)
    counts = torch.bincount(segment_ids, minlength=num_segments).clamp(min=1).to(data.dtype)
    return s / counts.view(-1, *([1] * (data.dim() - 1)))


def segment_softmax(logits, segment_ids, num_segments):
    """Numerically stable softmax within each segment, per head. logits: (M, H)."""
    seg_max = torch.full((num_segments, logits.shape[1]), -1e9, device=logits.device, dtype=logits.dtype)
    seg_max = seg_max.scatter_reduce(0, segment_ids[:, None].expand_as(logits), logits, reduce='amax',
                                     include_self=True)
    logits = logits - seg_max[segment_ids]
    e = logits.exp()
    denom = segment_sum(e, segment_ids, num_segments)[segment_ids]
    return e / (denom + 1e-12)


class PositionalEncoding(nn.Module):
    """Sinusoidal encoding of continuous time (max_time ~ 48 h)."""

    def __init__(self, n_dims=4, max_time=20.0):
        super().__init__()
        self.n_dims = n_dims
        timescales = max_time ** torch.linspace(0, 1, n_dims // 2)
        self.register_buffer('timescales', timescales)

    def forward(self, t):
        scaled = t[..., None] / self.timescales
        return torch.cat([torch.sin(scaled), torch.cos(scaled)], dim=-1)


def build_mlp(in_dim, width, n_layers, out_dim=None, dropout=0.0):
    layers = []
    d = in_dim
    for _ in range(n_layers):
        layers += [nn.Linear(d, width), nn.ReLU(), nn.Dropout(dropout)]
        d = width
    if out_dim is not None:
        layers.append(nn.Linear(d, out_dim))
    return nn.Sequential(*layers)


class CumulativeSetAttention(nn.Module):
    """SeFT-Attn aggregation: scaled dot-product between a per-head query and
    keys computed from [element encoding, mean-pooled set summary]."""

    def __init__(self, in_dim, n_heads=4, dot_prod_dim=128, psi_width=64, psi_layers=2,
                 psi_latent=128, dropout=0.0):
        super().__init__()
        self.n_heads = n_heads
        self.dot_prod_dim = dot_prod_dim
        self.psi = build_mlp(in_dim, psi_width, psi_layers, psi_latent, dropout)
        self.key = nn.Linear(in_dim + psi_latent, dot_prod_dim * n_heads)
        self.query = nn.Parameter(torch.zeros(n_heads, dot_prod_dim))
        nn.init.normal_(self.query, std=1.0 / math.sqrt(dot_prod_dim))

    def forward(self, encoded, segment_ids, num_segments):
        summary = segment_mean(self.psi(encoded), segment_ids, num_segments)[segment_ids]
        keys = self.key(torch.cat([encoded, summary], dim=-1))
        keys = keys.view(-1, self.n_heads, self.dot_prod_dim)
        logits = (keys * self.query[None]).sum(-1) / math.sqrt(self.dot_prod_dim)
        return segment_softmax(logits, segment_ids, num_segments)  # (M, H)


class SeFT(nn.Module):
    def __init__(self, n_modalities, n_static, n_classes=1, n_positional_dims=4, max_timescale=100.0,
                 phi_width=128, phi_layers=3, phi_latent=128, rho_width=128, rho_layers=3,
                 n_heads=4, dot_prod_dim=128, psi_width=64, psi_layers=2, psi_latent=128,
                 dropout=0.1, modality_emb_dim=None):
        super().__init__()
        self.n_modalities = n_modalities
        self.to_segments = PaddedToSegments()
        self.pos = PositionalEncoding(n_positional_dims, max_timescale)
        emb_dim = modality_emb_dim or n_modalities
        if modality_emb_dim is None:
            self.modality_emb = None
        else:
            self.modality_emb = nn.Embedding(n_modalities, emb_dim)
        in_dim = n_positional_dims + 1 + emb_dim
        self.static_proj = nn.Linear(n_static, in_dim) if n_static > 0 else None
        self.phi = build_mlp(in_dim, phi_width, phi_layers, phi_latent, dropout)
        self.attn = CumulativeSetAttention(in_dim, n_heads, dot_prod_dim, psi_width, psi_layers,
                                           psi_latent, dropout)
        self.rho = build_mlp(phi_latent * n_heads, rho_width, rho_layers, n_classes, dropout)

    def encode_elements(self, times, values, modalities):
        if self.modality_emb is None:
            mod = F.one_hot(modalities, self.n_modalities).to(values.dtype)
        else:
            mod = self.modality_emb(modalities)
        return torch.cat([self.pos(times), values[..., None], mod], dim=-1)

    def forward(self, statics, times, values, modalities, lengths):
        B = times.shape[0]
        elements = self.encode_elements(times, values, modalities)        # (B, N, in_dim)
        if self.static_proj is not None:
            # prepend the static vector as an extra set element
            s = self.static_proj(statics)[:, None, :]
            elements = torch.cat([s, elements], dim=1)
            lengths = lengths + 1
        flat, seg = self.to_segments(elements, lengths)                    # (M, in_dim)
        enc = self.phi(flat)                                               # (M, latent)
        attn = self.attn(flat, seg, B)                                     # (M, H)
        weighted = enc[:, None, :] * attn[..., None]                       # (M, H, latent)
        pooled = segment_sum(weighted, seg, B).reshape(B, -1)              # (B, H*latent)
        return self.rho(pooled).squeeze(-1)


MODELS = {'SeFT': SeFT}
