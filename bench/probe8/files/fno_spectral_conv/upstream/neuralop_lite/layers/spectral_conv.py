"""Spectral convolution for Fourier Neural Operators (N-d, real input).

The layer keeps the lowest `n_modes` Fourier coefficients along every spatial dimension,
multiplies them by learned complex weights and transforms back. Weights are stored as
complex64 parameters; the contraction is a complex einsum.
"""
import itertools
import math
from typing import List, Optional, Sequence, Tuple, Union

import torch
import torch.nn as nn
import torch.nn.functional as F

_FFT_CACHE_CONFIGURED = False


def configure_fft_plan_cache(max_plans: int = 256):
    """cuFFT re-plans every new shape; FNO training with mixed resolutions hits many shapes."""
    global _FFT_CACHE_CONFIGURED
    if _FFT_CACHE_CONFIGURED:
        return
    torch.backends.cuda.cufft_plan_cache.max_size = max_plans
    _FFT_CACHE_CONFIGURED = True


def _einsum_spec(n_dim: int, separable: bool) -> str:
    letters = "xyzw"[:n_dim]
    if separable:
        return f"bi{letters},i{letters}->bi{letters}"
    return f"bi{letters},io{letters}->bo{letters}"


def _mode_slices(n_modes: Sequence[int], fft_shape: Sequence[int]) -> List[Tuple[slice, ...]]:
    """Corners of the spectrum to keep: all sign combinations except on the last (rfft) axis."""
    corners = []
    for signs in itertools.product([0, 1], repeat=len(n_modes) - 1):
        sl = []
        for s, m, size in zip(signs, n_modes[:-1], fft_shape[:-1]):
            sl.append(slice(0, m) if s == 0 else slice(size - m, size))
        sl.append(slice(0, n_modes[-1]))
        corners.append(tuple(sl))
    return corners


