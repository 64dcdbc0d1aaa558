#!/usr/bin/env python
"""Data-parallel DCN-V2 training on Criteo (Kaggle 45M / Terabyte day splits) stored as parquet shards.

Launch with torchrun, one process per GPU:

    torchrun --nproc_per_node=8 train_dcnv2_ddp.py --data /data/criteo_parquet --amp

Embeddings are replicated on every rank (tables are hashed down to --hash_size rows) and the dense tower is
trained with Adam; the embedding tables use SparseAdam on sparse gradients, which is what the original
paper's TF implementation did with its lazy Adam.
"""
import argparse
import glob
import json
import math
import os
import time

import numpy as np
import pyarrow.parquet as pq
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from sklearn.metrics import roc_auc_score
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler

NUM_DENSE = 13
NUM_SPARSE = 26


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--out", default="./ckpt_dcnv2")
    p.add_argument("--hash_size", type=int, default=2_000_000)
    p.add_argument("--embed_dim", type=int, default=16)
    p.add_argument("--cross_layers", type=int, default=3)
    p.add_argument("--low_rank", type=int, default=0, help="0 = full-rank cross matrix")
    p.add_argument("--mlp", type=str, default="1024,1024,512")
    p.add_argument("--batch_size", type=int, default=8192, help="per-rank batch size")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--sparse_lr", type=float, default=5e-3)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--workers", type=int, default=6)
    p.add_argument("--amp", action="store_true", help="fp16 autocast + dynamic loss scaling")
    p.add_argument("--log_every", type=int, default=200)
    p.add_argument("--eval_every", type=int, default=5000)
    p.add_argument("--seed", type=int, default=1234)
    return p.parse_args()


class CriteoParquet(Dataset):
    """Loads all shards into memory once; each row = 13 log-transformed ints + 26 hashed categoricals."""

    def __init__(self, root, split, hash_size):
        files = sorted(glob.glob(os.path.join(root, split, "*.parquet")))
        if not files:
            raise FileNotFoundError(f"no parquet shards under {root}/{split}")
        tables = [pq.read_table(f) for f in files]
        dense = np.concatenate([np.stack([t.column(f"I{i}").to_numpy() for i in range(1, NUM_DENSE + 1)], 1)
                                for t in tables]).astype(np.float32)
        sparse = np.concatenate([np.stack([t.column(f"C{i}").to_numpy() for i in range(1, NUM_SPARSE + 1)], 1)
                                 for t in tables]).astype(np.int64)
        self.dense = np.log1p(np.maximum(dense, 0.0))
        self.sparse = sparse % hash_size
        self.label = np.concatenate([t.column("label").to_numpy() for t in tables]).astype(np.float32)

    def __len__(self):
        return len(self.label)

    def __getitem__(self, i):
        return self.dense[i], self.sparse[i], self.label[i]


class CrossNetV2(nn.Module):
    def __init__(self, dim, num_layers, low_rank=0):
        super().__init__()
        self.low_rank = low_rank
        if low_rank:
            self.U = nn.ParameterList([nn.Parameter(torch.empty(dim, low_rank)) for _ in range(num_layers)])
            self.V = nn.ParameterList([nn.Parameter(torch.empty(dim, low_rank)) for _ in range(num_layers)])
            for u, v in zip(self.U, self.V):
                nn.init.xavier_normal_(u)
                nn.init.xavier_normal_(v)
        else:
            self.W = nn.ModuleList([nn.Linear(dim, dim, bias=False) for _ in range(num_layers)])
        self.b = nn.ParameterList([nn.Parameter(torch.zeros(dim)) for _ in range(num_layers)])

    def forward(self, x0):
        x = x0
        for i, b in enumerate(self.b):
            if self.low_rank:
                xw = (x @ self.V[i]) @ self.U[i].t()
            else:
                xw = self.W[i](x)
            x = x0 * (xw + b) + x
        return x


class DCNv2(nn.Module):
    def __init__(self, hash_size, embed_dim, cross_layers, low_rank, mlp_dims):
        super().__init__()
        self.embeddings = nn.ModuleList(
            [nn.Embedding(hash_size, embed_dim, sparse=True) for _ in range(NUM_SPARSE)])
        for e in self.embeddings:
            nn.init.uniform_(e.weight, -0.01, 0.01)
        in_dim = NUM_DENSE + NUM_SPARSE * embed_dim
        self.cross = CrossNetV2(in_dim, cross_layers, low_rank)
        layers, d = [], in_dim
        for h in mlp_dims:
            layers += [nn.Linear(d, h), nn.BatchNorm1d(h), nn.ReLU()]
            d = h
        self.deep = nn.Sequential(*layers)
        self.head = nn.Linear(in_dim + d, 1)

    def forward(self, dense, sparse):
        embs = [emb(sparse[:, i]) for i, emb in enumerate(self.embeddings)]
        x0 = torch.cat([dense] + embs, dim=1)
        return self.head(torch.cat([self.cross(x0), self.deep(x0)], dim=1)).squeeze(1)


def setup_distributed():
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    torch.cuda.set_device(local_rank)
    if world_size > 1:
        dist.init_process_group(backend="nccl", init_method="env://")
    return local_rank, world_size, dist.get_rank() if world_size > 1 else 0


def all_reduce_mean(value, device):
    t = torch.tensor([value], dtype=torch.float64, device=device)
    if dist.is_initialized():
        dist.all_reduce(t)
        t /= dist.get_world_size()
    return t.item()


