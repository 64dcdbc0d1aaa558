"""Frame-level audio transformer used by ATST-Frame (teacher-student pretraining on
AudioSet, fine-tuned inside ATST-SED). Plain ViT blocks over 4-frame x 64-bin patches."""
import math
import warnings
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F


def trunc_normal_(tensor, mean=0., std=1., a=-2., b=2.):
    def norm_cdf(x):
        return (1. + math.erf(x / math.sqrt(2.))) / 2.

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    with torch.no_grad():
        l = norm_cdf((a - mean) / std)
        u = norm_cdf((b - mean) / std)
        tensor.uniform_(2 * l - 1, 2 * u - 1)
        tensor.erfinv_()
        tensor.mul_(std * math.sqrt(2.))
        tensor.add_(mean)
        tensor.clamp_(min=a, max=b)
        return tensor


def drop_path(x, drop_prob: float = 0., training: bool = False):
    if drop_prob == 0. or not training:
        return x
    keep_prob = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    random_tensor = keep_prob + torch.rand(shape, dtype=x.dtype, device=x.device)
    random_tensor.floor_()
    return x.div(keep_prob) * random_tensor


class DropPath(nn.Module):
    def __init__(self, drop_prob=None):
        super().__init__()
        self.drop_prob = drop_prob

    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training)


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
        x = self.drop(self.act(self.fc1(x)))
        x = self.drop(self.fc2(x))
        return x


class Attention(nn.Module):
    def __init__(self, dim, num_heads=8, qkv_bias=False, qk_scale=None, attn_drop=0., proj_drop=0.):
        super().__init__()
        self.num_heads = num_heads
        head_dim = dim // num_heads
        self.scale = qk_scale or head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)

    def forward(self, x, mask=None):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]

        attn = (q @ k.transpose(-2, -1)) * self.scale
        if mask is not None:
            # mask: (B, N) True for padded frames
            attn = attn.masked_fill(mask[:, None, None, :], float("-inf"))
        attn = attn.softmax(dim=-1)
        attn = self.attn_drop(attn)

        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        x = self.proj(x)
        x = self.proj_drop(x)
        return x, attn


class Block(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio=4., qkv_bias=False, qk_scale=None, drop=0., attn_drop=0.,
                 drop_path=0., act_layer=nn.GELU, norm_layer=nn.LayerNorm):
        super().__init__()
        self.norm1 = norm_layer(dim)
        self.attn = Attention(dim, num_heads=num_heads, qkv_bias=qkv_bias, qk_scale=qk_scale,
                              attn_drop=attn_drop, proj_drop=drop)
        self.drop_path = DropPath(drop_path) if drop_path > 0. else nn.Identity()
        self.norm2 = norm_layer(dim)
        self.mlp = Mlp(in_features=dim, hidden_features=int(dim * mlp_ratio), act_layer=act_layer, drop=drop)

    def forward(self, x, mask=None, return_attention=False):
        y, attn = self.attn(self.norm1(x), mask=mask)
        if return_attention:
            return attn
        x = x + self.drop_path(y)
        x = x + self.drop_path(self.mlp(self.norm2(x)))
        return x


class PatchEmbed_v2(nn.Module):
    """(B, 1, F, T) mel -> (B, T/patch_w, embed_dim) frame tokens."""

    def __init__(self, patch_height=64, patch_width=4, embed_dim=768, input_dim=1):
        super().__init__()
        self.patch_height = patch_height
        self.patch_width = patch_width
        self.proj = nn.Conv2d(input_dim, embed_dim, kernel_size=(patch_height, patch_width),
                              stride=(patch_height, patch_width))

    def forward(self, melspec, length=None):
        x = self.proj(melspec)             # (B, D, 1, T')
        x = x.squeeze(2).transpose(1, 2)   # (B, T', D)
        if length is not None:
            patch_length = torch.div(length, self.patch_width, rounding_mode="trunc")
        else:
            patch_length = None
        return x, patch_length


