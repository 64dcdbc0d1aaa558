"""SAINT+ (Shin et al., 2021) for the Riiid! Answer Correctness Prediction data.

Encoder input : exercise id + part (+ position)
Decoder input : shifted response + elapsed time + lag time (+ position)
"""
import math

import torch
import torch.nn as nn


class FFN(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.1):
        super().__init__()
        self.layer1 = nn.Linear(d_model, d_ff)
        self.layer2 = nn.Linear(d_ff, d_model)
        self.relu = nn.ReLU()
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.layer2(self.relu(self.layer1(x))))


class PositionalEncoding(nn.Module):
    """Fixed sinusoidal encoding; the learnt variant is selected with cfg.learned_pos."""

    def __init__(self, d_model, max_len=512, dropout=0.1):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0))

    def forward(self, x):
        x = x + self.pe[:, : x.size(1)]
        return self.dropout(x)


def future_mask(seq_len, device):
    # True above the diagonal -> position may not attend to the future
    return torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool, device=device), diagonal=1)


class SaintPlus(nn.Module):
    def __init__(self, n_questions, n_parts, seq_len=100, d_model=256, n_heads=8, n_layers=2,
                 d_ff=1024, dropout=0.1, max_lag_minutes=1440, max_elapsed_sec=300, learned_pos=True):
        super().__init__()
        self.seq_len = seq_len
        self.d_model = d_model
        self.max_lag_minutes = max_lag_minutes
        self.max_elapsed_sec = max_elapsed_sec

        # encoder side embeddings
        self.question_emb = nn.Embedding(n_questions + 1, d_model, padding_idx=0)
        self.part_emb = nn.Embedding(n_parts + 1, d_model, padding_idx=0)

        # decoder side embeddings; response 0/1 plus start token 2
        self.response_emb = nn.Embedding(3, d_model)
        self.elapsed_proj = nn.Linear(1, d_model, bias=False)
        self.lag_emb = nn.Embedding(max_lag_minutes + 2, d_model)

        if learned_pos:
            self.enc_pos = nn.Embedding(seq_len, d_model)
            self.dec_pos = nn.Embedding(seq_len, d_model)
        else:
            self.enc_pos = None
            self.dec_pos = None
            self.sin_pos = PositionalEncoding(d_model, max_len=seq_len, dropout=dropout)

        self.transformer = nn.Transformer(
            d_model=d_model,
            nhead=n_heads,
            num_encoder_layers=n_layers,
            num_decoder_layers=n_layers,
            dim_feedforward=d_ff,
            dropout=dropout,
            batch_first=True,
        )
        self.ffn = FFN(d_model, d_ff, dropout)
        self.layer_norm = nn.LayerNorm(d_model)
        self.out = nn.Linear(d_model, 1)
        self._init_weights()

    def _init_weights(self):
        for name, p in self.named_parameters():
            if p.dim() > 1 and "emb" not in name:
                nn.init.xavier_uniform_(p)

    def _pos(self, x, table):
        if table is None:
            return self.sin_pos(x)
        idx = torch.arange(x.size(1), device=x.device).unsqueeze(0)
        return x + table(idx)

    def forward(self, question_ids, part_ids, prior_responses, prior_elapsed, lag_minutes):
        """
        question_ids     (B, L) long   exercise ids, 0 = pad
        part_ids         (B, L) long   TOEIC part 1..7
        prior_responses  (B, L) long   shifted answered_correctly with start token 2
        prior_elapsed    (B, L) float  prior_question_elapsed_time in seconds
        lag_minutes      (B, L) long   minutes since previous bundle, clipped
        """
        device = question_ids.device
        L = question_ids.size(1)
        pad_mask = question_ids == 0

        enc = self.question_emb(question_ids) + self.part_emb(part_ids)
        enc = self._pos(enc, self.enc_pos)

        elapsed = torch.clamp(prior_elapsed, 0, self.max_elapsed_sec).unsqueeze(-1) / self.max_elapsed_sec
        lag = torch.clamp(lag_minutes, 0, self.max_lag_minutes + 1)
        dec = self.response_emb(prior_responses) + self.elapsed_proj(elapsed) + self.lag_emb(lag)
        dec = self._pos(dec, self.dec_pos)

        mask = future_mask(L, device)
        h = self.transformer(
            enc, dec,
            src_mask=mask, tgt_mask=mask, memory_mask=mask,
            src_key_padding_mask=pad_mask, tgt_key_padding_mask=pad_mask,
            memory_key_padding_mask=pad_mask,
        )
        h = self.layer_norm(h + self.ffn(h))
        return self.out(h).squeeze(-1)


def build_model(cfg):
    return SaintPlus(
        n_questions=cfg.n_questions,
        n_parts=cfg.n_parts,
        seq_len=cfg.seq_len,
        d_model=cfg.d_model,
        n_heads=cfg.n_heads,
        n_layers=cfg.n_layers,
        d_ff=cfg.d_ff,
        dropout=cfg.dropout,
        learned_pos=cfg.learned_pos,
    )
