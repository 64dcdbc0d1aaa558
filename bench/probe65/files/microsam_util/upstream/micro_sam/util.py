"""
Helper functions for downloading Segment Anything models and predicting image embeddings.
"""
import os
import hashlib
import warnings
from pathlib import Path
from typing import Any, Dict, Iterable, Optional, Tuple, Union, Callable

import numpy as np
import pooch
import torch
import zarr
from skimage.measure import regionprops
from skimage.segmentation import relabel_sequential

from segment_anything.predictor import SamPredictor

try:
    from mobile_sam import sam_model_registry
    VIT_T_SUPPORT = True
except ImportError:
    from segment_anything import sam_model_registry
    VIT_T_SUPPORT = False

# this is the default model used in micro_sam
# currently set to the default vit_l
_DEFAULT_MODEL = "vit_l"

# The valid model types. Each type corresponds to the architecture of the
# vision transformer used within SAM.
_MODEL_TYPES = ("vit_l", "vit_b", "vit_h", "vit_t")


def get_cache_directory() -> None:
    """Get micro-sam cache directory location.

    Users can set the MICROSAM_CACHEDIR environment variable for a custom cache directory.
    """
    default_cache_directory = os.path.expanduser(pooch.os_cache("micro_sam"))
    cache_directory = Path(os.environ.get("MICROSAM_CACHEDIR", default_cache_directory))
    return cache_directory


#
# Functionality for model download and export
#


def _get_default_device():
    # check that we're in CI and use the CPU if we are
    # otherwise the tests may run out of memory on MAC if MPS is used.
    if os.getenv("GITHUB_ACTIONS") == "true":
        return "cpu"
    # Use cuda enabled gpu if it's available.
    if torch.cuda.is_available():
        device = "cuda"
    # As second priority use mps.
    # See https://pytorch.org/docs/stable/notes/mps.html for details
    elif torch.backends.mps.is_available() and torch.backends.mps.is_built():
        print("Using apple MPS device.")
        device = "mps"
    # Use the CPU as fallback.
    else:
        device = "cpu"
    return device


def get_device(device: Optional[Union[str, torch.device]] = None) -> Union[str, torch.device]:
    """Get the torch device.

    If no device is passed the default device for your system is used.
    Else it will be checked if the device you have passed is supported.

    Args:
        device: The input device.

    Returns:
        The device.
    """
    if device is None or device == "auto":
        device = _get_default_device()
    else:
        device_type = device if isinstance(device, str) else device.type
        if device_type.lower() == "cuda":
            if not torch.cuda.is_available():
                raise RuntimeError("PyTorch CUDA backend is not available.")
        elif device_type.lower() == "mps":
            if not (torch.backends.mps.is_available() and torch.backends.mps.is_built()):
                raise RuntimeError("PyTorch MPS backend is not available or is not built correctly.")
        elif device_type.lower() == "cpu":
            pass  # cpu is always available
        else:
            raise RuntimeError(f"Unsupported device: {device}\n"
                               "Please choose from 'cpu', 'cuda', or 'mps'.")
    return device


def _available_devices():
    available_devices = []
    for i in ["cuda", "mps", "cpu"]:
        try:
            device = get_device(i)
        except RuntimeError:
            pass
        else:
            available_devices.append(device)
    return available_devices


def get_sam_model(
    model_type: str = _DEFAULT_MODEL,
    device: Optional[Union[str, torch.device]] = None,
    checkpoint_path: Optional[Union[str, os.PathLike]] = None,
    return_sam: bool = False,
) -> SamPredictor:
    """Get the SegmentAnything Predictor."""
    device = get_device(device)
    if checkpoint_path is None:
        checkpoint_path = _download_model(model_type)

    if model_type == "vit_t" and not VIT_T_SUPPORT:
        raise RuntimeError(
            "mobile_sam is required for the vit-tiny. "
            "You can install it via 'pip install git+https://github.com/ChaoningZhang/MobileSAM.git'"
        )

    state = torch.load(checkpoint_path, map_location=device)
    sam = sam_model_registry[model_type]()
    sam.load_state_dict(state)
    sam.to(device=device)
    predictor = SamPredictor(sam)
    predictor.model_type = model_type
    if return_sam:
        return predictor, sam
    return predictor


def _download_model(model_type):
    urls = {
        "vit_h": "https://dl.fbaipublicfiles.com/segment_anything/sam_vit_h_4b8939.pth",
        "vit_l": "https://dl.fbaipublicfiles.com/segment_anything/sam_vit_l_0b3195.pth",
        "vit_b": "https://dl.fbaipublicfiles.com/segment_anything/sam_vit_b_01ec64.pth",
    }
    return pooch.retrieve(urls[model_type], known_hash=None, path=get_cache_directory())


@torch.no_grad()
def _compute_tiled_embeddings(predictor, input_, tile_shape, halo, f, pbar_init=None, pbar_update=None):
    """Image embeddings of overlapping tiles, stored to the zarr group f."""
    from .tiling import blocking_with_halo
    tiling = blocking_with_halo(input_.shape[:2], tile_shape, halo)
    features = f.require_group("features")
    for tile_id, (outer, inner) in enumerate(tiling):
        tile_input = input_[outer]
        predictor.reset_image()
        predictor.set_image(tile_input)
        tile_features = predictor.get_image_embedding()
        ds = features.create_dataset(str(tile_id), data=tile_features.cpu().numpy(), compression="gzip",
                                     chunks=tile_features.shape, overwrite=True)
        ds.attrs["original_size"] = predictor.original_size
        ds.attrs["input_size"] = predictor.input_size
    return features


def precompute_image_embeddings(predictor, input_, save_path=None, ndim=None, tile_shape=None, halo=None):
    """Compute the image embeddings (output of the encoder) for the input."""
    ndim = input_.ndim if ndim is None else ndim
    if save_path is None:
        f = zarr.group()
    else:
        f = zarr.open(save_path, "a")
    if tile_shape is not None:
        features = _compute_tiled_embeddings(predictor, input_, tile_shape, halo, f)
        return {"features": features, "input_size": None, "original_size": None}
    predictor.reset_image()
    predictor.set_image(input_)
    features = predictor.get_image_embedding()
    return {"features": features.cpu().numpy(), "input_size": predictor.input_size,
            "original_size": predictor.original_size}