def get_num_patches(height=64, width=1001, patch_height=64, patch_width=4):
    return (height // patch_height) * (width // patch_width)


class FrameAST(nn.Module):
    def __init__(self, nprompt=0, spec_h=64, spec_w=1001, patch_w=4, patch_h=64, pos_type="cut",
                 avg_blocks=0, embed_dim=768, depth=12, num_heads=12, mlp_ratio=4., qkv_bias=True,
                 qk_scale=None, drop_rate=0., attn_drop_rate=0., drop_path_rate=0.,
                 norm_layer=partial(nn.LayerNorm, eps=1e-6), **kwargs):
        super().__init__()
        self.num_features = self.embed_dim = embed_dim
        self.spec_w = spec_w
        self.spec_h = spec_h
        self.embed_dim = embed_dim
        self.patch_w = patch_w
        self.patch_h = patch_h
        self.pos_type = pos_type
        self.avg_blocks = avg_blocks

        self.patch_embed = PatchEmbed_v2(patch_h, patch_w, embed_dim)
        self.mask_embed = nn.Parameter(torch.zeros(1, 1, self.embed_dim))
        self.num_patches = get_num_patches(spec_h, spec_w, patch_h, patch_w)
        self.pos_embed = nn.Parameter(torch.zeros(1, self.num_patches, embed_dim))
        self.pos_drop = nn.Dropout(p=drop_rate)

        dpr = [x.item() for x in torch.linspace(0, drop_path_rate, depth)]
        self.blocks = nn.ModuleList([
            Block(dim=embed_dim, num_heads=num_heads, mlp_ratio=mlp_ratio, qkv_bias=qkv_bias, qk_scale=qk_scale,
                  drop=drop_rate, attn_drop=attn_drop_rate, drop_path=dpr[i], norm_layer=norm_layer)
            for i in range(depth)])
        self.norm_frame = norm_layer(embed_dim)

        trunc_normal_(self.pos_embed, std=.02)
        trunc_normal_(self.mask_embed, std=.02)
        self.apply(self._init_weights)

    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            trunc_normal_(m.weight, std=.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.constant_(m.bias, 0)
        elif isinstance(m, nn.LayerNorm):
            nn.init.constant_(m.bias, 0)
            nn.init.constant_(m.weight, 1.0)

    def interpolate_pos_encoding(self, x, h, w):
        if h == self.num_patches:
            return self.pos_embed
        # cut the positional embedding for shorter inputs, interpolate for longer ones
        if self.pos_type == "cut" and w <= self.pos_embed.shape[1]:
            return self.pos_embed[:, :w]
        pos = self.pos_embed.transpose(1, 2)
        pos = F.interpolate(pos, size=w, mode="linear", align_corners=False)
        return pos.transpose(1, 2)

    def prepare_tokens(self, x, mask_index, length, mask=True):
        B, nc, h, w = x.shape
        mel_patches, patch_length = self.patch_embed(x, length)
        B, T, C = mel_patches.shape
        if (mask_index is not None) and mask:
            mask_index_expand = mask_index.unsqueeze(2).expand(B, T, self.embed_dim).float()
            mel_patches = (1 - mask_index_expand) * mel_patches + mask_index_expand * self.mask_embed
        pos = self.interpolate_pos_encoding(mel_patches, h, T)
        x = mel_patches + pos
        return self.pos_drop(x), pos, patch_length

    def get_intermediate_layers(self, x, length, n=1, scene=False):
        x, _, patch_length = self.prepare_tokens(x, mask_index=None, length=length, mask=False)
        output = []
        for i, blk in enumerate(self.blocks):
            x = blk(x)
            if len(self.blocks) - i <= n:
                norm_x = self.norm_frame(x)
                if scene:
                    length_mask = torch.arange(x.shape[1], device=x.device) < patch_length.unsqueeze(1)
                    avg = torch.sum(norm_x * length_mask.unsqueeze(-1), dim=1) / (patch_length.unsqueeze(-1) + 1e-6)
                    output.append(avg)
                else:
                    output.append(norm_x)
        return torch.cat(output, dim=-1)

    def forward(self, x, mask_index=None, mask_input=True, length=None):
        x, _, _ = self.prepare_tokens(x, mask_index, length, mask_input)
        for blk in self.blocks:
            x = blk(x)
        return self.norm_frame(x)
