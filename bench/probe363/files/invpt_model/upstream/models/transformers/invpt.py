# By Hanrong Ye
# Licensed under the CC BY-NC 4.0 license (https://creativecommons.org/licenses/by-nc/4.0/)
#
# InvPT: Inverted Pyramid Multi-task Transformer for Dense Scene Understanding (ECCV 2022)

import math
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange as o_rearrange
from timm.models.layers import DropPath, trunc_normal_

INTERPOLATE_MODE = 'bilinear'
BATCHNORM = nn.SyncBatchNorm  # switch to nn.BatchNorm2d for single-GPU debugging


def rearrange(*args, **kwargs):
    return o_rearrange(*args, **kwargs).contiguous()


class Mlp(nn.Module):
    def __init__(self, in_features, hidden_features=None, out_features=None, act_layer=nn.GELU, drop=0.):
        super().__init__()
        out_features = out_features or in_features
        hidden_features = hidden_features or in_features
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = act_layer()
        self.fc2 = nn.Linear(hidden_features, out_features)
        self.drop = nn.Dropout(drop)

    def forward(self, x):
        x = self.fc1(x)
        x = self.act(x)
        x = self.drop(x)
        x = self.fc2(x)
        x = self.drop(x)
        return x


class SepConv2d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1):
        super(SepConv2d, self).__init__()
        self.depthwise = nn.Conv2d(in_channels, in_channels, kernel_size=kernel_size, stride=stride,
                                   padding=padding, dilation=dilation, groups=in_channels)
        self.bn = BATCHNORM(in_channels)
        self.pointwise = nn.Conv2d(in_channels, out_channels, kernel_size=1)

    def forward(self, x):
        x = self.depthwise(x)
        x = self.bn(x)
        x = self.pointwise(x)
        return x


class ConvProjection(nn.Module):
    def __init__(self, dim, heads=8, dim_head=64, kernel_size=3, q_stride=1, k_stride=1, v_stride=1,
                 last_stage=False, bias=True):
        super().__init__()
        inner_dim = dim_head * heads
        self.heads = heads
        pad = (kernel_size - q_stride) // 2
        self.to_q = SepConv2d(dim, inner_dim, kernel_size, q_stride, pad)
        self.to_k = SepConv2d(dim, inner_dim, kernel_size, k_stride, pad)
        self.to_v = SepConv2d(dim, inner_dim, kernel_size, v_stride, pad)

    def forward(self, x, h, w):
        b, n, c, hd = *x.shape, self.heads
        x = rearrange(x, 'b (l w) c -> b c l w', l=h, w=w)
        q = self.to_q(x)
        q = rearrange(q, 'b (h d) l w -> b h (l w) d', h=hd)
        k = self.to_k(x)
        k = rearrange(k, 'b (h d) l w -> b h (l w) d', h=hd)
        v = self.to_v(x)
        v = rearrange(v, 'b (h d) l w -> b h (l w) d', h=hd)
        return q, k, v


