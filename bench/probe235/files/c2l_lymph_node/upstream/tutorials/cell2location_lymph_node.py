#!/usr/bin/env python
# coding: utf-8
# Exported from cell2location_short_demo.ipynb (lymph node Visium + scRNA reference).
#
# Requires a GPU: the spatial mapping model is trained for 30k full-data iterations.
# On an A100 this takes ~20 min, on a V100 ~35 min; on CPU it is not practical.

# # Mapping lymph node cell types with cell2location

import gc
import os
import sys

import anndata
import numpy as np
import pandas as pd
import scanpy as sc

data_type = "float32"

# this line forces theano to use the GPU and should go before importing cell2location
# (leftover from cell2location < 0.1 which used pymc3/theano; harmless with the pyro versions)
os.environ["THEANO_FLAGS"] = "device=cuda0,floatX=" + data_type + ",force_device=True"

import cell2location
import matplotlib as mpl
import matplotlib.pyplot as plt
import seaborn as sns
from matplotlib import rcParams

rcParams["pdf.fonttype"] = 42  # enables correct plotting of text for PDFs

import warnings

warnings.filterwarnings("ignore")

results_folder = "./results/lymph_nodes_analysis/"

# create paths and names to results folders for reference regression and cell2location models
ref_run_name = f"{results_folder}/reference_signatures"
run_name = f"{results_folder}/cell2location_map"

# ## Loading Visium and scRNA-seq reference data

adata_vis = sc.datasets.visium_sge(sample_id="V1_Human_Lymph_Node")
adata_vis.obs["sample"] = list(adata_vis.uns["spatial"].keys())[0]

# rename genes to ENSEMBL ID for correct matching between single cell and spatial data
adata_vis.var["SYMBOL"] = adata_vis.var_names
adata_vis.var.set_index("gene_ids", drop=True, inplace=True)

# find mitochondria-encoded (MT) genes
adata_vis.var["MT_gene"] = [gene.startswith("MT-") for gene in adata_vis.var["SYMBOL"]]

# remove MT genes for spatial mapping (keeping their counts in the object)
adata_vis.obsm["MT"] = adata_vis[:, adata_vis.var["MT_gene"].values].X.toarray()
adata_vis = adata_vis[:, ~adata_vis.var["MT_gene"].values]

# Download data if not already here
if not os.path.exists("./data/sc.h5ad"):
    os.makedirs("./data", exist_ok=True)
    os.system("cd ./data && wget https://cell2location.cog.sanger.ac.uk/paper/integrated_lymphoid_organ_scrna/RegressionNBV4Torch_57covariates_73260cells_10237genes/sc.h5ad")

adata_ref = sc.read("./data/sc.h5ad")
adata_ref.var["SYMBOL"] = adata_ref.var.index
adata_ref.var.set_index("GeneID-2", drop=True, inplace=True)

# delete unnecessary raw slot (to be removed in a future version of the tutorial)
del adata_ref.raw

# ## Reference gene selection

from cell2location.utils.filtering import filter_genes

selected = filter_genes(adata_ref, cell_count_cutoff=5, cell_percentage_cutoff2=0.03, nonz_mean_cutoff=1.12)

# filter the object
adata_ref = adata_ref[:, selected].copy()

# ## Estimation of reference cell type signatures (NB regression)

# prepare anndata for the regression model
cell2location.models.RegressionModel.setup_anndata(
    adata=adata_ref,
    # 10X reaction / sample / batch
    batch_key="Sample",
    # cell type, covariate used for constructing signatures
    labels_key="Subset",
    # multiplicative technical effects (platform, 3' vs 5', donor effect)
    categorical_covariate_keys=["Method"],
)

from cell2location.models import RegressionModel

mod = RegressionModel(adata_ref)

# view anndata_setup as a sanity check
mod.view_anndata_setup()

mod.train(max_epochs=250, use_gpu=True)

mod.plot_history(20)
plt.savefig(f"{ref_run_name}_history.png")
plt.close()

# In this section, we export the estimated cell abundance (summary of the posterior distribution).
adata_ref = mod.export_posterior(
    adata_ref, sample_kwargs={"num_samples": 1000, "batch_size": 2500, "use_gpu": True}
)

# Save model
mod.save(f"{ref_run_name}", overwrite=True)

# Save anndata object with results
adata_file = f"{ref_run_name}/sc.h5ad"
adata_ref.write(adata_file)

mod.plot_QC()
plt.savefig(f"{ref_run_name}_QC.png")
plt.close()

