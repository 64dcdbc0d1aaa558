"""SSM convolution kernels (S4D diagonal and S4 DPLR) used by the S4 ECG classifiers.

Stripped-down copy of the state-spaces ``ssm.py`` kernels, kept self-contained so the
PTB-XL / ICBEB experiments do not depend on the full state-spaces repository.

The expensive parts are the Cauchy (S4/DPLR) and Vandermonde (S4D) reductions. Three
implementations are tried in order: the custom CUDA extension in ``extensions/kernels``,
pykeops lazy tensors, and a naive (memory hungry) PyTorch fallback.
"""
import logging
import math

import numpy as np
import torch
import torch.nn as nn
from einops import rearrange, repeat
from opt_einsum import contract

log = logging.getLogger(__name__)

# Try CUDA extension
try:
    from extensions.kernels.cauchy import cauchy_mult as cauchy_cuda
    from extensions.kernels.vandermonde import log_vandermonde_cuda
    has_cuda_extension = True
    log.info("CUDA extension for structured kernels (Cauchy and Vandermonde multiplication) found.")
except ImportError:
    log.warning(
        "CUDA extension for structured kernels (Cauchy and Vandermonde multiplication) not found. "
        "Install by going to extensions/kernels/ and running `python setup.py install`, "
        "for improved speed and memory efficiency."
    )
    has_cuda_extension = False

try:
    import pykeops  # noqa: F401
    from pykeops.torch import Genred
    has_pykeops = True
    log.info("Pykeops installation found.")
except ImportError:
    has_pykeops = False
    if not has_cuda_extension:
        log.warning(
            "Falling back on slow Cauchy and Vandermonde kernel. Install at least one of pykeops "
            "or the CUDA extension for better speed and memory efficiency."
        )

_c2r = torch.view_as_real
_r2c = torch.view_as_complex
_conj = lambda x: torch.cat([x, x.conj()], dim=-1)  # noqa: E731


# ----------------------------------------------------------------------------- naive kernels
def cauchy_naive(v, z, w, conj=True):
    """
    v: (..., N)
    z: (..., L)
    w: (..., N)
    returns: (..., L) \\sum v/(z-w)
    """
    if conj:
        v = _conj(v)
        w = _conj(w)
    cauchy_matrix = v.unsqueeze(-1) / (z.unsqueeze(-2) - w.unsqueeze(-1))  # (... N L)
    return torch.sum(cauchy_matrix, dim=-2)


def log_vandermonde_naive(v, x, L, conj=True):
    """
    v: (..., N)
    x: (..., N)
    returns: (..., L) \\sum v x^l
    """
    vandermonde_matrix = torch.exp(x.unsqueeze(-1) * torch.arange(L).to(x))  # (... N L)
    vandermonde_prod = contract("... n, ... n l -> ... l", v, vandermonde_matrix)  # (... L)
    return 2 * vandermonde_prod.real


# ----------------------------------------------------------------------------- keops kernels
def log_vandermonde_keops(v, x, L):
    expr = "ComplexMult(v, ComplexExp(ComplexMult(x, l)))"
    vandermonde_mult = Genred(
        expr,
        ["v = Vj(2)", "x = Vj(2)", "l = Vi(2)"],
        reduction_op="Sum",
        axis=1,
    )
    length = torch.arange(L).to(x)
    v, x, length = _c2r(v), _c2r(x), _c2r(length)
    r = vandermonde_mult(v, x, length, backend="GPU")
    return 2 * _r2c(r).real


def cauchy_keops(v, z, w):
    expr_num = "z * ComplexReal(v) - Real2Complex(Sum(v * w))"
    expr_denom = "ComplexMult(z-w, z-Conj(w))"
    cauchy_mult = Genred(
        f"ComplexDivide({expr_num}, {expr_denom})",
        ["v = Vj(2)", "z = Vi(2)", "w = Vj(2)"],
        reduction_op="Sum",
        axis=1,
    )
    v, z, w = _c2r(v), _c2r(z), _c2r(w)
    r = 2 * cauchy_mult(v, z, w, backend="GPU")
    return _r2c(r)


# ----------------------------------------------------------------------------- helpers
def inv_transform(param, transform="none"):
    """Initialize a (positive) parameter under a transform."""
    param = torch.clamp(param, min=1e-4)
    if transform == "none":
        return param
    elif transform == "exp":
        return torch.log(param)
    elif transform == "relu":
        return param
    elif transform == "softplus":
        return torch.log(torch.exp(param) - 1)
    raise NotImplementedError(transform)


def param_transform(param, transform="none"):
    if transform == "none":
        return param
    elif transform == "exp":
        return torch.exp(param)
    elif transform == "relu":
        return nn.functional.relu(param) + 1e-4
    elif transform == "softplus":
        return nn.functional.softplus(param)
    raise NotImplementedError(transform)


