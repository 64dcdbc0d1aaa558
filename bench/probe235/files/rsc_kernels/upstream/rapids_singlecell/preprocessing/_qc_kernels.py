"""Raw CUDA kernels used by ``rsc.pp.calculate_qc_metrics`` and ``rsc.pp.normalize_total``.

The kernels operate directly on the CSR / CSC buffers of a
``cupyx.scipy.sparse`` matrix, one thread per row (cell) or per non-zero.
They are compiled lazily by NVRTC the first time they are launched and
cached by cupy in ``~/.cupy/kernel_cache``.
"""
from __future__ import annotations

import math

import cupy as cp
import numpy as np
from cupyx.scipy import sparse as cpx_sparse

_THREADS_PER_BLOCK = 32

_sparse_qc_csr_src = r"""
extern "C" __global__
void sparse_qc_csr(const int *indptr, const int *index, const {0} *data,
                   {0} *sums_cells, {0} *sums_genes,
                   int *cell_ex, int *gene_ex,
                   int n_cells) {
    int cell = blockDim.x * blockIdx.x + threadIdx.x;
    if (cell >= n_cells) {
        return;
    }
    int start_idx = indptr[cell];
    int stop_idx = indptr[cell + 1];

    for (int gene = start_idx; gene < stop_idx; gene++) {
        {0} value = data[gene];
        int gene_number = index[gene];
        sums_cells[cell] += value;
        atomicAdd(&sums_genes[gene_number], value);
        cell_ex[cell] += 1;
        atomicAdd(&gene_ex[gene_number], 1);
    }
}
"""

_sparse_qc_csr_sub_src = r"""
extern "C" __global__
void sparse_qc_csr_sub(const int *indptr, const int *index, const {0} *data,
                       {0} *sums_cells, const bool *mask,
                       int n_cells) {
    int cell = blockDim.x * blockIdx.x + threadIdx.x;
    if (cell >= n_cells) {
        return;
    }
    int start_idx = indptr[cell];
    int stop_idx = indptr[cell + 1];

    for (int gene = start_idx; gene < stop_idx; gene++) {
        int gene_number = index[gene];
        if (mask[gene_number]) {
            sums_cells[cell] += data[gene];
        }
    }
}
"""

_mul_csr_src = r"""
extern "C" __global__
void mul_csr(const int *indptr, {0} *data,
             int nrows, int tsum) {
    int row = blockDim.x * blockIdx.x + threadIdx.x;
    if (row >= nrows) {
        return;
    }
    {0} scale = 0.0;
    int start_idx = indptr[row];
    int stop_idx = indptr[row + 1];

    for (int i = start_idx; i < stop_idx; i++) {
        scale += data[i];
    }
    if (scale > 0.0) {
        scale = tsum / scale;
        for (int i = start_idx; i < stop_idx; i++) {
            data[i] *= scale;
        }
    }
}
"""


def _dtype_to_c(dtype) -> str:
    dtype = np.dtype(dtype)
    if dtype == np.float32:
        return "float"
    if dtype == np.float64:
        return "double"
    raise TypeError(f"unsupported dtype {dtype}; only float32/float64 kernels are built")


def _get_sparse_qc_csr(dtype):
    return cp.RawKernel(_sparse_qc_csr_src.replace("{0}", _dtype_to_c(dtype)), "sparse_qc_csr")


def _get_sparse_qc_csr_sub(dtype):
    return cp.RawKernel(_sparse_qc_csr_sub_src.replace("{0}", _dtype_to_c(dtype)), "sparse_qc_csr_sub")


def _get_mul_csr(dtype):
    return cp.RawKernel(_mul_csr_src.replace("{0}", _dtype_to_c(dtype)), "mul_csr")


def _grid(n: int) -> tuple:
    return (math.ceil(n / _THREADS_PER_BLOCK),)


def basic_qc_csr(X: cpx_sparse.csr_matrix):
    """Per-cell and per-gene totals and detection counts in a single pass.

    Returns
    -------
    sums_cells, sums_genes, cell_ex, gene_ex : cupy.ndarray
    """
    if not cpx_sparse.isspmatrix_csr(X):
        X = X.tocsr()
    n_cells, n_genes = X.shape
    sums_cells = cp.zeros(n_cells, dtype=X.dtype)
    sums_genes = cp.zeros(n_genes, dtype=X.dtype)
    cell_ex = cp.zeros(n_cells, dtype=cp.int32)
    gene_ex = cp.zeros(n_genes, dtype=cp.int32)

    qc_kernel = _get_sparse_qc_csr(X.data.dtype)
    qc_kernel(_grid(n_cells), (_THREADS_PER_BLOCK,),
              (X.indptr, X.indices, X.data, sums_cells, sums_genes, cell_ex, gene_ex, n_cells))
    return sums_cells, sums_genes, cell_ex, gene_ex


def qc_subset_csr(X: cpx_sparse.csr_matrix, mask) -> "cp.ndarray":
    """Per-cell totals restricted to the genes in ``mask`` (e.g. mitochondrial genes)."""
    n_cells = X.shape[0]
    sums_cells_sub = cp.zeros(n_cells, dtype=X.dtype)
    sub_kernel = _get_sparse_qc_csr_sub(X.data.dtype)
    sub_kernel(_grid(n_cells), (_THREADS_PER_BLOCK,),
               (X.indptr, X.indices, X.data, sums_cells_sub, mask, n_cells))
    return sums_cells_sub


def normalize_total_csr(X: cpx_sparse.csr_matrix, target_sum: float = 1e4) -> cpx_sparse.csr_matrix:
    """In-place per-cell library-size normalisation of a CSR matrix."""
    n_rows = X.shape[0]
    mul_kernel = _get_mul_csr(X.data.dtype)
    mul_kernel(_grid(n_rows), (_THREADS_PER_BLOCK,),
               (X.indptr, X.data, n_rows, int(target_sum)))
    return X


def calculate_qc_metrics(adata, qc_vars=(), log1p=True):
    """GPU version of ``sc.pp.calculate_qc_metrics`` for CSR count matrices on device."""
    X = adata.X
    if not isinstance(X, cpx_sparse.csr_matrix):
        raise TypeError("call rsc.get.anndata_to_GPU(adata) first; expected cupyx CSR in .X")

    sums_cells, sums_genes, cell_ex, gene_ex = basic_qc_csr(X)
    n_cells = X.shape[0]

    obs_metrics = {"n_genes_by_counts": cell_ex, "total_counts": sums_cells}
    if log1p:
        obs_metrics["log1p_total_counts"] = cp.log1p(sums_cells)
    var_metrics = {
        "n_cells_by_counts": gene_ex,
        "total_counts": sums_genes,
        "mean_counts": sums_genes / n_cells,
        "pct_dropout_by_counts": (1 - gene_ex / n_cells) * 100,
    }

    for qc_var in qc_vars:
        mask = cp.asarray(adata.var[qc_var].to_numpy(), dtype=cp.bool_)
        sums_sub = qc_subset_csr(X, mask)
        obs_metrics[f"total_counts_{qc_var}"] = sums_sub
        obs_metrics[f"pct_counts_{qc_var}"] = sums_sub / sums_cells * 100

    # kernels run on the current stream; make results visible to the host
    cp.cuda.get_current_stream().synchronize()
    for key, val in obs_metrics.items():
        adata.obs[key] = cp.asnumpy(val)
    for key, val in var_metrics.items():
        adata.var[key] = cp.asnumpy(val)
