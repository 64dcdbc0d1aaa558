"""Multi-process training of a small DLRM-style click model.

Launch:  python -m dlrm_lite.train_sparse --data /path/to/criteo --gpus 8
"""
import argparse
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class CriteoShard(Dataset):
    def __init__(self, root: str, split: str, num_dense: int = 13, num_sparse: int = 26):
        arr = np.load(os.path.join(root, f"{split}.npz"))
        self.dense = arr["dense"].astype(np.float64)
        self.sparse = arr["sparse"].astype(np.int64)
        self.labels = arr["labels"].astype(np.float32)
        self.num_dense = num_dense
        self.num_sparse = num_sparse

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        dense = torch.from_numpy(np.log1p(np.maximum(self.dense[idx], 0.0)))
        return dense, torch.from_numpy(self.sparse[idx]), torch.tensor(self.labels[idx])


class DLRM(nn.Module):
    def __init__(self, num_embeddings, emb_dim=64, num_dense=13, bottom=(512, 256), top=(512, 256)):
        super().__init__()
        self.embeddings = nn.ModuleList(
            [nn.EmbeddingBag(n, emb_dim, mode="sum", sparse=True) for n in num_embeddings]
        )
        layers, d = [], num_dense
        for h in bottom:
            layers += [nn.Linear(d, h), nn.ReLU()]
            d = h
        layers += [nn.Linear(d, emb_dim), nn.ReLU()]
        self.bottom = nn.Sequential(*layers)
        n_feat = len(num_embeddings) + 1
        d = emb_dim + n_feat * (n_feat - 1) // 2
        layers = []
        for h in top:
            layers += [nn.Linear(d, h), nn.ReLU()]
            d = h
        layers += [nn.Linear(d, 1)]
        self.top = nn.Sequential(*layers)

    def interact(self, dense_x, sparse_embs):
        T = torch.stack([dense_x] + sparse_embs, dim=1)
        Z = torch.bmm(T, T.transpose(1, 2))
        li, lj = torch.tril_indices(T.shape[1], T.shape[1], offset=-1, device=T.device)
        return torch.cat([dense_x, Z[:, li, lj]], dim=1)

    def forward(self, dense, sparse):
        x = self.bottom(dense)
        offsets = torch.zeros(sparse.shape[0], dtype=torch.long, device=sparse.device)
        embs = [emb(sparse[:, i].contiguous(), offsets) for i, emb in enumerate(self.embeddings)]
        return self.top(self.interact(x, embs)).squeeze(1)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--gpus", type=int, default=torch.cuda.device_count())
    p.add_argument("--batch-size", type=int, default=2048)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--dist-url", default="tcp://127.0.0.1:29500")
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--num-embeddings", type=str, default="1000000-" * 25 + "1000000")
    return p.parse_args()


def main_worker(rank, world_size, args):
    dist.init_process_group(backend="nccl", init_method=args.dist_url, world_size=world_size, rank=rank)
    device = torch.device(f"cuda:{rank}")
    torch.backends.cudnn.benchmark = True

    num_embeddings = [int(x) for x in args.num_embeddings.split("-")]
    model = DLRM(num_embeddings).to(device)
    model = DistributedDataParallel(model, device_ids=[rank], output_device=rank)

    sparse_params = [p for n, p in model.named_parameters() if "embeddings" in n]
    dense_params = [p for n, p in model.named_parameters() if "embeddings" not in n]
    sparse_opt = torch.optim.SparseAdam(sparse_params, lr=args.lr)
    dense_opt = torch.optim.Adam(dense_params, lr=args.lr)
    criterion = nn.BCEWithLogitsLoss()

    train_set = CriteoShard(args.data, "train")
    sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank, shuffle=True)
    loader = DataLoader(
        train_set,
        batch_size=args.batch_size,
        sampler=sampler,
        num_workers=args.workers,
        pin_memory=True,
        drop_last=True,
        persistent_workers=True,
    )

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        start = time.time()
        for step, (dense, sparse, label) in enumerate(loader):
            dense = dense.to(device, non_blocking=True).float()
            sparse = sparse.to(device, non_blocking=True)
            label = label.to(device, non_blocking=True)
            logits = model(dense, sparse)
            loss = criterion(logits, label)
            sparse_opt.zero_grad()
            dense_opt.zero_grad()
            loss.backward()
            sparse_opt.step()
            dense_opt.step()
            if step % 100 == 0 and rank == 0:
                torch.cuda.synchronize(device)
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} "
                      f"{(step + 1) * args.batch_size * world_size / (time.time() - start):.0f} samples/s")

    if rank == 0:
        torch.save(model.module.state_dict(), "dlrm_lite.pt")
    dist.destroy_process_group()


def main():
    args = parse_args()
    world_size = args.gpus
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", ",".join(str(i) for i in range(world_size)))
    mp.spawn(main_worker, args=(world_size, args), nprocs=world_size, join=True)


if __name__ == "__main__":
    main()
