# Copyright (c) 2023, NVIDIA CORPORATION & AFFILIATES.  All rights reserved.
#
# NVIDIA CORPORATION & AFFILIATES and its licensors retain all intellectual property
# and proprietary rights in and to this software, related documentation
# and any modifications thereto.

"""
Sparse linear solvers for the kernel ridge regression step of NKSR.

The Gram matrix K + lambda*I assembled by ``nksr.ext.build_gram_matrix`` is
symmetric positive definite and very sparse (27-neighbourhood per level), so we
solve it with (block-)Jacobi preconditioned conjugate gradients. Two backends:

* ``torch``: CSR matrix-vector products with ``torch.sparse`` (default)
* ``cupy``: cuSPARSE through CuPy, slightly faster for very large systems
"""

import time
import logging
from dataclasses import dataclass
from typing import Optional

import torch

logger = logging.getLogger(__name__)

try:
    import cupy as cp
    import cupyx.scipy.sparse as cpsp
    import cupyx.scipy.sparse.linalg as cpla
    _HAS_CUPY = True
except ImportError:
    _HAS_CUPY = False


@dataclass
class SolverConfig:
    backend: str = "torch"
    max_iter: int = 2000
    tol: float = 1e-5
    precond: str = "jacobi"
    verbose: bool = False


def csr_from_triplets(indptr: torch.Tensor, indices: torch.Tensor, values: torch.Tensor, n: int):
    """Wrap raw CSR buffers returned by the kernels into a torch sparse matrix."""
    return torch.sparse_csr_tensor(indptr.long(), indices.long(), values, size=(n, n))


def csr_from_coo(rows: torch.Tensor, cols: torch.Tensor, values: torch.Tensor, n: int):
    """Build the system matrix from COO triplets (used by the multi-level assembly)."""
    mat = torch.sparse_coo_tensor(torch.stack([rows, cols], 0), values, (n, n)).coalesce()
    return mat.to_sparse_csr()


def _diag_of_csr(A: torch.Tensor) -> torch.Tensor:
    indptr = A.crow_indices()
    indices = A.col_indices()
    values = A.values()
    n = A.shape[0]
    row_ids = torch.repeat_interleave(torch.arange(n, device=values.device), indptr[1:] - indptr[:-1])
    is_diag = row_ids == indices
    diag = torch.zeros(n, dtype=values.dtype, device=values.device)
    diag.index_add_(0, row_ids[is_diag], values[is_diag])
    return diag


def _matvec(A: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return torch.sparse.mm(A, x.unsqueeze(-1)).squeeze(-1)


def pcg_torch(A: torch.Tensor, b: torch.Tensor, x0: Optional[torch.Tensor] = None, cfg: SolverConfig = SolverConfig()):
    """Jacobi-preconditioned conjugate gradient on a CSR matrix."""
    x = torch.zeros_like(b) if x0 is None else x0.clone()
    if cfg.precond == "jacobi":
        m_inv = 1.0 / _diag_of_csr(A).clamp_min(1e-12)
    else:
        m_inv = torch.ones_like(b)

    r = b - _matvec(A, x)
    z = m_inv * r
    p = z.clone()
    rz_old = torch.dot(r, z)
    b_norm = torch.linalg.norm(b).clamp_min(1e-20)

    for it in range(cfg.max_iter):
        Ap = _matvec(A, p)
        alpha = rz_old / torch.dot(p, Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        res = torch.linalg.norm(r) / b_norm
        if res.item() < cfg.tol:
            if cfg.verbose:
                logger.info(f"PCG converged in {it + 1} iterations, rel. residual {res.item():.2e}")
            break
        z = m_inv * r
        rz_new = torch.dot(r, z)
        p = z + (rz_new / rz_old) * p
        rz_old = rz_new
    else:
        logger.warning(f"PCG did not converge in {cfg.max_iter} iterations (res={res.item():.2e})")
    return x


def pcg_cupy(A: torch.Tensor, b: torch.Tensor, x0: Optional[torch.Tensor] = None, cfg: SolverConfig = SolverConfig()):
    """Same solve through cuSPARSE; tensors are shared with CuPy via DLPack."""
    indptr = cp.from_dlpack(A.crow_indices().int())
    indices = cp.from_dlpack(A.col_indices().int())
    values = cp.from_dlpack(A.values())
    A_cp = cpsp.csr_matrix((values, indices, indptr), shape=A.shape)
    b_cp = cp.from_dlpack(b)
    x0_cp = cp.from_dlpack(x0) if x0 is not None else None
    diag = A_cp.diagonal()
    M = cpsp.diags(1.0 / cp.maximum(diag, 1e-12))
    x_cp, info = cpla.cg(A_cp, b_cp, x0=x0_cp, tol=cfg.tol, maxiter=cfg.max_iter, M=M)
    if info != 0:
        logger.warning(f"cuSPARSE CG returned info={info}")
    return torch.from_dlpack(x_cp)


def solve(A: torch.Tensor, b: torch.Tensor, x0: Optional[torch.Tensor] = None, cfg: Optional[SolverConfig] = None):
    """Solve A x = b for the kernel coefficients. A must be a torch CSR tensor on b's device."""
    cfg = cfg or SolverConfig()
    start = time.perf_counter()
    if cfg.backend == "cupy" and _HAS_CUPY and b.is_cuda:
        x = pcg_cupy(A, b, x0, cfg)
    else:
        x = pcg_torch(A, b, x0, cfg)
    if cfg.verbose:
        torch.cuda.synchronize()
        logger.info(f"Linear solve ({A.shape[0]} unknowns, nnz={A.values().numel()}) "
                    f"took {time.perf_counter() - start:.3f}s")
    return x


def solve_multilevel(levels, rhs_list, cfg: Optional[SolverConfig] = None):
    """Solve the per-level systems coarse-to-fine, warm-starting from the
    prolongated coarse solution (levels[i] = (A_i, P_i) with P_i the
    prolongation from level i+1 to level i, both CSR)."""
    cfg = cfg or SolverConfig()
    solutions = [None] * len(levels)
    x_coarse = None
    for lvl in reversed(range(len(levels))):
        A, P = levels[lvl]
        x0 = None if x_coarse is None or P is None else _matvec(P, x_coarse)
        solutions[lvl] = solve(A, rhs_list[lvl], x0=x0, cfg=cfg)
        x_coarse = solutions[lvl]
    return solutions
