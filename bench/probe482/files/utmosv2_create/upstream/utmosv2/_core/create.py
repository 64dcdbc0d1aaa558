from __future__ import annotations

import importlib
import os
import subprocess
from pathlib import Path
from types import SimpleNamespace

import torch

from utmosv2._core.model import UTMOSv2Model
from utmosv2._settings import configure_execution
from utmosv2.utils import get_model

_UTMOSV2_CHACHE = Path(os.getenv("UTMOSV2_CHACHE", "~/.cache/utmosv2")).expanduser()
_MODEL_URL = "https://huggingface.co/spaces/sarulab-speech/UTMOSv2"


def _download_all_models() -> None:
    """Fetch the released checkpoints with git-lfs into the local cache."""
    _UTMOSV2_CHACHE.mkdir(parents=True, exist_ok=True)
    if (_UTMOSV2_CHACHE / "models").exists():
        return
    subprocess.run(
        ["git", "clone", "--depth", "1", _MODEL_URL, str(_UTMOSV2_CHACHE / "_repo")],
        check=True,
        env={**os.environ, "GIT_LFS_SKIP_SMUDGE": "0"},
    )
    (_UTMOSV2_CHACHE / "_repo" / "models").rename(_UTMOSV2_CHACHE / "models")


def create_model(
    pretrained: bool = True,
    config: str = "fusion_stage3",
    fold: int = 0,
    checkpoint_path: Path | str | None = None,
    seed: int = 42,
    device: str | torch.device = "cuda:0" if torch.cuda.is_available() else "cpu",
) -> UTMOSv2Model:
    """
    Create a UTMOSv2 model with the specified configuration and optional pretrained weights.

    Args:
        pretrained (bool):
            If True, loads pretrained weights. Defaults to True.
        config (str):
            The configuration name to load for the model. Defaults to "fusion_stage3".
        fold (int):
            The fold number for the pretrained weights (used for model selection). Defaults to 0.
        checkpoint_path (Path | str | None):
            Path to a specific model checkpoint. If None, the checkpoint downloaded from GitHub is used. Defaults to None.
        seed (int):
            The seed used for model training to select the correct checkpoint. Defaults to 42.
        device (str | torch.device):
            The device on which the model will be loaded. Defaults to the first GPU if available.

    Returns:
        UTMOSv2Model: The initialized UTMOSv2 model.

    Raises:
        FileNotFoundError: If the specified checkpoint file is not found.
    """
    _cfg = importlib.import_module(f"utmosv2.config.{config}")
    # Avoid issues with pickling `types.ModuleType`,
    # making it easier to use with multiprocessing, DDP, etc.
    cfg = SimpleNamespace(
        **{k: v for k, v in _cfg.__dict__.items() if not k.startswith("__")}
    )
    configure_execution(cfg)

    if pretrained:
        if checkpoint_path is None:
            checkpoint_path = (
                _UTMOSV2_CHACHE / "models" / config / f"fold{fold}_s{seed}_best_model.pth"
            )
            _download_all_models()
        checkpoint_path = Path(checkpoint_path)
        if not checkpoint_path.exists():
            raise FileNotFoundError(f"Checkpoint file {checkpoint_path} does not exist.")
        cfg.weight = checkpoint_path
    else:
        cfg.weight = None

    model = get_model(cfg, device)
    model.eval()

    return UTMOSv2Model(model, cfg)
