"""PyTorch re-implementation of Pangu-Weather (Bi et al., 2023).

3D Earth-Specific Transformer (3DEST): the upper-air variables (Z, Q, T, U, V on 13
pressure levels) and the surface variables (MSLP, U10, V10, T2M) are patch-embedded
separately, concatenated along the vertical axis and processed by a 4-stage
(2-6-6-2) Swin-style encoder/decoder with an earth-specific positional bias.

Follows the official pseudocode; naming kept close to it so the checkpoints of the
reference ONNX models can be compared layer by layer.
"""
import math
from typing import Optional, Tuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint as checkpoint
from timm.models.layers import DropPath, trunc_normal_


def window_partition(x: torch.Tensor, window_size: Tuple[int, int, int]) -> torch.Tensor:
    """(B, Z, H, W, C) -> (B * num_lon, num_pl * num_lat, wZ * wH * wW, C)"""
    B, Z, H, W, C = x.shape
    wz, wh, ww = window_size
    x = x.view(B, Z // wz, wz, H // wh, wh, W // ww, ww, C)
    # longitude windows are kept in their own axis because the bias is shared along longitude
    windows = x.permute(0, 5, 1, 3, 2, 4, 6, 7).contiguous()
    windows = windows.view(B * (W // ww), (Z // wz) * (H // wh), wz * wh * ww, C)
    return windows


def window_reverse(windows: torch.Tensor, window_size, Z: int, H: int, W: int) -> torch.Tensor:
    wz, wh, ww = window_size
    B = int(windows.shape[0] / (W // ww))
    x = windows.view(B, W // ww, Z // wz, H // wh, wz, wh, ww, -1)
    x = x.permute(0, 2, 4, 3, 5, 1, 6, 7).contiguous().view(B, Z, H, W, -1)
    return x


def get_earth_position_index(window_size: Tuple[int, int, int]) -> torch.Tensor:
    """Index into the earth-specific bias table.

    Pressure-level and latitude offsets are absolute (the bias differs per window
    row), longitude offsets are relative (the bias is shared along longitude).
    """
    wz, wh, ww = window_size
    coords_zi = torch.arange(wz)
    coords_zj = -torch.arange(wz) * wz
    coords_hi = torch.arange(wh)
    coords_hj = -torch.arange(wh) * wh
    coords_w = torch.arange(ww)

    coords_1 = torch.stack(torch.meshgrid([coords_zi, coords_hi, coords_w], indexing="ij"))
    coords_2 = torch.stack(torch.meshgrid([coords_zj, coords_hj, coords_w], indexing="ij"))
    coords_flatten_1 = torch.flatten(coords_1, 1)
    coords_flatten_2 = torch.flatten(coords_2, 1)
    coords = coords_flatten_1[:, :, None] - coords_flatten_2[:, None, :]
    coords = coords.permute(1, 2, 0).contiguous()

    coords[:, :, 2] += ww - 1
    coords[:, :, 1] *= 2 * ww - 1
    coords[:, :, 0] *= (2 * ww - 1) * wh * wh
    position_index = coords.sum(-1)
    return position_index.flatten()


def generate_3d_attention_mask(x_shape, window_size, shift_size) -> torch.Tensor:
    """Mask for shifted windows. Longitude is periodic, so no mask is needed there."""
    _, Z, H, W, _ = x_shape
    img_mask = torch.zeros((1, Z, H, W, 1))
    z_slices = (slice(0, -window_size[0]), slice(-window_size[0], -shift_size[0]), slice(-shift_size[0], None))
    h_slices = (slice(0, -window_size[1]), slice(-window_size[1], -shift_size[1]), slice(-shift_size[1], None))
    cnt = 0
    for z in z_slices:
        for h in h_slices:
            img_mask[:, z, h, :, :] = cnt
            cnt += 1
    mask_windows = window_partition(img_mask, window_size).squeeze(-1)
    attn_mask = mask_windows.unsqueeze(2) - mask_windows.unsqueeze(3)
    attn_mask = attn_mask.masked_fill(attn_mask != 0, -100.0).masked_fill(attn_mask == 0, 0.0)
    return attn_mask


class Mlp(nn.Module):
    def __init__(self, dim: int, dropout_rate: float = 0.0):
        super().__init__()
        self.linear1 = nn.Linear(dim, dim * 4)
        self.linear2 = nn.Linear(dim * 4, dim)
        self.activation = nn.GELU()
        self.drop = nn.Dropout(p=dropout_rate)

    def forward(self, x):
        x = self.linear1(x)
        x = self.activation(x)
        x = self.drop(x)
        x = self.linear2(x)
        x = self.drop(x)
        return x


class EarthAttention3D(nn.Module):
    def __init__(self, dim, heads, dropout_rate, window_size, input_shape, use_sdpa=True):
        super().__init__()
        self.dim = dim
        self.heads = heads
        self.head_dim = dim // heads
        self.scale = self.head_dim ** -0.5
        self.window_size = window_size
        self.use_sdpa = use_sdpa and hasattr(F, "scaled_dot_product_attention")
        self.dropout_rate = dropout_rate

        self.linear1 = nn.Linear(dim, dim * 3, bias=True)
        self.linear2 = nn.Linear(dim, dim)
        self.drop = nn.Dropout(p=dropout_rate)

        # number of windows along pressure level and latitude
        self.type_of_windows = (input_shape[0] // window_size[0]) * (input_shape[1] // window_size[1])
        self.earth_specific_bias = nn.Parameter(
            torch.zeros(
                (2 * window_size[2] - 1) * window_size[1] * window_size[1] * window_size[0] * window_size[0],
                self.type_of_windows,
                heads,
            )
        )
        trunc_normal_(self.earth_specific_bias, std=0.02)
        self.register_buffer("position_index", get_earth_position_index(window_size), persistent=False)

    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        # x: (B * num_lon, num_pl * num_lat, N, C)
        B_, nW_, N, C = x.shape
        qkv = self.linear1(x).reshape(B_, nW_, N, 3, self.heads, self.head_dim).permute(3, 0, 4, 1, 2, 5)
        q, k, v = qkv[0], qkv[1], qkv[2]  # (B_, heads, nW_, N, head_dim)

        bias = self.earth_specific_bias[self.position_index]
        bias = bias.reshape(N, N, self.type_of_windows, self.heads)
        bias = bias.permute(3, 2, 0, 1).contiguous().unsqueeze(0)  # (1, heads, nW_, N, N)

        if mask is not None:
            nLon = mask.shape[0]
            bias = bias.view(1, 1, self.heads, nW_, N, N) + mask.view(1, nLon, 1, nW_, N, N)
            bias = bias.expand(B_ // nLon, -1, -1, -1, -1, -1).reshape(B_, self.heads, nW_, N, N)

        if self.use_sdpa:
            # earth-specific bias is an additive float mask -> flash kernel can't take it
            with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True, enable_mem_efficient=True):
                x = F.scaled_dot_product_attention(
                    q, k, v,
                    attn_mask=bias.to(q.dtype).expand(B_, -1, -1, -1, -1),
                    dropout_p=self.dropout_rate if self.training else 0.0,
                )
        else:
            attn = (q * self.scale) @ k.transpose(-2, -1)
            attn = attn + bias
            attn = attn.softmax(dim=-1)
            attn = self.drop(attn)
            x = attn @ v

        x = x.permute(0, 2, 3, 1, 4).reshape(B_, nW_, N, C)
        x = self.linear2(x)
        x = self.drop(x)
        return x


class EarthSpecificBlock(nn.Module):
    def __init__(self, dim, input_shape, heads, drop_path_ratio, roll, window_size=(2, 6, 12), use_sdpa=True):
        super().__init__()
        self.dim = dim
        self.input_shape = input_shape
        self.window_size = window_size
        self.shift_size = tuple(w // 2 for w in window_size)
        self.roll = roll

        self.norm1 = nn.LayerNorm(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.drop_path = DropPath(drop_path_ratio) if drop_path_ratio > 0.0 else nn.Identity()
        self.attention = EarthAttention3D(dim, heads, 0.0, window_size, self._padded_shape(), use_sdpa=use_sdpa)
        self.mlp = Mlp(dim, 0.0)

        if roll:
            padded = self._padded_shape()
            mask = generate_3d_attention_mask((1, *padded, 1), window_size, self.shift_size)
            self.register_buffer("attn_mask", mask, persistent=False)
        else:
            self.attn_mask = None

    def _padded_shape(self):
        Z, H, W = self.input_shape
        Z = Z + (-Z) % self.window_size[0]
        H = H + (-H) % self.window_size[1]
        W = W + (-W) % self.window_size[2]
        return Z, H, W

    def forward(self, x: torch.Tensor, Z: int, H: int, W: int) -> torch.Tensor:
        shortcut = x
        B, L, C = x.shape
        x = x.view(B, Z, H, W, C)

        # zero-pad so that every dimension is a multiple of the window size
        pz = (-Z) % self.window_size[0]
        ph = (-H) % self.window_size[1]
        pw = (-W) % self.window_size[2]
        x = F.pad(x, (0, 0, 0, pw, 0, ph, 0, pz))
        _, Zp, Hp, Wp, _ = x.shape

        if self.roll:
            x = torch.roll(x, shifts=(-self.shift_size[0], -self.shift_size[1], -self.shift_size[2]), dims=(1, 2, 3))

        x_windows = window_partition(x, self.window_size)
        x_windows = x_windows.view(x_windows.shape[0], x_windows.shape[1], -1, C)
        attn_windows = self.attention(self.norm1(x_windows), mask=self.attn_mask)
        x = window_reverse(attn_windows, self.window_size, Zp, Hp, Wp)

        if self.roll:
            x = torch.roll(x, shifts=self.shift_size, dims=(1, 2, 3))

        x = x[:, :Z, :H, :W, :].reshape(B, Z * H * W, C)
        x = shortcut + self.drop_path(x)
        x = x + self.drop_path(self.mlp(self.norm2(x)))
        return x


class EarthSpecificLayer(nn.Module):
    def __init__(self, depth, dim, input_shape, drop_path_ratio_list, heads, use_checkpoint=False, use_sdpa=True):
        super().__init__()
        self.depth = depth
        self.use_checkpoint = use_checkpoint
        self.blocks = nn.ModuleList(
            [
                EarthSpecificBlock(dim, input_shape, heads, drop_path_ratio_list[i], roll=(i % 2 == 1), use_sdpa=use_sdpa)
                for i in range(depth)
            ]
        )

    def forward(self, x, Z, H, W):
        for blk in self.blocks:
            if self.use_checkpoint and self.training:
                x = checkpoint.checkpoint(blk, x, Z, H, W, use_reentrant=False)
            else:
                x = blk(x, Z, H, W)
        return x


class PatchEmbedding(nn.Module):
    def __init__(self, patch_size=(2, 4, 4), dim=192, n_upper=5, n_surface=4, n_const=3):
        super().__init__()
        self.patch_size = patch_size
        self.conv = nn.Conv3d(n_upper, dim, kernel_size=patch_size, stride=patch_size)
        self.conv_surface = nn.Conv2d(n_surface + n_const, dim, kernel_size=patch_size[1:], stride=patch_size[1:])

    def forward(self, upper: torch.Tensor, surface: torch.Tensor, const: torch.Tensor):
        # upper: (B, 5, 13, 721, 1440), surface: (B, 4, 721, 1440), const: (3, 721, 1440)
        upper = F.pad(upper, (0, 0, 3, 0, 1, 0))  # 13 -> 14 levels, 721 -> 724 latitudes
        surface = F.pad(surface, (0, 0, 3, 0))
        const = F.pad(const, (0, 0, 3, 0)).unsqueeze(0).expand(surface.shape[0], -1, -1, -1)
        upper = self.conv(upper)
        surface = self.conv_surface(torch.cat([surface, const], dim=1))
        x = torch.cat([surface.unsqueeze(2), upper], dim=2)  # (B, C, 8, 181, 360)
        B, C, Z, H, W = x.shape
        return x.permute(0, 2, 3, 4, 1).reshape(B, Z * H * W, C), (Z, H, W)


class PatchRecovery(nn.Module):
    def __init__(self, dim=384, patch_size=(2, 4, 4), n_upper=5, n_surface=4):
        super().__init__()
        self.conv = nn.ConvTranspose3d(dim, n_upper, kernel_size=patch_size, stride=patch_size)
        self.conv_surface = nn.ConvTranspose2d(dim, n_surface, kernel_size=patch_size[1:], stride=patch_size[1:])

    def forward(self, x: torch.Tensor, Z: int, H: int, W: int):
        B, L, C = x.shape
        x = x.transpose(1, 2).reshape(B, C, Z, H, W)
        upper = self.conv(x[:, :, 1:])
        surface = self.conv_surface(x[:, :, 0])
        # crop the padding added in PatchEmbedding
        upper = upper[:, :, 1:, 3:, :]
        surface = surface[:, :, 3:, :]
        return upper, surface


class DownSample(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.linear = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = nn.LayerNorm(4 * dim)

    def forward(self, x, Z, H, W):
        B, L, C = x.shape
        x = x.view(B, Z, H, W, C)
        x = F.pad(x, (0, 0, 0, 0, 0, H % 2))
        H2 = x.shape[2] // 2
        W2 = W // 2
        x = x.view(B, Z, H2, 2, W2, 2, C).permute(0, 1, 2, 4, 3, 5, 6).reshape(B, Z * H2 * W2, 4 * C)
        x = self.norm(x)
        x = self.linear(x)
        return x, (Z, H2, W2)


class UpSample(nn.Module):
    def __init__(self, input_dim, output_dim):
        super().__init__()
        self.linear1 = nn.Linear(input_dim, output_dim * 4, bias=False)
        self.linear2 = nn.Linear(output_dim, output_dim, bias=False)
        self.norm = nn.LayerNorm(output_dim)

    def forward(self, x, Z, H, W, target_hw):
        B = x.shape[0]
        x = self.linear1(x)
        C = x.shape[-1] // 4
        x = x.view(B, Z, H, W, 2, 2, C).permute(0, 1, 2, 4, 3, 5, 6).reshape(B, Z, H * 2, W * 2, C)
        Ht, Wt = target_hw
        x = x[:, :, :Ht, :Wt, :].reshape(B, -1, C)
        x = self.norm(x)
        x = self.linear2(x)
        return x


class PanguWeather(nn.Module):
    def __init__(self, embed_dim=192, heads=(6, 12, 12, 6), depths=(2, 6, 6, 2), drop_path=0.2,
                 use_checkpoint=False, use_sdpa=True):
        super().__init__()
        dpr = np.linspace(0, drop_path, 8).tolist()
        self.patch_embed = PatchEmbedding((2, 4, 4), embed_dim)
        res1 = (8, 181, 360)
        res2 = (8, 91, 180)
        self.layer1 = EarthSpecificLayer(depths[0], embed_dim, res1, dpr[:2], heads[0], use_checkpoint, use_sdpa)
        self.downsample = DownSample(embed_dim)
        self.layer2 = EarthSpecificLayer(depths[1], embed_dim * 2, res2, [dpr[2]] * 6, heads[1], use_checkpoint, use_sdpa)
        self.layer3 = EarthSpecificLayer(depths[2], embed_dim * 2, res2, [dpr[2]] * 6, heads[2], use_checkpoint, use_sdpa)
        self.upsample = UpSample(embed_dim * 2, embed_dim)
        self.layer4 = EarthSpecificLayer(depths[3], embed_dim, res1, dpr[:2], heads[3], use_checkpoint, use_sdpa)
        self.patch_recovery = PatchRecovery(embed_dim * 2)

    def forward(self, upper, surface, const):
        x, (Z, H, W) = self.patch_embed(upper, surface, const)
        x = self.layer1(x, Z, H, W)
        skip = x
        x, (Z2, H2, W2) = self.downsample(x, Z, H, W)
        x = self.layer2(x, Z2, H2, W2)
        x = self.layer3(x, Z2, H2, W2)
        x = self.upsample(x, Z2, H2, W2, (H, W))
        x = self.layer4(x, Z, H, W)
        x = torch.cat([skip, x], dim=-1)
        upper_out, surface_out = self.patch_recovery(x, Z, H, W)
        return upper_out, surface_out
