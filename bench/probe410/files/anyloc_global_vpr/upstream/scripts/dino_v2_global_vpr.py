# Doing global VPR (VLAD aggregation) using Dino-v2 descriptors
"""
    Extract the DINO-v2 patch descriptors (facet from a given layer)
    for the database and query images of a dataset, build a VLAD
    vocabulary from the database descriptors, aggregate them into
    global descriptors and compute the recalls.

    Example:

        python ./scripts/dino_v2_global_vpr.py --exp-id dinov2_vlad \
            --prog.data-vg-dir /scratch/vpr_datasets \
            --prog.vg-dataset-name pitts30k --desc-layer 31 \
            --desc-facet value --num-clusters 32
"""

# %%
import os
import sys
from pathlib import Path
# Set the './../' from the script folder
dir_name = None
try:
    dir_name = os.path.dirname(os.path.realpath(__file__))
except NameError:
    print('WARN: __file__ not found, trying local')
    dir_name = os.path.abspath('')
lib_path = os.path.realpath(f'{Path(dir_name).parent}')
# Add to path
if lib_path not in sys.path:
    print(f'Adding library path: {lib_path} to PYTHONPATH')
    sys.path.append(lib_path)
else:
    print(f'Library path {lib_path} already in PYTHONPATH')


# %%
import time
import torch
from torch.nn import functional as F
from torch.utils.data import DataLoader
from torchvision import transforms as tvf
import numpy as np
import tyro
import einops as ein
import joblib
import wandb
import traceback
from tqdm.auto import tqdm
from dataclasses import dataclass, field
from typing import Literal, Union, List

from utilities import VLAD, DinoV2ExtractFeatures, seed_everything, \
        get_top_k_recall
from configs import ProgArgs, prog_args, BaseDatasetArgs, \
        base_dataset_args, device
from custom_datasets.baidu_dataloader import Baidu_Dataset
from custom_datasets.oxford_dataloader import Oxford
from custom_datasets.gardens import Gardens
from dvgl_benchmark.datasets_ws import BaseDataset


# %%
@dataclass
class LocalArgs:
    # Program arguments (dataset directories and wandb)
    prog: ProgArgs = ProgArgs(wandb_proj="Dino-v2-Descs",
        wandb_group="Direct-Descs-VLAD")
    # BaseDataset arguments
    bd_args: BaseDatasetArgs = base_dataset_args
    # Experiment identifier (None = don't use)
    exp_id: Union[str, None] = None
    # Dino parameters
    model_type: Literal["dinov2_vits14", "dinov2_vitb14",
            "dinov2_vitl14", "dinov2_vitg14"] = "dinov2_vitg14"
    """
        Model for Dino-v2 to use as the base model.
    """
    # Layer for extracting Dino feature (descriptors)
    desc_layer: int = 31
    # Facet for extracting descriptors
    desc_facet: Literal["query", "key", "value", "token"] = "value"
    # Number of clusters for VLAD
    num_clusters: int = 32
    # Experiment identifier for cache (set to None to disable cache)
    cache_vlad_descs: bool = True
    # Sub-sample query images (RAM or VRAM constraints) (1 = off)
    sub_sample_qu: int = 1
    # Sub-sample database images (RAM or VRAM constraints) (1 = off)
    sub_sample_db: int = 1
    # Sub-sample database images for VLAD clustering only
    sub_sample_db_vlad: int = 1
    # Values for top-k (for monitoring)
    top_k_vals: List[int] = field(default_factory=lambda:\
                                list(range(1, 21, 1)))
    # Show a matplotlib plot for recalls
    show_plot: bool = False
    # Use hard or soft descriptor assignment for VLAD
    vlad_assignment: Literal["hard", "soft"] = "hard"
    # Softmax temperature for VLAD (soft assignment only)
    vlad_soft_temp: float = 1.0
    # Run the faiss nearest-neighbour search on the GPU
    faiss_gpu: bool = True
    # Stride for ViT (if None, the patch size is used)
    vit_stride: Union[int, None] = None
    # Override the query and database data percentage (1 = all)
    qu_data_perc: float = 1.0
    # Batch size for extracting the descriptors
    batch_size: int = 1


