"""Two-tower retrieval model with in-batch (and cross-rank) negatives.

Query tower: user id + recent item history (mean pooled).
Item tower:  item id + category + text embedding.
Evaluation:  brute-force inner-product search over the item corpus with FAISS.
"""
import argparse
import math
import os
import time

import faiss
import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from data import InteractionDataset, ItemCorpus, collate_interactions


class Tower(nn.Module):
    def __init__(self, num_ids, num_cats, text_dim, dim, history=False):
        super().__init__()
        self.id_emb = nn.Embedding(num_ids, dim, sparse=False)
        self.cat_emb = nn.Embedding(num_cats, dim) if num_cats else None
        self.history = history
        in_dim = dim * (2 if history else 1) + (dim if num_cats else 0) + text_dim
        self.mlp = nn.Sequential(
            nn.Linear(in_dim, 4 * dim), nn.GELU(), nn.LayerNorm(4 * dim), nn.Linear(4 * dim, dim)
        )

    def forward(self, ids, cats=None, text=None, hist=None, hist_mask=None):
        parts = [self.id_emb(ids)]
        if self.history:
            h = self.id_emb(hist) * hist_mask.unsqueeze(-1)
            parts.append(h.sum(1) / hist_mask.sum(1, keepdim=True).clamp(min=1))
        if self.cat_emb is not None:
            parts.append(self.cat_emb(cats))
        if text is not None:
            parts.append(text)
        return F.normalize(self.mlp(torch.cat(parts, dim=-1)), dim=-1)


class TwoTower(nn.Module):
    def __init__(self, n_users, n_items, n_cats, text_dim, dim, temperature):
        super().__init__()
        self.query = Tower(n_users, 0, 0, dim, history=True)
        self.item = Tower(n_items, n_cats, text_dim, dim)
        self.log_t = nn.Parameter(torch.tensor(math.log(temperature)))

    def forward(self, batch):
        q = self.query(batch["user"], hist=batch["hist"], hist_mask=batch["hist_mask"])
        d = self.item(batch["item"], cats=batch["cat"], text=batch["text"])
        return q, d


class GatherLayer(torch.autograd.Function):
    """all_gather with gradient flowing back to the local shard."""

    @staticmethod
    def forward(ctx, x):
        out = [torch.zeros_like(x) for _ in range(dist.get_world_size())]
        dist.all_gather(out, x)
        return tuple(out)

    @staticmethod
    def backward(ctx, *grads):
        all_grads = torch.stack(grads)
        dist.all_reduce(all_grads)
        return all_grads[dist.get_rank()]


def in_batch_softmax_loss(q, d, log_t, item_logq=None):
    if dist.is_initialized() and dist.get_world_size() > 1:
        d_all = torch.cat(GatherLayer.apply(d), dim=0)
        offset = dist.get_rank() * q.size(0)
    else:
        d_all, offset = d, 0
    logits = q @ d_all.t() / log_t.exp()
    if item_logq is not None:  # sampling-bias correction (logQ)
        logits = logits - item_logq
    labels = torch.arange(q.size(0), device=q.device) + offset
    return F.cross_entropy(logits, labels)


@torch.no_grad()
def build_index(model, corpus_loader, dim, device, use_gpu_index=True):
    model.eval()
    vecs, ids = [], []
    for batch in corpus_loader:
        batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}
        vecs.append(model.item(batch["item"], cats=batch["cat"], text=batch["text"]).float().cpu().numpy())
        ids.append(batch["item"].cpu().numpy())
    vecs = np.concatenate(vecs).astype("float32")
    ids = np.concatenate(ids).astype("int64")
    cpu_index = faiss.IndexIDMap(faiss.IndexFlatIP(dim))
    if use_gpu_index:
        res = faiss.StandardGpuResources()
        res.setTempMemory(512 * 1024 * 1024)
        index = faiss.index_cpu_to_gpu(res, torch.cuda.current_device(), cpu_index)
    else:
        index = cpu_index
    index.add_with_ids(vecs, ids)
    return index


@torch.no_grad()
def recall_at_k(model, index, eval_loader, k, device):
    model.eval()
    hits, total = 0, 0
    for batch in eval_loader:
        batch = {key: v.to(device) for key, v in batch.items()}
        q = model.query(batch["user"], hist=batch["hist"], hist_mask=batch["hist_mask"]).float().cpu().numpy()
        _, topk = index.search(q, k)
        target = batch["item"].cpu().numpy()[:, None]
        hits += int((topk == target).any(axis=1).sum())
        total += len(target)
    return hits / max(total, 1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=4096)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--temperature", type=float, default=0.05)
    p.add_argument("--amp", action="store_true")
    p.add_argument("--faiss-gpu", action="store_true", default=True)
    args = p.parse_args()

    distributed = "WORLD_SIZE" in os.environ and int(os.environ["WORLD_SIZE"]) > 1
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if distributed:
        dist.init_process_group(backend="nccl", init_method="env://")
    torch.cuda.set_device(local_rank)
    device = torch.device(f"cuda:{local_rank}")
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    train_ds = InteractionDataset(os.path.join(args.data, "train.parquet"))
    eval_ds = InteractionDataset(os.path.join(args.data, "eval.parquet"))
    corpus = ItemCorpus(os.path.join(args.data, "items.parquet"))
    sampler = DistributedSampler(train_ds) if distributed else None
    train_loader = DataLoader(train_ds, batch_size=args.batch_size, sampler=sampler, shuffle=sampler is None,
                              num_workers=8, pin_memory=True, collate_fn=collate_interactions, drop_last=True)
    eval_loader = DataLoader(eval_ds, batch_size=8192, num_workers=4, collate_fn=collate_interactions)
    corpus_loader = DataLoader(corpus, batch_size=16384, num_workers=4)

    model = TwoTower(train_ds.n_users, corpus.n_items, corpus.n_cats, corpus.text_dim,
                     args.dim, args.temperature).cuda()
    if distributed:
        model = DDP(model, device_ids=[local_rank], find_unused_parameters=False)
    raw = model.module if distributed else model
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-6, fused=True)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)
    item_logq = torch.from_numpy(np.log(corpus.item_frequency() + 1e-9)).float().to(device)

    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        model.train()
        t0, seen = time.time(), 0
        for step, batch in enumerate(train_loader):
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            with torch.autocast("cuda", dtype=torch.float16, enabled=args.amp):
                q, d = model(batch)
                loss = in_batch_softmax_loss(q, d, raw.log_t, item_logq[batch["item"]])
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(opt)
            scaler.update()
            seen += batch["user"].numel()
            if step % 200 == 0 and local_rank == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} "
                      f"{seen / (time.time() - t0):.0f} ex/s temp {raw.log_t.exp().item():.3f}")

        if not distributed or dist.get_rank() == 0:
            index = build_index(raw, corpus_loader, args.dim, device, use_gpu_index=args.faiss_gpu)
            r = recall_at_k(raw, index, eval_loader, k=100, device=device)
            print(f"epoch {epoch} recall@100 {r:.4f}")
            torch.save(raw.state_dict(), f"two_tower_e{epoch}.pt")
        if distributed:
            dist.barrier()


if __name__ == "__main__":
    main()
