"""Causal 3D VAE with temporal compression and tiled decoding (CogVideoX / Open-Sora-Plan style)."""
from typing import Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange


def cast_tuple(t, length=1):
    return t if isinstance(t, tuple) else ((t,) * length)


class SafeGroupNorm(nn.GroupNorm):
    """GroupNorm computed in fp32 to avoid overflow in fp16/bf16 decoders."""

    def forward(self, x):
        return super().forward(x.float()).to(x.dtype)


class CausalConv3d(nn.Module):
    def __init__(self, chan_in, chan_out, kernel_size, stride=1, dilation=1, pad_mode="replicate", **kwargs):
        super().__init__()
        kernel_size = cast_tuple(kernel_size, 3)
        time_kernel_size, height_kernel_size, width_kernel_size = kernel_size
        self.pad_mode = pad_mode
        time_pad = dilation * (time_kernel_size - 1) + (1 - stride)
        height_pad = height_kernel_size // 2
        width_pad = width_kernel_size // 2
        self.time_pad = time_pad
        self.time_causal_padding = (width_pad, width_pad, height_pad, height_pad, time_pad, 0)
        stride = (stride, 1, 1)
        dilation = (dilation, 1, 1)
        self.conv = nn.Conv3d(chan_in, chan_out, kernel_size, stride=stride, dilation=dilation, **kwargs)
        self.conv_cache = None

    def forward(self, x):
        if self.conv_cache is not None:
            x = torch.cat([self.conv_cache, x], dim=2)
            padding = (self.time_causal_padding[0], self.time_causal_padding[1],
                       self.time_causal_padding[2], self.time_causal_padding[3], 0, 0)
        else:
            padding = self.time_causal_padding
        x = F.pad(x, padding, mode=self.pad_mode)
        self.conv_cache = x[:, :, -self.time_pad:].clone() if self.time_pad > 0 else None
        return self.conv(x)


class ResnetBlock3D(nn.Module):
    def __init__(self, in_channels, out_channels=None, dropout=0.0, groups=32):
        super().__init__()
        out_channels = in_channels if out_channels is None else out_channels
        self.norm1 = SafeGroupNorm(groups, in_channels, eps=1e-6)
        self.conv1 = CausalConv3d(in_channels, out_channels, 3)
        self.norm2 = SafeGroupNorm(groups, out_channels, eps=1e-6)
        self.dropout = nn.Dropout(dropout)
        self.conv2 = CausalConv3d(out_channels, out_channels, 3)
        self.nin_shortcut = nn.Conv3d(in_channels, out_channels, 1) if in_channels != out_channels else nn.Identity()

    def forward(self, x):
        h = self.conv1(F.silu(self.norm1(x)))
        h = self.conv2(self.dropout(F.silu(self.norm2(h))))
        return self.nin_shortcut(x) + h


class TimeUpsample2x(nn.Module):
    """Nearest-neighbour upsampling in time (keeps the first, causal frame)."""

    def forward(self, x):
        if x.size(2) > 1:
            x, x_ = x[:, :, :1], x[:, :, 1:]
            x_ = F.interpolate(x_, scale_factor=(2, 1, 1), mode="trilinear")
            x = torch.cat([x, x_], dim=2)
        return x


