#!/usr/bin/env python3
#
#    This file is part of Leela Chess.
#    Copyright (C) 2018-2024 The LCZero Authors
#
#    Leela Chess is free software: you can redistribute it and/or modify
#    it under the terms of the GNU General Public License as published by
#    the Free Software Foundation, either version 3 of the License, or
#    (at your option) any later version.

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from policy_index import policy_index

# 112 input planes: 8 history positions x 13 planes + 8 auxiliary planes
INPUT_PLANES = 112
POLICY_SIZE = 1858


@torch.jit.script
def mish(x):
    return x * torch.tanh(F.softplus(x))


class Mish(nn.Module):
    def forward(self, x):
        return mish(x)


class ConvBlock(nn.Module):
    def __init__(self, in_ch, out_ch, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_ch, out_ch, kernel_size, padding=kernel_size // 2, bias=False)
        self.bn = nn.BatchNorm2d(out_ch, affine=True)
        self.act = Mish()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class SqueezeExcitation(nn.Module):
    def __init__(self, channels, se_ratio):
        super().__init__()
        self.fc1 = nn.Linear(channels, channels // se_ratio)
        self.fc2 = nn.Linear(channels // se_ratio, 2 * channels)
        self.act = Mish()

    def forward(self, x):
        pooled = x.mean(dim=(2, 3))
        h = self.act(self.fc1(pooled))
        gammas, betas = self.fc2(h).chunk(2, dim=1)
        return torch.sigmoid(gammas)[:, :, None, None] * x + betas[:, :, None, None]


class ResidualBlock(nn.Module):
    def __init__(self, channels, se_ratio):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels, affine=True)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels, affine=True)
        self.se = SqueezeExcitation(channels, se_ratio)
        self.act = Mish()

    def forward(self, x):
        out = self.act(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out = self.se(out)
        return self.act(out + x)


class AttentionPolicyHead(nn.Module):
    """
    Policy from self-attention between squares: every (from, to) square pair gets
    a logit from q.k, promotions get extra logits from the 8th rank keys.
    """

    def __init__(self, channels, embedding_size=64, policy_d_model=64):
        super().__init__()
        self.embedding = nn.Linear(channels, embedding_size)
        self.q = nn.Linear(embedding_size, policy_d_model)
        self.k = nn.Linear(embedding_size, policy_d_model)
        self.promo = nn.Linear(policy_d_model, 4, bias=False)
        self.policy_d_model = policy_d_model
        self.act = Mish()
        self.register_buffer("policy_map", self._build_policy_map(), persistent=False)

    @staticmethod
    def _build_policy_map():
        # Maps the 64*64 + 8*24 attention logits to the 1858 lc0 move indices
        squares = "abcdefgh"
        index = {}
        for i, uci in enumerate(policy_index):
            index[uci] = i
        mapping = torch.full((64 * 64 + 8 * 24,), -1, dtype=torch.long)
        for from_sq in range(64):
            for to_sq in range(64):
                uci = squares[from_sq % 8] + str(from_sq // 8 + 1) + squares[to_sq % 8] + str(to_sq // 8 + 1)
                if uci in index:
                    mapping[from_sq * 64 + to_sq] = index[uci]
        return mapping

    def forward(self, x):
        b, c, _, _ = x.shape
        tokens = x.flatten(2).transpose(1, 2)  # (B, 64, C)
        emb = self.act(self.embedding(tokens))
        q = self.q(emb)
        k = self.k(emb)
        logits = torch.matmul(q, k.transpose(1, 2)) / math.sqrt(self.policy_d_model)  # (B, 64, 64)
        promo_keys = k[:, -8:, :]
        promo_offsets = self.promo(promo_keys).transpose(1, 2) * math.sqrt(self.policy_d_model)
        n_promo = logits[:, -16:-8, -8:].unsqueeze(-1) + promo_offsets[:, :3, :].permute(0, 2, 1).unsqueeze(1)
        flat = torch.cat([logits.reshape(b, -1), n_promo.reshape(b, -1)], dim=1)
        out = flat.new_full((b, POLICY_SIZE), -1.0e4)
        valid = self.policy_map >= 0
        out[:, self.policy_map[valid]] = flat[:, valid[: flat.shape[1]]]
        return out


class EncoderLayer(nn.Module):
    """Transformer encoder block used by the attention-body ("BT") nets."""

    def __init__(self, d_model, heads, dff):
        super().__init__()
        self.heads = heads
        self.d_model = d_model
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.ln1 = nn.LayerNorm(d_model)
        self.ffn1 = nn.Linear(d_model, dff)
        self.ffn2 = nn.Linear(dff, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.act = Mish()

    def forward(self, x):
        b, t, _ = x.shape
        qkv = self.qkv(x).view(b, t, 3, self.heads, self.d_model // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        # Board has a fixed 64 tokens, the flash kernel is the fastest path on Ampere and newer
        with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):
            attn = F.scaled_dot_product_attention(q, k, v)
        attn = attn.transpose(1, 2).reshape(b, t, self.d_model)
        x = self.ln1(x + self.out(attn))
        x = self.ln2(x + self.ffn2(self.act(self.ffn1(x))))
        return x


class LeelaModel(nn.Module):
    def __init__(self, filters, blocks, se_ratio, policy_channels=32, moves_left='v1',
                 attention_policy=False, encoder_layers=0, encoder_heads=8):
        super().__init__()
        self.input_block = ConvBlock(INPUT_PLANES, filters, 3)
        self.residual_tower = nn.Sequential(*[ResidualBlock(filters, se_ratio) for _ in range(blocks)])

        self.encoders = None
        if encoder_layers > 0:
            self.encoders = nn.Sequential(*[EncoderLayer(filters, encoder_heads, filters * 2) for _ in range(encoder_layers)])

        if attention_policy:
            self.policy_head = AttentionPolicyHead(filters)
        else:
            self.policy_head = nn.Sequential(
                ConvBlock(filters, filters, 3),
                nn.Conv2d(filters, 80, 3, padding=1),
                nn.Flatten(),
            )
            self.register_buffer("conv_policy_gather", torch.arange(POLICY_SIZE), persistent=False)
        self.attention_policy = attention_policy

        self.value_conv = ConvBlock(filters, 32, 1)
        self.value_fc1 = nn.Linear(32 * 64, 128)
        self.value_fc2 = nn.Linear(128, 3)

        self.moves_left = moves_left
        if moves_left == 'v1':
            self.ml_conv = ConvBlock(filters, 8, 1)
            self.ml_fc1 = nn.Linear(8 * 64, 128)
            self.ml_fc2 = nn.Linear(128, 1)
        self.act = Mish()

    def forward(self, planes):
        x = planes.view(-1, INPUT_PLANES, 8, 8)
        x = self.input_block(x)
        x = self.residual_tower(x)
        if self.encoders is not None:
            b, c = x.shape[0], x.shape[1]
            x = self.encoders(x.flatten(2).transpose(1, 2)).transpose(1, 2).reshape(b, c, 8, 8)

        if self.attention_policy:
            policy = self.policy_head(x)
        else:
            policy = self.policy_head(x)[:, :POLICY_SIZE]

        v = self.value_conv(x).flatten(1)
        v = self.act(self.value_fc1(v))
        value = self.value_fc2(v)

        moves_left = None
        if self.moves_left == 'v1':
            m = self.ml_conv(x).flatten(1)
            m = self.act(self.ml_fc1(m))
            moves_left = F.relu(self.ml_fc2(m))
        return policy, value, moves_left
