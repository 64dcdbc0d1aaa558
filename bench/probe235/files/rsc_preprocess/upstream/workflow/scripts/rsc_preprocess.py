#!/usr/bin/env python
"""GPU preprocessing of a large scRNA-seq atlas with rapids-singlecell.

Mirrors the scanpy "standard" workflow (QC -> normalisation -> HVG -> regress_out ->
scale -> PCA -> harmony -> kNN -> UMAP -> Leiden -> marker genes) but runs every
step on the GPU through cupy / cuML / cuGraph. On an A100 this takes ~3 min for
1M cells compared to >1 h with scanpy on 32 CPU cores.

Called from the Snakemake rule ``preprocess_gpu``; ``snakemake.input`` etc. are
used when available, otherwise argparse.
"""
import argparse
import logging
import time
from pathlib import Path

import anndata as ad
import cupy as cp
import numpy as np
import pandas as pd
import rapids_singlecell as rsc
import rmm
import scanpy as sc
from rmm.allocators.cupy import rmm_cupy_allocator

log = logging.getLogger("rsc_preprocess")


class Timer:
    """Tiny context manager that logs wall time of a block (GPU-synchronised)."""

    def __init__(self, name, timings):
        self.name = name
        self.timings = timings

    def __enter__(self):
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        cp.cuda.Device().synchronize()
        dt = time.perf_counter() - self.t0
        self.timings[self.name] = dt
        log.info("%-22s %7.2f s", self.name, dt)


def get_args():
    try:
        smk = snakemake  # noqa: F821  (injected by Snakemake)
        return argparse.Namespace(
            input=smk.input.h5ad,
            output=smk.output.h5ad,
            timings=smk.output.timings,
            batch_key=smk.params.batch_key,
            n_top_genes=smk.params.n_top_genes,
            managed_memory=smk.params.get("managed_memory", False),
        )
    except NameError:
        p = argparse.ArgumentParser()
        p.add_argument("--input", required=True)
        p.add_argument("--output", required=True)
        p.add_argument("--timings", required=True)
        p.add_argument("--batch-key", default="sample")
        p.add_argument("--n-top-genes", type=int, default=5000)
        p.add_argument("--managed-memory", action="store_true",
                       help="oversubscribe GPU memory via CUDA unified memory (slower)")
        return p.parse_args()


def init_gpu_memory(managed: bool):
    # RMM pool allocator: avoids cudaMalloc overhead for the many small arrays
    rmm.reinitialize(
        managed_memory=managed,
        pool_allocator=not managed,
        devices=0,
    )
    cp.cuda.set_allocator(rmm_cupy_allocator)
    free, total = cp.cuda.runtime.memGetInfo()
    log.info("GPU memory: %.1f / %.1f GB free", free / 1e9, total / 1e9)


def qc_and_filter(adata, timings):
    with Timer("qc", timings):
        rsc.pp.flag_gene_family(adata, gene_family_name="MT", gene_family_prefix="MT-")
        rsc.pp.flag_gene_family(adata, gene_family_name="RIBO", gene_family_prefix="RPS")
        rsc.pp.calculate_qc_metrics(adata, qc_vars=["MT", "RIBO"])

    n0 = adata.n_obs
    adata = adata[adata.obs["n_genes_by_counts"] < 5000]
    adata = adata[adata.obs["pct_counts_MT"] < 20]
    log.info("QC kept %d / %d cells", adata.n_obs, n0)

    with Timer("filter_genes", timings):
        rsc.pp.filter_genes(adata, min_count=3)
    return adata.copy()


def normalise_and_hvg(adata, batch_key, n_top_genes, timings):
    adata.layers["counts"] = adata.X.copy()
    with Timer("normalize_log1p", timings):
        rsc.pp.normalize_total(adata, target_sum=1e4)
        rsc.pp.log1p(adata)

    with Timer("hvg", timings):
        rsc.pp.highly_variable_genes(
            adata, n_top_genes=n_top_genes, flavor="seurat_v3", layer="counts", batch_key=batch_key
        )
    adata.raw = adata
    adata = adata[:, adata.var["highly_variable"]].copy()

    with Timer("regress_out", timings):
        rsc.pp.regress_out(adata, keys=["total_counts", "pct_counts_MT"])
    with Timer("scale", timings):
        rsc.pp.scale(adata, max_value=10)
    return adata


def embed_and_cluster(adata, batch_key, timings):
    with Timer("pca", timings):
        rsc.pp.pca(adata, n_comps=100, use_highly_variable=False)

    with Timer("harmony", timings):
        rsc.pp.harmony_integrate(adata, key=batch_key, max_iter_harmony=20)

    with Timer("neighbors", timings):
        rsc.pp.neighbors(adata, n_neighbors=15, n_pcs=50, use_rep="X_pca_harmony")

    with Timer("umap", timings):
        rsc.tl.umap(adata, min_dist=0.3)

    with Timer("leiden", timings):
        rsc.tl.leiden(adata, resolution=1.0, key_added="leiden")

    with Timer("markers", timings):
        rsc.tl.rank_genes_groups_logreg(adata, groupby="leiden", use_raw=False)
    return adata


def main():
    args = get_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    timings = {}

    init_gpu_memory(args.managed_memory)

    with Timer("read", timings):
        adata = ad.read_h5ad(args.input)
    log.info("loaded %s", adata)

    # move .X (sparse CSR) to the GPU as a cupyx.scipy.sparse matrix
    rsc.get.anndata_to_GPU(adata)

    adata = qc_and_filter(adata, timings)
    adata = normalise_and_hvg(adata, args.batch_key, args.n_top_genes, timings)
    adata = embed_and_cluster(adata, args.batch_key, timings)

    # back to host memory before writing / plotting with scanpy
    rsc.get.anndata_to_CPU(adata)
    del adata.layers["counts"]

    sc.pl.umap(adata, color=["leiden", args.batch_key], show=False, save="_rsc.png")

    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    adata.write_h5ad(args.output, compression="gzip")
    pd.Series(timings, name="seconds").to_csv(args.timings)
    log.info("total GPU time %.1f s", sum(timings.values()))


if __name__ == "__main__":
    main()
