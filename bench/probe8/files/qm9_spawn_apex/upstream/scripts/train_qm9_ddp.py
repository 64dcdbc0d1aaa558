"""Multi-GPU training of a SchNet-style model on QM9 (one process per GPU via mp.spawn).

Mixed precision and LAMB come from NVIDIA apex; gradient norms are computed with apex's
multi-tensor L2 norm kernel so that clipping costs one launch instead of one per parameter.

    python scripts/train_qm9_ddp.py --data ./data/qm9 --target 7 --epochs 300 --opt-level O1
"""
import argparse
import os
import random
import shutil
import time
import warnings

import numpy as np
import torch
import torch.backends.cudnn as cudnn
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data.distributed import DistributedSampler
from torch_geometric.datasets import QM9
from torch_geometric.loader import DataLoader

import amp_C
from apex import amp
from apex.multi_tensor_apply import multi_tensor_applier
from apex.optimizers import FusedLAMB
from apex.parallel import DistributedDataParallel as ApexDDP
from apex.parallel import convert_syncbn_model

from schnetpack_lite.nn.schnet import SchNet, energy_force_loss

TARGETS = ["mu", "alpha", "homo", "lumo", "gap", "r2", "zpve", "U0", "U", "H", "G", "Cv"]


def parse_args():
    p = argparse.ArgumentParser(description="QM9 training")
    p.add_argument("--data", default="./data/qm9")
    p.add_argument("--target", type=int, default=7)
    p.add_argument("--epochs", type=int, default=300)
    p.add_argument("-b", "--batch-size", type=int, default=128, help="per-GPU batch size")
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--wd", type=float, default=0.01)
    p.add_argument("--clip", type=float, default=10.0)
    p.add_argument("--workers", type=int, default=6)
    p.add_argument("--opt-level", default="O1")
    p.add_argument("--world-size", type=int, default=1, help="number of nodes")
    p.add_argument("--rank", type=int, default=0, help="node rank")
    p.add_argument("--dist-url", default="tcp://127.0.0.1:23456")
    p.add_argument("--dist-backend", default="nccl")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--gpu", type=int, default=None, help="GPU id to use (disables multiprocessing)")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--out", default="checkpoints/qm9")
    return p.parse_args()


def main():
    args = parse_args()
    if args.seed is not None:
        random.seed(args.seed)
        torch.manual_seed(args.seed)
        cudnn.deterministic = True
        warnings.warn("You have chosen to seed training. This will turn on the CUDNN deterministic setting, "
                      "which can slow down your training considerably!")
    if args.gpu is not None:
        warnings.warn("You have chosen a specific GPU. This will completely disable data parallelism.")

    ngpus_per_node = torch.cuda.device_count()
    if args.gpu is None:
        args.world_size = ngpus_per_node * args.world_size
        mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))
    else:
        main_worker(args.gpu, ngpus_per_node, args)


def grad_l2_norm(model, overflow_buf):
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    norm, _ = multi_tensor_applier(amp_C.multi_tensor_l2norm, overflow_buf, [grads], False)
    return norm


def main_worker(gpu, ngpus_per_node, args):
    args.gpu = gpu
    distributed = args.world_size > 1
    if distributed:
        args.rank = args.rank * ngpus_per_node + gpu
        dist.init_process_group(backend=args.dist_backend, init_method=args.dist_url,
                                world_size=args.world_size, rank=args.rank)
    torch.cuda.set_device(args.gpu)
    is_main = args.rank == 0

    dataset = QM9(args.data)
    dataset.data.y = dataset.data.y[:, args.target]
    perm = torch.randperm(len(dataset), generator=torch.Generator().manual_seed(0))
    train_ds, val_ds = dataset[perm[:110000]], dataset[perm[110000:120000]]
    mean = float(train_ds.data.y[perm[:110000]].mean())
    std = float(train_ds.data.y[perm[:110000]].std())

    train_sampler = DistributedSampler(train_ds) if distributed else None
    train_loader = DataLoader(train_ds, batch_size=args.batch_size, shuffle=train_sampler is None,
                              sampler=train_sampler, num_workers=args.workers, pin_memory=True, drop_last=True)
    val_loader = DataLoader(val_ds, batch_size=args.batch_size, num_workers=args.workers, pin_memory=True)

    model = SchNet(n_atom_basis=128, n_filters=128, n_interactions=6, cutoff=10.0, mean=mean, std=std)
    model = convert_syncbn_model(model)
    model.cuda(args.gpu)
    optimizer = FusedLAMB(model.parameters(), lr=args.lr, weight_decay=args.wd)
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level, loss_scale="dynamic")
    if distributed:
        model = ApexDDP(model, delay_allreduce=True)
    if args.compile:
        model = torch.compile(model, mode="max-autotune-no-cudagraphs")
    cudnn.benchmark = True

    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, epochs=args.epochs,
                                                    steps_per_epoch=len(train_loader))
    overflow_buf = torch.cuda.IntTensor([0])
    best = float("inf")
    for epoch in range(args.epochs):
        if distributed:
            train_sampler.set_epoch(epoch)
        model.train()
        t0 = time.time()
        total, count = 0.0, 0
        for step, batch in enumerate(train_loader):
            batch = batch.cuda(args.gpu, non_blocking=True)
            pred = model(batch.z, batch.pos, batch.batch)
            loss, _ = energy_force_loss(pred, {"energy": batch.y})
            optimizer.zero_grad(set_to_none=True)
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            norm = grad_l2_norm(model, overflow_buf)
            if args.clip > 0 and torch.isfinite(norm) and norm > args.clip:
                for p in amp.master_params(optimizer):
                    if p.grad is not None:
                        p.grad.mul_(args.clip / norm)
            optimizer.step()
            scheduler.step()
            total += loss.item() * batch.num_graphs
            count += batch.num_graphs
        mae = evaluate(model, val_loader, args.gpu, std)
        if is_main:
            print(f"epoch {epoch:4d} train_mse {total / count:.5f} val_mae {mae:.5f} {time.time() - t0:.1f}s")
            os.makedirs(args.out, exist_ok=True)
            state = {"epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                     "amp": amp.state_dict(), "val_mae": mae}
            torch.save(state, os.path.join(args.out, "last.pt"))
            if mae < best:
                best = mae
                shutil.copyfile(os.path.join(args.out, "last.pt"), os.path.join(args.out, "best.pt"))
    if distributed:
        dist.destroy_process_group()


@torch.no_grad()
def evaluate(model, loader, gpu, std):
    model.eval()
    err = torch.zeros(2, device=f"cuda:{gpu}")
    for batch in loader:
        batch = batch.to(f"cuda:{gpu}", non_blocking=True)
        pred = model(batch.z, batch.pos, batch.batch)["energy"]
        err[0] += (pred - batch.y).abs().sum()
        err[1] += batch.num_graphs
    if dist.is_initialized():
        dist.all_reduce(err)
    return float(err[0] / err[1])


if __name__ == "__main__":
    main()