# export estimated expression in each cluster
if "means_per_cluster_mu_fg" in adata_ref.varm.keys():
    inf_aver = adata_ref.varm["means_per_cluster_mu_fg"][
        [f"means_per_cluster_mu_fg_{i}" for i in adata_ref.uns["mod"]["factor_names"]]
    ].copy()
else:
    inf_aver = adata_ref.var[[f"means_per_cluster_mu_fg_{i}" for i in adata_ref.uns["mod"]["factor_names"]]].copy()
inf_aver.columns = adata_ref.uns["mod"]["factor_names"]
print(inf_aver.iloc[0:5, 0:5])

del mod
gc.collect()

# ## Cell2location: spatial mapping

# find shared genes and subset both anndata and reference signatures
intersect = np.intersect1d(adata_vis.var_names, inf_aver.index)
adata_vis = adata_vis[:, intersect].copy()
inf_aver = inf_aver.loc[intersect, :].copy()

# prepare anndata for cell2location model
cell2location.models.Cell2location.setup_anndata(adata=adata_vis, batch_key="sample")

# create and train the model
mod = cell2location.models.Cell2location(
    adata_vis,
    cell_state_df=inf_aver,
    # the expected average cell abundance: tissue-dependent
    # hyper-prior which can be estimated from paired histology:
    N_cells_per_location=30,
    # hyperparameter controlling normalisation of
    # within-experiment variation in RNA detection:
    detection_alpha=20,
)
mod.view_anndata_setup()

mod.train(
    max_epochs=30000,
    # train using full data (batch_size=None)
    batch_size=None,
    # use all data points in training because
    # we need to estimate cell abundance at all locations
    train_size=1,
    use_gpu=True,
)

# plot ELBO loss history during training, removing first 100 epochs from the plot
mod.plot_history(1000)
plt.legend(labels=["full data training"])
plt.savefig(f"{run_name}_history.png")
plt.close()

# In this section, we export the estimated cell abundance (summary of the posterior distribution).
adata_vis = mod.export_posterior(
    adata_vis,
    sample_kwargs={"num_samples": 1000, "batch_size": mod.adata.n_obs, "use_gpu": True},
)

# Save model
mod.save(f"{run_name}", overwrite=True)

# Save anndata object with results
adata_file = f"{run_name}/sp.h5ad"
adata_vis.write(adata_file)

mod.plot_QC()
plt.savefig(f"{run_name}_QC.png")
plt.close()

# ## Visualising cell abundance in spatial coordinates

# add 5% quantile, representing confident cell abundance, 'at least this amount is present',
# to adata.obs with nice names for plotting
adata_vis.obs[adata_vis.uns["mod"]["factor_names"]] = adata_vis.obsm["q05_cell_abundance_w_sf"]

# select one slide
from cell2location.utils import select_slide

slide = select_slide(adata_vis, "V1_Human_Lymph_Node")

# plot in spatial coordinates
with mpl.rc_context({"axes.facecolor": "black", "figure.figsize": [4.5, 5]}):
    sc.pl.spatial(
        slide,
        cmap="magma",
        # show first 8 cell types
        color=["B_Cycling", "B_GC_LZ", "T_CD4+_TfH_GC", "FDC", "B_naive", "T_CD4+_naive", "B_plasma", "Endo"],
        ncols=4,
        size=1.3,
        img_key="hires",
        # limit color scale at 99.2% quantile of cell abundance
        vmin=0,
        vmax="p99.2",
        show=False,
    )
    plt.savefig(f"{run_name}_spatial_abundance.png", dpi=150)

# ## Identifying discrete tissue regions by Leiden clustering

# compute KNN using the cell2location output stored in adata.obsm
sc.pp.neighbors(adata_vis, use_rep="q05_cell_abundance_w_sf", n_neighbors=15)

# Cluster spots into regions using scanpy
sc.tl.leiden(adata_vis, resolution=1.1)

# add region as categorical variable
adata_vis.obs["region_cluster"] = adata_vis.obs["leiden"].astype("category")

# compute UMAP using KNN graph based on the cell2location output
sc.tl.umap(adata_vis, min_dist=0.3, spread=1)

# ## Estimate cell-type specific expression of every gene in the spatial data

# Compute expected expression per cell type
expected_dict = mod.module.model.compute_expected_per_cell_type(
    mod.samples["post_sample_q05"], mod.adata_manager
)

# Add to anndata layers
for i, n in enumerate(mod.factor_names_):
    adata_vis.layers[n] = expected_dict["mu"][i]

adata_file = f"{run_name}/sp_with_layers.h5ad"
adata_vis.write(adata_file)
print("done", file=sys.stderr)