class Attention(nn.Module):
    def __init__(self, dim, num_heads=8, qkv_bias=False, qk_scale=None, attn_drop=0., proj_drop=0.):
        super().__init__()
        self.num_heads = num_heads
        head_dim = dim // num_heads
        self.scale = qk_scale or head_dim ** -0.5
        self.qkv = ConvProjection(dim, num_heads, dim // num_heads)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)

    def forward(self, x, h, w):
        B, N, C = x.shape
        q, k, v = self.qkv(x, h, w)

        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        attn = self.attn_drop(attn)

        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        x = self.proj(x)
        x = self.proj_drop(x)
        return x


class Block(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio=4., qkv_bias=False, qk_scale=None, drop=0., attn_drop=0.,
                 drop_path=0., act_layer=nn.GELU, norm_layer=nn.LayerNorm):
        super().__init__()
        self.norm1 = norm_layer(dim)
        self.attn = Attention(dim, num_heads=num_heads, qkv_bias=qkv_bias, qk_scale=qk_scale,
                              attn_drop=attn_drop, proj_drop=drop)
        self.drop_path = DropPath(drop_path) if drop_path > 0. else nn.Identity()
        self.norm2 = norm_layer(dim)
        mlp_hidden_dim = int(dim * mlp_ratio)
        self.mlp = Mlp(in_features=dim, hidden_features=mlp_hidden_dim, act_layer=act_layer, drop=drop)

    def forward(self, x, h, w):
        x = x + self.drop_path(self.attn(self.norm1(x), h, w))
        x = x + self.drop_path(self.mlp(self.norm2(x)))
        return x


class InvPTBlock(nn.Module):
    """ One stage of the inverted pyramid: multi-task self-attention over the concatenated task tokens. """
    def __init__(self, dim, num_heads, tasks, depth=1, drop_path=0.):
        super().__init__()
        self.tasks = tasks
        self.blocks = nn.ModuleList([Block(dim, num_heads, drop_path=drop_path) for _ in range(depth)])

    def forward(self, x_dict, h, w):
        # concatenate tokens of all tasks along the sequence dimension
        x = torch.cat([rearrange(x_dict[t], 'b c h w -> b (h w) c') for t in self.tasks], dim=1)
        b = x.shape[0]
        for blk in self.blocks:
            x = blk(x, h, w * len(self.tasks))
        xs = torch.chunk(x, len(self.tasks), dim=1)
        return {t: rearrange(xs[i], 'b (h w) c -> b c h w', h=h, w=w) for i, t in enumerate(self.tasks)}


class InvPTDecoder(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p
        self.tasks = p.TASKS.NAMES
        embed_dim = p.embed_dim
        self.mt_proj = nn.ModuleDict({t: nn.Sequential(nn.Conv2d(p.backbone_channels[-1], embed_dim, 1),
                                                       BATCHNORM(embed_dim), nn.GELU()) for t in self.tasks})
        self.stages = nn.ModuleList([InvPTBlock(embed_dim // (2 ** i), 2, self.tasks) for i in range(3)])
        self.reduce = nn.ModuleList([
            nn.ModuleDict({t: nn.Conv2d(embed_dim // (2 ** i), embed_dim // (2 ** (i + 1)), 1) for t in self.tasks})
            for i in range(2)])
        self.preliminary_decoder = nn.ModuleDict({t: nn.Conv2d(embed_dim, p.TASKS.NUM_OUTPUT[t], 1) for t in self.tasks})
        self.apply(self._init_weights)

    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            trunc_normal_(m.weight, std=.02)
            if m.bias is not None:
                nn.init.constant_(m.bias, 0)
        elif isinstance(m, nn.LayerNorm):
            nn.init.constant_(m.bias, 0)
            nn.init.constant_(m.weight, 1.0)

    def forward(self, x_list):
        x = x_list[-1]
        inter_pred = {}
        x_dict = {t: self.mt_proj[t](x) for t in self.tasks}
        for t in self.tasks:
            inter_pred[t] = self.preliminary_decoder[t](x_dict[t])

        h, w = x.shape[-2:]
        for i, stage in enumerate(self.stages):
            x_dict = stage(x_dict, h, w)
            if i < len(self.stages) - 1:
                # up-sample tokens (inverted pyramid) and add the backbone skip features
                x_dict = {t: F.interpolate(self.reduce[i][t](x_dict[t]), scale_factor=2, mode=INTERPOLATE_MODE,
                                           align_corners=False) for t in self.tasks}
                h, w = h * 2, w * 2
        return x_dict, inter_pred


class InvPT(nn.Module):
    """ Backbone (ViT) + InvPT decoder + per-task heads """
    def __init__(self, p, backbone, heads):
        super().__init__()
        self.p = p
        self.tasks = p.TASKS.NAMES
        self.backbone = backbone
        self.decoder = InvPTDecoder(p)
        self.heads = heads

    def forward(self, x):
        img_size = x.size()[-2:]
        out = {}

        feats = self.backbone(x)
        x_dict, inter_pred = self.decoder(feats)

        for t in self.tasks:
            out[t] = F.interpolate(self.heads[t](x_dict[t]), img_size, mode=INTERPOLATE_MODE, align_corners=False)
        out['inter_preds'] = {t: F.interpolate(v, img_size, mode=INTERPOLATE_MODE, align_corners=False)
                              for t, v in inter_pred.items()}
        return out
