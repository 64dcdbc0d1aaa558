"""Distributed training of TimingGNN on the OpenROAD/NanGate45 timing dataset.

Launch (single node, 8 GPUs):
    torchrun --nproc_per_node 8 train_ddp.py --data data/timing_ng45 --epochs 300
See scripts/launch_ddp.sh for the multi-node variant.
"""
import argparse
import json
import os
import pickle
import random
import time
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import Dataset, DataLoader
from torch.utils.data.distributed import DistributedSampler

from model import TimingGNN, endpoint_slack, design_wns_tns


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--out", default="checkpoints/timing_gnn")
    p.add_argument("--epochs", type=int, default=300)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--bf16", action="store_true", help="bf16 autocast (A100/H100)")
    p.add_argument("--compile", action="store_true", help="torch.compile the model (PyTorch >= 2.0)")
    p.add_argument("--seed", type=int, default=8026728)
    p.add_argument("--log_every", type=int, default=10)
    return p.parse_args()


class TimingGraphDataset(Dataset):
    """One sample = one design, pre-processed into flat tensors (see tools/build_graphs.py)."""

    KEYS = ["pin_feat", "net_src", "net_dst", "net_feat", "is_driver", "arc_src", "arc_dst",
            "arc_feat", "arc_level_ptr", "at_label", "slew_label", "endpoints", "required"]

    def __init__(self, root, split):
        with open(os.path.join(root, "split.json")) as f:
            self.designs = json.load(f)[split]
        self.root = root

    def __len__(self):
        return len(self.designs)

    def __getitem__(self, i):
        with open(os.path.join(self.root, self.designs[i] + ".pkl"), "rb") as f:
            g = pickle.load(f)
        return {k: torch.as_tensor(g[k]) for k in self.KEYS}, self.designs[i]


def collate_single(batch):
    # designs differ wildly in size, train with batch size 1 per rank
    assert len(batch) == 1
    return batch[0]


def setup_distributed():
    if "RANK" not in os.environ:
        # single process fallback (debugging)
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29511")
        os.environ["RANK"] = "0"
        os.environ["WORLD_SIZE"] = "1"
        os.environ["LOCAL_RANK"] = "0"
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", timeout=timedelta(minutes=30))
    return dist.get_rank(), dist.get_world_size(), local_rank


def reduce_mean(value, device):
    t = torch.tensor([value], dtype=torch.float64)
    if dist.get_backend() == "nccl":
        # NCCL only reduces device tensors
        t = t.to(device)
    dist.all_reduce(t)
    return t.item() / dist.get_world_size()


def seed_everything(seed, rank):
    random.seed(seed + rank)
    np.random.seed(seed + rank)
    torch.manual_seed(seed + rank)
    torch.cuda.manual_seed_all(seed + rank)


def r2_score(pred, target):
    ss_res = ((pred - target) ** 2).sum()
    ss_tot = ((target - target.mean()) ** 2).sum().clamp(min=1e-12)
    return 1.0 - ss_res / ss_tot


def run_epoch(model, loader, opt, device, amp_dtype, train):
    model.train(train)
    tot_loss, tot_r2, n = 0.0, 0.0, 0
    for g, name in loader:
        g = {k: v.to(device, non_blocking=True) for k, v in g.items()}
        with torch.set_grad_enabled(train):
            with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=amp_dtype is not None):
                at, slew = model(g)
            at, slew = at.float(), slew.float()
            loss = F.mse_loss(at, g["at_label"]) + F.mse_loss(slew, g["slew_label"])
            if train:
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
        slack = endpoint_slack(at.detach(), g["required"], g["endpoints"])
        slack_label = endpoint_slack(g["at_label"], g["required"], g["endpoints"])
        tot_r2 += r2_score(slack, slack_label).item()
        tot_loss += loss.item()
        n += 1
    return tot_loss / max(n, 1), tot_r2 / max(n, 1)


def main():
    args = get_args()
    rank, world, local_rank = setup_distributed()
    device = torch.device("cuda", local_rank)
    seed_everything(args.seed, rank)
    torch.backends.cuda.matmul.allow_tf32 = True

    if rank == 0:
        os.makedirs(args.out, exist_ok=True)
        print("world size %d, torch %s, CUDA %s, NCCL %s" % (
            world, torch.__version__, torch.version.cuda, ".".join(map(str, torch.cuda.nccl.version()))))

    train_set = TimingGraphDataset(args.data, "train")
    test_set = TimingGraphDataset(args.data, "test")
    train_sampler = DistributedSampler(train_set, num_replicas=world, rank=rank, shuffle=True)
    test_sampler = DistributedSampler(test_set, num_replicas=world, rank=rank, shuffle=False)
    train_loader = DataLoader(train_set, batch_size=1, sampler=train_sampler, num_workers=2,
                              collate_fn=collate_single, pin_memory=True)
    test_loader = DataLoader(test_set, batch_size=1, sampler=test_sampler, num_workers=2,
                             collate_fn=collate_single)

    model = TimingGNN(hidden=args.hidden).to(device)
    model = DDP(model, device_ids=[local_rank], output_device=local_rank, find_unused_parameters=False)
    if args.compile:
        model = torch.compile(model, mode="max-autotune")

    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-5, fused=True)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs, eta_min=args.lr * 0.01)
    amp_dtype = torch.bfloat16 if args.bf16 and torch.cuda.is_bf16_supported() else None

    best_r2 = -1e9
    for epoch in range(args.epochs):
        train_sampler.set_epoch(epoch)
        t0 = time.time()
        tr_loss, tr_r2 = run_epoch(model, train_loader, opt, device, amp_dtype, train=True)
        sched.step()
        tr_loss = reduce_mean(tr_loss, device)
        tr_r2 = reduce_mean(tr_r2, device)
        if epoch % args.log_every == 0 or epoch == args.epochs - 1:
            te_loss, te_r2 = run_epoch(model, test_loader, opt, device, amp_dtype, train=False)
            te_loss = reduce_mean(te_loss, device)
            te_r2 = reduce_mean(te_r2, device)
            if rank == 0:
                mem = torch.cuda.max_memory_allocated(device) / 2**30
                print("epoch %4d | train loss %.4f r2 %.4f | test loss %.4f slack r2 %.4f | %.1fs | %.2f GB" % (
                    epoch, tr_loss, tr_r2, te_loss, te_r2, time.time() - t0, mem), flush=True)
                if te_r2 > best_r2:
                    best_r2 = te_r2
                    torch.save({"model": model.module.state_dict() if hasattr(model, "module") else model.state_dict(),
                                "epoch": epoch, "args": vars(args)}, os.path.join(args.out, "best.pt"))
        dist.barrier()

    if rank == 0:
        print("best test slack r2 %.4f" % best_r2)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
