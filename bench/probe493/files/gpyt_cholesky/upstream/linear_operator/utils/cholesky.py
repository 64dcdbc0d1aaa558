#!/usr/bin/env python3
from __future__ import annotations

import warnings
from typing import Optional

import torch
from torch import Tensor

from .. import settings
from .errors import NanError, NotPSDError
from .warnings import NumericalWarning


def _psd_safe_cholesky(
    A: Tensor, out: Optional[Tensor] = None, jitter: Optional[float] = None, max_tries: Optional[int] = None
) -> Tensor:
    # Maybe log
    if settings.verbose_linalg.on():
        settings.verbose_linalg.logger.debug(f"Running Cholesky on a matrix of size {A.shape}.")

    if out is not None:
        out = (out, torch.empty(A.shape[:-2], dtype=torch.int32, device=out.device))

    L, info = torch.linalg.cholesky_ex(A, out=out)
    if not torch.any(info):
        return L

    isnan = torch.isnan(A)
    if isnan.any():
        raise NanError(f"cholesky_cpu: {isnan.sum().item()} of {A.numel()} elements of the {A.shape} tensor are NaN.")

    if jitter is None:
        jitter = settings.cholesky_jitter.value(A.dtype)
    if max_tries is None:
        max_tries = settings.cholesky_max_tries.value()
    Aprime = A.clone()
    jitter_prev = 0
    for i in range(max_tries):
        jitter_new = jitter * (10**i)
        # add jitter only where needed
        diag_add = ((info > 0) * (jitter_new - jitter_prev)).unsqueeze(-1).expand(*Aprime.shape[:-1])
        Aprime.diagonal(dim1=-1, dim2=-2).add_(diag_add)
        jitter_prev = jitter_new
        warnings.warn(
            f"A not p.d., added jitter of {jitter_new:.1e} to the diagonal",
            NumericalWarning,
        )
        L, info = torch.linalg.cholesky_ex(Aprime, out=out)
        if not torch.any(info):
            return L
    raise NotPSDError(f"Matrix not positive definite after repeatedly adding jitter up to {jitter_new:.1e}.")


def psd_safe_cholesky(
    A: Tensor,
    upper: bool = False,
    out: Optional[Tensor] = None,
    jitter: Optional[float] = None,
    max_tries: Optional[int] = None,
) -> Tensor:
    """Compute the Cholesky decomposition of A. If A is only p.s.d, add a small jitter to the diagonal.

    Note: the default jitter depends on the dtype (1e-6 for float32, 1e-8 for float64), which is one
    of the reasons GPyTorch and BoTorch strongly recommend double precision, on CPU and GPU alike.

    :param A: The tensor to compute the Cholesky decomposition of
    :param upper: See torch.cholesky
    :param out: See torch.cholesky
    :param jitter: The jitter to add to the diagonal of A in case A is only p.s.d. If omitted,
        uses settings.cholesky_jitter.value()
    :param max_tries: Number of attempts (with successively increasing jitter) to make before raising an error.
    """
    L = _psd_safe_cholesky(A, out=out, jitter=jitter, max_tries=max_tries)
    if upper:
        if out is not None:
            out = out.mT
        else:
            L = L.mT
    return L


def _batched_solve_triangular(L: Tensor, rhs: Tensor, upper: bool = False) -> Tensor:
    """Thin wrapper around torch.linalg.solve_triangular that tolerates empty batches."""
    if rhs.numel() == 0:
        return rhs.new_empty(*rhs.shape)
    return torch.linalg.solve_triangular(L, rhs, upper=upper)


def cholesky_inverse_quad(L: Tensor, rhs: Tensor) -> Tensor:
    """Computes rhs^T (L L^T)^{-1} rhs for a lower-triangular Cholesky factor L."""
    half = _batched_solve_triangular(L, rhs, upper=False)
    return half.pow(2).sum(dim=-2)


def cholesky_logdet(L: Tensor) -> Tensor:
    """log|A| from its Cholesky factor: 2 * sum(log(diag(L)))."""
    return 2 * L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
