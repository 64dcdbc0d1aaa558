"""Out-of-core (multi-GPU) Cholesky decomposition.

The kernel matrix K_MM of the Nystrom centres may not fit on one GPU.  It is kept in (pinned) host
memory, split into tiles, and the blocked right-looking Cholesky algorithm is run with the
diagonal-tile factorisation (potrf) on the GPU through cuSOLVER, the panel solves (trsm) and
trailing updates (syrk/gemm) through cuBLAS, and host<->device copies on a separate stream so
that they overlap with compute.
"""
import math
import threading
from dataclasses import dataclass
from typing import List, Optional

import numpy as np
import torch

from falkon.c_ext import cublas_gemm, cublas_syrk, cublas_trsm, cusolver_potrf, cusolver_potrf_buffer_size
from falkon.options import CholeskyOptions, FalkonOptions
from falkon.utils import devices
from falkon.utils.helpers import sizeof_dtype
from falkon.utils.tensor_helpers import create_fortran, is_f_contig

__all__ = ("gpu_cholesky",)


@dataclass(frozen=True)
class BlockAlloc:
    start: int
    end: int
    length: int


def _extract_flat(flat_tn, size, other, offset):
    struct_tn = torch.as_strided(flat_tn, size=size, stride=(1, size[0]), storage_offset=offset)
    offset += np.prod(size)
    struct_tn.copy_(other)
    return struct_tn, offset


def _rounded_block_allocs(n: int, block_size: int) -> List[BlockAlloc]:
    allocs = []
    for start in range(0, n, block_size):
        end = min(n, start + block_size)
        allocs.append(BlockAlloc(start=start, end=end, length=end - start))
    return allocs


