import torch
import numpy as np
import os

from .dkt import DKT
from .sakt import SAKT
from .saint import SAINT
from .akt import AKT

device = "cpu" if not torch.cuda.is_available() else "cuda"


def init_model(model_name, model_config, data_config, emb_type):
    if model_name == "dkt":
        model = DKT(data_config["num_c"], **model_config, emb_type=emb_type, emb_path=data_config["emb_path"]).to(device)
    elif model_name == "sakt":
        model = SAKT(data_config["num_c"], **model_config, emb_type=emb_type, emb_path=data_config["emb_path"]).to(device)
    elif model_name == "saint":
        model = SAINT(data_config["num_q"], data_config["num_c"], **model_config, emb_type=emb_type, emb_path=data_config["emb_path"]).to(device)
    elif model_name == "akt":
        model = AKT(data_config["num_c"], data_config["num_q"], **model_config, emb_type=emb_type, emb_path=data_config["emb_path"]).to(device)
    else:
        print("The wrong model name was used...")
        return None
    return model


def load_model(model_name, model_config, data_config, emb_type, ckpt_path):
    model = init_model(model_name, model_config, data_config, emb_type)
    net = torch.load(os.path.join(ckpt_path, emb_type + "_model.ckpt"), map_location=device)
    model.load_state_dict(net)
    return model


def describe_model(model):
    """Print a short parameter summary; handy when comparing configs across sweeps."""
    total, trainable = 0, 0
    for name, p in model.named_parameters():
        n = p.numel()
        total += n
        if p.requires_grad:
            trainable += n
    print(f"model: {getattr(model, 'model_name', type(model).__name__)}, "
          f"params: {total}, trainable: {trainable}, device: {next(model.parameters()).device}")
    return total, trainable


def export_embeddings(model, save_dir, emb_names=("q_embed", "qa_embed", "interaction_emb", "exercise_emb")):
    """Dump the learnt question / interaction embeddings to .npy for analysis notebooks."""
    os.makedirs(save_dir, exist_ok=True)
    saved = []
    for emb_name in emb_names:
        layer = getattr(model, emb_name, None)
        if layer is None:
            continue
        w = layer.weight.detach().cpu().numpy()
        np.save(os.path.join(save_dir, f"{model.model_name}_{emb_name}.npy"), w)
        saved.append(emb_name)
    return saved
