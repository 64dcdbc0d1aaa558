"""3-D Earth-specific transformer (Pangu-Weather style).

Upper-air fields (Z, Q, T, U, V on 13 pressure levels) and surface fields (MSLP, U10, V10, T2M)
are patch-embedded into one (Pl, Lat, Lon) token cube, processed by an encoder/decoder of 3-D
window-attention blocks with an Earth-specific positional bias, and recovered to both grids.
"""
import math
from typing import Optional, Tuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint as cp
from timm.models.layers import DropPath, trunc_normal_
from apex.normalization import FusedLayerNorm
import xformers.ops as xops


def window_partition(x: torch.Tensor, window_size: Tuple[int, int, int]) -> torch.Tensor:
    """(B, Pl, Lat, Lon, C) -> (B * num_lon, num_pl * num_lat, Wpl * Wlat * Wlon, C)."""
    B, Pl, Lat, Lon, C = x.shape
    win_pl, win_lat, win_lon = window_size
    x = x.view(B, Pl // win_pl, win_pl, Lat // win_lat, win_lat, Lon // win_lon, win_lon, C)
    windows = x.permute(0, 5, 1, 3, 2, 4, 6, 7).contiguous()
    return windows.view(-1, (Pl // win_pl) * (Lat // win_lat), win_pl * win_lat * win_lon, C)


def window_reverse(windows: torch.Tensor, window_size, Pl: int, Lat: int, Lon: int) -> torch.Tensor:
    win_pl, win_lat, win_lon = window_size
    B = int(windows.shape[0] / (Lon / win_lon))
    x = windows.view(B, Lon // win_lon, Pl // win_pl, Lat // win_lat, win_pl, win_lat, win_lon, -1)
    x = x.permute(0, 2, 4, 3, 5, 1, 6, 7).contiguous()
    return x.view(B, Pl, Lat, Lon, -1)


def get_earth_position_index(window_size) -> torch.Tensor:
    """Index into the Earth-specific bias table: absolute in pressure/latitude, relative in longitude."""
    win_pl, win_lat, win_lon = window_size
    coords_zi = torch.arange(win_pl)
    coords_zj = -torch.arange(win_pl) * win_pl
    coords_hi = torch.arange(win_lat)
    coords_hj = -torch.arange(win_lat) * win_lat
    coords_w = torch.arange(win_lon)

    coords_1 = torch.stack(torch.meshgrid([coords_zi, coords_hi, coords_w], indexing="ij"))
    coords_2 = torch.stack(torch.meshgrid([coords_zj, coords_hj, coords_w], indexing="ij"))
    coords_flatten_1 = torch.flatten(coords_1, 1)
    coords_flatten_2 = torch.flatten(coords_2, 1)
    coords = coords_flatten_1[:, :, None] - coords_flatten_2[:, None, :]
    coords = coords.permute(1, 2, 0).contiguous()

    coords[:, :, 2] += win_lon - 1
    coords[:, :, 1] *= 2 * win_lon - 1
    coords[:, :, 0] *= (2 * win_lon - 1) * win_lat * win_lat
    return coords.sum(-1).flatten()


def get_shift_window_mask(input_resolution, window_size, shift_size) -> torch.Tensor:
    """Additive mask for shifted windows; longitude is periodic so only Pl/Lat are cut."""
    Pl, Lat, Lon = input_resolution
    win_pl, win_lat, win_lon = window_size
    shift_pl, shift_lat, shift_lon = shift_size

    img_mask = torch.zeros((1, Pl, Lat, Lon + shift_lon, 1))
    pl_slices = (slice(0, -win_pl), slice(-win_pl, -shift_pl), slice(-shift_pl, None))
    lat_slices = (slice(0, -win_lat), slice(-win_lat, -shift_lat), slice(-shift_lat, None))
    lon_slices = (slice(0, -win_lon), slice(-win_lon, -shift_lon), slice(-shift_lon, None))

    cnt = 0
    for pl in pl_slices:
        for lat in lat_slices:
            for lon in lon_slices:
                img_mask[:, pl, lat, lon, :] = cnt
                cnt += 1
    img_mask = img_mask[:, :, :, :Lon, :]

    mask_windows = window_partition(img_mask, window_size)
    mask_windows = mask_windows.view(mask_windows.shape[0], mask_windows.shape[1], win_pl * win_lat * win_lon)
    attn_mask = mask_windows.unsqueeze(2) - mask_windows.unsqueeze(3)
    return attn_mask.masked_fill(attn_mask != 0, float(-100.0)).masked_fill(attn_mask == 0, float(0.0))


class EarthAttention3D(nn.Module):
    def __init__(self, dim, input_resolution, window_size, num_heads, qkv_bias=True, attn_drop=0.0, proj_drop=0.0):
        super().__init__()
        self.dim = dim
        self.window_size = window_size
        self.num_heads = num_heads
        head_dim = dim // num_heads
        self.scale = head_dim ** -0.5

        self.type_of_windows = (input_resolution[0] // window_size[0]) * (input_resolution[1] // window_size[1])
        self.earth_position_bias_table = nn.Parameter(
            torch.zeros((window_size[0] ** 2) * (window_size[1] ** 2) * (window_size[2] * 2 - 1),
                        self.type_of_windows, num_heads)
        )
        self.register_buffer("earth_position_index", get_earth_position_index(window_size), persistent=False)

        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.attn_drop = attn_drop
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)
        trunc_normal_(self.earth_position_bias_table, std=0.02)

    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        B_, nW_, N, C = x.shape
        qkv = self.qkv(x).reshape(B_, nW_, N, 3, self.num_heads, C // self.num_heads).permute(3, 0, 1, 4, 2, 5)
        q, k, v = qkv[0], qkv[1], qkv[2]

        bias = self.earth_position_bias_table[self.earth_position_index]
        win_tokens = self.window_size[0] * self.window_size[1] * self.window_size[2]
        bias = bias.view(win_tokens, win_tokens, self.type_of_windows, -1)
        bias = bias.permute(2, 3, 0, 1).contiguous().unsqueeze(0)  # 1, nW, nH, N, N

        if mask is not None:
            nLon = mask.shape[0]
            bias = bias + mask.view(1, nLon, nW_, 1, N, N).flatten(0, 1).to(bias.dtype)
            bias = bias.expand(B_ // nLon * nLon, -1, -1, -1, -1) if bias.shape[0] != B_ else bias
        else:
            bias = bias.expand(B_, -1, -1, -1, -1)

        # memory-efficient attention with the additive Earth bias; xformers wants (B, M, H, K)
        q = q.flatten(0, 1).transpose(1, 2)
        k = k.flatten(0, 1).transpose(1, 2)
        v = v.flatten(0, 1).transpose(1, 2)
        attn_bias = bias.flatten(0, 1).to(q.dtype)
        x = xops.memory_efficient_attention(q, k, v, attn_bias=attn_bias,
                                            p=self.attn_drop if self.training else 0.0, scale=self.scale)
        x = x.reshape(B_, nW_, N, C)
        x = self.proj(x)
        return self.proj_drop(x)


class Mlp(nn.Module):
    def __init__(self, in_features, hidden_features=None, drop=0.0):
        super().__init__()
        hidden_features = hidden_features or in_features
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden_features, in_features)
        self.drop = nn.Dropout(drop)

    def forward(self, x):
        return self.drop(self.fc2(self.drop(self.act(self.fc1(x)))))


class EarthSpecificBlock(nn.Module):
    def __init__(self, dim, input_resolution, num_heads, window_size=(2, 6, 12), shift_size=(1, 3, 6),
                 mlp_ratio=4.0, drop_path=0.0, norm_layer=FusedLayerNorm):
        super().__init__()
        self.dim = dim
        self.input_resolution = input_resolution
        self.window_size = window_size
        self.shift_size = shift_size
        padding = self._padding(input_resolution, window_size)
        self.pad = padding
        pad_res = (input_resolution[0] + padding[4] + padding[5],
                   input_resolution[1] + padding[2] + padding[3],
                   input_resolution[2] + padding[0] + padding[1])

        self.norm1 = norm_layer(dim)
        self.attn = EarthAttention3D(dim, pad_res, window_size, num_heads)
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
        self.norm2 = norm_layer(dim)
        self.mlp = Mlp(dim, int(dim * mlp_ratio))

        self.roll = any(s > 0 for s in shift_size)
        if self.roll:
            self.register_buffer("attn_mask", get_shift_window_mask(pad_res, window_size, shift_size), persistent=False)
        else:
            self.attn_mask = None

    @staticmethod
    def _padding(res, win):
        Pl, Lat, Lon = res
        pad_pl = (win[0] - Pl % win[0]) % win[0]
        pad_lat = (win[1] - Lat % win[1]) % win[1]
        pad_lon = (win[2] - Lon % win[2]) % win[2]
        return (pad_lon // 2, pad_lon - pad_lon // 2, pad_lat // 2, pad_lat - pad_lat // 2,
                pad_pl // 2, pad_pl - pad_pl // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        Pl, Lat, Lon = self.input_resolution
        B, L, C = x.shape
        shortcut = x
        x = self.norm1(x).view(B, Pl, Lat, Lon, C)
        x = F.pad(x.permute(0, 4, 1, 2, 3), self.pad).permute(0, 2, 3, 4, 1)
        _, Pl_pad, Lat_pad, Lon_pad, _ = x.shape

        if self.roll:
            x = torch.roll(x, shifts=(-self.shift_size[0], -self.shift_size[1], -self.shift_size[2]), dims=(1, 2, 3))
        x_windows = window_partition(x, self.window_size)
        attn_windows = self.attn(x_windows, mask=self.attn_mask)
        x = window_reverse(attn_windows, self.window_size, Pl_pad, Lat_pad, Lon_pad)
        if self.roll:
            x = torch.roll(x, shifts=self.shift_size, dims=(1, 2, 3))

        x = x[:, self.pad[4]:Pl_pad - self.pad[5], self.pad[2]:Lat_pad - self.pad[3], self.pad[0]:Lon_pad - self.pad[1], :]
        x = x.reshape(B, Pl * Lat * Lon, C)
        x = shortcut + self.drop_path(x)
        return x + self.drop_path(self.mlp(self.norm2(x)))


class BasicLayer(nn.Module):
    def __init__(self, dim, input_resolution, depth, num_heads, window_size, drop_path, use_checkpoint=False):
        super().__init__()
        self.use_checkpoint = use_checkpoint
        self.blocks = nn.ModuleList([
            EarthSpecificBlock(dim, input_resolution, num_heads, window_size,
                               shift_size=(0, 0, 0) if i % 2 == 0 else tuple(w // 2 for w in window_size),
                               drop_path=drop_path[i] if isinstance(drop_path, list) else drop_path)
            for i in range(depth)
        ])

    def forward(self, x):
        for blk in self.blocks:
            x = cp.checkpoint(blk, x, use_reentrant=False) if self.use_checkpoint else blk(x)
        return x


class PatchEmbed3D(nn.Module):
    def __init__(self, img_size=(13, 721, 1440), patch_size=(2, 4, 4), in_chans_air=5, in_chans_sfc=7, embed_dim=192):
        super().__init__()
        self.patch_size = patch_size
        Pl, Lat, Lon = img_size
        self.pad_air = (0, (patch_size[2] - Lon % patch_size[2]) % patch_size[2],
                        0, (patch_size[1] - Lat % patch_size[1]) % patch_size[1],
                        0, (patch_size[0] - Pl % patch_size[0]) % patch_size[0])
        self.pad_sfc = self.pad_air[:4]
        self.proj_air = nn.Conv3d(in_chans_air, embed_dim, kernel_size=patch_size, stride=patch_size)
        self.proj_sfc = nn.Conv2d(in_chans_sfc, embed_dim, kernel_size=patch_size[1:], stride=patch_size[1:])

    def forward(self, x_air: torch.Tensor, x_sfc: torch.Tensor) -> torch.Tensor:
        x_air = self.proj_air(F.pad(x_air, self.pad_air))           # B, C, Pl', Lat', Lon'
        x_sfc = self.proj_sfc(F.pad(x_sfc, self.pad_sfc)).unsqueeze(2)  # B, C, 1, Lat', Lon'
        x = torch.cat([x_sfc, x_air], dim=2)
        return x.flatten(2).transpose(1, 2)


class PatchRecovery3D(nn.Module):
    def __init__(self, img_size, patch_size, embed_dim, out_air=5, out_sfc=4):
        super().__init__()
        self.img_size = img_size
        self.conv_air = nn.ConvTranspose3d(embed_dim, out_air, kernel_size=patch_size, stride=patch_size)
        self.conv_sfc = nn.ConvTranspose2d(embed_dim, out_sfc, kernel_size=patch_size[1:], stride=patch_size[1:])

    def forward(self, x: torch.Tensor, Pl: int, Lat: int, Lon: int):
        B, _, C = x.shape
        x = x.transpose(1, 2).reshape(B, C, Pl, Lat, Lon)
        out_sfc = self.conv_sfc(x[:, :, 0])
        out_air = self.conv_air(x[:, :, 1:])
        P, H, W = self.img_size
        return out_air[:, :, :P, :H, :W], out_sfc[:, :, :H, :W]


class DownSample(nn.Module):
    def __init__(self, dim, resolution):
        super().__init__()
        self.resolution = resolution
        self.norm = FusedLayerNorm(4 * dim)
        self.linear = nn.Linear(4 * dim, 2 * dim, bias=False)

    def forward(self, x):
        Pl, Lat, Lon = self.resolution
        B, _, C = x.shape
        x = x.view(B, Pl, Lat, Lon, C)
        x = F.pad(x, (0, 0, 0, Lon % 2, 0, Lat % 2))
        Lat2, Lon2 = x.shape[2] // 2, x.shape[3] // 2
        x = x.view(B, Pl, Lat2, 2, Lon2, 2, C).permute(0, 1, 2, 4, 3, 5, 6).reshape(B, Pl * Lat2 * Lon2, 4 * C)
        return self.linear(self.norm(x))


class UpSample(nn.Module):
    def __init__(self, in_dim, out_dim, in_res, out_res):
        super().__init__()
        self.in_res, self.out_res = in_res, out_res
        self.linear1 = nn.Linear(in_dim, out_dim * 4, bias=False)
        self.linear2 = nn.Linear(out_dim, out_dim, bias=False)
        self.norm = FusedLayerNorm(out_dim)

    def forward(self, x):
        Pl, Lat, Lon = self.in_res
        oPl, oLat, oLon = self.out_res
        B, _, _ = x.shape
        x = self.linear1(x)
        x = x.view(B, Pl, Lat, Lon, 2, 2, -1).permute(0, 1, 2, 4, 3, 5, 6).reshape(B, Pl, Lat * 2, Lon * 2, -1)
        x = x[:, :oPl, :oLat, :oLon, :].reshape(B, oPl * oLat * oLon, -1)
        return self.linear2(self.norm(x))


class PanguModel(nn.Module):
    def __init__(self, img_size=(13, 721, 1440), patch_size=(2, 4, 4), embed_dim=192,
                 depths=(2, 6, 6, 2), num_heads=(6, 12, 12, 6), window_size=(2, 6, 12),
                 drop_path_rate=0.2, use_checkpoint=True):
        super().__init__()
        dpr = [x.item() for x in torch.linspace(0, drop_path_rate, sum(depths))]
        self.patch_embed = PatchEmbed3D(img_size, patch_size, embed_dim=embed_dim)
        Pl = math.ceil(img_size[0] / patch_size[0]) + 1
        Lat = math.ceil(img_size[1] / patch_size[1])
        Lon = math.ceil(img_size[2] / patch_size[2])
        self.res1 = (Pl, Lat, Lon)
        self.res2 = (Pl, math.ceil(Lat / 2), math.ceil(Lon / 2))

        self.layer1 = BasicLayer(embed_dim, self.res1, depths[0], num_heads[0], window_size, dpr[:2], use_checkpoint)
        self.downsample = DownSample(embed_dim, self.res1)
        self.layer2 = BasicLayer(embed_dim * 2, self.res2, depths[1], num_heads[1], window_size, dpr[2:8], use_checkpoint)
        self.layer3 = BasicLayer(embed_dim * 2, self.res2, depths[2], num_heads[2], window_size, dpr[8:14], use_checkpoint)
        self.upsample = UpSample(embed_dim * 2, embed_dim, self.res2, self.res1)
        self.layer4 = BasicLayer(embed_dim, self.res1, depths[3], num_heads[3], window_size, dpr[14:], use_checkpoint)
        self.patch_recovery = PatchRecovery3D(img_size, patch_size, 2 * embed_dim)

        # static surface masks (land-sea, soil type, topography) are concatenated to the surface input
        self.register_buffer("const_masks", torch.zeros(1, 3, img_size[1], img_size[2]), persistent=True)

    def load_constant_masks(self, path: str):
        masks = np.load(path).astype(np.float32)  # (3, 721, 1440)
        self.const_masks.copy_(torch.from_numpy(masks)[None].to(self.const_masks.device))

    def forward(self, x_air: torch.Tensor, x_sfc: torch.Tensor):
        x_sfc = torch.cat([x_sfc, self.const_masks.expand(x_sfc.shape[0], -1, -1, -1).to(x_sfc.dtype)], dim=1)
        x = self.patch_embed(x_air, x_sfc)
        x = self.layer1(x)
        skip = x
        x = self.downsample(x)
        x = self.layer2(x)
        x = self.layer3(x)
        x = self.upsample(x)
        x = self.layer4(x)
        x = torch.cat([skip, x], dim=-1)
        return self.patch_recovery(x, *self.res1)