@torch.no_grad()
def evaluate(model, loader, device, amp):
    model.eval()
    preds, labels = [], []
    for dense, sparse, label in loader:
        dense = dense.to(device, non_blocking=True)
        sparse = sparse.to(device, non_blocking=True)
        with torch.cuda.amp.autocast(enabled=amp):
            logits = model(dense, sparse)
        preds.append(torch.sigmoid(logits.float()))
        labels.append(label.to(device))
    preds = torch.cat(preds)
    labels = torch.cat(labels)
    if dist.is_initialized():
        # gather variable-length shards: pad to the longest one first
        n = torch.tensor([preds.numel()], device=device)
        sizes = [torch.zeros_like(n) for _ in range(dist.get_world_size())]
        dist.all_gather(sizes, n)
        max_n = int(max(s.item() for s in sizes))
        pad = max_n - preds.numel()
        preds = F.pad(preds, (0, pad), value=-1.0)
        labels = F.pad(labels, (0, pad), value=-1.0)
        gp = [torch.empty_like(preds) for _ in sizes]
        gl = [torch.empty_like(labels) for _ in sizes]
        dist.all_gather(gp, preds)
        dist.all_gather(gl, labels)
        preds = torch.cat([g[: int(s.item())] for g, s in zip(gp, sizes)])
        labels = torch.cat([g[: int(s.item())] for g, s in zip(gl, sizes)])
    model.train()
    y, p = labels.cpu().numpy(), preds.cpu().numpy()
    logloss = float(F.binary_cross_entropy(torch.from_numpy(p).double(), torch.from_numpy(y).double()))
    return roc_auc_score(y, p), logloss


def main():
    args = parse_args()
    local_rank, world_size, rank = setup_distributed()
    device = torch.device("cuda", local_rank)
    torch.manual_seed(args.seed + rank)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.benchmark = True

    train_set = CriteoParquet(args.data, "train", args.hash_size)
    val_set = CriteoParquet(args.data, "val", args.hash_size)
    train_sampler = DistributedSampler(train_set, shuffle=True, seed=args.seed) if world_size > 1 else None
    val_sampler = DistributedSampler(val_set, shuffle=False) if world_size > 1 else None
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=train_sampler,
                              shuffle=train_sampler is None, num_workers=args.workers,
                              pin_memory=True, drop_last=True, persistent_workers=True)
    val_loader = DataLoader(val_set, batch_size=args.batch_size * 2, sampler=val_sampler,
                            num_workers=args.workers, pin_memory=True)

    mlp_dims = [int(x) for x in args.mlp.split(",")]
    model = DCNv2(args.hash_size, args.embed_dim, args.cross_layers, args.low_rank, mlp_dims).to(device)
    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank,
                    gradient_as_bucket_view=True)
    core = model.module if isinstance(model, DDP) else model

    sparse_params = [p for n, p in core.named_parameters() if n.startswith("embeddings.")]
    dense_params = [p for n, p in core.named_parameters() if not n.startswith("embeddings.")]
    dense_opt = torch.optim.Adam(dense_params, lr=args.lr, fused=True)
    sparse_opt = torch.optim.SparseAdam(sparse_params, lr=args.sparse_lr)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    steps_per_epoch = len(train_loader)
    total_steps = steps_per_epoch * args.epochs
    warmup = min(2000, total_steps // 20)

    def lr_at(step):
        if step < warmup:
            return args.lr * (step + 1) / warmup
        progress = (step - warmup) / max(1, total_steps - warmup)
        return args.lr * 0.5 * (1.0 + math.cos(math.pi * progress))

    if rank == 0:
        os.makedirs(args.out, exist_ok=True)
        print(json.dumps(vars(args), indent=2))
        print(f"world_size={world_size} steps/epoch={steps_per_epoch} "
              f"params={sum(p.numel() for p in core.parameters()) / 1e6:.1f}M")

    step, t0, running = 0, time.time(), 0.0
    for epoch in range(args.epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        for dense, sparse, label in train_loader:
            dense = dense.to(device, non_blocking=True)
            sparse = sparse.to(device, non_blocking=True)
            label = label.to(device, non_blocking=True)
            for g in dense_opt.param_groups:
                g["lr"] = lr_at(step)

            with torch.cuda.amp.autocast(enabled=args.amp, dtype=torch.float16):
                logits = model(dense, sparse)
                loss = F.binary_cross_entropy_with_logits(logits.float(), label)

            dense_opt.zero_grad(set_to_none=True)
            sparse_opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(dense_opt)
            scaler.step(sparse_opt)
            scaler.update()
            running += loss.item()
            step += 1

            if step % args.log_every == 0:
                torch.cuda.synchronize()
                dt = time.time() - t0
                avg = all_reduce_mean(running / args.log_every, device)
                if rank == 0:
                    qps = args.log_every * args.batch_size * world_size / dt
                    mem = torch.cuda.max_memory_allocated(device) / 2 ** 30
                    print(f"ep {epoch} step {step}/{total_steps} loss {avg:.5f} lr {lr_at(step):.2e} "
                          f"{qps / 1e3:.1f}k samples/s  mem {mem:.1f}G  scale {scaler.get_scale():.0f}")
                running, t0 = 0.0, time.time()

            if step % args.eval_every == 0 or step == total_steps:
                auc, ll = evaluate(model, val_loader, device, args.amp)
                if rank == 0:
                    print(f"[eval] step {step} AUC {auc:.5f} logloss {ll:.5f}")
                    torch.save({"model": core.state_dict(), "step": step, "auc": auc},
                               os.path.join(args.out, f"dcnv2_step{step}.pt"))

    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
