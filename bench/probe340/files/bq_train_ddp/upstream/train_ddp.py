"""Multi-GPU (DDP) imitation-learning trainer for BQ-NCO style models on CVRP.

The model is trained to predict the next node of an expert (HGS) solution from the
bisimulation-quotiented partial state; one sample = (remaining nodes, current node, next node).

    torchrun --standalone --nproc_per_node=8 train_ddp.py --problem cvrp --train_dataset ...
"""
import argparse
import datetime
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from learning.cvrp.dataset import CVRPDataset, collate_func_with_sample_suffix
from learning.cvrp.decoding import decode
from model.model import BQModel
from utils.misc import EpochMetrics, set_seed

try:
    from apex.optimizers import FusedAdam
except ImportError:
    FusedAdam = None


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--problem", type=str, default="cvrp")
    p.add_argument("--train_dataset", type=str, required=True)
    p.add_argument("--val_dataset", type=str, required=True)
    p.add_argument("--output_dir", type=str, default="output")
    p.add_argument("--pretrained_model", type=str, default=None)
    p.add_argument("--nb_epochs", type=int, default=1000)
    p.add_argument("--train_batch_size", type=int, default=1024, help="per-GPU batch size")
    p.add_argument("--val_batch_size", type=int, default=1024)
    p.add_argument("--val_every", type=int, default=10)
    p.add_argument("--num_workers", type=int, default=8)
    p.add_argument("--optimizer", type=str, default="adamw", choices=["adamw", "apex_adam"])
    p.add_argument("--lr", type=float, default=7.5e-4)
    p.add_argument("--weight_decay", type=float, default=0.0)
    p.add_argument("--decay_rate", type=float, default=0.98)
    p.add_argument("--decay_every", type=int, default=50)
    p.add_argument("--max_grad_norm", type=float, default=1.0)
    p.add_argument("--dim_emb", type=int, default=192)
    p.add_argument("--dim_ff", type=int, default=512)
    p.add_argument("--nb_layers_encoder", type=int, default=9)
    p.add_argument("--nb_heads", type=int, default=12)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--activation_ff", type=str, default="relu")
    p.add_argument("--batchnorm", action="store_true")
    p.add_argument("--amp", action="store_true", help="bf16 autocast (Ampere+)")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def setup_distributed(args):
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        args.rank = int(os.environ["RANK"])
        args.world_size = int(os.environ["WORLD_SIZE"])
        args.local_rank = int(os.environ["LOCAL_RANK"])
    else:
        args.rank, args.world_size, args.local_rank = 0, 1, 0
    args.distributed = args.world_size > 1

    torch.cuda.set_device(args.local_rank)
    args.device = torch.device("cuda", args.local_rank)
    if args.distributed:
        dist.init_process_group(
            backend="nccl", init_method="env://", timeout=datetime.timedelta(minutes=30)
        )
        dist.barrier()
    return args


def is_main(args):
    return args.rank == 0


def save_checkpoint(args, model, optimizer, scheduler, epoch, best_gap, name):
    module = model.module if isinstance(model, DDP) else model
    torch.save(
        {
            "epoch": epoch,
            "model": module.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "best_gap": best_gap,
            "args": vars(args),
        },
        os.path.join(args.output_dir, name),
    )


def validate(args, model, val_loader):
    module = model.module if isinstance(model, DDP) else model
    module.eval()
    gaps = []
    with torch.no_grad():
        for batch in val_loader:
            batch = {k: v.to(args.device, non_blocking=True) for k, v in batch.items()}
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.amp):
                tour_lens = decode(module, batch, beam_size=1)
            gaps.append(((tour_lens / batch["optimal_value"]) - 1.0).cpu())
    module.train()
    gap = torch.cat(gaps).mean().to(args.device)
    if args.distributed:
        dist.all_reduce(gap, op=dist.ReduceOp.AVG)
    return gap.item() * 100