# %%
# ---------------- Functions ----------------
@torch.no_grad()
def build_vlads(largs: LocalArgs, vpr_ds: BaseDataset,
            verbose: bool=True, vpr_distance_threshold=None):
    """
        Build VLAD vectors for database and query images.

        Parameters:
        - largs: LocalArgs  Local arguments for the file
        - vpr_ds: BaseDataset   The dataset containing database and
                                query images
        - verbose: bool     Prints progress if True

        Returns:
        - db_vlads:     VLAD vectors for database images
        - qu_vlads:     VLAD vectors for query images
    """
    # Dino-v2 extractor
    extractor = DinoV2ExtractFeatures(largs.model_type,
            largs.desc_layer, largs.desc_facet, device=device)
    base_tf = tvf.Compose([ # Base image transformations
        tvf.ToTensor(),
        tvf.Normalize(mean=[0.485, 0.456, 0.406],
                        std=[0.229, 0.224, 0.225])
    ])
    # Get the database descriptors
    num_db = vpr_ds.database_num
    ds_len = len(vpr_ds)
    assert ds_len > num_db, "Either no queries or length mismatch"
    # Get cache
    cache_dir = None
    if largs.cache_vlad_descs:
        cache_dir = f"{largs.prog.cache_dir}/vlad_descs/Dinov2/" \
                    f"{largs.prog.vg_dataset_name}/" \
                    f"{largs.model_type}-{largs.desc_facet}-" \
                    f"L{largs.desc_layer}-C{largs.num_clusters}"
        print(f"Using cache directory: {cache_dir}")
    vlad = VLAD(largs.num_clusters, None, vlad_mode=largs.vlad_assignment,
            soft_temp=largs.vlad_soft_temp, cache_dir=cache_dir)
    # Load the database descriptors (for VLAD clustering)
    if not vlad.can_use_cache_vlad():
        full_db_vlad = []
        # Get global database descriptors
        for i in tqdm(range(0, num_db, largs.sub_sample_db_vlad),
                    disable=not verbose):
            img = vpr_ds[i][0]
            img = ein.rearrange(img, "c h w -> 1 c h w").to(device)
            img = F.interpolate(img, (224, 224), mode="bicubic")
            ret = extractor(img) # [1, num_descs, d_dim]
            full_db_vlad.append(ret.squeeze().cpu())
        full_db_vlad = torch.stack(full_db_vlad)
        if verbose:
            print(f"Database (for VLAD) shape: {full_db_vlad.shape}")
        d_dim = full_db_vlad.shape[2]
        if verbose:
            print(f"Descriptor dimensionality: {d_dim}")
        vlad.fit(ein.rearrange(full_db_vlad, "n k d -> (n k) d"))
        del full_db_vlad
        torch.cuda.empty_cache()
    else:
        vlad.fit(None)  # Load the vocabulary (and updates desc_dim)
    if verbose:
        print(f"VLAD cluster centers shape: "\
                f"{vlad.c_centers.shape}, ({vlad.c_centers.dtype})")
    # Get the database VLADs
    db_vlads: torch.Tensor = []
    db_start = time.perf_counter()
    for i in tqdm(range(0, num_db, largs.sub_sample_db),
                disable=not verbose):
        img = vpr_ds[i][0]
        c, h, w = img.shape
        h_new, w_new = (h // 14) * 14, (w // 14) * 14
        img_in = tvf.CenterCrop((h_new, w_new))(img)[None, ...]
        ret = extractor(img_in.to(device)).cpu()
        gd = vlad.generate(ret.squeeze()) # VLAD: [agg_dim]
        gd_np = gd.numpy()[np.newaxis, ...] # shape: [1, agg_dim]
        db_vlads.append(torch.from_numpy(gd_np))
    torch.cuda.synchronize()
    db_time = time.perf_counter() - db_start
    db_vlads = torch.concat(db_vlads)
    if verbose:
        print(f"Database VLADs shape: {db_vlads.shape}, "
                f"{db_time / max(1, num_db):.3f} s / image")
    # Get the query VLADs
    qu_vlads: torch.Tensor = []
    for i in tqdm(range(num_db, ds_len, largs.sub_sample_qu),
                disable=not verbose):
        img = vpr_ds[i][0]
        c, h, w = img.shape
        h_new, w_new = (h // 14) * 14, (w // 14) * 14
        img_in = tvf.CenterCrop((h_new, w_new))(img)[None, ...]
        ret = extractor(img_in.to(device)).cpu()
        gd = vlad.generate(ret.squeeze()) # VLAD: [agg_dim]
        gd_np = gd.numpy()[np.newaxis, ...] # shape: [1, agg_dim]
        qu_vlads.append(torch.from_numpy(gd_np))
    qu_vlads = torch.concat(qu_vlads)
    if verbose:
        print(f"Query VLADs shape: {qu_vlads.shape}")
    # Return VLADs
    return db_vlads, qu_vlads


# %%
def main(largs: LocalArgs):
    print(f"Arguments: {largs}")
    seed_everything(42)

    if largs.prog.use_wandb:
        # Launch WandB
        wandb_run = wandb.init(project=largs.prog.wandb_proj,
                entity=largs.prog.wandb_entity, config=largs,
                group=largs.prog.wandb_group,
                name=largs.prog.wandb_run_name)
        print(f"Initialized WandB run: {wandb_run.name}")

    print("--------- Generating VLADs ---------")
    ds_dir = largs.prog.data_vg_dir
    ds_name = largs.prog.vg_dataset_name
    print(f"Dataset directory: {ds_dir}")
    print(f"Dataset name: {ds_name}, split: {largs.data_split}")
    # Load dataset
    if ds_name=="baidu_datasets":
        vpr_ds = Baidu_Dataset(largs.bd_args, ds_dir, ds_name,
                            largs.data_split)
    elif ds_name=="Oxford":
        vpr_ds = Oxford(ds_dir)
    elif ds_name=="gardens":
        vpr_ds = Gardens(largs.bd_args,ds_dir,ds_name,largs.data_split)
    else:
        vpr_ds = BaseDataset(largs.bd_args, ds_dir, ds_name,
                        largs.data_split)

    db_vlads, qu_vlads = build_vlads(largs, vpr_ds)
    print("--------- Generated VLADs ---------")

    print("----- Calculating recalls through top-k matching -----")
    dists, indices, recalls = get_top_k_recall(largs.top_k_vals,
        db_vlads, qu_vlads, vpr_ds.soft_positives_per_query,
        sub_sample_db=largs.sub_sample_db,
        sub_sample_qu=largs.sub_sample_qu, use_gpu=largs.faiss_gpu)
    print("------------ Recalls calculated ------------")

    print("--------------------- Results ---------------------")
    ts = time.strftime(f"%Y_%m_%d_%H_%M_%S")
    caching_directory = largs.prog.cache_dir
    results = {
        "Model-Type": str(largs.model_type),
        "Desc-Layer": str(largs.desc_layer),
        "Desc-Facet": str(largs.desc_facet),
        "Desc-Dim": str(db_vlads.shape[1]//largs.num_clusters),
        "VLAD-Dim": str(db_vlads.shape[1]),
        "Num-Clusters": str(largs.num_clusters),
        "Experiment-ID": str(largs.exp_id),
        "DB-Name": str(ds_name),
        "Num-DB": str(len(db_vlads)),
        "Num-QU": str(len(qu_vlads)),
        "Agg-Method": "VLAD",
        "Timestamp": str(ts),
        "Peak-GPU-Mem-GB": f"{torch.cuda.max_memory_reserved() / 2**30:.2f}",
    }
    print("Results: ")
    for k in results:
        print(f"- {k}: {results[k]}")
    print("- Recalls: ")
    for k in recalls:
        results[f"R@{k}"] = recalls[k]
        print(f"  - R@{k}: {recalls[k]:.5f}")
    if largs.show_plot:
        import matplotlib.pyplot as plt
        plt.plot(recalls.keys(), recalls.values())
        plt.ylim(0, 100)
        plt.title(f"Dino-v2 VLAD recalls on {ds_name}")
        plt.xlabel("Top-k")
        plt.ylabel("Recall (%)")
        plt.show()

    if largs.prog.use_wandb:
        # Log to Wandb
        wandb.log(results)
        for tk in recalls:
            wandb.log({"Recall-All": recalls[tk]}, step=int(tk))
        # Close Wandb
        wandb.finish()

    # Add retrievals
    results["Qual-Dists"] = dists
    results["Qual-Indices"] = indices
    save_res_file = None
    if largs.exp_id == True:
        save_res_file = caching_directory
    elif type(largs.exp_id) == str:
        save_res_file = f"{caching_directory}/experiments/"\
                        f"{largs.exp_id}"
    if save_res_file is not None:
        if not os.path.isdir(save_res_file):
            os.makedirs(save_res_file)
        save_res_file = f"{save_res_file}/results_{ts}.gz"
        print(f"Saving result in: {save_res_file}")
        joblib.dump(results, save_res_file)
    else:
        print("Not saving results")
    print("--------------------- END ---------------------")


if __name__ == "__main__" and ("ipykernel" not in sys.argv[0]):
    largs = tyro.cli(LocalArgs, description=__doc__)
    _start = time.time()
    try:
        main(largs)
    except:
        print("Unhandled exception")
        traceback.print_exc()
    finally:
        print(f"Program ended in {time.time()-_start:.3f} seconds")
        exit(0)
