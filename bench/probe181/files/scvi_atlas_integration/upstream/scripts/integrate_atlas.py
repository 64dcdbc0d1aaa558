#!/usr/bin/env python
"""Integrate a multi-batch scRNA-seq atlas with scVI, label-transfer with scANVI, and
compute neighbours/UMAP/Leiden on the latent space.

    python scripts/integrate_atlas.py --h5ad data/lung_atlas.h5ad --batch-key donor \
        --label-key cell_type --out results/lung

Uses the GPU for scvi-tools training when one is available and rapids-singlecell for the
kNN graph / UMAP / Leiden if it is installed (otherwise falls back to scanpy on the CPU).
"""
import argparse
import logging
import os
import time

import anndata as ad
import numpy as np
import pandas as pd
import scanpy as sc
import scvi
import torch
from packaging.version import Version

try:
    import rapids_singlecell as rsc

    HAS_RAPIDS = True
except ImportError:
    HAS_RAPIDS = False

logger = logging.getLogger("integrate_atlas")
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

SCVI_LT_1 = Version(scvi.__version__) < Version("1.0.0")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--h5ad", required=True)
    p.add_argument("--batch-key", default="batch")
    p.add_argument("--label-key", default=None, help="obs column with (partial) cell type labels for scANVI")
    p.add_argument("--unlabeled-category", default="Unknown")
    p.add_argument("--n-hvg", type=int, default=4000)
    p.add_argument("--n-latent", type=int, default=30)
    p.add_argument("--n-layers", type=int, default=2)
    p.add_argument("--max-epochs", type=int, default=None)
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--resume", default=None, help="directory of a saved SCVI model")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True)
    return p.parse_args()


def _accel_kwargs(for_load=False):
    """Keyword arguments selecting the accelerator, for old (<1.0) and new scvi-tools."""
    gpu = torch.cuda.is_available()
    if SCVI_LT_1:
        return {"use_gpu": gpu}
    if for_load:
        return {"accelerator": "gpu" if gpu else "cpu", "device": "auto"}
    return {"accelerator": "gpu" if gpu else "cpu", "devices": 1}


def preprocess(adata, batch_key, n_hvg):
    adata.layers["counts"] = adata.X.copy()
    sc.pp.normalize_total(adata, target_sum=1e4)
    sc.pp.log1p(adata)
    adata.raw = adata
    sc.pp.highly_variable_genes(
        adata,
        flavor="seurat_v3",
        n_top_genes=n_hvg,
        layer="counts",
        batch_key=batch_key,
        subset=True,
    )
    return adata


def train_scvi(adata, args):
    scvi.model.SCVI.setup_anndata(adata, layer="counts", batch_key=args.batch_key)
    if args.resume is not None:
        logger.info("loading SCVI model from %s", args.resume)
        return scvi.model.SCVI.load(args.resume, adata=adata, **_accel_kwargs(for_load=True))

    model = scvi.model.SCVI(
        adata,
        n_layers=args.n_layers,
        n_latent=args.n_latent,
        gene_likelihood="nb",
        dropout_rate=0.1,
    )
    t0 = time.time()
    model.train(
        max_epochs=args.max_epochs,
        batch_size=args.batch_size,
        early_stopping=True,
        plan_kwargs={"lr": 1e-3, "reduce_lr_on_plateau": True},
        **_accel_kwargs(),
    )
    logger.info("SCVI trained in %.1f min", (time.time() - t0) / 60)
    return model


def train_scanvi(scvi_model, adata, args):
    scanvi = scvi.model.SCANVI.from_scvi_model(
        scvi_model,
        adata=adata,
        labels_key=args.label_key,
        unlabeled_category=args.unlabeled_category,
    )
    scanvi.train(max_epochs=20, n_samples_per_label=100, batch_size=args.batch_size, **_accel_kwargs())
    return scanvi


def neighbours_umap_leiden(adata, use_rep):
    # rapids-singlecell runs on cupy/cuML; only worth it when a CUDA GPU is actually there
    if HAS_RAPIDS and torch.cuda.is_available():
        logger.info("using rapids-singlecell on the GPU")
        rsc.pp.neighbors(adata, use_rep=use_rep, n_neighbors=15)
        rsc.tl.umap(adata, min_dist=0.3)
        rsc.tl.leiden(adata, resolution=1.0)
    else:
        sc.pp.neighbors(adata, use_rep=use_rep, n_neighbors=15)
        sc.tl.umap(adata, min_dist=0.3)
        sc.tl.leiden(adata, resolution=1.0)


def main():
    args = parse_args()
    scvi.settings.seed = args.seed
    scvi.settings.dl_num_workers = 4
    # faster matmuls for the encoder/decoder MLPs on Ampere GPUs
    torch.set_float32_matmul_precision("high")
    os.makedirs(args.out, exist_ok=True)

    adata = ad.read_h5ad(args.h5ad)
    logger.info("loaded %d cells x %d genes", adata.n_obs, adata.n_vars)
    adata = preprocess(adata, args.batch_key, args.n_hvg)

    model = train_scvi(adata, args)
    model.save(os.path.join(args.out, "scvi_model"), overwrite=True)
    adata.obsm["X_scVI"] = model.get_latent_representation()

    history = model.history["elbo_train"]
    history.to_csv(os.path.join(args.out, "scvi_elbo_train.csv"))

    if args.label_key is not None:
        scanvi = train_scanvi(model, adata, args)
        adata.obsm["X_scANVI"] = scanvi.get_latent_representation()
        adata.obs["scanvi_pred"] = scanvi.predict()
        scanvi.save(os.path.join(args.out, "scanvi_model"), overwrite=True)
        labelled = adata.obs[args.label_key] != args.unlabeled_category
        acc = (adata.obs.loc[labelled, "scanvi_pred"] == adata.obs.loc[labelled, args.label_key]).mean()
        logger.info("scANVI accuracy on labelled cells: %.3f", acc)
        use_rep = "X_scANVI"
    else:
        use_rep = "X_scVI"

    neighbours_umap_leiden(adata, use_rep)

    # denoised expression for marker plots, batched to keep GPU memory bounded
    denoised = model.get_normalized_expression(library_size=1e4, batch_size=2048, return_numpy=True)
    adata.layers["scvi_normalized"] = denoised

    sc.pl.umap(adata, color=[args.batch_key, "leiden"], show=False, save="_integrated.png")
    adata.write_h5ad(os.path.join(args.out, "integrated.h5ad"), compression="gzip")
    logger.info("wrote %s", os.path.join(args.out, "integrated.h5ad"))


if __name__ == "__main__":
    main()
