"""SAINT+ (Shin et al., 2021) for the Riiid! Answer Correctness Prediction / EdNet-KT1 data.

Encoder: exercise id + part + position.  Decoder: response + elapsed time + lag time + position.
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def future_mask(seq_length):
    """Upper-triangular boolean mask, True = not allowed to attend."""
    mask = np.triu(np.ones((seq_length, seq_length)), k=1).astype("bool")
    return torch.from_numpy(mask)


class FFN(nn.Module):
    def __init__(self, d_model, d_ff=None, dropout=0.1):
        super().__init__()
        d_ff = d_ff or 4 * d_model
        self.lr1 = nn.Linear(d_model, d_ff)
        self.act = nn.GELU()
        self.lr2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.lr2(self.act(self.lr1(x))))


class ContinuousEmbedding(nn.Module):
    """Linear embedding of a continuous feature (elapsed time / lag time, in seconds, log-scaled)."""

    def __init__(self, d_model, max_value=300.0):
        super().__init__()
        self.max_value = max_value
        self.proj = nn.Linear(1, d_model, bias=False)

    def forward(self, x):
        x = torch.clamp(x.float(), max=self.max_value)
        x = torch.log1p(x) / math.log1p(self.max_value)
        return self.proj(x.unsqueeze(-1))


class SAINTPlus(nn.Module):
    def __init__(self, n_skill, n_part=7, max_seq=100, d_model=256, n_heads=8, n_layers=4, dropout=0.1):
        super().__init__()
        self.n_skill = n_skill
        self.max_seq = max_seq
        self.d_model = d_model

        # encoder side
        self.exercise_emb = nn.Embedding(n_skill + 1, d_model, padding_idx=0)
        self.part_emb = nn.Embedding(n_part + 1, d_model, padding_idx=0)
        self.enc_pos_emb = nn.Embedding(max_seq, d_model)

        # decoder side: response 0/1, plus a start token 2
        self.response_emb = nn.Embedding(3, d_model)
        self.elapsed_emb = ContinuousEmbedding(d_model, max_value=300.0)
        self.lag_emb = ContinuousEmbedding(d_model, max_value=86400.0)
        self.dec_pos_emb = nn.Embedding(max_seq, d_model)

        self.transformer = nn.Transformer(d_model=d_model, nhead=n_heads, num_encoder_layers=n_layers,
                                          num_decoder_layers=n_layers, dim_feedforward=4 * d_model,
                                          dropout=dropout, batch_first=True)
        self.ffn = FFN(d_model, dropout=dropout)
        self.layer_norm = nn.LayerNorm(d_model)
        self.pred = nn.Linear(d_model, 1)
        self._reset_parameters()

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def forward(self, exercise, part, response, elapsed, lag):
        bs, seq_len = exercise.shape
        pos = torch.arange(seq_len).unsqueeze(0).to(DEVICE)

        enc = self.exercise_emb(exercise) + self.part_emb(part) + self.enc_pos_emb(pos)

        # shift responses right, prepend the start token
        start = torch.full((bs, 1), 2, dtype=response.dtype, device=response.device)
        dec_in = torch.cat([start, response[:, :-1]], dim=1)
        dec = self.response_emb(dec_in) + self.elapsed_emb(elapsed) + self.lag_emb(lag) + self.dec_pos_emb(pos)

        mask = future_mask(seq_len).to(DEVICE)
        pad_mask = exercise.eq(0)

        out = self.transformer(src=enc, tgt=dec, src_mask=mask, tgt_mask=mask, memory_mask=mask,
                               src_key_padding_mask=pad_mask, tgt_key_padding_mask=pad_mask,
                               memory_key_padding_mask=pad_mask)
        out = self.layer_norm(out + self.ffn(out))
        return self.pred(out).squeeze(-1)

    @torch.no_grad()
    def predict_next(self, exercise, part, response, elapsed, lag):
        """Probability that the last exercise of each sequence is answered correctly (used in the Kaggle API loop)."""
        logits = self.forward(exercise, part, response, elapsed, lag)
        return torch.sigmoid(logits[:, -1])


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


if __name__ == "__main__":
    # quick shape check on whatever device is available
    m = SAINTPlus(n_skill=13523).to(DEVICE)
    bs, L = 4, 100
    ex = torch.randint(1, 13523, (bs, L), device=DEVICE)
    pt = torch.randint(1, 8, (bs, L), device=DEVICE)
    rs = torch.randint(0, 2, (bs, L), device=DEVICE)
    el = torch.rand(bs, L, device=DEVICE) * 60
    lg = torch.rand(bs, L, device=DEVICE) * 3600
    print(m(ex, pt, rs, el, lg).shape, count_parameters(m))
