"""Wilson-Dirac operator on a 4-D lattice.

    D psi(x) = psi(x) - kappa * sum_mu [ (1 - gamma_mu) U_mu(x) psi(x + mu)
                                       + (1 + gamma_mu) U_mu^dag(x - mu) psi(x - mu) ]

Fields are complex128 tensors: gauge links U of shape [4, T, Z, Y, X, 3, 3] and spinors psi of
shape [T, Z, Y, X, 4, 3]. The hopping term is a hand-written CUDA kernel (JIT-compiled once per
node into the torch extensions cache); `dslash_reference` is the slow pure-torch version used in
the tests and on machines without a GPU.
"""
import os
import pathlib

import torch
from torch.utils.cpp_extension import load

_HERE = pathlib.Path(__file__).resolve().parent
_CSRC = _HERE.parent / "csrc"

# Compile (or load from ~/.cache/torch_extensions) the CUDA hopping-term kernel.
# On the login nodes set QCDML_NO_EXT=1 to skip the build.
if os.environ.get("QCDML_NO_EXT", "0") != "1":
    _wilson = load(
        name="qcdml_wilson_dslash",
        sources=[str(_CSRC / "wilson_dslash.cpp"), str(_CSRC / "wilson_dslash_kernel.cu")],
        extra_cflags=["-O3"],
        extra_cuda_cflags=["-O3", "--use_fast_math", "-lineinfo",
                           "-gencode=arch=compute_80,code=sm_80",
                           "-gencode=arch=compute_90,code=sm_90"],
        verbose=os.environ.get("QCDML_VERBOSE_BUILD", "0") == "1",
    )
else:
    _wilson = None

# Euclidean gamma matrices in the DeGrand-Rossi basis
_G = torch.zeros(4, 4, 4, dtype=torch.complex128)
_G[0] = torch.tensor([[0, 0, 0, 1j], [0, 0, 1j, 0], [0, -1j, 0, 0], [-1j, 0, 0, 0]])
_G[1] = torch.tensor([[0, 0, 0, -1], [0, 0, 1, 0], [0, 1, 0, 0], [-1, 0, 0, 0]])
_G[2] = torch.tensor([[0, 0, 1j, 0], [0, 0, 0, -1j], [-1j, 0, 0, 0], [0, 1j, 0, 0]])
_G[3] = torch.tensor([[0, 0, 1, 0], [0, 0, 0, 1], [1, 0, 0, 0], [0, 1, 0, 0]])
_EYE4 = torch.eye(4, dtype=torch.complex128)

# lattice directions (mu) -> tensor dims of a [T, Z, Y, X, ...] field
_DIM = {0: 3, 1: 2, 2: 1, 3: 0}


def _gammas(device):
    return _G.to(device), _EYE4.to(device)


def dslash_reference(U: torch.Tensor, psi: torch.Tensor, kappa: float) -> torch.Tensor:
    """Pure-torch Wilson-Dirac operator (periodic in space, antiperiodic in time)."""
    G, I4 = _gammas(psi.device)
    out = psi.clone()
    for mu in range(4):
        d = _DIM[mu]
        # forward hop: U_mu(x) psi(x + mu)
        psi_fwd = torch.roll(psi, shifts=-1, dims=d)
        if mu == 3:
            psi_fwd = psi_fwd.clone()
            psi_fwd[-1] = -psi_fwd[-1]  # antiperiodic boundary in time
        hop_f = torch.einsum("...ab,...sb->...sa", U[mu], psi_fwd)
        hop_f = torch.einsum("st,...tc->...sc", I4 - G[mu], hop_f)
        # backward hop: U_mu^dag(x - mu) psi(x - mu)
        U_bwd = torch.roll(U[mu], shifts=1, dims=d).conj().transpose(-1, -2)
        psi_bwd = torch.roll(psi, shifts=1, dims=d)
        if mu == 3:
            psi_bwd = psi_bwd.clone()
            psi_bwd[0] = -psi_bwd[0]
        hop_b = torch.einsum("...ab,...sb->...sa", U_bwd, psi_bwd)
        hop_b = torch.einsum("st,...tc->...sc", I4 + G[mu], hop_b)
        out = out - kappa * (hop_f + hop_b)
    return out


class _WilsonDslash(torch.autograd.Function):
    @staticmethod
    def forward(ctx, U, psi, kappa, dagger):
        ctx.save_for_backward(U)
        ctx.kappa = kappa
        ctx.dagger = dagger
        return _wilson.dslash(U.contiguous(), psi.contiguous(), kappa, dagger)

    @staticmethod
    def backward(ctx, grad_out):
        U, = ctx.saved_tensors
        # D^dag is the adjoint; gradients w.r.t. U are not needed by the solvers
        grad_psi = _wilson.dslash(U.contiguous(), grad_out.contiguous(), ctx.kappa, not ctx.dagger)
        return None, grad_psi, None, None


def dslash(U: torch.Tensor, psi: torch.Tensor, kappa: float, dagger: bool = False) -> torch.Tensor:
    if _wilson is not None and psi.is_cuda:
        return _WilsonDslash.apply(U, psi, kappa, dagger)
    if dagger:
        g5 = _G[0] @ _G[1] @ _G[2] @ _G[3]
        g5 = g5.to(psi.device)
        tmp = torch.einsum("st,...tc->...sc", g5, psi)
        return torch.einsum("st,...tc->...sc", g5, dslash_reference(U, tmp, kappa))
    return dslash_reference(U, psi, kappa)


def normal_op(U, psi, kappa):
    """D^dag D, the Hermitian positive-definite operator inverted by CG."""
    return dslash(U, dslash(U, psi, kappa), kappa, dagger=True)


def conjugate_gradient(U, b, kappa, tol=1e-10, maxiter=2000):
    """Solve D^dag D x = b with CG; returns (x, iterations, final relative residual)."""
    x = torch.zeros_like(b)
    r = b.clone()
    p = r.clone()
    rr = torch.vdot(r.flatten(), r.flatten()).real
    bb = rr.clone()
    for it in range(1, maxiter + 1):
        Ap = normal_op(U, p, kappa)
        alpha = rr / torch.vdot(p.flatten(), Ap.flatten()).real
        x = x + alpha * p
        r = r - alpha * Ap
        rr_new = torch.vdot(r.flatten(), r.flatten()).real
        if torch.sqrt(rr_new / bb) < tol:
            return x, it, float(torch.sqrt(rr_new / bb))
        p = r + (rr_new / rr) * p
        rr = rr_new
    return x, maxiter, float(torch.sqrt(rr / bb))
