import argparse
import os
import sys

import numpy as np
import torch
import torch.backends.cudnn as cudnn

from models import ResGCN
from models.st_gcn import StGCNEmbed


def parse_option():
    parser = argparse.ArgumentParser(description="Training model on gait sequence")
    parser.add_argument("dataset", choices=["casia-b", "outdoor-gait", "tum-gaid"])
    parser.add_argument("train_data_path", help="Path to train data CSV")
    parser.add_argument("--valid_data_path", help="Path to validation data CSV")
    parser.add_argument("--valid_split", type=float, default=0.2)
    parser.add_argument("--checkpoint_path", help="Path to checkpoint to resume")
    parser.add_argument("--weight_path", help="Path to weights for model")

    # Optionals
    parser.add_argument("--cuda", type=int, default=0, help="Cuda device id")
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--start_epoch", type=int, default=1)
    parser.add_argument("--log_interval", type=int, default=10)
    parser.add_argument("--save_interval", type=int, default=50)
    parser.add_argument("--batch_size", type=int, default=128)
    parser.add_argument("--batch_size_validation", type=int, default=256)
    parser.add_argument("--num_workers", type=int, default=4)
    parser.add_argument("--learning_rate", type=float, default=1e-2)
    parser.add_argument("--weight_decay", type=float, default=1e-5)
    parser.add_argument("--point_noise_std", type=float, default=0.05)
    parser.add_argument("--joint_noise_std", type=float, default=0.1)
    parser.add_argument("--flip_probability", type=float, default=0.5)
    parser.add_argument("--mirror_probability", type=float, default=0.5)
    parser.add_argument("--use_amp", action="store_true")
    parser.add_argument("--tune", action="store_true")
    parser.add_argument("--shuffle", action="store_true")

    parser.add_argument("--sequence_length", type=int, default=60)
    parser.add_argument("--embedding_layer_size", type=int, default=128)
    parser.add_argument("--temp", type=float, default=0.07)
    parser.add_argument("--network_name", default="resgcn-n39-r8")
    parser.add_argument("--feature_type", default="j",
                        help="j: joints, b: bones, jb: joints+bones, jvb: joints+velocity+bones")
    parser.add_argument("--exp_name", help="Name of the experiment")

    opt = parser.parse_args()

    # Sanitize opts
    opt.network_name = opt.network_name.lower()
    opt.feature_type = opt.feature_type.lower()

    return opt


def setup_environment(opt):
    opt.cuda_id = opt.cuda
    opt.cuda = opt.cuda >= 0 and torch.cuda.is_available()
    opt.cuda_device = torch.device(f"cuda:{opt.cuda_id}" if opt.cuda else "cpu")
    if opt.cuda:
        torch.cuda.set_device(opt.cuda_device)
        cudnn.benchmark = True

    opt.model_path = os.path.join("../save", opt.exp_name or "default")
    os.makedirs(opt.model_path, exist_ok=True)
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
    if opt.feature_type == "jb":
        model_args["num_input"] = 2
    elif opt.feature_type == "jvb":
        model_args["num_input"] = 3
    return ResGCN.create(opt.network_name, **model_args)


def get_model_stgcn(graph, opt):
    return StGCNEmbed(
        in_channels=3,
        graph_args={"layout": graph.layout, "strategy": "spatial"},
        edge_importance_weighting=True,
        embedding_layer_size=opt.embedding_layer_size,
    )


def get_model(graph, opt):
    if opt.network_name.startswith("resgcn"):
        return get_model_resgcn(graph, opt)
    if opt.network_name == "st-gcn":
        return get_model_stgcn(graph, opt)
    print(f"Unknown network name {opt.network_name}", file=sys.stderr)
    sys.exit(1)


def get_trainer(model, opt, steps_per_epoch):
    optimizer = torch.optim.Adam(model.parameters(), lr=opt.learning_rate, weight_decay=opt.weight_decay)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, opt.learning_rate, epochs=opt.epochs, steps_per_epoch=steps_per_epoch
    )
    return optimizer, scheduler


def load_checkpoint(model, optimizer, scheduler, scaler, opt):
    if opt.checkpoint_path is not None:
        checkpoint = torch.load(opt.checkpoint_path, map_location=opt.cuda_device)
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        scheduler.load_state_dict(checkpoint["scheduler"])
        scaler.load_state_dict(checkpoint["scaler"])
        opt.start_epoch = checkpoint["epoch"] + 1
        print(f"Resumed from {opt.checkpoint_path} (epoch {checkpoint['epoch']})")
    if opt.weight_path is not None:
        checkpoint = torch.load(opt.weight_path, map_location=opt.cuda_device)
        model.load_state_dict(checkpoint)


def save_model(model, optimizer, scheduler, scaler, opt, epoch, save_file):
    print("==> Saving...")
    state = {
        "opt": opt,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "scaler": scaler.state_dict(),
        "epoch": epoch,
    }
    torch.save(state, save_file)
    del state


def get_feature_shape(opt):
    channels = {"j": 3, "b": 3, "jb": 6, "jvb": 9}[opt.feature_type]
    return channels, opt.sequence_length, 17


def seed_everything(seed=0):
    np.random.seed(seed)
    torch.manual_seed(seed)
