# Copyright (c) Microsoft Corporation.
# Licensed under the MIT License.

import os
from pathlib import Path

import torch

MODELS_PROJECT_ROOT = Path(__file__).resolve().parents[2]
PROJECT_ROOT = MODELS_PROJECT_ROOT.parent
print(f"MODELS_PROJECT_ROOT: {MODELS_PROJECT_ROOT}")

# Set `PROJECT_ROOT` as an environment variable so it can be used in Hydra configs.
os.environ["PROJECT_ROOT"] = str(PROJECT_ROOT)

PRETRAINED_MODEL_DIR = PROJECT_ROOT / "checkpoints"

DEFAULT_SAMPLING_CONFIG_PATH = Path(__file__).resolve().parents[3] / "sampling_conf"

GENERATED_CRYSTALS_ZIP_FILE_NAME = "generated_crystals_cif.zip"
GENERATED_CRYSTALS_EXTXYZ_FILE_NAME = "generated_crystals.extxyz"

MAX_ATOMIC_NUM = 100

# fmt: off
SELECTED_ATOMIC_NUMBERS = [
    1, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28,
    29, 30, 31, 32, 33, 34, 35, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52,
    53, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76,
    77, 78, 79, 80, 81, 82, 83,
]
# fmt: on


def get_device() -> torch.device:
    """Pick the fastest available accelerator (CUDA, then Apple MPS, then CPU)."""
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def get_pyg_device() -> torch.device:
    """Some torch_scatter / torch_sparse kernels have no MPS implementation;
    graph construction falls back to CPU there."""
    device = get_device()
    if device.type == "mps":
        return torch.device("cpu")
    return device
