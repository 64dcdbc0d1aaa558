# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.14.5
#   kernelspec:
#     display_name: scvi-env (GPU)
#     language: python
#     name: scvi-env
# ---

# %% [markdown]
# # Reference mapping with scArches + scANVI
#
# We build a scANVI reference on the pancreas atlas, then map an unseen query study
# onto it with architecture surgery (scArches) and transfer the cell-type labels.
#
# This notebook was run on a single NVIDIA A100 (40 GB). On a CPU-only machine
# set `USE_GPU = False`; expect roughly 20x longer training.

# %%
# !nvidia-smi

# %%
import os
import warnings

warnings.simplefilter(action="ignore", category=FutureWarning)

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import scanpy as sc
import scvi
import seaborn as sns
import torch

sc.set_figure_params(figsize=(4, 4), frameon=False)
torch.set_float32_matmul_precision("high")

# %%
print("scvi-tools", scvi.__version__)
print("torch", torch.__version__, "CUDA", torch.version.cuda)
print("GPU available:", torch.cuda.is_available())
USE_GPU = True

# %%
scvi.settings.seed = 0
scvi.settings.dl_pin_memory_gpu_training = True

# %% [markdown]
# ## Load data
#
# The pancreas collection contains 8 studies with different technologies. We hold out
# `smartseq2` and `celseq2` as the query.

# %%
url = "https://figshare.com/ndownloader/files/24539828"
adata_all = sc.read("data/pancreas.h5ad", backup_url=url)
adata = adata_all.raw.to_adata()
adata.obs["celltype"] = adata_all.obs["celltype"].astype("category")
adata.layers["counts"] = adata.X.copy()
print(adata)

# %%
query_mask = np.array([s in ["smartseq2", "celseq2"] for s in adata.obs["tech"]])
adata_ref = adata[~query_mask].copy()
adata_query = adata[query_mask].copy()

sc.pp.highly_variable_genes(
    adata_ref, n_top_genes=2000, batch_key="tech", subset=True, flavor="seurat_v3", layer="counts"
)
adata_query = adata_query[:, adata_ref.var_names].copy()

# %% [markdown]
# ## Train the reference
#
# Following scArches recommendations we use layer norm instead of batch norm and encode
# covariates, which makes query training more stable.

# %%
arches_params = dict(
    use_layer_norm="both",
    use_batch_norm="none",
    encode_covariates=True,
    dropout_rate=0.2,
    n_layers=2,
)

scvi.model.SCVI.setup_anndata(adata_ref, batch_key="tech", layer="counts")
vae_ref = scvi.model.SCVI(adata_ref, **arches_params)
vae_ref.train(max_epochs=200, use_gpu=USE_GPU)

# %%
adata_ref.obs["labels_scanvi"] = adata_ref.obs["celltype"].values
vae_ref_scan = scvi.model.SCANVI.from_scvi_model(
    vae_ref,
    unlabeled_category="Unknown",
    labels_key="labels_scanvi",
)
vae_ref_scan.train(max_epochs=20, n_samples_per_label=100, use_gpu=USE_GPU)

# %%
adata_ref.obsm["X_scANVI"] = vae_ref_scan.get_latent_representation()
sc.pp.neighbors(adata_ref, use_rep="X_scANVI")
sc.tl.leiden(adata_ref)
sc.tl.umap(adata_ref)
sc.pl.umap(adata_ref, color=["tech", "celltype"], frameon=False, ncols=1)

# %%
dir_path_scan = "pancreas_model_scanvi/"
vae_ref_scan.save(dir_path_scan, overwrite=True)

# %% [markdown]
# ## Map the query
#
# `load_query_data` adds new batch-embedding weights for the query technologies and
# freezes the rest of the network.

# %%
adata_query.obs["labels_scanvi"] = "Unknown"
scvi.model.SCANVI.prepare_query_anndata(adata_query, dir_path_scan)
vae_q = scvi.model.SCANVI.load_query_data(adata_query, dir_path_scan, use_gpu="cuda:0")

# %%
vae_q.train(
    max_epochs=100,
    plan_kwargs=dict(weight_decay=0.0),
    check_val_every_n_epoch=10,
    use_gpu=USE_GPU,
)
adata_query.obsm["X_scANVI"] = vae_q.get_latent_representation()
adata_query.obs["predictions"] = vae_q.predict()

# %%
df = adata_query.obs.groupby(["celltype", "predictions"]).size().unstack(fill_value=0)
norm_df = df / df.sum(axis=0)

plt.figure(figsize=(8, 8))
_ = plt.pcolor(norm_df)
_ = plt.xticks(np.arange(0.5, len(df.columns), 1), df.columns, rotation=90)
_ = plt.yticks(np.arange(0.5, len(df.index), 1), df.index)
plt.xlabel("Predicted")
plt.ylabel("Observed")

# %%
acc = (adata_query.obs["celltype"].astype(str) == adata_query.obs["predictions"].astype(str)).mean()
print(f"label transfer accuracy: {acc:.3f}")

# %% [markdown]
# ## Joint embedding of reference + query

# %%
adata_full = adata_query.concatenate(adata_ref, batch_key="ref_query")
adata_full.obs["predictions"] = adata_full.obs["predictions"].astype(str)
full_predictions = vae_q.predict(adata_full)
adata_full.obs["predictions"] = full_predictions
adata_full.obsm["X_scANVI"] = vae_q.get_latent_representation(adata_full)

sc.pp.neighbors(adata_full, use_rep="X_scANVI")
sc.tl.leiden(adata_full)
sc.tl.umap(adata_full)

# %%
sc.pl.umap(adata_full, color=["tech", "predictions", "celltype"], frameon=False, ncols=1)

# %% [markdown]
# ## Differential expression between predicted cell types in the query
#
# `batch_size` is kept moderate so the posterior samples fit on the GPU.

# %%
de_df = vae_q.differential_expression(
    adata_query,
    groupby="predictions",
    group1="beta",
    group2="alpha",
    batch_size=512,
)
de_df = de_df.sort_values("lfc_mean", ascending=False)
de_df.head(20)

# %%
markers = de_df[(de_df["is_de_fdr_0.05"]) & (de_df["lfc_mean"].abs() > 1)].index[:12]
sc.pl.dotplot(adata_query, markers, groupby="predictions", layer="counts", standard_scale="var")

# %%
# free GPU memory before the next notebook section
del vae_ref, vae_ref_scan
torch.cuda.empty_cache()

# %%
os.makedirs("results", exist_ok=True)
adata_full.write("results/pancreas_ref_query_scanvi.h5ad")
