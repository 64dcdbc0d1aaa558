# Shared configuration dataclasses for the AnyLoc experiment scripts.
#
# The scripts build their CLI with tyro from a `LocalArgs` dataclass that embeds
# `ProgArgs` (paths, logging) and `BaseDatasetArgs` (evaluation protocol of the
# deep-visual-geo-localization-benchmark datasets).
#
# All scripts assume a single GPU; the DINOv2 ViT-G/14 extractor needs ~20 GB at
# full resolution, use --resize-short or a smaller model on 12/16 GB cards.
import os
from dataclasses import dataclass, field
from typing import List, Literal, Union

import torch


# %%
# Device for everything that is not explicitly moved to the CPU
device = torch.device("cuda")
# ViT-G matmuls in TF32 are ~2x faster on Ampere with no measurable recall change
torch.backends.cuda.matmul.allow_tf32 = True


# %%
@dataclass
class ProgArgs:
    # Use wandb for logging
    use_wandb: bool = True
    # Project name for wandb
    wandb_proj: str = "Ablations"
    # Entity name for wandb
    wandb_entity: str = "vpr-vl"
    # Group name for wandb
    wandb_group: str = "default"
    # Run name for wandb (None = auto)
    wandb_run_name: Union[str, None] = None
    # Dataset name (folder under data_vg_dir)
    vg_dataset_name: Literal["st_lucia", "pitts30k", "17places", "nordland", "tokyo247", "baidu_datasets",
                             "Oxford", "gardens", "global", "VPAir", "hawkins", "laurel_caverns",
                             "eiffel", "Tartan_GNSS_test_rotated", "Tartan_GNSS_test_notrotated",
                             "Tartan_GNSS_rotated", "Tartan_GNSS_notrotated"] = "17places"
    # Directory where the datasets are stored
    data_vg_dir: str = os.environ.get("ANYLOC_DATA_DIR", "/home/datasets/vg/datasets")
    # Directory for caching (vocabularies, VLAD residuals, results)
    cache_dir: str = os.environ.get("ANYLOC_CACHE_DIR", "/scratch/anyloc/cache")
    # Number of workers for the torch data loaders
    num_workers: int = 8


@dataclass
class BaseDatasetArgs:
    # Resize images to this (H, W) before anything else (deep-visual-geo-localization-benchmark default)
    resize: List[int] = field(default_factory=lambda: [480, 640])
    # Test method for datasets with queries of different sizes
    test_method: Literal["hard_resize", "single_query", "central_crop", "five_crops",
                         "nearest_crop", "maj_voting"] = "hard_resize"
    # Distance (meters) for a database image to be a positive of a query
    val_positive_dist_threshold: int = 25
    # Distance (meters) used to mine training positives
    train_positives_dist_threshold: int = 10
    # Recall values to report
    recall_values: List[int] = field(default_factory=lambda: [1, 5, 10, 20])
    # Mining method (only for training)
    mining: Literal["partial", "full", "random", "msls_weighted"] = "partial"
    # Negatives per query (only for training)
    negs_num_per_query: int = 10
    # Number of queries in a cache (only for training)
    cache_refresh_rate: int = 1000
    # Efficient RAM testing (for huge test sets)
    efficient_ram_testing: bool = False
    # Batch size for inference
    infer_batch_size: int = 16


base_dataset_args = BaseDatasetArgs()


def describe(args) -> str:
    """One-line summary used as the wandb run name when none is given."""
    parts = []
    for name in ("model_type", "desc_layer", "desc_facet", "num_clusters"):
        if hasattr(args, name):
            parts.append(f"{name}={getattr(args, name)}")
    if hasattr(args, "prog"):
        parts.append(f"ds={args.prog.vg_dataset_name}")
    return ",".join(parts)
