#!/usr/bin/env python
"""Integrate a multi-study single-cell atlas with scVI (+ optional scANVI refinement).

Typical usage on a single-GPU workstation::

    CUDA_VISIBLE_DEVICES=0 python scripts/train_scvi_atlas.py \
        --adata data/hlca_core_raw.h5ad --batch-key dataset --labels-key ann_level_3 \
        --n-latent 30 --max-epochs 400 --out results/hlca_scvi

The script writes the trained model(s), the latent representation (``X_scVI`` /
``X_scANVI``), a UMAP and a small JSON with timing / GPU memory statistics.
"""
import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path

import anndata as ad
import numpy as np
import pandas as pd
import scanpy as sc
import scvi
import torch

logger = logging.getLogger("train_scvi_atlas")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--adata", required=True, help="raw-count AnnData (.h5ad)")
    p.add_argument("--layer", default=None, help="layer holding raw counts (default: X)")
    p.add_argument("--batch-key", default="batch")
    p.add_argument("--labels-key", default=None, help="cell-type column; enables scANVI")
    p.add_argument("--unlabeled-category", default="Unknown")
    p.add_argument("--categorical-covariates", nargs="*", default=[])
    p.add_argument("--continuous-covariates", nargs="*", default=[])
    p.add_argument("--n-top-genes", type=int, default=3000)
    p.add_argument("--n-latent", type=int, default=30)
    p.add_argument("--n-layers", type=int, default=2)
    p.add_argument("--n-hidden", type=int, default=128)
    p.add_argument("--gene-likelihood", default="nb", choices=["nb", "zinb", "poisson"])
    p.add_argument("--max-epochs", type=int, default=None)
    p.add_argument("--scanvi-epochs", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--early-stopping", action="store_true")
    p.add_argument("--accelerator", default="gpu", help="lightning accelerator (gpu, cpu, auto)")
    p.add_argument("--devices", default=1)
    p.add_argument("--gpu", type=int, default=None, help="pin the run to one GPU index")
    p.add_argument("--num-workers", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True)
    return p.parse_args(argv)


def setup_environment(args):
    if args.gpu is not None:
        # must happen before CUDA is initialised
        os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu)
    scvi.settings.seed = args.seed
    scvi.settings.dl_num_workers = args.num_workers
    scvi.settings.dl_pin_memory_gpu_training = True
    scvi.settings.batch_size = args.batch_size
    # Tensor cores on A100/H100: trade a bit of fp32 precision for speed
    torch.set_float32_matmul_precision("high")
    sc.settings.verbosity = 2

    if not torch.cuda.is_available():
        logger.warning("No CUDA device visible - training will be very slow on CPU")
        return "cpu"
    logger.info("Using GPU: %s", torch.cuda.get_device_name(0))
    return args.accelerator


def load_and_select_hvg(args):
    adata = ad.read_h5ad(args.adata)
    logger.info("Loaded %d cells x %d genes", adata.n_obs, adata.n_vars)
    if args.layer is not None:
        adata.X = adata.layers[args.layer].copy()
    adata.layers["counts"] = adata.X.copy()

    sc.pp.filter_genes(adata, min_cells=10)
    sc.pp.filter_cells(adata, min_genes=200)

    sc.pp.highly_variable_genes(
        adata,
        n_top_genes=args.n_top_genes,
        flavor="seurat_v3",
        layer="counts",
        batch_key=args.batch_key,
        subset=True,
    )
    logger.info("After HVG selection: %d genes", adata.n_vars)
    return adata


def train_scvi(adata, args, accelerator):
    scvi.model.SCVI.setup_anndata(
        adata,
        layer="counts",
        batch_key=args.batch_key,
        categorical_covariate_keys=args.categorical_covariates or None,
        continuous_covariate_keys=args.continuous_covariates or None,
    )
    model = scvi.model.SCVI(
        adata,
        n_latent=args.n_latent,
        n_layers=args.n_layers,
        n_hidden=args.n_hidden,
        gene_likelihood=args.gene_likelihood,
        dispersion="gene-batch",
        encode_covariates=True,
        deeply_inject_covariates=False,
        use_layer_norm="both",
        use_batch_norm="none",
    )
    logger.info(model)

    t0 = time.time()
    model.train(
        max_epochs=args.max_epochs,
        accelerator=accelerator,
        devices=args.devices,
        batch_size=args.batch_size,
        early_stopping=args.early_stopping,
        plan_kwargs={"lr": 1e-3, "n_epochs_kl_warmup": 20},
    )
    elapsed = time.time() - t0
    logger.info("scVI training finished in %.1f min", elapsed / 60)
    return model, elapsed


def train_scanvi(scvi_model, adata, args, accelerator):
    scanvi_model = scvi.model.SCANVI.from_scvi_model(
        scvi_model,
        labels_key=args.labels_key,
        unlabeled_category=args.unlabeled_category,
    )
    t0 = time.time()
    scanvi_model.train(
        max_epochs=args.scanvi_epochs,
        n_samples_per_label=100,
        accelerator=accelerator,
        devices=args.devices,
        batch_size=args.batch_size,
    )
    return scanvi_model, time.time() - t0


def embed_and_plot(adata, key, out_dir):
    sc.pp.neighbors(adata, use_rep=key, n_neighbors=15)
    sc.tl.umap(adata, min_dist=0.3)
    sc.tl.leiden(adata, key_added=f"leiden_{key}", resolution=1.0)
    fig = sc.pl.umap(adata, color=[f"leiden_{key}"], return_fig=True, show=False)
    fig.savefig(out_dir / f"umap_{key}.png", dpi=150, bbox_inches="tight")


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)

    accelerator = setup_environment(args)
    torch.cuda.reset_peak_memory_stats()

    adata = load_and_select_hvg(args)
    model, t_scvi = train_scvi(adata, args, accelerator)
    model.save(out_dir / "scvi_model", overwrite=True)
    adata.obsm["X_scVI"] = model.get_latent_representation()

    stats = {
        "n_obs": int(adata.n_obs),
        "n_vars": int(adata.n_vars),
        "scvi_minutes": t_scvi / 60,
        "scvi_epochs": len(model.history["elbo_train"]),
        "final_elbo_train": float(model.history["elbo_train"].iloc[-1, 0]),
    }

    if args.labels_key is not None:
        scanvi_model, t_scanvi = train_scanvi(model, adata, args, accelerator)
        scanvi_model.save(out_dir / "scanvi_model", overwrite=True)
        adata.obsm["X_scANVI"] = scanvi_model.get_latent_representation()
        adata.obs["scanvi_pred"] = scanvi_model.predict()
        stats["scanvi_minutes"] = t_scanvi / 60
        embed_and_plot(adata, "X_scANVI", out_dir)
    else:
        embed_and_plot(adata, "X_scVI", out_dir)

    stats["peak_gpu_mem_gb"] = torch.cuda.max_memory_allocated() / 1024**3
    with open(out_dir / "train_stats.json", "w") as fh:
        json.dump(stats, fh, indent=2)

    # drop the counts layer before writing to keep the file small
    del adata.layers["counts"]
    adata.write_h5ad(out_dir / "adata_integrated.h5ad", compression="gzip")
    logger.info("done: %s", json.dumps(stats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