def main():
    args = get_args()
    args = setup_distributed(args)
    set_seed(args.seed + args.rank)
    os.makedirs(args.output_dir, exist_ok=True)
    torch.backends.cudnn.benchmark = True

    if args.amp and not torch.cuda.is_bf16_supported():
        raise RuntimeError("--amp uses bf16 autocast; this GPU does not support bf16 (need Ampere or newer)")

    model = BQModel(
        dim_input_nodes=4 if args.problem == "cvrp" else 2,
        emb_size=args.dim_emb,
        dim_ff=args.dim_ff,
        activation_ff=args.activation_ff,
        nb_layers_encoder=args.nb_layers_encoder,
        nb_heads=args.nb_heads,
        dropout=args.dropout,
        batchnorm=args.batchnorm,
    )
    if args.pretrained_model is not None:
        state = torch.load(args.pretrained_model, map_location=f"cuda:{args.local_rank}")
        model.load_state_dict(state["model"])
    model = model.cuda()
    if args.distributed:
        model = DDP(model, device_ids=[args.local_rank], output_device=args.local_rank,
                    find_unused_parameters=False)

    if args.optimizer == "apex_adam":
        assert FusedAdam is not None, "apex not installed (pip install -v --no-cache-dir --global-option=--cuda_ext apex)"
        optimizer = FusedAdam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay, adam_w_mode=True)
    else:
        optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay, fused=True)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=args.decay_every, gamma=args.decay_rate)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    train_dataset = CVRPDataset(args.train_dataset, subpb_sampling=True)
    val_dataset = CVRPDataset(args.val_dataset, subpb_sampling=False)
    sampler = DistributedSampler(train_dataset, shuffle=True) if args.distributed else None
    train_loader = DataLoader(
        train_dataset,
        batch_size=args.train_batch_size,
        shuffle=(sampler is None),
        sampler=sampler,
        num_workers=args.num_workers,
        pin_memory=torch.cuda.is_available(),
        drop_last=True,
        persistent_workers=args.num_workers > 0,
        collate_fn=collate_func_with_sample_suffix,
    )
    val_loader = DataLoader(val_dataset, batch_size=args.val_batch_size, shuffle=False, num_workers=2)

    best_gap = float("inf")
    for epoch in range(args.nb_epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        model.train()
        metrics = EpochMetrics()
        t0 = time.time()
        for batch in train_loader:
            node_features, dist_matrices, ground_truth = [b.cuda(non_blocking=True) for b in batch]
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=args.amp):
                scores = model(node_features, dist_matrices)
                loss = F.cross_entropy(scores, ground_truth)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            scaler.step(optimizer)
            scaler.update()
            metrics.update(loss.item(), node_features.size(0))
        scheduler.step()

        # average the epoch loss over all ranks
        loss_t = torch.tensor([metrics.loss_sum, metrics.count], dtype=torch.float64, device=args.device)
        if args.distributed:
            dist.all_reduce(loss_t, op=dist.ReduceOp.SUM)
        epoch_loss = (loss_t[0] / loss_t[1]).item()

        if is_main(args):
            print(f"[epoch {epoch:4d}] loss {epoch_loss:.4f}  lr {scheduler.get_last_lr()[0]:.2e}  "
                  f"{time.time() - t0:.1f}s  peak mem {torch.cuda.max_memory_allocated() / 2 ** 30:.1f} GiB",
                  flush=True)
            save_checkpoint(args, model, optimizer, scheduler, epoch, best_gap, "current.pt")

        if (epoch + 1) % args.val_every == 0:
            gap = validate(args, model, val_loader)
            if is_main(args):
                print(f"[epoch {epoch:4d}] val gap {gap:.3f}%")
                if gap < best_gap:
                    best_gap = gap
                    save_checkpoint(args, model, optimizer, scheduler, epoch, best_gap, "best.pt")

    if args.distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
