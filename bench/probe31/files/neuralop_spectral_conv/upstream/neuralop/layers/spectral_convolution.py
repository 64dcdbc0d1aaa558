from typing import List, Optional, Tuple, Union

import torch
from torch import nn

import tensorly as tl
from tensorly.plugins import use_opt_einsum
from tltorch.factorized_tensors.core import FactorizedTensor

from .einsum_utils import einsum_complexhalf
from .base_spectral_conv import BaseSpectralConv
from .resample import resample

tl.set_backend("pytorch")
use_opt_einsum("optimal")
einsum_symbols = "abcdefghijklmnopqrstuvwxyz"

# cuFFT keeps one plan per (shape, dtype, device); FNO training on many resolutions
# thrashes the default 4096-entry cache less than it runs out of workspace memory.
if torch.cuda.is_available():
    torch.backends.cuda.cufft_plan_cache.max_size = 64


def _contract_dense(x, weight, separable=False):
    order = tl.ndim(x)
    # batch-size, in_channels, x, y...
    x_syms = list(einsum_symbols[:order])

    # in_channels, out_channels, x, y...
    weight_syms = list(x_syms[1:])  # no batch-size

    # batch-size, out_channels, x, y...
    if separable:
        out_syms = [x_syms[0]] + list(weight_syms)
    else:
        weight_syms.insert(1, einsum_symbols[order])  # outputs
        out_syms = list(weight_syms)
        out_syms[0] = x_syms[0]

    eq = f'{"".join(x_syms)},{"".join(weight_syms)}->{"".join(out_syms)}'

    if not torch.is_tensor(weight):
        weight = weight.to_tensor()

    if x.dtype == torch.complex32:
        # if x is half precision, run a specialized einsum
        return einsum_complexhalf(eq, x, weight)
    else:
        return tl.einsum(eq, x, weight)


def _contract_dense_separable(x, weight, separable=True):
    if not separable:
        raise ValueError("This function is only for separable=True")
    return x * weight


def get_contract_fun(weight, implementation="reconstructed", separable=False):
    if implementation == "reconstructed":
        if separable:
            return _contract_dense_separable
        return _contract_dense
    raise ValueError(f'Got implementation={implementation}, expected "reconstructed"')


Number = Union[int, float]