class SpectralConv(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, n_modes: Union[int, Sequence[int]],
                 n_dim: int = 2, separable: bool = False, fft_norm: str = "forward",
                 bias: bool = True, init_std: Optional[float] = None,
                 dtype: torch.dtype = torch.cfloat):
        super().__init__()
        if isinstance(n_modes, int):
            n_modes = [n_modes] * n_dim
        if separable and in_channels != out_channels:
            raise ValueError("separable spectral conv needs in_channels == out_channels")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.n_modes = list(n_modes)
        self.n_dim = n_dim
        self.separable = separable
        self.fft_norm = fft_norm
        self.spec = _einsum_spec(n_dim, separable)
        n_corners = 2 ** (n_dim - 1)
        std = init_std if init_std is not None else (2.0 / (in_channels + out_channels)) ** 0.5
        wshape = (in_channels,) + (() if separable else (out_channels,)) + tuple(self.n_modes)
        self.weight = nn.ParameterList(
            [nn.Parameter(std * torch.randn(wshape, dtype=dtype)) for _ in range(n_corners)]
        )
        if bias:
            self.bias = nn.Parameter(torch.zeros((out_channels,) + (1,) * n_dim))
        else:
            self.register_parameter("bias", None)
        configure_fft_plan_cache()

    def extra_repr(self) -> str:
        return f"{self.in_channels}->{self.out_channels}, modes={self.n_modes}, separable={self.separable}"

    def transform(self, x: torch.Tensor, output_shape: Optional[Sequence[int]]) -> torch.Tensor:
        if output_shape is None:
            return x
        if list(x.shape[2:]) == list(output_shape):
            return x
        mode = "bilinear" if self.n_dim == 2 else "trilinear" if self.n_dim == 3 else "linear"
        return F.interpolate(x, size=list(output_shape), mode=mode, align_corners=True)

    def forward(self, x: torch.Tensor, output_shape: Optional[Sequence[int]] = None) -> torch.Tensor:
        b, c, *spatial = x.shape
        dims = tuple(range(-self.n_dim, 0))
        out_spatial = list(output_shape) if output_shape is not None else spatial
        with torch.cuda.amp.autocast(enabled=False):
            x_ft = torch.fft.rfftn(x.float(), dim=dims, norm=self.fft_norm)
            fft_shape = list(x_ft.shape[2:])
            out_fft_shape = list(out_spatial[:-1]) + [out_spatial[-1] // 2 + 1]
            out_ft = torch.zeros(b, self.out_channels, *out_fft_shape, dtype=x_ft.dtype, device=x.device)
            in_slices = _mode_slices(self.n_modes, fft_shape)
            out_slices = _mode_slices(self.n_modes, out_fft_shape)
            for w, sl, out_sl in zip(self.weight, in_slices, out_slices):
                out_ft[(Ellipsis,) + out_sl] = torch.einsum(self.spec, x_ft[(Ellipsis,) + sl], w)
            y = torch.fft.irfftn(out_ft, s=out_spatial, dim=dims, norm=self.fft_norm)
        if self.bias is not None:
            y = y + self.bias
        return y.to(x.dtype)

    @torch.no_grad()
    def export_weights(self) -> dict:
        """Real view of the complex weights (for frameworks without complex checkpoints)."""
        return {f"corner{i}": torch.view_as_real(w.detach()).cpu() for i, w in enumerate(self.weight)}

    @torch.no_grad()
    def resample_modes(self, new_modes: Sequence[int]):
        """Truncate or zero-pad stored modes (zero-shot super-resolution experiments)."""
        new = []
        for w in self.weight:
            lead = w.shape[: w.dim() - self.n_dim]
            nw = torch.zeros(lead + tuple(new_modes), dtype=w.dtype, device=w.device)
            sl = tuple(slice(0, min(a, b)) for a, b in zip(self.n_modes, new_modes))
            nw[(Ellipsis,) + sl] = w[(Ellipsis,) + sl]
            new.append(nn.Parameter(nw))
        self.weight = nn.ParameterList(new)
        self.n_modes = list(new_modes)


class ChannelMLP(nn.Module):
    def __init__(self, channels: int, expansion: float = 0.5, n_dim: int = 2):
        super().__init__()
        hidden = int(round(channels * expansion))
        conv = nn.Conv1d
        self.fc1 = conv(channels, hidden, 1)
        self.fc2 = conv(hidden, channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        x = x.reshape(shape[0], shape[1], -1)
        x = self.fc2(F.gelu(self.fc1(x)))
        return x.reshape(shape)


class FNOBlock(nn.Module):
    def __init__(self, width: int, n_modes: Sequence[int], n_dim: int = 2, norm: Optional[str] = "group",
                 skip: str = "linear"):
        super().__init__()
        self.conv = SpectralConv(width, width, n_modes, n_dim=n_dim)
        self.mlp = ChannelMLP(width, n_dim=n_dim)
        self.skip = nn.Conv1d(width, width, 1, bias=False) if skip == "linear" else nn.Identity()
        self.norm = nn.GroupNorm(1, width) if norm == "group" else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        skip = self.skip(x.reshape(shape[0], shape[1], -1)).reshape(shape)
        x = self.norm(self.conv(x) + skip)
        x = F.gelu(x)
        return x + self.mlp(x)


class FNO(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, width: int = 64, n_modes=(16, 16),
                 n_layers: int = 4, positional_embedding: bool = True):
        super().__init__()
        n_dim = len(n_modes)
        self.n_dim = n_dim
        self.pos = positional_embedding
        lift_in = in_channels + (n_dim if positional_embedding else 0)
        self.lift = nn.Conv1d(lift_in, width, 1)
        self.blocks = nn.ModuleList([FNOBlock(width, n_modes, n_dim) for _ in range(n_layers)])
        self.proj = nn.Sequential(nn.Conv1d(width, 128, 1), nn.GELU(), nn.Conv1d(128, out_channels, 1))

    def _grid(self, x: torch.Tensor) -> torch.Tensor:
        b, _, *spatial = x.shape
        axes = [torch.linspace(0.0, 1.0, s, device=x.device, dtype=x.dtype) for s in spatial]
        mesh = torch.stack(torch.meshgrid(*axes, indexing="ij"), dim=0)
        return mesh.unsqueeze(0).expand(b, -1, *spatial)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.pos:
            x = torch.cat([x, self._grid(x)], dim=1)
        b, c, *spatial = x.shape
        x = self.lift(x.reshape(b, c, -1)).reshape(b, -1, *spatial)
        for blk in self.blocks:
            x = blk(x)
        y = self.proj(x.reshape(b, x.shape[1], -1))
        return y.reshape(b, -1, *spatial)


def count_params(model: nn.Module) -> int:
    n = 0
    for p in model.parameters():
        n += p.numel() * (2 if p.is_complex() else 1)
    return n
