import logging
from typing import Optional, Tuple, Any

import torch

from .model_pytorch import Model
from . import modelconfigs


def load_model_state_dict(state_dict):
    model_state_dict = state_dict["model"]
    # Strip the "module." prefix left by DistributedDataParallel, if present
    if any(key.startswith("module.") for key in model_state_dict.keys()):
        model_state_dict = {
            (key[len("module."):] if key.startswith("module.") else key): value
            for key, value in model_state_dict.items()
        }
    # Older checkpoints used a different name for the score belief offset buffer
    for key in list(model_state_dict.keys()):
        if key.endswith("score_belief_offset_vector"):
            del model_state_dict[key]
    return model_state_dict


def load_swa_model_state_dict(state_dict):
    if "swa_model" not in state_dict:
        return None
    swa_model_state_dict = {}
    for key, value in state_dict["swa_model"].items():
        if key.startswith("module."):
            swa_model_state_dict[key[len("module."):]] = value
        elif key == "n_averaged":
            swa_model_state_dict[key] = value
    return swa_model_state_dict


def load_model(checkpoint_file, use_swa, device, pos_len=19, verbose=False) -> Tuple[Model, Optional[torch.nn.Module], Any]:
    from torch.optim.swa_utils import AveragedModel

    # Always load onto the cpu first; callers move the model where they want it
    state_dict = torch.load(checkpoint_file, map_location="cpu")
    model_config = state_dict["config"] if "config" in state_dict else modelconfigs.config_of_name["b6c96"]
    logging.info(str(model_config))
    model = Model(model_config, pos_len)
    model.initialize()

    model_state_dict = load_model_state_dict(state_dict)
    model.load_state_dict(model_state_dict, strict=False)
    model.to(device)

    swa_model = None
    if use_swa:
        swa_model = AveragedModel(model)
        swa_model_state_dict = load_swa_model_state_dict(state_dict)
        if swa_model_state_dict is not None:
            swa_model.load_state_dict(swa_model_state_dict)
        else:
            logging.warning("No swa model found in checkpoint, using the raw model")
            swa_model = None

    if verbose:
        total_num_params = sum(p.numel() for p in model.parameters())
        logging.info(f"Loaded model with {total_num_params} parameters from {checkpoint_file}")

    other_state_dict = {}
    other_state_dict["metrics"] = state_dict.get("metrics")
    other_state_dict["train_state"] = state_dict.get("train_state")
    return (model, swa_model, other_state_dict)