def dplr_init(N, H, init="legs", real_random=False, imag_scale=1.0):
    """Diagonal approximation of HiPPO-LegS (S4D-Lin / S4D-Inv style initialisations)."""
    real_part = 0.5 * torch.ones(H, N // 2)
    if real_random:
        real_part = torch.rand(H, N // 2)
    if init == "lin":
        imag_part = math.pi * repeat(torch.arange(N // 2), "n -> h n", h=H)
    elif init == "inv":
        imag_part = 1 / math.pi * N * (N / (1 + 2 * torch.arange(N // 2)) - 1)
        imag_part = repeat(imag_part, "n -> h n", h=H)
    elif init == "legs":
        # eigenvalues of the normal part of HiPPO-LegS, computed once on the host
        q = np.arange(2 * N, dtype=np.float64)
        col, row = np.meshgrid(q, q)
        r = 2 * q + 1
        M = -(np.where(row >= col, r, 0) - np.diag(q))
        T = np.sqrt(np.diag(2 * q + 1))
        A = T @ M @ np.linalg.inv(T)
        S = A + 0.5 * (r[:, None] ** 0.5) * (r[None, :] ** 0.5)
        evals = np.linalg.eigvals(S)
        imag_part = torch.tensor(np.sort(np.abs(evals.imag))[::2][: N // 2], dtype=torch.float32)
        imag_part = repeat(imag_part, "n -> h n", h=H)
    else:
        raise NotImplementedError(init)
    return -real_part + 1j * imag_scale * imag_part


# ----------------------------------------------------------------------------- S4D kernel
class SSMKernelDiag(nn.Module):
    """S4D: diagonal state matrix, ZOH discretisation, Vandermonde kernel evaluation."""

    def __init__(self, d_model, d_state=64, dt_min=0.001, dt_max=0.1, channels=1, lr=None,
                 init="legs", real_transform="exp", imag_transform="none", backend=None):
        super().__init__()
        H, N = d_model, d_state
        self.H, self.N, self.channels = H, N, channels
        self.real_transform, self.imag_transform = real_transform, imag_transform

        if backend is None:
            backend = "cuda" if has_cuda_extension else ("keops" if has_pykeops else "naive")
        self.backend = backend

        log_dt = torch.rand(H) * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min)
        A = dplr_init(N, H, init=init)
        C = torch.randn(channels, H, N // 2, dtype=torch.cfloat)
        B = torch.ones(H, N // 2, dtype=torch.cfloat)

        self.C = nn.Parameter(_c2r(C))
        self.register("log_dt", log_dt, lr)
        self.register("B", _c2r(B), lr)
        self.register("inv_A_real", inv_transform(-A.real, real_transform), lr)
        self.register("A_imag", inv_transform(A.imag, imag_transform), lr)

    def register(self, name, tensor, lr=None, wd=0.0):
        """Register a tensor with a configurable learning rate and 0 weight decay."""
        if lr == 0.0:
            self.register_buffer(name, tensor)
        else:
            self.register_parameter(name, nn.Parameter(tensor))
            optim = {"weight_decay": wd}
            if lr is not None:
                optim["lr"] = lr
            setattr(getattr(self, name), "_optim", optim)

    def _get_params(self, rate=1.0):
        dt = torch.exp(self.log_dt) * rate  # (H)
        A_real = -param_transform(self.inv_A_real, self.real_transform)
        A_imag = param_transform(self.A_imag, self.imag_transform)
        A = A_real + 1j * A_imag  # (H N)
        B = _r2c(self.B)
        C = _r2c(self.C) * B  # (C H N)
        return dt, A, C

    def forward(self, L, state=None, rate=1.0):
        dt, A, C = self._get_params(rate)
        dtA = A * dt.unsqueeze(-1)  # (H N)
        C = C * (torch.exp(dtA) - 1.0) / A  # ZOH
        C = rearrange(C, "c h n -> (c h) n")
        dtA_rep = repeat(dtA, "h n -> (c h) n", c=self.channels)
        if self.backend == "cuda":
            K = log_vandermonde_cuda(C, dtA_rep, L)
        elif self.backend == "keops":
            K = log_vandermonde_keops(C, dtA_rep, L)
        else:
            K = log_vandermonde_naive(C, dtA_rep, L)
        K = rearrange(K, "(c h) l -> c h l", c=self.channels)
        return K, None


class S4DConv(nn.Module):
    """Long convolution with an SSM kernel, computed with FFTs (the standard S4 block core)."""

    def __init__(self, d_model, d_state=64, channels=1, bidirectional=True, dropout=0.0, **kernel_args):
        super().__init__()
        self.h = d_model
        self.bidirectional = bidirectional
        self.channels = channels * (2 if bidirectional else 1)
        self.kernel = SSMKernelDiag(d_model, d_state=d_state, channels=self.channels, **kernel_args)
        self.D = nn.Parameter(torch.randn(self.channels, self.h))
        self.activation = nn.GELU()
        self.dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        self.output_linear = nn.Sequential(nn.Conv1d(self.channels * self.h, 2 * self.h, kernel_size=1), nn.GLU(dim=-2))

    def forward(self, u):
        # u: (B, H, L)
        L = u.size(-1)
        k, _ = self.kernel(L=L)  # (C H L)
        if self.bidirectional:
            k0, k1 = rearrange(k, "(s c) h l -> s c h l", s=2)
            k = nn.functional.pad(k0, (0, L)) + nn.functional.pad(k1.flip(-1), (L, 0))
        k_f = torch.fft.rfft(k, n=2 * L)  # (C H L)
        u_f = torch.fft.rfft(u, n=2 * L)  # (B H L)
        y_f = contract("bhl,chl->bchl", u_f, k_f)
        y = torch.fft.irfft(y_f, n=2 * L)[..., :L]  # (B C H L)
        y = y + contract("bhl,ch->bchl", u, self.D)
        y = rearrange(y, "b c h l -> b (c h) l")
        y = self.dropout(self.activation(y))
        return self.output_linear(y)
