import os
import json

import numpy as np
import torch


def print_model_params(model):
    n_parameters = sum(p.numel() for p in model.parameters())
    train_n_parameters = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print("============")
    print("number of params (M): %.2f" % (n_parameters / 1.e6))
    print("number train of params (M): %.2f" % (train_n_parameters / 1.e6))
    print("============")


def load_pretrained(args, save_dir, model, model_types="last", mdp=False):
    pretrained_object = torch.load(f"{save_dir}/{model_types}.pth", map_location="cpu")
    state_dict = pretrained_object["state_dict"]
    save_epoch = pretrained_object["epoch"]
    if mdp:
        for k in list(state_dict.keys()):
            if k.startswith("module."):
                state_dict[k[len("module."):]] = state_dict[k]
            del state_dict[k]
    model.load_state_dict(state_dict)
    torch.cuda.set_device(args.gpu)
    model = model.cuda(args.gpu)
    return model, save_epoch


def save_results(save_dir, results, fname="inference.json"):
    os.makedirs(save_dir, exist_ok=True)
    with open(os.path.join(save_dir, fname), mode="w") as io:
        json.dump(results, io, indent=4)


def gpu_memory_report(tag=""):
    """Small helper used while tuning the batch size of the transfer stage."""
    if not torch.cuda.is_available():
        return {}
    allocated = torch.cuda.memory_allocated() / 2 ** 30
    reserved = torch.cuda.memory_reserved() / 2 ** 30
    peak = torch.cuda.max_memory_allocated() / 2 ** 30
    print(f"[{tag}] allocated {allocated:.2f} GiB | reserved {reserved:.2f} GiB | peak {peak:.2f} GiB")
    return {"allocated": allocated, "reserved": reserved, "peak": peak}
