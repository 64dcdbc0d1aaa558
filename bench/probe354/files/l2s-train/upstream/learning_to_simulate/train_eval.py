# Copyright 2021 The Learning-to-Simulate PyTorch port authors.
#
# PyTorch re-implementation of
#   "Learning to Simulate Complex Physics with Graph Networks" (Sanchez-Gonzalez et al., ICML 2020)
# Training and evaluation entry point. Reads the TFRecord datasets converted to
# .pt shards by `convert_tfrecord.py` and trains the encode-process-decode model
# on one or several GPUs.
"""Train / evaluate the learned particle simulator.

    python -m learning_to_simulate.train_eval --dataset WaterRamps --gpu 0
    python -m learning_to_simulate.train_eval --dataset Goop --gpus 0,1 --batch_size 4
    python -m learning_to_simulate.train_eval --mode eval_rollout --ckpt runs/WaterRamps/best.pt
"""
import argparse
import json
import logging
import os
import random
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.tensorboard import SummaryWriter
from torch_geometric.data import Data
from torch_geometric.loader import DataListLoader, DataLoader
from torch_geometric.nn import DataParallel

from learning_to_simulate.dataset import OneStepDataset, RolloutDataset
from learning_to_simulate.model import LearnedSimulator
from learning_to_simulate import noise_utils

logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("l2s")

INPUT_SEQUENCE_LENGTH = 6
KINEMATIC_PARTICLE_ID = 3