class SpectralConv(BaseSpectralConv):
    """Generic N-Dimensional Fourier Neural Operator

    Parameters
    ----------
    in_channels : int, optional
        Number of input channels
    out_channels : int, optional
        Number of output channels
    n_modes : int tuple
        total number of modes to keep in Fourier Layer, along each dim
    complex_data: bool, optional
        whether data takes on complex values in the spatial domain, by default False
    separable : bool, default is True
    fft_norm : str, optional
        by default 'forward'
    mixed_precision : bool
        if True, run the FFTs and the spectral contraction in complex-half (cuFFT half precision,
        sizes must be powers of two)
    """

    def __init__(
        self,
        in_channels,
        out_channels,
        n_modes,
        complex_data=False,
        max_n_modes=None,
        bias=True,
        separable=False,
        resolution_scaling_factor: Optional[Union[Number, List[Number]]] = None,
        fno_block_precision="full",
        rank=0.5,
        fft_norm="forward",
        init_std="auto",
        device=None,
    ):
        super().__init__(device=device)

        self.in_channels = in_channels
        self.out_channels = out_channels
        self.complex_data = complex_data

        # n_modes is the total number of modes kept along each dimension
        self.n_modes = n_modes
        self.order = len(self.n_modes)

        if max_n_modes is None:
            max_n_modes = self.n_modes
        elif isinstance(max_n_modes, int):
            max_n_modes = [max_n_modes]
        self.max_n_modes = max_n_modes

        self.fno_block_precision = fno_block_precision
        self.rank = rank
        self.resolution_scaling_factor = resolution_scaling_factor
        self.fft_norm = fft_norm

        if init_std == "auto":
            init_std = (2 / (in_channels + out_channels)) ** 0.5

        if separable:
            if in_channels != out_channels:
                raise ValueError(f"To use separable Fourier Conv, in_channels must be equal to out_channels, but got in_channels={in_channels} and out_channels={out_channels}")
            weight_shape = (in_channels, *max_n_modes)
        else:
            weight_shape = (in_channels, out_channels, *max_n_modes)
        self.separable = separable

        self.weight = nn.Parameter(torch.empty(weight_shape, dtype=torch.cfloat, device=device))
        self.weight.data.normal_(0, init_std)

        self._contract = get_contract_fun(self.weight, implementation="reconstructed", separable=separable)

        if bias:
            self.bias = nn.Parameter(init_std * torch.randn(*(tuple([self.out_channels]) + (1,) * self.order), device=device))
        else:
            self.bias = None

    @property
    def n_modes(self):
        return self._n_modes

    @n_modes.setter
    def n_modes(self, n_modes):
        if isinstance(n_modes, int):  # Should happen for 1D FNO
            n_modes = [n_modes]
        else:
            n_modes = list(n_modes)
        # the real FFT is skew-symmetric, so the last mode has a redundacy if our data is real in space
        # As a design choice we do the operation here to avoid users dealing with the +1
        # if we use the full FFT we cannot cut off informtion from the last mode
        if not self.complex_data:
            n_modes[-1] = n_modes[-1] // 2 + 1
        self._n_modes = n_modes

    def transform(self, x, output_shape=None):
        in_shape = list(x.shape[2:])

        if self.resolution_scaling_factor is not None and output_shape is None:
            out_shape = tuple([round(s * r) for (s, r) in zip(in_shape, self.resolution_scaling_factor)])
        elif output_shape is not None:
            out_shape = output_shape
        else:
            out_shape = in_shape

        if in_shape == out_shape:
            return x
        else:
            return resample(x, 1.0, list(range(2, x.ndim)), output_shape=out_shape)

    def forward(self, x: torch.Tensor, output_shape: Optional[Tuple[int]] = None):
        """Generic forward pass for the Factorized Spectral Conv

        Parameters
        ----------
        x : torch.Tensor
            input activation of size (batch_size, channels, d1, ..., dN)

        Returns
        -------
        tensorized_spectral_conv(x)
        """
        batchsize, channels, *mode_sizes = x.shape

        fft_size = list(mode_sizes)
        if not self.complex_data:
            fft_size[-1] = fft_size[-1] // 2 + 1  # Redundant last coefficient in real spatial data
        fft_dims = list(range(-self.order, 0))

        if self.fno_block_precision == "half":
            x = x.half()

        # the spectral part is done in full precision unless explicitly asked for half
        with torch.autocast(device_type="cuda", enabled=False):
            if self.fno_block_precision != "half":
                x = x.float()
            if self.complex_data:
                x = torch.fft.fftn(x, norm=self.fft_norm, dim=fft_dims)
                dims_to_fft_shift = fft_dims
            else:
                x = torch.fft.rfftn(x, norm=self.fft_norm, dim=fft_dims)
                # When x is real in spatial domain, the last half of the last dim is redundant.
                # See :ref:`fft_shift_explanation` for discussion of the FFT shift.
                dims_to_fft_shift = fft_dims[:-1]

            if self.order > 1:
                x = torch.fft.fftshift(x, dim=dims_to_fft_shift)

            if self.fno_block_precision == "mixed":
                # if 'mixed', the above fft runs in full precision, but the following operations run at half precision
                x = x.chalf()

            if self.fno_block_precision in ["half", "mixed"]:
                out_dtype = torch.chalf
            else:
                out_dtype = torch.cfloat
            out_fft = torch.zeros([batchsize, self.out_channels, *fft_size], device=x.device, dtype=out_dtype)

            # if current modes are less than max, start indexing modes closer to the center of the weight tensor
            starts = [(max_modes - min(size, n_mode)) for (size, n_mode, max_modes) in zip(fft_size, self.n_modes, self.max_n_modes)]

            # if contraction is separable, weights have shape (channels, modes_x, ...)
            # otherwise they have shape (in_channels, out_channels, modes_x, ...)
            if self.separable:
                slices_w = [slice(None)]  # channels
            else:
                slices_w = [slice(None), slice(None)]  # in_channels, out_channels
            if self.complex_data:
                slices_w += [slice(start // 2, -start // 2) if start else slice(start, None) for start in starts]
            else:
                # The last mode already has redundant half removed in real FFT
                slices_w += [slice(start // 2, -start // 2) if start else slice(start, None) for start in starts[:-1]]
                slices_w += [slice(None, -starts[-1]) if starts[-1] else slice(None)]

            weight = self.weight[slices_w]

            # if separable conv, weight tensor only has one channel dim
            if self.separable:
                weight_start_idx = 1
            # otherwise drop first two dims (in_channels, out_channels)
            else:
                weight_start_idx = 2

            slices_x = [slice(None), slice(None)]  # Batch_size, channels

            for all_modes, kept_modes in zip(fft_size, list(weight.shape[weight_start_idx:])):
                # After fft-shift, the 0th frequency is located at n // 2 in each direction
                # We select n_modes modes around the 0th frequency (kept at index n//2) by grabbing indices
                # n//2 - n_modes//2  to  n//2 + n_modes//2       if n_modes is even
                # n//2 - n_modes//2  to  n//2 + n_modes//2 + 1   if n_modes is odd
                center = all_modes // 2
                negative_freqs = kept_modes // 2
                positive_freqs = kept_modes // 2 + kept_modes % 2

                # this slice represents the desired indices along each dim
                slices_x += [slice(center - negative_freqs, center + positive_freqs)]

            if weight.shape[-1] < fft_size[-1]:
                slices_x[-1] = slice(None, weight.shape[-1])
            else:
                slices_x[-1] = slice(None)

            out_fft[slices_x] = self._contract(x[slices_x], weight, separable=self.separable)

            if self.resolution_scaling_factor is not None and output_shape is None:
                mode_sizes = tuple([round(s * r) for (s, r) in zip(mode_sizes, self.resolution_scaling_factor)])

            if output_shape is not None:
                mode_sizes = output_shape

            if self.order > 1:
                out_fft = torch.fft.ifftshift(out_fft, dim=fft_dims[:-1])

            if self.complex_data:
                x = torch.fft.ifftn(out_fft, s=mode_sizes, dim=fft_dims, norm=self.fft_norm)
            else:
                x = torch.fft.irfftn(out_fft, s=mode_sizes, dim=fft_dims, norm=self.fft_norm)

        if self.bias is not None:
            x = x + self.bias

        return x
