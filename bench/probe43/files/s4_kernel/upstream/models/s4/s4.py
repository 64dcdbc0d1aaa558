"""Standalone version of Structured State Space sequence model (S4).

S4D-Lin / S4D-Inv diagonal kernels and the DPLR (NPLR) kernel, computed with a Cauchy kernel
(CUDA extension > pykeops > naive torch) and applied as a long convolution through the FFT.
"""

import logging
import math
from functools import partial

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange, repeat
import opt_einsum as oe

contract = oe.contract

log = logging.getLogger(__name__)

""" Cauchy and Vandermonde kernels """

try:  # Try CUDA extension
    from extensions.kernels.cauchy import cauchy_mult as cauchy_cuda
    from extensions.kernels.vandermonde import log_vandermonde_cuda
    has_cuda_extension = True
    log.info("CUDA extension for structured kernels (Cauchy and Vandermonde multiplication) found.")
except:
    log.warning(
        "CUDA extension for structured kernels (Cauchy and Vandermonde multiplication) not found. Install by going to extensions/kernels/ and running `python setup.py install`, for improved speed and memory efficiency. Note that the kernel changed for state-spaces 4.0 and must be recompiled."
    )
    has_cuda_extension = False

try:
    import pykeops
    from pykeops.torch import Genred
    has_pykeops = True
    log.info("Pykeops installation found.")

    def _broadcast_dims(*tensors):
        max_dim = max([len(tensor.shape) for tensor in tensors])
        tensors = [tensor.view((1,) * (max_dim - len(tensor.shape)) + tensor.shape) for tensor in tensors]
        return tensors

    def cauchy_keops(v, z, w):
        expr_num = 'z * ComplexReal(v) - Real2Complex(Sum(v * w))'
        expr_denom = 'ComplexMult(z-w, z-Conj(w))'

        cauchy_mult = Genred(
            f'ComplexDivide({expr_num}, {expr_denom})',
            ['v = Vj(2)', 'z = Vi(2)', 'w = Vj(2)'],
            reduction_op='Sum',
            axis=1,
        )

        v, z, w = _broadcast_dims(v, z, w)
        v = _c2r(v)
        z = _c2r(z)
        w = _c2r(w)

        r = 2 * cauchy_mult(v, z, w, backend='GPU')
        return _r2c(r)

    def log_vandermonde_keops(v, x, L):
        expr = 'ComplexMult(v, ComplexExp(ComplexMult(x, l)))'
        vandermonde_mult = Genred(
            expr,
            ['v = Vj(2)', 'x = Vj(2)', 'l = Vi(2)'],
            reduction_op='Sum',
            axis=1,
        )

        l = torch.arange(L).to(x)
        v, x, l = _broadcast_dims(v, x, l)
        v = _c2r(v)
        x = _c2r(x)
        l = _c2r(l)

        r = vandermonde_mult(v, x, l, backend='GPU')
        return 2 * _r2c(r).real

except ImportError:
    has_pykeops = False
    if not has_cuda_extension:
        log.warning(
            "Falling back on slow Cauchy and Vandermonde kernel. Install at least one of pykeops or the CUDA extension for better speed and memory efficiency."
        )


# Fallback versions
def cauchy_naive(v, z, w):
    r"""
    v: (..., N)
    z: (..., L)
    w: (..., N)
    returns: (..., L) \sum v/(z-w)
    """
    v = _conj(v)
    w = _conj(w)
    cauchy_matrix = v.unsqueeze(-1) / (z.unsqueeze(-2) - w.unsqueeze(-1))  # (... N L)
    return torch.sum(cauchy_matrix, dim=-2)


def log_vandermonde_naive(v, x, L, conj=True):
    r"""
    v: (..., N)
    x: (..., N)
    returns: (..., L) \sum v x^l
    """
    vandermonde_matrix = torch.exp(x.unsqueeze(-1) * torch.arange(L).to(x))  # (... N L)
    vandermonde_prod = contract('... n, ... n l -> ... l', v, vandermonde_matrix)  # (... L)
    return 2 * vandermonde_prod.real


""" Simple nn.Module components """

_c2r = torch.view_as_real
_r2c = torch.view_as_complex
if tuple(map(int, torch.__version__.split('.')[:2])) >= (1, 10):
    _resolve_conj = lambda x: x.conj().resolve_conj()
else:
    _resolve_conj = lambda x: x.conj()


def _conj(x):
    return torch.cat([x, x.conj()], dim=-1)


class DropoutNd(nn.Module):
    def __init__(self, p: float = 0.5, tie=True, transposed=True):
        """
        tie: tie dropout mask across sequence lengths (Dropout1d/2d/3d)
        """
        super().__init__()
        if p < 0 or p >= 1:
            raise ValueError("dropout probability has to be in [0, 1), " "but got {}".format(p))
        self.p = p
        self.tie = tie
        self.transposed = transposed
        self.binomial = torch.distributions.binomial.Binomial(probs=1 - self.p)

    def forward(self, X):
        """X: (batch, dim, lengths...)."""
        if self.training:
            if not self.transposed:
                X = rearrange(X, 'b ... d -> b d ...')
            mask_shape = X.shape[:2] + (1,) * (X.ndim - 2) if self.tie else X.shape
            mask = torch.rand(*mask_shape, device=X.device) < 1. - self.p
            X = X * mask * (1.0 / (1 - self.p))
            if not self.transposed:
                X = rearrange(X, 'b d ... -> b ... d')
            return X
        return X


""" SSM kernels """


