#!/usr/bin/env python
"""Map a snRNA-seq reference onto a MERFISH / Visium section with Tangram.

Steps
-----
1. pick training genes (top-N markers per cell type from the reference),
2. ``tg.pp_adatas`` to align gene sets,
3. ``tg.map_cells_to_space`` (cells mode, or clusters mode for large references),
4. project cell-type annotations and held-out genes,
5. leave-one-gene-out cross validation on a subset of genes.

GPU strongly recommended: cells mode builds an (n_cells x n_spots) mapping
matrix that is optimised with Adam for ``--num-epochs`` iterations.
"""
import argparse
import json
import logging
import os
import time

import numpy as np
import pandas as pd
import scanpy as sc
import tangram as tg
import torch

logging.basicConfig(level=logging.INFO, format="%(asctime)s [%(levelname)s] %(message)s")
log = logging.getLogger(__name__)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sc", required=True, help="reference AnnData (.h5ad), raw or normalised")
    ap.add_argument("--sp", required=True, help="spatial AnnData (.h5ad)")
    ap.add_argument("--celltype-key", default="cell_subclass")
    ap.add_argument("--mode", choices=["cells", "clusters", "constrained"], default="cells")
    ap.add_argument("--n-markers", type=int, default=100)
    ap.add_argument("--num-epochs", type=int, default=500)
    ap.add_argument("--density-prior", default="rna_count_based")
    ap.add_argument("--gpu", type=int, default=0, help="CUDA device index; -1 for CPU")
    ap.add_argument("--cv", action="store_true", help="run LOOCV (slow)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--outdir", default="tangram_out")
    return ap.parse_args()


def select_device(gpu_index: int) -> str:
    if gpu_index < 0 or not torch.cuda.is_available():
        log.warning("running Tangram on CPU; cells mode will be slow")
        return "cpu"
    n = torch.cuda.device_count()
    if gpu_index >= n:
        raise SystemExit(f"--gpu {gpu_index} requested but only {n} CUDA device(s) visible")
    props = torch.cuda.get_device_properties(gpu_index)
    log.info("using cuda:%d (%s, %.0f GB)", gpu_index, props.name, props.total_memory / 1e9)
    return f"cuda:{gpu_index}"


def estimate_mapping_memory_gb(n_cells: int, n_spots: int) -> float:
    # M (float32) + Adam moments (2x) + gradient + softmax buffer
    return 5 * 4 * n_cells * n_spots / 1e9


def pick_training_genes(ad_sc, key, n_markers):
    sc.tl.rank_genes_groups(ad_sc, groupby=key, use_raw=False, method="wilcoxon")
    markers_df = pd.DataFrame(ad_sc.uns["rank_genes_groups"]["names"]).iloc[0:n_markers, :]
    genes = sorted(set(markers_df.melt().value.values))
    log.info("selected %d training genes", len(genes))
    return genes


def main():
    args = parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed(args.seed)

    device = select_device(args.gpu)

    ad_sc = sc.read_h5ad(args.sc)
    ad_sp = sc.read_h5ad(args.sp)
    log.info("reference: %s\nspatial: %s", ad_sc, ad_sp)

    if "log1p" not in ad_sc.uns:
        sc.pp.normalize_total(ad_sc)
        sc.pp.log1p(ad_sc)

    train_genes = pick_training_genes(ad_sc, args.celltype_key, args.n_markers)
    tg.pp_adatas(ad_sc, ad_sp, genes=train_genes)

    need_gb = estimate_mapping_memory_gb(ad_sc.n_obs, ad_sp.n_obs)
    if device != "cpu" and args.mode == "cells":
        free_gb = torch.cuda.mem_get_info(device)[0] / 1e9
        if need_gb > 0.9 * free_gb:
            log.warning("cells mode needs ~%.1f GB but only %.1f GB free; switching to clusters mode", need_gb, free_gb)
            args.mode = "clusters"

    t0 = time.time()
    if args.mode == "clusters":
        ad_map = tg.map_cells_to_space(
            ad_sc,
            ad_sp,
            mode="clusters",
            cluster_label=args.celltype_key,
            density_prior=args.density_prior,
            num_epochs=args.num_epochs,
            device=device,
        )
    elif args.mode == "constrained":
        ad_map = tg.map_cells_to_space(
            ad_sc,
            ad_sp,
            mode="constrained",
            target_count=ad_sp.obs["cell_count"].sum(),
            density_prior=np.array(ad_sp.obs["cell_count"]) / ad_sp.obs["cell_count"].sum(),
            num_epochs=args.num_epochs,
            lambda_d=1,
            lambda_count=1,
            lambda_f_reg=1,
            device=device,
        )
    else:
        ad_map = tg.map_cells_to_space(
            ad_sc,
            ad_sp,
            mode="cells",
            density_prior=args.density_prior,
            num_epochs=args.num_epochs,
            device=device,
        )
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    t_map = time.time() - t0
    log.info("mapping finished in %.1f s", t_map)

    tg.project_cell_annotations(ad_map, ad_sp, annotation=args.celltype_key)
    ct_pred = ad_sp.obsm["tangram_ct_pred"]
    ct_pred.to_csv(os.path.join(args.outdir, "tangram_ct_pred.csv"))

    ad_ge = tg.project_genes(adata_map=ad_map, adata_sc=ad_sc, cluster_label=args.celltype_key if args.mode == "clusters" else None)
    df_all_genes = tg.compare_spatial_geneexp(ad_ge, ad_sp, ad_sc)
    df_all_genes.to_csv(os.path.join(args.outdir, "gene_scores.csv"))

    summary = {
        "mode": args.mode,
        "device": device,
        "n_training_genes": len(train_genes),
        "mapping_seconds": t_map,
        "train_score_median": float(df_all_genes.loc[df_all_genes.is_training, "score"].median()),
        "test_score_median": float(df_all_genes.loc[~df_all_genes.is_training, "score"].median()),
    }

    if args.cv:
        cv_dict, ad_ge_cv, df_cv = tg.cross_val(
            ad_sc,
            ad_sp,
            device="cuda:0",
            mode="loo",
            num_epochs=args.num_epochs,
            cluster_label=args.celltype_key if args.mode == "clusters" else None,
            return_gene_pred=True,
            verbose=False,
        )
        df_cv.to_csv(os.path.join(args.outdir, "loocv_scores.csv"))
        summary["loocv_avg_test_score"] = float(cv_dict["avg_test_score"])

    # free the mapping matrix before writing large h5ad files
    del ad_map
    torch.cuda.empty_cache()

    ad_ge.write_h5ad(os.path.join(args.outdir, "projected_genes.h5ad"))
    with open(os.path.join(args.outdir, "summary.json"), "w") as fh:
        json.dump(summary, fh, indent=2)
    log.info("summary: %s", summary)


if __name__ == "__main__":
    main()