def _max_block_size(device_id: int, n: int, dtype: torch.dtype, slack: float = 0.9) -> int:
    """Largest tile such that 4 tiles + the cuSOLVER workspace fit in free device memory."""
    free, _ = torch.cuda.mem_get_info(device_id)
    avail = free * slack
    ws = cusolver_potrf_buffer_size(n, dtype == torch.float64)
    bs = int(math.sqrt(max(avail - ws * sizeof_dtype(dtype), 0) / (4 * sizeof_dtype(dtype))))
    return max(64, min(n, (bs // 64) * 64))


def _parallel_potrf_runner(A: torch.Tensor, opt: CholeskyOptions, block_allocs, device_id: int,
                           barrier: threading.Barrier, errors: list):
    """Worker for one GPU: owns the block-columns j with j % num_gpus == device_id."""
    try:
        num_gpus = barrier.parties
        tc_device = torch.device("cuda:%d" % device_id)
        s_compute = torch.cuda.Stream(device=tc_device)
        s_copy = torch.cuda.Stream(device=tc_device)
        max_len = max(b.length for b in block_allocs)
        with torch.cuda.device(tc_device), torch.cuda.stream(s_compute):
            # Preallocate two tiles so copy of tile k+1 overlaps with compute on tile k
            tile_a = create_fortran((max_len, max_len), A.dtype, tc_device)
            tile_b = create_fortran((max_len, max_len), A.dtype, tc_device)
            ws_size = cusolver_potrf_buffer_size(max_len, A.dtype == torch.float64)
            workspace = torch.empty(ws_size, dtype=A.dtype, device=tc_device)
            info = torch.zeros(1, dtype=torch.int32, device=tc_device)
            copy_done = torch.cuda.Event()

            for k, bk in enumerate(block_allocs):
                owner = k % num_gpus
                if owner == device_id:
                    diag = tile_a[:bk.length, :bk.length]
                    diag.copy_(A[bk.start:bk.end, bk.start:bk.end], non_blocking=True)
                    cusolver_potrf(diag, workspace, info, upper=False)
                    A[bk.start:bk.end, bk.start:bk.end].copy_(diag, non_blocking=True)
                    s_compute.synchronize()
                    if info.item() != 0:
                        raise RuntimeError(f"potrf failed on tile {k}: matrix not positive definite "
                                           f"(info={info.item()})")
                barrier.wait()

                # panel solve for the tiles below the diagonal that this GPU owns
                diag = tile_a[:bk.length, :bk.length]
                diag.copy_(A[bk.start:bk.end, bk.start:bk.end], non_blocking=True)
                for i in range(k + 1, len(block_allocs)):
                    if i % num_gpus != device_id:
                        continue
                    bi = block_allocs[i]
                    with torch.cuda.stream(s_copy):
                        panel = tile_b[:bi.length, :bk.length]
                        panel.copy_(A[bi.start:bi.end, bk.start:bk.end], non_blocking=True)
                        copy_done.record(s_copy)
                    s_compute.wait_event(copy_done)
                    cublas_trsm(diag, panel, alpha=1.0, left=False, upper=False, transpose=True,
                                unitriangular=False)
                    # trailing update of the diagonal tile of row i
                    trailing = A[bi.start:bi.end, bi.start:bi.end].to(tc_device, non_blocking=True)
                    cublas_syrk(panel, trailing, alpha=-1.0, beta=1.0, upper=False, transpose=False)
                    A[bi.start:bi.end, bi.start:bi.end].copy_(trailing, non_blocking=True)
                    for j in range(k + 1, i):
                        bj = block_allocs[j]
                        other = A[bj.start:bj.end, bk.start:bk.end].to(tc_device, non_blocking=True)
                        off = A[bi.start:bi.end, bj.start:bj.end].to(tc_device, non_blocking=True)
                        cublas_gemm(panel, other, off, alpha=-1.0, beta=1.0, transa=False, transb=True)
                        A[bi.start:bi.end, bj.start:bj.end].copy_(off, non_blocking=True)
                    A[bi.start:bi.end, bk.start:bk.end].copy_(panel, non_blocking=True)
                s_compute.synchronize()
                barrier.wait()
    except Exception as e:  # pragma: no cover - surfaced by the main thread
        errors.append(e)
        barrier.abort()


def gpu_cholesky(A: torch.Tensor, upper: bool, clean: bool, overwrite: bool, opt: FalkonOptions) -> torch.Tensor:
    """Cholesky decomposition of a (host) matrix using one or more GPUs.

    Parameters
    -----------
    A : torch.Tensor
        2D positive-definite matrix of size (n x n) that will be factorized as
        ``A = U.T @ U`` (if `upper` is True) or ``A = L @ L.T`` if `upper` is False.
    upper : bool
        Whether the triangle which should be factorized is the upper or lower of `A`.
    clean : bool
        Whether the "other" triangle of the output matrix (the one that
        does not contain the factorization) will be filled with zeros or not.
    overwrite : bool
        Whether to overwrite matrix A or to output the result in a new buffer.
    opt : FalkonOptions
        Options forwarded for block calculation, and other knobs in the out-of-core
        parallel POTRF implementation.
    """
    if not opt.use_cpu and not torch.cuda.is_available():
        raise ValueError("Cannot run out-of-core Cholesky without CUDA. Set use_cpu=True.")
    if A.is_cuda:
        raise ValueError("gpu_cholesky expects a matrix in host memory; use torch.linalg.cholesky "
                         "for matrices that already live on the GPU.")
    if not is_f_contig(A):
        A = A.T.contiguous().T if overwrite else create_fortran(A.shape, A.dtype, "cpu").copy_(A)
    elif not overwrite:
        A = create_fortran(A.shape, A.dtype, "cpu").copy_(A)
    if not A.is_pinned():
        A = A.pin_memory()

    gpu_info = [v for k, v in devices.get_device_info(opt).items() if k >= 0]
    num_gpus = len(gpu_info)
    if num_gpus < 1:
        raise ValueError("Parallel POTRF requires at least one GPU.")

    n = A.shape[0]
    block_size = min(_max_block_size(g.Id, n, A.dtype) for g in gpu_info)
    if opt.chol_tile_size is not None:
        block_size = min(block_size, opt.chol_tile_size)
    block_allocs = _rounded_block_allocs(n, block_size)

    barrier = threading.Barrier(num_gpus)
    errors: list = []
    threads = [threading.Thread(target=_parallel_potrf_runner,
                                args=(A, opt, block_allocs, g.Id, barrier, errors))
               for g in gpu_info]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    for g in gpu_info:
        torch.cuda.synchronize(g.Id)

    if upper:
        A = A.T
    if clean:
        A = torch.tril(A) if not upper else torch.triu(A)
    return A


def can_do_ooc_cholesky(n: int, dtype: torch.dtype, opt: FalkonOptions) -> bool:
    """Whether the fitted K_MM is too big for a single-device in-core factorisation."""
    if opt.use_cpu or not torch.cuda.is_available():
        return False
    free = min(torch.cuda.mem_get_info(i)[0] for i in range(torch.cuda.device_count()))
    return n * n * sizeof_dtype(dtype) > 0.8 * free