def get_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", default="train", choices=["train", "eval", "eval_rollout"])
    p.add_argument("--data_root", default="datasets/")
    p.add_argument("--dataset", default="WaterDropSample")
    p.add_argument("--out_dir", default="runs/")
    p.add_argument("--ckpt", default=None, help="checkpoint to resume from / evaluate")
    p.add_argument("--batch_size", type=int, default=2)
    p.add_argument("--num_steps", type=int, default=2_000_000)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--lr_final", type=float, default=1e-6)
    p.add_argument("--lr_decay_steps", type=int, default=5_000_000)
    p.add_argument("--noise_std", type=float, default=6.7e-4)
    p.add_argument("--message_passing_steps", type=int, default=10)
    p.add_argument("--latent_size", type=int, default=128)
    p.add_argument("--eval_every", type=int, default=20_000)
    p.add_argument("--save_every", type=int, default=100_000)
    p.add_argument("--num_workers", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--gpu", type=int, default=0, help="GPU id for single-GPU runs (-1 for CPU)")
    p.add_argument("--gpus", type=str, default=None, help="comma separated GPU ids for DataParallel")
    p.add_argument("--deterministic", action="store_true", help="cudnn deterministic mode (slower)")
    return p.parse_args()


def seed_everything(seed, deterministic=False):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    if deterministic:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    else:
        torch.backends.cudnn.benchmark = True


def select_device(args):
    """Pick the training device. Returns (device, list_of_gpu_ids_or_None)."""
    if args.gpu < 0 or not torch.cuda.is_available():
        log.warning("CUDA not available (or --gpu -1): training on CPU will be very slow")
        return torch.device("cpu"), None
    if args.gpus:
        ids = [int(i) for i in args.gpus.split(",")]
        torch.cuda.set_device(ids[0])
        return torch.device("cuda", ids[0]), ids
    torch.cuda.set_device(args.gpu)
    return torch.device(f"cuda:{args.gpu}"), None


def load_metadata(data_root, dataset):
    with open(os.path.join(data_root, dataset, "metadata.json")) as f:
        return json.load(f)


def build_model(metadata, args, device):
    normalization_stats = {
        "acceleration": {
            "mean": torch.tensor(metadata["acc_mean"], dtype=torch.float32),
            "std": torch.sqrt(torch.tensor(metadata["acc_std"]) ** 2 + args.noise_std ** 2),
        },
        "velocity": {
            "mean": torch.tensor(metadata["vel_mean"], dtype=torch.float32),
            "std": torch.sqrt(torch.tensor(metadata["vel_std"]) ** 2 + args.noise_std ** 2),
        },
    }
    model = LearnedSimulator(
        dim=metadata["dim"],
        connectivity_radius=metadata["default_connectivity_radius"],
        bounds=metadata["bounds"],
        normalization_stats=normalization_stats,
        num_particle_types=9,
        latent_size=args.latent_size,
        message_passing_steps=args.message_passing_steps,
    )
    return model.to(device)


def lr_at(step, args):
    # exponential decay from lr to lr_final as in the reference TF implementation
    return args.lr_final + (args.lr - args.lr_final) * (0.1 ** (step / args.lr_decay_steps))


def one_step_loss(model, batch, args):
    """MSE on normalized accelerations of non-kinematic particles."""
    noise = noise_utils.get_random_walk_noise_for_position_sequence(batch.position, args.noise_std)
    non_kinematic = batch.particle_type != KINEMATIC_PARTICLE_ID
    noise = noise * non_kinematic.view(-1, 1, 1)
    pred_acc, target_acc = model.predict_accelerations(batch, noise)
    loss = ((pred_acc - target_acc) ** 2).sum(dim=-1)
    loss = (loss * non_kinematic).sum() / non_kinematic.sum().clamp(min=1)
    return loss


@torch.no_grad()
def evaluate_one_step(model, loader, args, device):
    model.eval()
    total, count = 0.0, 0
    for batch in loader:
        batch = batch.to(device)
        loss = one_step_loss(model, batch, args)
        total += loss.item()
        count += 1
    model.train()
    return total / max(count, 1)


@torch.no_grad()
def rollout(model, traj, metadata, device):
    """Autoregressive rollout of one trajectory; returns predicted and true positions."""
    model.eval()
    positions = traj["position"].to(device)                  # (N, T, D)
    particle_type = traj["particle_type"].to(device)
    kinematic = (particle_type == KINEMATIC_PARTICLE_ID)[:, None]
    window = positions[:, :INPUT_SEQUENCE_LENGTH]
    preds = []
    nsteps = positions.shape[1] - INPUT_SEQUENCE_LENGTH
    for t in range(nsteps):
        data = Data(position=window, particle_type=particle_type,
                    batch=torch.zeros(window.shape[0], dtype=torch.long, device=device))
        nxt = model.predict_positions(data)
        nxt = torch.where(kinematic, positions[:, INPUT_SEQUENCE_LENGTH + t], nxt)
        preds.append(nxt)
        window = torch.cat([window[:, 1:], nxt[:, None]], dim=1)
    preds = torch.stack(preds, dim=1)
    mse = F.mse_loss(preds, positions[:, INPUT_SEQUENCE_LENGTH:]).item()
    model.train()
    return preds.cpu(), positions[:, INPUT_SEQUENCE_LENGTH:].cpu(), mse


def save_checkpoint(path, model, optimizer, step, best):
    state = model.module.state_dict() if isinstance(model, DataParallel) else model.state_dict()
    torch.save({"model": state, "optimizer": optimizer.state_dict(), "step": step, "best": best}, path)


def train(args):
    seed_everything(args.seed, args.deterministic)
    device, gpu_ids = select_device(args)
    metadata = load_metadata(args.data_root, args.dataset)
    run_dir = os.path.join(args.out_dir, args.dataset)
    os.makedirs(run_dir, exist_ok=True)
    writer = SummaryWriter(run_dir)

    model = build_model(metadata, args, device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    step, best = 0, float("inf")
    if args.ckpt:
        ckpt = torch.load(args.ckpt, map_location=device)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        step, best = ckpt["step"], ckpt.get("best", best)
        log.info("resumed from %s at step %d", args.ckpt, step)

    train_ds = OneStepDataset(os.path.join(args.data_root, args.dataset), "train", INPUT_SEQUENCE_LENGTH)
    valid_ds = OneStepDataset(os.path.join(args.data_root, args.dataset), "valid", INPUT_SEQUENCE_LENGTH)

    if gpu_ids is not None and len(gpu_ids) > 1:
        # torch_geometric's DataParallel scatters a *list* of Data objects over the GPUs.
        model = DataParallel(model, device_ids=gpu_ids)
        train_loader = DataListLoader(train_ds, batch_size=args.batch_size * len(gpu_ids), shuffle=True,
                                      num_workers=args.num_workers, persistent_workers=True)
        log.info("DataParallel over GPUs %s", gpu_ids)
    else:
        train_loader = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, drop_last=True,
                                  num_workers=args.num_workers, pin_memory=True, persistent_workers=True)
    valid_loader = DataLoader(valid_ds, batch_size=args.batch_size, shuffle=False, num_workers=2)

    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)

    model.train()
    t_last = time.time()
    while step < args.num_steps:
        for batch in train_loader:
            if step == 0 or step % 1000 == 0:
                start_evt.record()
            if isinstance(model, DataParallel):
                loss = one_step_loss_dp(model, batch, args)
            else:
                batch = batch.to(device, non_blocking=True)
                loss = one_step_loss(model, batch, args)

            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            for g in optimizer.param_groups:
                g["lr"] = lr_at(step, args)

            if step % 1000 == 0:
                end_evt.record()
                torch.cuda.synchronize()
                ms = start_evt.elapsed_time(end_evt)
                writer.add_scalar("train/loss", loss.item(), step)
                writer.add_scalar("train/lr", optimizer.param_groups[0]["lr"], step)
                writer.add_scalar("perf/step_ms", ms, step)
                writer.add_scalar("perf/gpu_mem_gb", torch.cuda.memory_allocated(device) / 2 ** 30, step)
                log.info("step %d loss %.6f  %.1f ms/step (wall %.1fs)", step, loss.item(), ms,
                         time.time() - t_last)
                t_last = time.time()

            if step > 0 and step % args.eval_every == 0:
                vloss = evaluate_one_step(model.module if isinstance(model, DataParallel) else model,
                                          valid_loader, args, device)
                writer.add_scalar("valid/one_step_mse", vloss, step)
                if vloss < best:
                    best = vloss
                    save_checkpoint(os.path.join(run_dir, "best.pt"), model, optimizer, step, best)
            if step > 0 and step % args.save_every == 0:
                save_checkpoint(os.path.join(run_dir, f"step_{step}.pt"), model, optimizer, step, best)

            step += 1
            if step >= args.num_steps:
                break

    save_checkpoint(os.path.join(run_dir, "last.pt"), model, optimizer, step, best)
    writer.close()


