"""PyTorch heads on top of openSMILE features.

* ``MLPHead``      - functionals (eGeMAPS: 88-d, ComParE: 6373-d) -> classes / dimensions
* ``BiLSTMAttnHead`` - LLD sequences (eGeMAPS LLD: 25-d per 10 ms frame) -> classes / dimensions
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Standardize(nn.Module):
    """Feature-wise z-normalisation with statistics estimated on the training set."""

    def __init__(self, dim):
        super().__init__()
        self.register_buffer("mean", torch.zeros(dim))
        self.register_buffer("std", torch.ones(dim))

    @torch.no_grad()
    def fit(self, x):
        x = x.reshape(-1, x.shape[-1])
        self.mean.copy_(x.mean(0))
        self.std.copy_(x.std(0).clamp_min(1e-5))

    def forward(self, x):
        return (x - self.mean) / self.std


class MLPHead(nn.Module):
    def __init__(self, in_dim, num_outputs, hidden=(256, 128), dropout=0.3):
        super().__init__()
        self.norm = Standardize(in_dim)
        layers, d = [], in_dim
        for h in hidden:
            layers += [nn.Linear(d, h), nn.BatchNorm1d(h), nn.ReLU(inplace=True), nn.Dropout(dropout)]
            d = h
        self.body = nn.Sequential(*layers)
        self.out = nn.Linear(d, num_outputs)

    def forward(self, x, lengths=None):
        return self.out(self.body(self.norm(x)))


class AttentionPooling(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.score = nn.Linear(dim, 1)

    def forward(self, h, mask):
        # h: (B, T, D), mask: (B, T) True for valid frames
        w = self.score(h).squeeze(-1)
        w = w.masked_fill(~mask, float("-inf"))
        w = F.softmax(w, dim=-1)
        return torch.bmm(w.unsqueeze(1), h).squeeze(1)


class BiLSTMAttnHead(nn.Module):
    def __init__(self, in_dim, num_outputs, hidden=128, layers=2, dropout=0.2):
        super().__init__()
        self.norm = Standardize(in_dim)
        self.lstm = nn.LSTM(in_dim, hidden, num_layers=layers, batch_first=True,
                            bidirectional=True, dropout=dropout if layers > 1 else 0.0)
        self.pool = AttentionPooling(2 * hidden)
        self.drop = nn.Dropout(dropout)
        self.out = nn.Linear(2 * hidden, num_outputs)

    def forward(self, x, lengths):
        x = self.norm(x)
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        h, _ = self.lstm(packed)
        h, _ = nn.utils.rnn.pad_packed_sequence(h, batch_first=True, total_length=x.shape[1])
        mask = torch.arange(x.shape[1], device=x.device)[None, :] < lengths.to(x.device)[:, None]
        return self.out(self.drop(self.pool(h, mask)))


class CCCLoss(nn.Module):
    """1 - concordance correlation coefficient, averaged over output dimensions."""

    def forward(self, pred, target):
        pm, tm = pred.mean(0), target.mean(0)
        pv, tv = pred.var(0, unbiased=False), target.var(0, unbiased=False)
        cov = ((pred - pm) * (target - tm)).mean(0)
        ccc = 2 * cov / (pv + tv + (pm - tm) ** 2 + 1e-8)
        return 1.0 - ccc.mean()


def build_head(kind, in_dim, num_outputs, **kw):
    if kind == "mlp":
        return MLPHead(in_dim, num_outputs, **kw)
    if kind == "bilstm":
        return BiLSTMAttnHead(in_dim, num_outputs, **kw)
    raise ValueError(f"unknown head {kind!r}")
