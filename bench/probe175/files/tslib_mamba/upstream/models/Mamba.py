import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from mamba_ssm import Mamba

try:
    # fused Triton RMSNorm shipped with mamba_ssm >= 1.1; plain LayerNorm otherwise
    from mamba_ssm.ops.triton.layernorm import RMSNorm
except ImportError:
    RMSNorm = None

from layers.Embed import DataEmbedding, DataEmbedding_inverted


class BiMambaLayer(nn.Module):
    """Bidirectional Mamba block over variate tokens (S-Mamba style)."""

    def __init__(self, d_model, d_state, d_conv, expand, dropout=0.1):
        super().__init__()
        self.fwd = Mamba(d_model=d_model, d_state=d_state, d_conv=d_conv, expand=expand)
        self.bwd = Mamba(d_model=d_model, d_state=d_state, d_conv=d_conv, expand=expand)
        self.norm = RMSNorm(d_model) if RMSNorm is not None else nn.LayerNorm(d_model)
        self.ffn = nn.Sequential(
            nn.Linear(d_model, 4 * d_model),
            nn.GELU(),
            nn.Dropout(dropout),
            nn.Linear(4 * d_model, d_model),
        )
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        # x: [B, N, D]
        y = self.fwd(x) + self.bwd(x.flip(dims=[1])).flip(dims=[1])
        x = self.norm(x + self.dropout(y))
        return self.norm2(x + self.dropout(self.ffn(x)))


class Model(nn.Module):

    def __init__(self, configs):
        super(Model, self).__init__()
        self.task_name = configs.task_name
        self.pred_len = configs.pred_len
        self.use_norm = getattr(configs, 'use_norm', 1)
        self.variate_tokens = getattr(configs, 'variate_tokens', False)

        self.d_inner = configs.d_model * configs.expand
        self.dt_rank = math.ceil(configs.d_model / 16)  # TODO implement "auto"

        if self.variate_tokens:
            self.embedding = DataEmbedding_inverted(configs.seq_len, configs.d_model, configs.embed, configs.freq,
                                                    configs.dropout)
            self.layers = nn.ModuleList([
                BiMambaLayer(configs.d_model, configs.d_ff, configs.d_conv, configs.expand, configs.dropout)
                for _ in range(configs.e_layers)
            ])
            self.out_layer = nn.Linear(configs.d_model, configs.pred_len, bias=True)
        else:
            self.embedding = DataEmbedding(configs.enc_in, configs.d_model, configs.embed, configs.freq,
                                           configs.dropout)
            self.mamba = Mamba(
                d_model=configs.d_model,
                d_state=configs.d_ff,
                d_conv=configs.d_conv,
                expand=configs.expand,
            )
            self.out_layer = nn.Linear(configs.d_model, configs.c_out, bias=False)

    def forecast(self, x_enc, x_mark_enc):
        if self.use_norm:
            mean_enc = x_enc.mean(1, keepdim=True).detach()
            x_enc = x_enc - mean_enc
            std_enc = torch.sqrt(torch.var(x_enc, dim=1, keepdim=True, unbiased=False) + 1e-5).detach()
            x_enc = x_enc / std_enc

        if self.variate_tokens:
            N = x_enc.shape[-1]
            x = self.embedding(x_enc, x_mark_enc)  # [B, N(+marks), D]
            for layer in self.layers:
                x = layer(x)
            x_out = self.out_layer(x).permute(0, 2, 1)[:, :, :N]
        else:
            x = self.embedding(x_enc, x_mark_enc)
            x = self.mamba(x)
            x_out = self.out_layer(x)

        if self.use_norm:
            x_out = x_out * std_enc + mean_enc
        return x_out

    def forward(self, x_enc, x_mark_enc, x_dec, x_mark_dec, mask=None):
        if self.task_name in ['short_term_forecast', 'long_term_forecast']:
            x_out = self.forecast(x_enc, x_mark_enc)
            return x_out[:, -self.pred_len:, :]

        # other tasks not implemented
