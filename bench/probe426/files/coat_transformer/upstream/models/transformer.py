# This file is part of COAT, and is distributed under the
# OSI-approved BSD 3-Clause License. See top-level LICENSE file or
# https://github.com/Kitware/COAT/blob/master/LICENSE for details.

import math
import random
from functools import reduce

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import init
from collections import OrderedDict

from utils.mask import exchange_token, exchange_patch, get_mask_box, jigsaw_token, cutout_patch, erase_patch, mixup_patch, jigsaw_patch


class TransformerHead(nn.Module):
    def __init__(
        self,
        cfg,
        trans_names,
        kernel_size,
        use_feature_mask,
    ):
        super(TransformerHead, self).__init__()
        d_model = cfg.MODEL.TRANSFORMER.DIM_MODEL

        # Mask parameters
        self.use_feature_mask = use_feature_mask
        mask_shape = cfg.MODEL.MASK_SHAPE
        mask_size = cfg.MODEL.MASK_SIZE
        mask_mode = cfg.MODEL.MASK_MODE

        self.bypass_mask = exchange_patch(mask_shape, mask_size, mask_mode)
        self.get_mask_box = get_mask_box(mask_shape, mask_size, mask_mode)

        self.transformer_encoder = Transformers(
            cfg=cfg,
            trans_names=trans_names,
            kernel_size=kernel_size,
            use_feature_mask=use_feature_mask,
        )
        self.conv0 = conv1x1(1024, 1024)
        self.conv1 = conv1x1(1024, d_model)
        self.conv2 = conv1x1(d_model, 2048)

    def forward(self, box_features):
        mask_box = self.get_mask_box(box_features)

        if self.use_feature_mask:
            skip_features = self.conv0(box_features)
            if self.training:
                skip_features = self.bypass_mask(skip_features)
        else:
            skip_features = box_features

        trans_features = {}
        trans_features["before_trans"] = F.adaptive_max_pool2d(skip_features, 1)
        box_features = self.conv1(box_features)
        box_features = self.transformer_encoder((box_features, mask_box))
        box_features = self.conv2(box_features)
        trans_features["after_trans"] = F.adaptive_max_pool2d(box_features, 1)

        return trans_features


