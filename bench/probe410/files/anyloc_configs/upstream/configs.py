# Configurations for the experiments (shared across scripts)
"""
    Common configurations (dataclasses for tyro) used by the scripts
    in this repository. Also holds the global torch device.
"""

# %%
import os
import torch
from dataclasses import dataclass, field
from typing import Union, Literal, List


# %%
# The default device for all the experiments (run on GPU)
device = torch.device("cuda")


# %%
@dataclass
class ProgArgs:
    # Use wandb for logging
    use_wandb: bool = True
    # Wandb project name
    wandb_proj: Union[str, None] = None
    # Wandb entity (team) name
    wandb_entity: Union[str, None] = "vpr-vl"
    # Wandb group name
    wandb_group: Union[str, None] = None
    # Wandb run name (None = auto-generated)
    wandb_run_name: Union[str, None] = None
    # Directory to save the cache
    cache_dir: Union[str, None] = "/scratch/avneesh.mishra/vl-vpr/cache"
    # Directory where the datasets are stored
    data_vg_dir: Union[str, None] = "/home/avneesh.mishra/Documents/vl-vpr/datasets_vg/datasets"
    # Dataset name
    vg_dataset_name: Literal["st_lucia", "pitts30k", "17places",
            "nardo", "nardo-r", "baidu_datasets", "Oxford",
            "gardens", "hawkins", "laurel_caverns", "eiffel",
            "VPAir"] = "17places"


@dataclass
class BaseDatasetArgs:
    # Dataset directory (will be overridden by the program)
    datasets_folder: str = "/home/avneesh.mishra/Documents/vl-vpr/datasets_vg/datasets"
    # Dataset name
    dataset_name: str = "pitts30k"
    # Val/test threshold in meters
    val_positive_dist_threshold: int = 25
    # Train threshold for positives (in meters)
    train_positives_dist_threshold: int = 10
    # Resize the images (height, width)
    resize: List[int] = field(default_factory=lambda: [480, 640])
    # Resize to height and width for test images (if None, no resize)
    test_method: Literal["hard_resize", "single_query",
            "central_crop", "five_crops", "nearest_crop",
            "maj_voting"] = "hard_resize"
    # Number of workers for the dataloader
    num_workers: int = 8
    # Use the mixed precision (for the backbone) when available
    use_amp: bool = False


prog_args = ProgArgs()
base_dataset_args = BaseDatasetArgs()


# %%
def print_device_info():
    """Print a short description of the accelerator that is used."""
    if device.type == "cuda":
        print(f"Using GPU: {torch.cuda.get_device_name(device)}")
        free, total = torch.cuda.mem_get_info(device)
        print(f"GPU memory: {free / 2**30:.1f} GB free of "
              f"{total / 2**30:.1f} GB")
    else:
        print("Using the CPU (this will be slow)")
