"""SSM convolution kernels (S4 / S4D).

The diagonal-plus-low-rank (DPLR) kernel is evaluated at the roots of unity through a Cauchy kernel,
which is the hot spot. Three implementations, tried in order:
  1. the CUDA extension in extensions/kernels (complex64 only)
  2. pykeops (lazy reductions, no N x L materialisation)
  3. a naive broadcasted version (O(N L) memory)
"""
import logging
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange, repeat

log = logging.getLogger(__name__)

try:  # Try CUDA extension
    from extensions.kernels.cauchy import cauchy_mult as cauchy_cuda
    has_cuda_extension = True
except ImportError:
    log.warning("CUDA extension for Cauchy multiplication not found. Install it by going to extensions/kernels/ "
                "and running `python setup.py install`, for improved speed and memory efficiency.")
    has_cuda_extension = False

try:  # Try pykeops
    import pykeops
    from pykeops.torch import Genred
    has_pykeops = True
    log.info("Pykeops installation found.")
except ImportError:
    has_pykeops = False
    if not has_cuda_extension:
        log.warning("Falling back on slow Cauchy kernel. Install at least one of pykeops or the CUDA extension "
                    "for memory efficiency.")

_c2r = torch.view_as_real
_r2c = torch.view_as_complex
if tuple(map(int, torch.__version__.split('+')[0].split('.')[:2])) >= (1, 10):
    _resolve_conj = lambda x: x.conj().resolve_conj()
else:
    _resolve_conj = lambda x: x.conj()


def cauchy_naive(v, z, w):
    r"""
    v: (..., N)
    z: (..., L)
    w: (..., N)
    returns: (..., L) \sum v/(z-w)
    """
    v = _resolve_conj(v)  # conj on the fly
    cauchy_matrix = v.unsqueeze(-1) / (z.unsqueeze(-2) - w.unsqueeze(-1))  # (... N L)
    return torch.sum(cauchy_matrix, dim=-2)


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


class CauchyMultiply(torch.autograd.Function):
    """Wraps the extension so autocast never feeds it half-precision complex inputs."""

    @staticmethod
    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, v, z, w):
        ctx.save_for_backward(v, z, w)
        return cauchy_cuda(v, z, w, True)

    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(ctx, dout):
        v, z, w = ctx.saved_tensors
        dv = cauchy_cuda(dout.conj(), z, w, True).conj()  # placeholder for the fused backward of the extension
        dw = cauchy_cuda(dout.conj() * v.unsqueeze(-1).conj(), z, w, True).conj()
        return dv, None, dw


def cauchy(v, z, w):
    if has_cuda_extension and z.dtype == torch.cfloat and z.is_cuda:
        return CauchyMultiply.apply(v, z, w)
    elif has_pykeops:
        return cauchy_keops(v, z, w)
    else:
        return cauchy_naive(v, z, w)


def nplr(measure, N, rank=1, dtype=torch.float, diagonalize_precision=True):
    """Normal plus low-rank decomposition of the HiPPO matrix, computed once on the host in double precision."""
    assert dtype == torch.float or dtype == torch.double
    cdtype = torch.cfloat if dtype == torch.float else torch.cdouble

    q = np.arange(2 * N, dtype=np.float64)
    col, row = np.meshgrid(q, q)
    r = 2 * q + 1
    M = -(np.where(row >= col, r, 0) - np.diag(q))
    T = np.sqrt(np.diag(2 * q + 1))
    A = T @ M @ np.linalg.inv(T)
    A = A[:N, :N]
    P = torch.as_tensor(np.sqrt(0.5 + np.arange(N)), dtype=torch.double).unsqueeze(0)
    A = torch.as_tensor(A, dtype=torch.double)
    AP = A + torch.sum(P.unsqueeze(-2) * P.unsqueeze(-1), dim=-3)

    W_re = torch.mean(torch.diagonal(AP), -1, keepdim=True)
    if diagonalize_precision:
        W_im, V = torch.linalg.eigh(AP.double() * -1j)
    else:
        W_im, V = torch.linalg.eigh(AP * -1j)
    W = W_re + 1j * W_im
    _, idx = torch.sort(W.imag)
    W_sorted = W[idx]
    V_sorted = V[:, idx]
    V = V_sorted[:, :N // 2]
    W = W_sorted[:N // 2]
    V_inv = V.conj().transpose(-1, -2)
    P = V_inv @ P.to(V)
    B = V_inv @ (torch.ones(N, 1, dtype=torch.double) * math.sqrt(2)).to(V)
    return W.to(cdtype), P.to(cdtype), B.squeeze(-1).to(cdtype), V.to(cdtype)


class SSKernelNPLR(nn.Module):

    def __init__(self, w, P, B, C, log_dt, L=None, lr=None, double_precision=False):
        super().__init__()
        self.L = L
        self.N = w.size(-1)
        self.double_precision = double_precision
        cdtype = torch.cdouble if double_precision else torch.cfloat
        self.register_parameter("log_dt", nn.Parameter(log_dt))
        self.B = nn.Parameter(_c2r(B.to(cdtype)))
        self.P = nn.Parameter(_c2r(P.to(cdtype)))
        self.C = nn.Parameter(_c2r(_resolve_conj(C.to(cdtype))))
        self.inv_w_real = nn.Parameter(torch.log(-w.real.clamp(max=-1e-4)).to(torch.float64 if double_precision else torch.float))
        self.w_imag = nn.Parameter(w.imag.to(torch.float64 if double_precision else torch.float))
        if double_precision:
            # eigen-solves for the state discretisation on the device prefer MAGMA for small complex matrices
            torch.backends.cuda.preferred_linalg_library("magma")

    def _w(self):
        w_real = -torch.exp(self.inv_w_real)
        return w_real + 1j * self.w_imag

    @torch.no_grad()
    def _omega(self, L, dtype, device):
        omega = torch.tensor(np.exp(-2j * np.pi / L), dtype=dtype, device=device)
        omega = omega ** torch.arange(0, L // 2 + 1, device=device)
        z = 2 * (1 - omega) / (1 + omega)
        return omega, z

    def forward(self, state=None, rate=1.0, L=None):
        L = L or self.L
        dt = torch.exp(self.log_dt) * rate
        B = _r2c(self.B)
        C = _r2c(self.C)
        P = _r2c(self.P)
        Q = P.conj()
        w = self._w()
        omega, z = self._omega(L, dtype=w.dtype, device=w.device)

        w = w * dt.unsqueeze(-1)
        B = torch.cat([B, P], dim=-3)
        C = torch.cat([C, Q], dim=-3)
        v = B.unsqueeze(-3) * C.unsqueeze(-4)
        r = cauchy(v, z, w)
        r = r * dt[None, None, :, None]

        k_f = r[:-1, :-1, :, :] - r[:-1, -1:, :, :] * r[-1:, :-1, :, :] / (1 + r[-1:, -1:, :, :])
        k_f = k_f * 2 / (1 + omega)
        k = torch.fft.irfft(k_f, n=L)
        return k[..., :L].float(), None


def fftconv(u, k, D):
    """Causal long convolution by FFT, in fp32 even under autocast."""
    L = u.size(-1)
    with torch.cuda.amp.autocast(enabled=False):
        k_f = torch.fft.rfft(k.float(), n=2 * L)
        u_f = torch.fft.rfft(u.float(), n=2 * L)
        y = torch.fft.irfft(u_f * k_f, n=2 * L)[..., :L]
    return y + u * D.unsqueeze(-1)