def one_step_loss_dp(model, data_list, args):
    """DataParallel variant: the wrapped module returns per-GPU (pred, target, mask) tuples."""
    for d in data_list:
        d.noise = noise_utils.get_random_walk_noise_for_position_sequence(d.position, args.noise_std)
    pred_acc, target_acc, non_kinematic = model(data_list)
    loss = ((pred_acc - target_acc) ** 2).sum(dim=-1)
    return (loss * non_kinematic).sum() / non_kinematic.sum().clamp(min=1)


def eval_rollout(args):
    device, _ = select_device(args)
    metadata = load_metadata(args.data_root, args.dataset)
    model = build_model(metadata, args, device)
    ckpt = torch.load(args.ckpt, map_location="cuda:0")
    model.load_state_dict(ckpt["model"])
    ds = RolloutDataset(os.path.join(args.data_root, args.dataset), "test")
    out_dir = os.path.join(args.out_dir, args.dataset, "rollouts")
    os.makedirs(out_dir, exist_ok=True)
    mses = []
    for i in range(len(ds)):
        pred, true, mse = rollout(model, ds[i], metadata, device)
        mses.append(mse)
        torch.save({"pred": pred, "true": true, "metadata": metadata}, os.path.join(out_dir, f"rollout_{i}.pt"))
        log.info("trajectory %d rollout MSE %.3e", i, mse)
    log.info("mean rollout MSE over %d trajectories: %.3e", len(mses), float(np.mean(mses)))


def main():
    args = get_args()
    if args.mode == "train":
        train(args)
    elif args.mode == "eval":
        device, _ = select_device(args)
        metadata = load_metadata(args.data_root, args.dataset)
        model = build_model(metadata, args, device)
        model.load_state_dict(torch.load(args.ckpt, map_location=device)["model"])
        ds = OneStepDataset(os.path.join(args.data_root, args.dataset), "test", INPUT_SEQUENCE_LENGTH)
        print("one-step MSE:", evaluate_one_step(model, DataLoader(ds, batch_size=args.batch_size), args, device))
    else:
        eval_rollout(args)


if __name__ == "__main__":
    main()
