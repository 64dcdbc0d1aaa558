"""Multi-GPU training of a tabular transformer (FT-Transformer style) on a large CTR dataset.

    torchrun --nproc_per_node=8 train_ddp.py --data /data/ctr_memmap --epochs 3 --batch-size 4096

Data layout (written by prepare_memmap.py): X_num.f32 [N, 13], X_cat.i64 [N, 26], y.f32 [N].
"""
import argparse
import json
import math
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class MemmapTabular(Dataset):
    def __init__(self, root, split, n_num=13, n_cat=26):
        meta = json.load(open(os.path.join(root, "meta.json")))
        n = meta[split]
        self.x_num = np.memmap(os.path.join(root, f"{split}_X_num.f32"), dtype=np.float32, mode="r", shape=(n, n_num))
        self.x_cat = np.memmap(os.path.join(root, f"{split}_X_cat.i64"), dtype=np.int64, mode="r", shape=(n, n_cat))
        self.y = np.memmap(os.path.join(root, f"{split}_y.f32"), dtype=np.float32, mode="r", shape=(n,))
        self.cardinalities = meta["cardinalities"]

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return (torch.from_numpy(np.array(self.x_num[i])), torch.from_numpy(np.array(self.x_cat[i])),
                torch.tensor(self.y[i]))


class FeatureTokenizer(nn.Module):
    def __init__(self, n_num, cardinalities, d):
        super().__init__()
        self.num_weight = nn.Parameter(torch.randn(n_num, d) / math.sqrt(d))
        self.num_bias = nn.Parameter(torch.zeros(n_num, d))
        offsets = torch.tensor([0] + list(np.cumsum(cardinalities[:-1])), dtype=torch.long)
        self.register_buffer("offsets", offsets, persistent=False)
        self.cat_emb = nn.Embedding(int(sum(cardinalities)), d)
        self.cls = nn.Parameter(torch.zeros(1, 1, d))

    def forward(self, x_num, x_cat):
        t_num = x_num.unsqueeze(-1) * self.num_weight + self.num_bias
        t_cat = self.cat_emb(x_cat + self.offsets)
        cls = self.cls.expand(x_num.shape[0], -1, -1)
        return torch.cat([cls, t_num, t_cat], dim=1)


class Block(nn.Module):
    def __init__(self, d, heads, dropout):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.norm2 = nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Dropout(dropout), nn.Linear(4 * d, d))
        self.dropout = dropout

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):
            a = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.ffn(self.norm2(x))


class TabTransformer(nn.Module):
    def __init__(self, n_num, cardinalities, d=192, depth=4, heads=8, dropout=0.1):
        super().__init__()
        self.tok = FeatureTokenizer(n_num, cardinalities, d)
        self.blocks = nn.ModuleList([Block(d, heads, dropout) for _ in range(depth)])
        self.head = nn.Sequential(nn.LayerNorm(d), nn.ReLU(), nn.Linear(d, 1))

    def forward(self, x_num, x_cat):
        x = self.tok(x_num, x_cat)
        for blk in self.blocks:
            x = blk(x)
        return self.head(x[:, 0]).squeeze(-1)


def setup():
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return dist.get_rank(), dist.get_world_size(), local_rank


def collective_device():
    # NCCL only reduces device tensors; gloo (CPU debugging runs) needs host tensors
    return torch.device("cuda") if dist.get_backend() == "nccl" else torch.device("cpu")


def reduce_mean(value):
    t = torch.tensor([value], dtype=torch.float64, device=collective_device())
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return (t / dist.get_world_size()).item()


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    tot_loss, tot_n = 0.0, 0
    for x_num, x_cat, y in loader:
        x_num, x_cat, y = x_num.to(device, non_blocking=True), x_cat.to(device, non_blocking=True), y.to(device)
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            logit = model(x_num, x_cat)
        tot_loss += F.binary_cross_entropy_with_logits(logit.float(), y, reduction="sum").item()
        tot_n += len(y)
    model.train()
    return reduce_mean(tot_loss / max(tot_n, 1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=4096)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--out", default="checkpoints/ctr_ft")
    args = ap.parse_args()

    rank, world, local_rank = setup()
    device = torch.device("cuda", local_rank)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.manual_seed(1234 + rank)

    train_ds = MemmapTabular(args.data, "train")
    valid_ds = MemmapTabular(args.data, "valid")
    train_sampler = DistributedSampler(train_ds, shuffle=True, drop_last=True)
    valid_sampler = DistributedSampler(valid_ds, shuffle=False)
    train_loader = DataLoader(train_ds, batch_size=args.batch_size, sampler=train_sampler, num_workers=8,
                              pin_memory=True, persistent_workers=True, prefetch_factor=4)
    valid_loader = DataLoader(valid_ds, batch_size=args.batch_size * 2, sampler=valid_sampler, num_workers=4,
                              pin_memory=True)

    model = TabTransformer(n_num=13, cardinalities=train_ds.cardinalities).to(device)
    model = DDP(model, device_ids=[local_rank], gradient_as_bucket_view=True)
    if args.compile:
        model = torch.compile(model, mode="max-autotune")
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-5, fused=True)
    total_steps = args.epochs * len(train_loader)
    sched = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, total_steps=total_steps, pct_start=0.05)

    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    step = 0
    for epoch in range(args.epochs):
        train_sampler.set_epoch(epoch)
        start_evt.record()
        t0 = time.time()
        for x_num, x_cat, y in train_loader:
            x_num = x_num.to(device, non_blocking=True)
            x_cat = x_cat.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):  # bf16 on A100/H100
                logit = model(x_num, x_cat)
            loss = F.binary_cross_entropy_with_logits(logit.float(), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            sched.step()
            step += 1
            if step % 200 == 0 and rank == 0:
                print(f"epoch {epoch} step {step}/{total_steps} loss {loss.item():.5f} "
                      f"lr {sched.get_last_lr()[0]:.2e}", flush=True)
        end_evt.record()
        torch.cuda.synchronize()
        gpu_ms = start_evt.elapsed_time(end_evt)
        rows = len(train_loader) * args.batch_size * world
        val = evaluate(model, valid_loader, device)
        if rank == 0:
            print(f"epoch {epoch}: valid logloss {val:.5f}  {rows / (gpu_ms / 1000):,.0f} rows/s "
                  f"(wall {time.time() - t0:.0f}s, peak mem {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB)")
            os.makedirs(args.out, exist_ok=True)
            torch.save({"model": model.module.state_dict() if hasattr(model, "module") else model.state_dict(),
                        "epoch": epoch, "valid_logloss": val}, os.path.join(args.out, f"epoch{epoch}.pt"))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
