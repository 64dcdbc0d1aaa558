# -----------------------------------------------------
# Copyright (c) THL A29 Limited, a Tencent company. All rights reserved.
# -----------------------------------------------------

import torch
import torch.nn as nn
from nncore.nn import (MODELS, FeedForwardNetwork, MultiHeadAttention,
                       Parameter, build_norm_layer)


@MODELS.register()
class BottleneckTransformerLayer(nn.Module):

    def __init__(self,
                 dims,
                 heads=8,
                 ratio=4,
                 p=0.1,
                 norm_cfg=dict(type='LN'),
                 act_cfg=dict(type='ReLU')):
        super(BottleneckTransformerLayer, self).__init__()

        self.dims = dims
        self.heads = heads
        self.ratio = ratio
        self.p = p

        self.att1 = MultiHeadAttention(dims, heads=heads, p=p)
        self.att2 = MultiHeadAttention(dims, heads=heads, p=p)
        self.att3 = MultiHeadAttention(dims, heads=heads, p=p)
        self.att4 = MultiHeadAttention(dims, heads=heads, p=p)

        self.ffn1 = FeedForwardNetwork(dims, ratio=ratio, p=p, act_cfg=act_cfg)
        self.ffn2 = FeedForwardNetwork(dims, ratio=ratio, p=p, act_cfg=act_cfg)

        self.norm1 = build_norm_layer(norm_cfg, dims=dims)
        self.norm2 = build_norm_layer(norm_cfg, dims=dims)
        self.norm3 = build_norm_layer(norm_cfg, dims=dims)
        self.norm4 = build_norm_layer(norm_cfg, dims=dims)
        self.norm5 = build_norm_layer(norm_cfg, dims=dims)
        self.norm6 = build_norm_layer(norm_cfg, dims=dims)

    def forward(self, a, b, t, pe=None, mask=None):
        da = self.norm1(a)
        db = self.norm2(b)
        dt = self.norm3(t)

        ka = da if pe is None else da + pe
        kb = db if pe is None else db + pe

        at = self.att1(dt, ka, da, mask=mask)
        bt = self.att2(dt, kb, db, mask=mask)

        t = t + at + bt
        dt = self.norm4(t)

        qa = da if pe is None else da + pe
        qb = db if pe is None else db + pe

        a = a + self.att3(qa, dt)
        b = b + self.att4(qb, dt)

        da = self.norm5(a)
        db = self.norm6(b)

        a = a + self.ffn1(da)
        b = b + self.ffn2(db)

        return a, b, t


@MODELS.register()
class BottleneckTransformer(nn.Module):

    def __init__(self, dims, num_tokens=4, num_layers=1, **kwargs):
        super(BottleneckTransformer, self).__init__()

        self.dims = dims
        self.num_tokens = num_tokens
        self.num_layers = num_layers

        self.token = Parameter(num_tokens, dims)
        self.encoder = nn.ModuleList([
            BottleneckTransformerLayer(dims, **kwargs)
            for _ in range(num_layers)
        ])

    def forward(self, a, b, **kwargs):
        t = self.token.expand(a.size(0), -1, -1)
        for enc in self.encoder:
            a, b, t = enc(a, b, t, **kwargs)
        return a, b


@MODELS.register()
class QueryDecoderLayer(nn.Module):

    def __init__(self,
                 dims,
                 heads=8,
                 ratio=4,
                 p=0.1,
                 norm_cfg=dict(type='LN'),
                 act_cfg=dict(type='ReLU')):
        super(QueryDecoderLayer, self).__init__()

        self.att1 = MultiHeadAttention(dims, heads=heads, p=p)
        self.att2 = MultiHeadAttention(dims, heads=heads, p=p)
        self.ffn = FeedForwardNetwork(dims, ratio=ratio, p=p, act_cfg=act_cfg)

        self.norm1 = build_norm_layer(norm_cfg, dims=dims)
        self.norm2 = build_norm_layer(norm_cfg, dims=dims)
        self.norm3 = build_norm_layer(norm_cfg, dims=dims)

    def forward(self, x, mem=None, q_pe=None, k_pe=None, mask=None):
        dx = self.norm1(x)
        q = k = dx if q_pe is None else dx + q_pe
        x = x + self.att1(q, k, dx)

        dx = self.norm2(x)
        q = dx if q_pe is None else dx + q_pe
        k = mem if k_pe is None else mem + k_pe
        x = x + self.att2(q, k, mem, mask=mask)

        dx = self.norm3(x)
        x = x + self.ffn(dx)

        return x


@MODELS.register()
class PositionalEncoding(nn.Module):
    """Sinusoidal positional encoding over the temporal axis of clip features."""

    def __init__(self,
                 dims,
                 temperature=10000,
                 normalize=False,
                 scale=None,
                 offset=0.0,
                 learnable=False,
                 max_len=None):
        super(PositionalEncoding, self).__init__()

        self.dims = dims
        self.temperature = temperature
        self.normalize = normalize
        self.scale = scale or 2 * 3.141592653589793
        self.offset = offset

        if learnable:
            self.pe = Parameter(max_len, dims)
        else:
            self.pe = None

    def forward(self, x):
        if self.pe is not None:
            return self.pe[:x.size(1)].unsqueeze(0).expand(x.size(0), -1, -1)

        pos = torch.arange(x.size(1), dtype=x.dtype, device=x.device) + 1
        if self.normalize:
            pos = (pos + self.offset) / (pos[-1] + 1e-6) * self.scale

        dim_t = torch.arange(self.dims, dtype=x.dtype, device=x.device)
        dim_t = self.temperature**(2 * (dim_t // 2) / self.dims)

        pos = pos[:, None] / dim_t
        pos = torch.stack((pos[:, 0::2].sin(), pos[:, 1::2].cos()), dim=2)
        pos = pos.flatten(1).unsqueeze(0).expand(x.size(0), -1, -1)
        return pos
