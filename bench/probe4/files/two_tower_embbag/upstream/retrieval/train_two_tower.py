"""
Two-tower retrieval model for candidate generation (YouTube-DNN style).

User tower: bag of watched item ids + bag of search tokens (weighted) + dense features.
Item tower: item id + bag of tag ids.  Trained with in-batch sampled softmax and logQ correction.

    python -m retrieval.train_two_tower --data /data/watch_logs --epochs 3 --amp
"""
import argparse
import logging
import math
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

from retrieval.data import WatchLogDataset, collate_bags

log = logging.getLogger(__name__)


class BagEncoder(nn.Module):
    """Sum/mean pooled sparse ids -> dense vector. Sparse gradients keep the big tables cheap."""

    def __init__(self, num_embeddings: int, dim: int, mode: str = "mean"):
        super().__init__()
        self.bag = nn.EmbeddingBag(num_embeddings, dim, mode=mode, sparse=True)
        nn.init.normal_(self.bag.weight, std=1.0 / math.sqrt(dim))

    def forward(self, ids: torch.Tensor, offsets: torch.Tensor, weights: torch.Tensor = None) -> torch.Tensor:
        return self.bag(ids, offsets, per_sample_weights=weights)


class UserTower(nn.Module):
    def __init__(self, num_items: int, num_tokens: int, dense_dim: int, dim: int):
        super().__init__()
        self.watch = BagEncoder(num_items, dim, mode="mean")
        # search tokens carry tf-idf weights -> needs mode="sum" for per_sample_weights
        self.search_weight = nn.Parameter(torch.empty(num_tokens, dim))
        nn.init.normal_(self.search_weight, std=1.0 / math.sqrt(dim))
        self.mlp = nn.Sequential(
            nn.Linear(2 * dim + dense_dim, 1024), nn.ReLU(),
            nn.Linear(1024, 512), nn.ReLU(),
            nn.Linear(512, dim),
        )

    def forward(self, batch):
        watch = self.watch(batch["watch_ids"], batch["watch_offsets"])
        search = F.embedding_bag(
            batch["search_ids"], self.search_weight, batch["search_offsets"],
            mode="sum", per_sample_weights=batch["search_weights"],
        )
        x = torch.cat([watch, search, batch["dense"]], dim=-1)
        return F.normalize(self.mlp(x), dim=-1)


class ItemTower(nn.Module):
    def __init__(self, num_items: int, num_tags: int, dim: int):
        super().__init__()
        self.item = nn.Embedding(num_items, dim, sparse=True)
        self.tags = BagEncoder(num_tags, dim, mode="mean")
        self.proj = nn.Linear(2 * dim, dim)

    def forward(self, batch):
        x = torch.cat([self.item(batch["item_id"]), self.tags(batch["tag_ids"], batch["tag_offsets"])], dim=-1)
        return F.normalize(self.proj(x), dim=-1)


class TwoTower(nn.Module):
    def __init__(self, args, meta):
        super().__init__()
        self.user = UserTower(meta["num_items"], meta["num_tokens"], meta["dense_dim"], args.dim)
        self.item = ItemTower(meta["num_items"], meta["num_tags"], args.dim)
        self.temperature = args.temperature

    def forward(self, batch):
        u = self.user(batch)
        v = self.item(batch)
        logits = u @ v.t() / self.temperature
        # logQ correction for popularity-biased in-batch negatives
        logits = logits - torch.log(batch["item_prob"]).unsqueeze(0)
        labels = torch.arange(logits.shape[0], device=logits.device)
        return F.cross_entropy(logits, labels)


def split_params(model):
    sparse, dense = [], []
    for m in model.modules():
        if isinstance(m, (nn.EmbeddingBag, nn.Embedding)) and m.sparse:
            sparse += list(m.parameters(recurse=False))
    sparse_ids = {id(p) for p in sparse}
    dense = [p for p in model.parameters() if id(p) not in sparse_ids]
    return sparse, dense


def to_device(batch, device):
    return {k: v.cuda(non_blocking=True) if torch.is_tensor(v) else v for k, v in batch.items()}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=4096)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--lr-sparse", type=float, default=0.05)
    p.add_argument("--lr-dense", type=float, default=1e-3)
    p.add_argument("--temperature", type=float, default=0.05)
    p.add_argument("--amp", action="store_true")
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--out", default="checkpoints/two_tower.pt")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO)

    torch.backends.cudnn.benchmark = True
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    ds = WatchLogDataset(args.data, split="train")
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, num_workers=args.workers,
                        pin_memory=True, collate_fn=collate_bags, drop_last=True, persistent_workers=True)

    model = TwoTower(args, ds.meta).to(device)
    if torch.cuda.device_count() > 1:
        log.info("using %d GPUs with DataParallel", torch.cuda.device_count())
        model = nn.DataParallel(model)
    sparse_params, dense_params = split_params(model)
    opt_sparse = torch.optim.SparseAdam(sparse_params, lr=args.lr_sparse)
    opt_dense = torch.optim.Adam(dense_params, lr=args.lr_dense)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    step = 0
    for epoch in range(args.epochs):
        model.train()
        t0 = time.time()
        for batch in loader:
            batch = to_device(batch, device)
            with torch.cuda.amp.autocast(enabled=args.amp):
                loss = model(batch)
                if loss.dim() > 0:  # DataParallel returns one loss per replica
                    loss = loss.mean()
            opt_sparse.zero_grad(set_to_none=True)
            opt_dense.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(opt_sparse)
            scaler.step(opt_dense)
            scaler.update()
            step += 1
            if step % 200 == 0:
                log.info("epoch %d step %d loss %.4f %.1f ex/s", epoch, step, loss.item(),
                         200 * args.batch_size / (time.time() - t0))
                t0 = time.time()

    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    state = model.module.state_dict() if isinstance(model, nn.DataParallel) else model.state_dict()
    torch.save(state, args.out)
    np.save(args.out.replace(".pt", "_item_prob.npy"), ds.item_prob)


if __name__ == "__main__":
    main()