class SSMKernelDiag(nn.Module):
    """SSM kernel using diagonal state matrix (S4D model)."""

    def __init__(self, d_model, N=64, dt_min=0.001, dt_max=0.1, lr=None, disc='zoh', init='diag-lin',
                 backend='cuda', real_transform='exp', imag_transform='none', bandlimit=None):
        super().__init__()
        H = d_model
        self.disc = disc
        self.bandlimit = bandlimit
        self.real_transform = real_transform
        self.imag_transform = imag_transform

        # Select the kernel backend: the CUDA extension if built, else pykeops, else naive
        if backend == 'cuda' and not has_cuda_extension:
            backend = 'keops' if has_pykeops else 'naive'
            log.info(f"Selected backend 'cuda' but the extension is missing: falling back to '{backend}'")
        self.backend = backend

        log_dt = torch.rand(H) * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min)

        A_real = 0.5 * torch.ones(H, N // 2)
        if init == 'diag-lin':
            A_imag = math.pi * repeat(torch.arange(N // 2), 'n -> h n', h=H)
        elif init == 'diag-inv':
            A_imag = 1 / math.pi * N * (N / (1 + 2 * torch.arange(N // 2)) - 1)
            A_imag = repeat(A_imag, 'n -> h n', h=H)
        else:
            raise NotImplementedError(init)
        C = torch.randn(H, N // 2, dtype=torch.cfloat)
        B = torch.ones(H, N // 2, dtype=torch.cfloat)
        C = C * B  # absorb B into C
        self.C = nn.Parameter(_c2r(_resolve_conj(C)))

        self.register("log_dt", log_dt, lr)
        self.register("inv_A_real", torch.log(A_real), lr)
        self.register("A_imag", A_imag, lr)

    def _get_params(self):
        C = _r2c(self.C)  # (H C N)
        A = -torch.exp(self.inv_A_real) + 1j * self.A_imag
        dt = torch.exp(self.log_dt)  # (H)
        return dt, A, C

    def forward(self, L, state=None, rate=1.0):
        dt, A, C = self._get_params()
        dt = dt * rate
        dtA = dt.unsqueeze(-1) * A  # (H N)

        if self.disc == 'zoh':
            # Power up
            C = C * (torch.exp(dtA) - 1.) / A
            if self.backend == 'cuda':
                K = log_vandermonde_cuda(C, dtA, L)  # (H L)
            elif self.backend == 'keops':
                K = log_vandermonde_keops(C, dtA, L)
            else:
                K = log_vandermonde_naive(C, dtA, L)
        elif self.disc == 'bilinear':
            C = C * (1. - dtA / 2).reciprocal() * dt.unsqueeze(-1)  # or * dtA / A
            dA = (1. + dtA / 2) / (1. - dtA / 2)
            K = log_vandermonde_naive(C, dA.log(), L)
        else:
            raise ValueError(f"Discretization {self.disc} not supported")

        return K.unsqueeze(0), None  # (C H L)

    def register(self, name, tensor, lr=None):
        """Register a tensor with a configurable learning rate and 0 weight decay"""
        if lr == 0.0:
            self.register_buffer(name, tensor)
        else:
            self.register_parameter(name, nn.Parameter(tensor))
            optim = {"weight_decay": 0}
            if lr is not None:
                optim["lr"] = lr
            setattr(getattr(self, name), "_optim", optim)


class FFTConv(nn.Module):
    """Implements an FFT Convolution around a convolution kernel."""

    def __init__(self, d_model, l_max=None, channels=1, swap_channels=False, bidirectional=False,
                 activation='gelu', transposed=True, dropout=0.0, tie_dropout=False, drop_kernel=0.0,
                 **kernel_args):
        super().__init__()
        self.d_model = d_model
        self.L = self.l_max = l_max
        self.bidirectional = bidirectional
        self.channels = channels
        self.transposed = transposed
        self.swap_channels = swap_channels

        self.D = nn.Parameter(torch.randn(channels, self.d_model))
        if self.bidirectional:
            channels *= 2
        self.kernel = SSMKernelDiag(self.d_model, **kernel_args)

        self.activation = nn.GELU() if activation == 'gelu' else nn.Identity()
        dropout_fn = DropoutNd if tie_dropout else nn.Dropout
        self.drop = dropout_fn(dropout) if dropout > 0.0 else nn.Identity()
        self.drop_kernel = nn.Dropout(drop_kernel) if drop_kernel > 0.0 else nn.Identity()

    def forward(self, x, state=None, rate=1.0, **kwargs):  # absorbs return_output and transformer src mask
        """x: (B D L) if self.transposed else (B L D)"""
        # Always work with (B D L) dimension in this module
        if not self.transposed:
            x = x.transpose(-1, -2)
        L = x.size(-1)

        # Compute SS Kernel
        l_kernel = L if self.L is None else min(L, round(self.L / rate))
        k, k_state = self.kernel(L=l_kernel, rate=rate, state=state)  # (C H L) (B C H L)

        # Convolution
        if self.bidirectional:
            k0, k1 = rearrange(k, '(s c) h l -> s c h l', s=2)
            k = F.pad(k0, (0, L)) + F.pad(k1.flip(-1), (L, 0))
        k = self.drop_kernel(k)

        k_f = torch.fft.rfft(k, n=l_kernel + L)  # (C H L)
        x_f = torch.fft.rfft(x, n=l_kernel + L)  # (B H L)
        y_f = contract('bhl,chl->bchl', x_f, k_f)
        y = torch.fft.irfft(y_f, n=l_kernel + L)[..., :L]  # (B C H L)

        # Compute D term in state space equation - essentially a skip connection
        y = y + contract('bhl,ch->bchl', x, self.D)

        # Reshape to flatten channels
        if self.swap_channels:
            y = rearrange(y, 'b c h l -> b (h c) l')
        else:
            y = rearrange(y, 'b c h l -> b (c h) l')

        y = self.drop(self.activation(y))

        if not self.transposed:
            y = y.transpose(-1, -2)
        return y, None