class Transformers(nn.Module):
    def __init__(
        self,
        cfg,
        trans_names,
        kernel_size,
        use_feature_mask,
    ):
        super(Transformers, self).__init__()
        d_model = cfg.MODEL.TRANSFORMER.DIM_MODEL
        self.feature_aug_type = cfg.MODEL.FEATURE_AUG_TYPE
        self.use_feature_mask = use_feature_mask

        # If no conv before transformer, we do not use scales
        if not cfg.MODEL.TRANSFORMER.USE_PATCH2VEC:
            trans_names = ["scale1"]
            kernel_size = [(1, 1)]

        self.trans_names = trans_names
        self.scale_size = len(self.trans_names)
        hidden = d_model // (2 * self.scale_size)

        # kernel_size: (padding, stride)
        kernels = {
            (1, 1): [(0, 0), (1, 1)],
            (3, 3): [(1, 1), (1, 1)]
        }

        padding = []
        stride = []
        for ksize in kernel_size:
            if ksize not in [(1, 1), (3, 3)]:
                raise ValueError("Undefined kernel size.")
            padding.append((kernels[ksize])[0])
            stride.append((kernels[ksize])[1])

        self.use_output_layer = cfg.MODEL.TRANSFORMER.USE_OUTPUT_LAYER
        self.use_global_shortcut = cfg.MODEL.TRANSFORMER.USE_GLOBAL_SHORTCUT

        self.blocks = nn.ModuleDict()
        for tname, ksize, psize, ssize in zip(self.trans_names, kernel_size, padding, stride):
            transblock = Transformer(
                cfg, d_model=hidden, kernel_size=ksize, padding=psize, stride=ssize
            )
            self.blocks[tname] = nn.Sequential(transblock)

        self.output_linear = nn.Sequential(
            nn.Linear(d_model, d_model),
            nn.ReLU(inplace=True)
        )
        self.mask_para = [cfg.MODEL.MASK_SHAPE, cfg.MODEL.MASK_SIZE, cfg.MODEL.MASK_MODE]
        self.token_shuffle = TokenShuffle(ratio=cfg.MODEL.MASK_SIZE)

    def forward(self, inputs):
        trans_feat = []
        enc_feat, mask_box = inputs

        if self.training and self.use_feature_mask and self.feature_aug_type == "exchange_token":
            feature_mask = exchange_token(self.mask_para[0], self.mask_para[1], self.mask_para[2])
            enc_feat = feature_mask(enc_feat)
        elif self.training and self.use_feature_mask and self.feature_aug_type == "token_shuffle":
            enc_feat = self.token_shuffle(enc_feat)

        for tname, feat in zip(self.trans_names, torch.chunk(enc_feat, len(self.trans_names), dim=1)):
            feat = self.blocks[tname]((feat, mask_box))
            trans_feat.append(feat)

        trans_feat = torch.cat(trans_feat, 1)
        if self.use_output_layer:
            trans_feat = self.output_linear(trans_feat.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        if self.use_global_shortcut:
            trans_feat = enc_feat + trans_feat
        return trans_feat


class Transformer(nn.Module):
    def __init__(self, cfg, d_model, kernel_size, padding, stride):
        super(Transformer, self).__init__()
        self.k = kernel_size[0]
        self.attention = MultiHeadAttention(cfg, d_model, self.k, padding, stride)
        self.feed_forward = FeedForward(d_model)

    def forward(self, inputs):
        x, mask = inputs
        x = self.attention(x, mask)
        x = self.feed_forward(x)
        return x


class MultiHeadAttention(nn.Module):
    def __init__(self, cfg, d_model, kernel_size, padding, stride):
        super(MultiHeadAttention, self).__init__()
        self.d_model = d_model
        self.head_size = cfg.MODEL.TRANSFORMER.NUM_HEADS
        self.attention_dropout = cfg.MODEL.TRANSFORMER.DROPOUT_ATTN
        self.use_mask_in_attn = cfg.MODEL.TRANSFORMER.USE_MASK_IN_ATTN
        self.query_embedding = nn.Conv2d(d_model, d_model, kernel_size=kernel_size, padding=padding, stride=stride)
        self.value_embedding = nn.Conv2d(d_model, d_model, kernel_size=kernel_size, padding=padding, stride=stride)
        self.key_embedding = nn.Conv2d(d_model, d_model, kernel_size=kernel_size, padding=padding, stride=stride)
        self.output_linear = nn.Sequential(
            nn.Conv2d(d_model, d_model, kernel_size=kernel_size, padding=padding, stride=stride),
            nn.LeakyReLU(0.2, inplace=True),
        )
        self.dropout = nn.Dropout(p=self.attention_dropout)

    def attention(self, query, key, value, mask=None):
        scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.size(-1))
        if mask is not None:
            scores = scores.masked_fill(mask, -1e9)
        p_attn = F.softmax(scores, dim=-1)
        p_attn = self.dropout(p_attn)
        p_val = torch.matmul(p_attn, value)
        return p_val, p_attn

    def forward(self, x, mask):
        b, c, h, w = x.size()
        d_k = c // self.head_size
        output = []
        _query = self.query_embedding(x)
        _key = self.key_embedding(x)
        _value = self.value_embedding(x)
        if self.use_mask_in_attn:
            _mask = mask.view(b, 1, h * w).repeat(1, h * w, 1)
        else:
            _mask = None

        for i in range(self.head_size):
            query = _query[:, i * d_k:(i + 1) * d_k].reshape(b, d_k, h * w).permute(0, 2, 1)
            key = _key[:, i * d_k:(i + 1) * d_k].reshape(b, d_k, h * w)
            key = key.permute(0, 2, 1)
            value = _value[:, i * d_k:(i + 1) * d_k].reshape(b, d_k, h * w).permute(0, 2, 1)
            y, _ = self.attention(query, key, value, _mask)
            y = y.permute(0, 2, 1).reshape(b, d_k, h, w)
            output.append(y)
        output = torch.cat(output, 1)
        self_attention = self.output_linear(output)
        return self_attention


class FeedForward(nn.Module):
    def __init__(self, d_model):
        super(FeedForward, self).__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(d_model, d_model, kernel_size=3, padding=2, dilation=2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(d_model, d_model, kernel_size=3, padding=1),
            nn.LeakyReLU(0.2, inplace=True),
        )

    def forward(self, x):
        x = x + self.conv(x)
        return x


class TokenShuffle(nn.Module):
    """Randomly permute spatial tokens across the instances of a mini-batch.

    Used as an occlusion simulator: every RoI borrows a few tokens from another
    RoI of the same batch. The permutation is drawn on the GPU to avoid a host
    round trip per iteration.
    """

    def __init__(self, ratio=0.25):
        super(TokenShuffle, self).__init__()
        self.ratio = ratio

    def forward(self, x):
        if not self.training:
            return x
        b, c, h, w = x.size()
        num_tokens = int(h * w * self.ratio)
        if num_tokens == 0 or b < 2:
            return x
        perm = torch.randperm(b, device="cuda")
        token_idx = torch.randperm(h * w)[:num_tokens].to(x.device)
        flat = x.flatten(2)
        shuffled = flat[perm]
        flat[:, :, token_idx] = shuffled[:, :, token_idx]
        return flat.view(b, c, h, w)


def conv1x1(in_planes, out_planes, stride=1):
    """1x1 convolution"""
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)
