import argparse
import os
import random

import numpy as np
import torch

from models import ResGCN
from models.ResGCNv1 import ResGCNInputBranch, ResGCN_Module
from models.ResGCNv1.modules import Basic_Block, Bottleneck_Block, AttGCN_Module


def parse_option():
    parser = argparse.ArgumentParser(description="Training model on gait sequence")
    parser.add_argument("dataset", choices=["casia-b", "outdoor-gait", "tum-gaid"])
    parser.add_argument("train_data_path", help="Path to train data CSV")
    parser.add_argument("--valid_data_path", help="Path to validation data CSV")
    parser.add_argument("--valid_split", type=float, default=0.2)

    parser.add_argument("--checkpoint_path", help="Path to checkpoint to resume")
    parser.add_argument("--weight_path", help="Path to weights for model")

    # Optionals
    parser.add_argument("--gpus", default="0", help="-1 for CPU, use comma for multiple gpus")
    parser.add_argument("--num_workers", type=int, default=4)
    parser.add_argument("--use_amp", action="store_true", help="Use automatic mixed precision")
    parser.add_argument("--tags", type=str, default="")
    parser.add_argument("--exp_name", help="Name of the experiment")

    parser.add_argument("--network_name", default="resgcn-n39-r8")
    parser.add_argument("--sequence_length", type=int, default=60)
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--start_epoch", type=int, default=1)
    parser.add_argument("--log_interval", type=int, default=10)
    parser.add_argument("--save_interval", type=int, default=10)
    parser.add_argument("--batch_size", type=int, default=128)
    parser.add_argument("--batch_size_validation", type=int, default=256)
    parser.add_argument("--embedding_layer_size", type=int, default=128)
    parser.add_argument("--temp", type=float, default=0.07)
    parser.add_argument("--learning_rate", type=float, default=1e-5)
    parser.add_argument("--point_noise_std", type=float, default=0.05)
    parser.add_argument("--joint_noise_std", type=float, default=0.1)
    parser.add_argument("--flip_probability", type=float, default=0.5)
    parser.add_argument("--mirror_probability", type=float, default=0.5)
    parser.add_argument("--weight_decay", type=float, default=1e-5)
    parser.add_argument("--shuffle", action="store_true")
    parser.add_argument("--seed", type=int, default=0)

    opt = parser.parse_args()

    # Sanity checks
    if opt.valid_data_path is None and opt.valid_split is None:
        raise ValueError("Validation data path or split must be set")

    return opt


def setup_environment(opt):
    opt.cuda = opt.gpus != "-1"
    os.environ["CUDA_VISIBLE_DEVICES"] = opt.gpus
    if opt.cuda and not torch.cuda.is_available():
        raise RuntimeError("No CUDA device available, use --gpus -1 to train on CPU")

    random.seed(opt.seed)
    np.random.seed(opt.seed)
    torch.manual_seed(opt.seed)
    if opt.cuda:
        torch.cuda.manual_seed(opt.seed)

    opt.model_path = os.path.join("save", opt.exp_name or opt.network_name)
    os.makedirs(opt.model_path, exist_ok=True)
    opt.tb_path = os.path.join("runs", opt.exp_name or opt.network_name)
    return opt


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def get_model_resgcn(graph, opt):
    model_args = {
        "A": torch.tensor(graph.A, dtype=torch.float32, requires_grad=False),
        "num_class": opt.embedding_layer_size,
        "num_input": 1,
        "num_channel": 3,
        "parts": graph.parts,
    }
    return ResGCN(opt.network_name, **model_args), model_args


def load_checkpoint(model, optimizer, scheduler, opt):
    checkpoint = torch.load(opt.checkpoint_path)
    model.load_state_dict(checkpoint["model"])
    if optimizer is not None and "optimizer" in checkpoint:
        optimizer.load_state_dict(checkpoint["optimizer"])
    if scheduler is not None and "scheduler" in checkpoint:
        scheduler.load_state_dict(checkpoint["scheduler"])
    opt.start_epoch = checkpoint.get("epoch", 0) + 1
    print("=> loaded checkpoint '{}' (epoch {})".format(opt.checkpoint_path, checkpoint.get("epoch", 0)))
    return model, optimizer, scheduler


def save_model(model, optimizer, scheduler, opt, epoch, save_file):
    print("==> Saving...")
    state = {
        "opt": opt,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict() if scheduler is not None else None,
        "epoch": epoch,
    }
    torch.save(state, save_file)
    del state
