import os
from typing import Optional

import h5py
import numpy as np
import torch
import torch.multiprocessing
import torch.utils.data
from tqdm import tqdm

torch.multiprocessing.set_sharing_strategy("file_system")


def build_patch_loader(dataset, batch_size=256, num_workers=8):
    """DataLoader used for patch-level benchmarks (CRC-100K, BACH, PCam ...)."""
    return torch.utils.data.DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=False,
        num_workers=num_workers,
        pin_memory=torch.cuda.is_available(),
        persistent_workers=num_workers > 0,
    )


@torch.no_grad()
def extract_patch_features_from_dataloader(model, dataloader, use_amp: bool = True,
                                           amp_dtype: torch.dtype = torch.float16):
    """Uses model to extract features+labels from images iterated over the dataloader.

    Args:
        model (torch.nn): torch.nn CNN/VIT architecture with pretrained weights that extracts d-dim features.
        dataloader (torch.utils.data.DataLoader): torch.utils.data.DataLoader object of N images.
        use_amp: run the encoder under fp16 autocast (≈2x faster for ViT-L on A100)

    Returns:
        dict: Dictionary object that contains (1) [N x D]-dim np.array of feature embeddings, and (2) [N x 1]-dim np.array of labels

    """
    all_embeddings, all_labels = [], []
    batch_size = dataloader.batch_size
    device = next(model.parameters())[0].device

    for batch_idx, (batch, target) in tqdm(
        enumerate(dataloader), total=len(dataloader)
    ):
        remaining = batch.shape[0]
        if remaining != batch_size:
            _ = torch.zeros((batch_size - remaining,) + batch.shape[1:]).type(
                batch.type()
            )
            batch = torch.vstack([batch, _])

        batch = batch.to(device, non_blocking=True)
        with torch.inference_mode(), torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=use_amp):
            embeddings = model(batch).detach().float().cpu()[:remaining, :]
            labels = target.numpy()[:remaining]
            assert not torch.isnan(embeddings).any()

        all_embeddings.append(embeddings)
        all_labels.append(labels)

    asset_dict = {
        "embeddings": np.vstack(all_embeddings).astype(np.float32),
        "labels": np.concatenate(all_labels),
    }

    return asset_dict


def save_asset_dict(asset_dict: dict, save_path: str, mode: str = "w"):
    """Write the embeddings/labels dict to an .h5 file (one dataset per key)."""
    os.makedirs(os.path.dirname(save_path) or ".", exist_ok=True)
    with h5py.File(save_path, mode) as f:
        for key, val in asset_dict.items():
            if key in f:
                del f[key]
            f.create_dataset(key, data=val, compression="gzip")
    return save_path


def load_asset_dict(load_path: str, keys: Optional[list] = None):
    with h5py.File(load_path, "r") as f:
        keys = keys or list(f.keys())
        return {k: f[k][:] for k in keys}


def extract_and_cache(model, dataset, cache_path, batch_size=256, num_workers=8, overwrite=False):
    """Extract features for ``dataset`` once and cache them on disk; reuse the cache afterwards."""
    if os.path.isfile(cache_path) and not overwrite:
        return load_asset_dict(cache_path)
    loader = build_patch_loader(dataset, batch_size=batch_size, num_workers=num_workers)
    asset_dict = extract_patch_features_from_dataloader(model, loader)
    save_asset_dict(asset_dict, cache_path)
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    return asset_dict