class SpatialUpsample2x(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = CausalConv3d(channels, channels, 3)

    def forward(self, x):
        t = x.shape[2]
        x = rearrange(x, "b c t h w -> (b t) c h w")
        x = F.interpolate(x, scale_factor=2.0, mode="nearest")
        x = rearrange(x, "(b t) c h w -> b c t h w", t=t)
        return self.conv(x)


class Decoder3D(nn.Module):
    def __init__(self, z_channels=16, ch=128, ch_mult=(1, 2, 4, 4), out_channels=3):
        super().__init__()
        block_in = ch * ch_mult[-1]
        self.conv_in = CausalConv3d(z_channels, block_in, 3)
        self.mid = nn.Sequential(ResnetBlock3D(block_in), ResnetBlock3D(block_in))
        ups = []
        for i, mult in enumerate(reversed(ch_mult)):
            block_out = ch * mult
            ups.append(ResnetBlock3D(block_in, block_out))
            block_in = block_out
            if i < len(ch_mult) - 1:
                ups.append(SpatialUpsample2x(block_in))
                if i < 2:
                    ups.append(TimeUpsample2x())
        self.up = nn.Sequential(*ups)
        self.norm_out = SafeGroupNorm(32, block_in, eps=1e-6)
        self.conv_out = CausalConv3d(block_in, out_channels, 3)

    def clear_cache(self):
        for m in self.modules():
            if isinstance(m, CausalConv3d):
                m.conv_cache = None

    def forward(self, z):
        h = self.conv_in(z)
        h = self.mid(h)
        h = self.up(h)
        return self.conv_out(F.silu(self.norm_out(h)))


class CausalVAE(nn.Module):
    def __init__(self, scaling_factor=0.7, tile_sample_min_size=256, tile_overlap_factor=0.25, temporal_chunk=8):
        super().__init__()
        self.decoder = Decoder3D()
        self.scaling_factor = scaling_factor
        self.use_tiling = False
        self.tile_sample_min_size = tile_sample_min_size
        self.tile_latent_min_size = tile_sample_min_size // 8
        self.tile_overlap_factor = tile_overlap_factor
        self.temporal_chunk = temporal_chunk

    def enable_tiling(self, use_tiling: bool = True):
        self.use_tiling = use_tiling

    def auto_enable_tiling(self):
        # Heuristic: tile on GPUs with less than 40 GiB.
        if torch.cuda.is_available() and torch.cuda.get_device_properties(0).total_memory < 40 * 2**30:
            self.enable_tiling()

    @staticmethod
    def blend_v(a, b, blend_extent):
        blend_extent = min(a.shape[3], b.shape[3], blend_extent)
        for y in range(blend_extent):
            b[:, :, :, y, :] = a[:, :, :, -blend_extent + y, :] * (1 - y / blend_extent) + b[:, :, :, y, :] * (y / blend_extent)
        return b

    @staticmethod
    def blend_h(a, b, blend_extent):
        blend_extent = min(a.shape[4], b.shape[4], blend_extent)
        for x in range(blend_extent):
            b[:, :, :, :, x] = a[:, :, :, :, -blend_extent + x] * (1 - x / blend_extent) + b[:, :, :, :, x] * (x / blend_extent)
        return b

    def _decode_temporal_chunks(self, z):
        self.decoder.clear_cache()
        frames = []
        for i in range(0, z.shape[2], self.temporal_chunk):
            frames.append(self.decoder(z[:, :, i:i + self.temporal_chunk]))
        self.decoder.clear_cache()
        return torch.cat(frames, dim=2)

    @torch.no_grad()
    def tiled_decode(self, z):
        overlap_size = int(self.tile_latent_min_size * (1 - self.tile_overlap_factor))
        blend_extent = int(self.tile_sample_min_size * self.tile_overlap_factor)
        row_limit = self.tile_sample_min_size - blend_extent

        rows = []
        for i in range(0, z.shape[3], overlap_size):
            row = []
            for j in range(0, z.shape[4], overlap_size):
                tile = z[:, :, :, i:i + self.tile_latent_min_size, j:j + self.tile_latent_min_size]
                tile = tile.contiguous(memory_format=torch.channels_last_3d)
                row.append(self._decode_temporal_chunks(tile))
                torch.cuda.empty_cache()
            rows.append(row)

        result_rows = []
        for i, row in enumerate(rows):
            result_row = []
            for j, tile in enumerate(row):
                if i > 0:
                    tile = self.blend_v(rows[i - 1][j], tile, blend_extent)
                if j > 0:
                    tile = self.blend_h(row[j - 1], tile, blend_extent)
                result_row.append(tile[:, :, :, :row_limit, :row_limit])
            result_rows.append(torch.cat(result_row, dim=4))
        return torch.cat(result_rows, dim=3)

    @torch.no_grad()
    def decode(self, z: torch.Tensor) -> torch.Tensor:
        z = z / self.scaling_factor
        if self.use_tiling and (z.shape[-1] > self.tile_latent_min_size or z.shape[-2] > self.tile_latent_min_size):
            return self.tiled_decode(z)
        return self._decode_temporal_chunks(z)
