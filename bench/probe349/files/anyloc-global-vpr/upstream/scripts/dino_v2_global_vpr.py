# Global VPR with DINOv2 + VLAD (AnyLoc-VLAD-DINOv2)
"""
    Extract dense DINOv2 features (one layer, one facet) for every
    database and query image, build a VLAD vocabulary from a subset
    of the database descriptors, aggregate, and compute Recall@K.

    Run with ``python ./scripts/dino_v2_global_vpr.py --help`` to see
    all the options (tyro builds the CLI from the dataclass below).

    Expects the datasets to be prepared with the scripts under
    ``./scripts/datasets`` (17 datasets, see README).
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
import traceback
from dataclasses import dataclass, field
from typing import Literal, List, Union

import joblib
import numpy as np
import torch
from torch.nn import functional as F
from torchvision import transforms as tvf
from tqdm.auto import tqdm
import tyro
import wandb
import einops as ein

from configs import ProgArgs, BaseDatasetArgs, base_dataset_args, device
from utilities import VLAD, get_top_k_recall, seed_everything, DinoV2ExtractFeatures
from custom_datasets.baidu_dataloader import Baidu_Dataset
from custom_datasets.oxford_dataloader import Oxford
from custom_datasets.gardens import Gardens
from custom_datasets.aerial_dataloader import Aerial
from custom_datasets.hawkins_dataloader import Hawkins
from custom_datasets.vpair_dataloader import VPAir
from custom_datasets.laurel_dataloader import Laurel
from custom_datasets.eiffel_dataloader import Eiffel
from custom_datasets.vpair_distractor_dataloader import VPAir_Distractor
from dvgl_benchmark.datasets_ws import BaseDataset


# %%
@dataclass
class LocalArgs:
    # Program arguments (dataset directories and wandb)
    prog: ProgArgs = field(default_factory=lambda: ProgArgs(
        wandb_proj="Dino-v2-Descs", wandb_group="Direct-Descs-VLAD"))
    # BaseDataset arguments
    bd_args: BaseDatasetArgs = field(default_factory=lambda: base_dataset_args)
    # Experiment identifier (None = don't use)
    exp_id: Union[str, None] = None
    # Dino parameters
    model_type: Literal["dinov2_vits14", "dinov2_vitb14", "dinov2_vitl14", "dinov2_vitg14"] = "dinov2_vitg14"
    """
        Model for Dino-v2 to use as the base model.
    """
    # Number of clusters for VLAD
    num_clusters: int = 32
    # Layer for extracting Dino feature (descriptors)
    desc_layer: int = 31
    # Facet for extracting descriptors
    desc_facet: Literal["query", "key", "value", "token"] = "value"
    # Dataset split for VPR (BaseDataset)
    data_split: Literal["train", "test", "val"] = "test"
    # Sub-sample query images (RAM or VRAM constraints) (1 = off)
    sub_sample_qu: int = 1
    # Sub-sample database images (RAM or VRAM constraints) (1 = off)
    sub_sample_db: int = 1
    # Sub-sample database images for VLAD clustering only
    sub_sample_db_vlad: int = 1
    """
        Use sub-sampling for creating the VLAD cluster centers. Use
        this to reduce the RAM usage during the clustering process.
        Unlike `sub_sample_qu` and `sub_sample_db`, this is only used
        for clustering and not for the actual VLAD computation.
    """
    # Values for top-k (for monitoring)
    top_k_vals: List[int] = field(default_factory=lambda: list(range(1, 21, 1)))
    # Show a matplotlib plot for recalls
    show_plot: bool = False
    # Use hard or soft descriptor assignment for VLAD
    vlad_assignment: Literal["hard", "soft"] = "hard"
    # Softmax temperature for VLAD (soft assignment only)
    vlad_soft_temp: float = 1.0
    # Caching configuration
    cache_vlad_descs: bool = True
    # Use faiss-gpu for the exact kNN search
    faiss_gpu: bool = True
    # Resize the images so that the short side is this many pixels (0 = keep)
    resize_short: int = 0


# %%
# ---------------- Functions ----------------
@torch.no_grad()
def build_vlads(largs: LocalArgs, vpr_ds: BaseDataset, verbose: bool = True,
                vlad: Union[VLAD, None] = None):
    """
        Build VLAD vectors for database and query images.

        Parameters:
        - largs: LocalArgs  Local arguments for the file
        - vpr_ds: BaseDataset   The dataset containing database and query images
        - verbose: bool     Prints progress if True
        - vlad: VLAD    An existing VLAD object (already fit). If None, a new one
                        is created and fit on (a subset of) the database descriptors.

        Returns:
        - db_vlads: torch.Tensor    VLAD vectors for database images
        - qu_vlads: torch.Tensor    VLAD vectors for query images
    """
    extractor = DinoV2ExtractFeatures(largs.model_type, largs.desc_layer,
                                      largs.desc_facet, device=device)
    base_tf = tvf.Compose([
        tvf.ToTensor(),
        tvf.Normalize(mean=[0.485, 0.456, 0.406],
                      std=[0.229, 0.224, 0.225])
    ])
    if vlad is None:
        cache_dir = None
        if largs.cache_vlad_descs:
            cache_dir = f"{largs.prog.cache_dir}/vocabulary/{largs.model_type}/" \
                        f"l{largs.desc_layer}_{largs.desc_facet}_c{largs.num_clusters}/{largs.prog.vg_dataset_name}"
        vlad = VLAD(largs.num_clusters, desc_dim=None, vlad_mode=largs.vlad_assignment,
                    soft_temp=largs.vlad_soft_temp, cache_dir=cache_dir)

    def _extract(img_pil):
        img_pt = base_tf(img_pil).to(device)
        if largs.resize_short > 0:
            img_pt = tvf.Resize(largs.resize_short, antialias=True)(img_pt)
        # Make image patchable (14, 14 patches)
        c, h, w = img_pt.shape
        h_new, w_new = (h // 14) * 14, (w // 14) * 14
        img_pt = tvf.CenterCrop((h_new, w_new))(img_pt)[None, ...]
        # Extract descriptor
        ret = extractor(img_pt)  # [1, num_patches, desc_dim]
        return ret

    # Get the database descriptors
    num_db = vpr_ds.database_num
    ds_len = len(vpr_ds)
    assert ds_len > num_db, "Either no queries or length mismatch"

    # Build VLAD vocabulary if needed
    if not vlad.can_use_cache_vlad():
        if verbose:
            print("Building VLAD cluster centers...")
        db_indices = np.arange(0, num_db, largs.sub_sample_db_vlad)
        full_db_vlad = []
        for i in tqdm(db_indices, disable=not verbose):
            img = vpr_ds[i][0]
            ret = _extract(img)
            full_db_vlad.append(ret[0].cpu())
        full_db_vlad = torch.cat(full_db_vlad, dim=0)
        if verbose:
            print(f"Database descriptors shape: {full_db_vlad.shape}")
        vlad.fit(full_db_vlad)
        del full_db_vlad
    else:
        vlad.fit(None)
    if verbose:
        print(f"VLAD cluster centers shape: {vlad.c_centers.shape}")
    torch.cuda.empty_cache()

    # Database VLADs
    db_vlads = []
    for i in tqdm(range(0, num_db, largs.sub_sample_db), disable=not verbose, desc="DB VLAD"):
        img = vpr_ds[i][0]
        ret = _extract(img)
        # VLAD on the CPU: the [q, c, d] residual tensor does not fit next to ViT-G in 24GB
        gd = vlad.generate(ret.cpu().squeeze())
        db_vlads.append(gd)
    db_vlads = torch.stack(db_vlads)

    # Query VLADs
    qu_vlads = []
    for i in tqdm(range(num_db, ds_len, largs.sub_sample_qu), disable=not verbose, desc="Query VLAD"):
        img = vpr_ds[i][0]
        ret = _extract(img)
        qd = vlad.generate(ret.cpu().squeeze())
        qu_vlads.append(qd)
    qu_vlads = torch.stack(qu_vlads)

    del extractor
    return db_vlads, qu_vlads


def get_dataset(largs: LocalArgs):
    ds_dir = largs.prog.data_vg_dir
    ds_name = largs.prog.vg_dataset_name
    print(f"Dataset directory: {ds_dir}")
    print(f"Dataset name: {ds_name}, split: {largs.data_split}")
    if ds_name == "baidu_datasets":
        vpr_ds = Baidu_Dataset(largs.bd_args, ds_dir, ds_name, largs.data_split)
    elif ds_name == "Oxford":
        vpr_ds = Oxford(ds_dir)
    elif ds_name == "gardens":
        vpr_ds = Gardens(largs.bd_args, ds_dir, ds_name, largs.data_split)
    elif ds_name.startswith("Tartan_GNSS"):
        vpr_ds = Aerial(largs.bd_args, ds_dir, ds_name, largs.data_split)
    elif ds_name.startswith("hawkins"):
        vpr_ds = Hawkins(largs.bd_args, ds_dir, "hawkins_long_corridor", largs.data_split)
    elif ds_name == "VPAir":
        vpr_ds = VPAir(largs.bd_args, ds_dir, ds_name, largs.data_split)
        vpr_distractor_ds = VPAir_Distractor(largs.bd_args, ds_dir, ds_name, largs.data_split)
    elif ds_name == "laurel_caverns":
        vpr_ds = Laurel(largs.bd_args, ds_dir, ds_name, largs.data_split)
    elif ds_name == "eiffel":
        vpr_ds = Eiffel(largs.bd_args, ds_dir, ds_name, largs.data_split)
    else:
        vpr_ds = BaseDataset(largs.bd_args, ds_dir, ds_name, largs.data_split)
    return vpr_ds


# %%
@torch.no_grad()
def main(largs: LocalArgs):
    print(f"Arguments: {largs}")
    seed_everything(42)

    if largs.prog.use_wandb:
        wandb_run = wandb.init(project=largs.prog.wandb_proj, entity=largs.prog.wandb_entity,
                               group=largs.prog.wandb_group, name=largs.prog.wandb_run_name,
                               config=largs)
        print(f"Initialized WandB run: {wandb_run.name}")

    print(f"Using GPU: {torch.cuda.get_device_name(device)}")

    vpr_ds = get_dataset(largs)

    t0 = time.time()
    db_vlads, qu_vlads = build_vlads(largs, vpr_ds)
    print("Database and Query VLADs built in {:.1f} s".format(time.time() - t0))

    print("Calculating recalls...")
    dists, indices, recalls = get_top_k_recall(largs.top_k_vals, db_vlads, qu_vlads,
                                               vpr_ds.soft_positives_per_query,
                                               sub_sample_db=largs.sub_sample_db,
                                               sub_sample_qu=largs.sub_sample_qu,
                                               use_gpu=largs.faiss_gpu)
    torch.cuda.empty_cache()  # faiss-gpu scratch memory
    print("Recalls calculated")
    for tk in recalls.keys():
        print(f"R@{tk} = {recalls[tk] * 100:.3f}")
        if largs.prog.use_wandb:
            wandb.log({"Recall-All": recalls[tk]}, step=int(tk))

    if largs.exp_id is not None:
        save_res_file = f"{largs.prog.cache_dir}/experiments/{largs.exp_id}/results_{largs.prog.vg_dataset_name}.gz"
        os.makedirs(os.path.dirname(save_res_file), exist_ok=True)
        print(f"Saving result in: {save_res_file}")
        joblib.dump({
            "Queries": indices,
            "Distances": dists,
            "Recalls": recalls,
            "Query-Sample": largs.sub_sample_qu,
            "DB-Sample": largs.sub_sample_db,
        }, save_res_file)

    if largs.prog.use_wandb:
        wandb.log({"peak_gpu_mem_gb": torch.cuda.max_memory_allocated() / 1e9})
        wandb.finish()
        print("WandB run finished")


# Main entrypoint
if __name__ == "__main__" and ("ipykernel" not in sys.argv[0]):
    largs = tyro.cli(LocalArgs, description=__doc__)
    _start = time.time()
    try:
        main(largs)
    except Exception:
        print(f"Exception: {traceback.format_exc()}")
    except SystemExit:
        print("System exit")
    except KeyboardInterrupt:
        print("Keyboard interrupt")
    finally:
        print(f"Program ended in {time.time() - _start:.3f} seconds")
        exit(0)
