"""Downstream heads used on top of frozen emotion2vec / data2vec features."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class BaseModel(nn.Module):
    """Linear -> ReLU -> masked mean pooling -> Linear (the paper's default head)."""

    def __init__(self, input_dim=768, output_dim=4, hidden_dim=256, dropout=0.1):
        super().__init__()
        self.pre_net = nn.Linear(input_dim, hidden_dim)
        self.post_net = nn.Linear(hidden_dim, output_dim)
        self.activate = nn.ReLU()
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, padding_mask=None):
        x = self.activate(self.pre_net(x))
        x = self.dropout(x)
        if padding_mask is None:
            x = x.mean(dim=1)
        else:
            keep = (~padding_mask).unsqueeze(-1).to(x.dtype)
            x = (x * keep).sum(dim=1) / keep.sum(dim=1).clamp(min=1.0)
        return self.post_net(x)


class AttentivePoolingModel(nn.Module):
    """Self-attentive pooling head (Okabe et al. style, single head)."""

    def __init__(self, input_dim=768, output_dim=4, hidden_dim=256):
        super().__init__()
        self.proj = nn.Linear(input_dim, hidden_dim)
        self.att = nn.Sequential(nn.Linear(hidden_dim, hidden_dim), nn.Tanh(), nn.Linear(hidden_dim, 1))
        self.out = nn.Linear(hidden_dim, output_dim)

    def forward(self, x, padding_mask=None):
        h = torch.relu(self.proj(x))
        w = self.att(h).squeeze(-1)
        if padding_mask is not None:
            w = w.masked_fill(padding_mask, torch.finfo(w.dtype).min)
        w = torch.softmax(w, dim=-1)
        pooled = torch.bmm(w.unsqueeze(1), h).squeeze(1)
        return self.out(pooled)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=3000):
        super().__init__()
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0), persistent=False)

    def forward(self, x):
        return x + self.pe[:, : x.size(1)]


class TransformerHead(nn.Module):
    """Two-layer transformer encoder over frame features, used for the
    frame-level (``granularity=frame``) ablation."""

    def __init__(self, input_dim=768, output_dim=4, d_model=256, nhead=4, num_layers=2, max_len=3000):
        super().__init__()
        self.inp = nn.Linear(input_dim, d_model)
        self.pos = PositionalEncoding(d_model, max_len=max_len)
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=4 * d_model, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=num_layers)
        self.cls = nn.Linear(d_model, output_dim)

    def forward(self, x, padding_mask=None):
        x = self.pos(self.inp(x))
        x = self.encoder(x, src_key_padding_mask=padding_mask)
        if padding_mask is not None:
            keep = (~padding_mask).unsqueeze(-1).float()
            x = (x * keep).sum(1) / keep.sum(1).clamp(min=1.0)
        else:
            x = x.mean(1)
        return self.cls(x)


def lengths_to_padding_mask(lengths, max_len=None):
    """True where padded. ``lengths`` is a python list of ints."""
    max_len = max_len or max(lengths)
    lengths = torch.tensor(lengths).cuda()
    return torch.arange(max_len, device=lengths.device)[None, :] >= lengths[:, None]


MODELS = {
    "BaseModel": BaseModel,
    "AttentivePoolingModel": AttentivePoolingModel,
    "TransformerHead": TransformerHead,
}


def build_model(name, **kwargs):
    if name not in MODELS:
        raise KeyError(f"unknown downstream model {name}, choose from {list(MODELS)}")
    return MODELS[name](**kwargs)
