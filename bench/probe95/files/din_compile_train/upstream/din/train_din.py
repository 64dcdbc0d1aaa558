"""Deep Interest Network on Amazon Books / Electronics (the DIN paper's public benchmark).

Single-card trainer. Behaviour sequences are right-padded to --max_len and stored as .npy; the model is
wrapped in torch.compile and trained under bf16 autocast when the card supports it (fp16 + GradScaler
otherwise).

    python din/train_din.py --data data/amazon_books --max_len 100 --compile
"""
import argparse
import os
import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.metrics import roc_auc_score
from torch.utils.data import DataLoader, Dataset


@dataclass
class Vocab:
    n_users: int
    n_items: int
    n_cates: int


class AmazonSeqDataset(Dataset):
    def __init__(self, root, split):
        d = np.load(os.path.join(root, f"{split}.npz"))
        self.uid = d["uid"].astype(np.int64)
        self.item = d["item"].astype(np.int64)
        self.cate = d["cate"].astype(np.int64)
        self.hist_item = d["hist_item"].astype(np.int64)
        self.hist_cate = d["hist_cate"].astype(np.int64)
        self.hist_len = d["hist_len"].astype(np.int64)
        self.label = d["label"].astype(np.float32)

    def __len__(self):
        return len(self.label)

    def __getitem__(self, i):
        return {
            "uid": self.uid[i], "item": self.item[i], "cate": self.cate[i],
            "hist_item": self.hist_item[i], "hist_cate": self.hist_cate[i],
            "hist_len": self.hist_len[i], "label": self.label[i],
        }


class Dice(nn.Module):
    """Data-adaptive activation from the DIN paper."""

    def __init__(self, dim, eps=1e-9):
        super().__init__()
        self.bn = nn.BatchNorm1d(dim, eps=eps, affine=False)
        self.alpha = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        if x.dim() == 3:
            p = torch.sigmoid(self.bn(x.transpose(1, 2)).transpose(1, 2))
        else:
            p = torch.sigmoid(self.bn(x))
        return p * x + (1 - p) * self.alpha * x


class LocalActivationUnit(nn.Module):
    def __init__(self, dim, hidden=(80, 40)):
        super().__init__()
        layers, d = [], 4 * dim
        for h in hidden:
            layers += [nn.Linear(d, h), Dice(h)]
            d = h
        layers.append(nn.Linear(d, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, query, keys, mask):
        # query [B, D], keys [B, T, D], mask [B, T]
        q = query.unsqueeze(1).expand_as(keys)
        att = self.net(torch.cat([q, keys, q - keys, q * keys], dim=-1)).squeeze(-1)
        att = att.masked_fill(~mask, 0.0)  # DIN does not normalise the weights
        return torch.bmm(att.unsqueeze(1), keys).squeeze(1)


class DIN(nn.Module):
    def __init__(self, vocab: Vocab, dim=18, mlp=(200, 80)):
        super().__init__()
        self.user_emb = nn.Embedding(vocab.n_users, dim)
        self.item_emb = nn.Embedding(vocab.n_items, dim, padding_idx=0)
        self.cate_emb = nn.Embedding(vocab.n_cates, dim, padding_idx=0)
        self.attn = LocalActivationUnit(2 * dim)
        layers, d = [], dim + 2 * dim + 2 * dim
        for h in mlp:
            layers += [nn.Linear(d, h), Dice(h)]
            d = h
        layers.append(nn.Linear(d, 1))
        self.mlp = nn.Sequential(*layers)

    def forward(self, b):
        target = torch.cat([self.item_emb(b["item"]), self.cate_emb(b["cate"])], dim=-1)
        hist = torch.cat([self.item_emb(b["hist_item"]), self.cate_emb(b["hist_cate"])], dim=-1)
        T = hist.size(1)
        mask = torch.arange(T, device=hist.device)[None, :] < b["hist_len"][:, None]
        interest = self.attn(target, hist, mask)
        x = torch.cat([self.user_emb(b["uid"]), target, interest], dim=-1)
        return self.mlp(x).squeeze(-1)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/amazon_books")
    p.add_argument("--dim", type=int, default=18)
    p.add_argument("--batch_size", type=int, default=1024)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--out", default="runs/din")
    return p.parse_args()


def to_device(batch, device):
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}


@torch.no_grad()
def evaluate(model, loader, device, amp_dtype):
    model.eval()
    ps, ys = [], []
    for b in loader:
        b = to_device(b, device)
        with torch.autocast("cuda", dtype=amp_dtype):
            logits = model(b)
        ps.append(torch.sigmoid(logits.float()).cpu())
        ys.append(b["label"].cpu())
    model.train()
    return roc_auc_score(torch.cat(ys).numpy(), torch.cat(ps).numpy())


def main():
    args = parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.set_float32_matmul_precision("high")
    meta = np.load(os.path.join(args.data, "meta.npz"))
    vocab = Vocab(int(meta["n_users"]), int(meta["n_items"]), int(meta["n_cates"]))

    loader_kwargs = dict(num_workers=args.workers, pin_memory=True, pin_memory_device="cuda",
                         persistent_workers=args.workers > 0)
    train_loader = DataLoader(AmazonSeqDataset(args.data, "train"), batch_size=args.batch_size,
                              shuffle=True, drop_last=True, **loader_kwargs)
    test_loader = DataLoader(AmazonSeqDataset(args.data, "test"), batch_size=4096, **loader_kwargs)

    model = DIN(vocab, dim=args.dim).to(device)
    use_bf16 = torch.cuda.is_bf16_supported()
    amp_dtype = torch.bfloat16 if use_bf16 else torch.float16
    scaler = torch.amp.GradScaler("cuda", enabled=not use_bf16)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    train_model = model
    if args.compile:
        # dynamic=False: sequences are padded to a fixed max_len, so every step has the same shapes
        train_model = torch.compile(model, mode="max-autotune", dynamic=False)

    os.makedirs(args.out, exist_ok=True)
    print(f"device={device} {torch.cuda.get_device_name()} amp={amp_dtype} compile={args.compile}")
    best = 0.0
    for epoch in range(args.epochs):
        torch.cuda.reset_peak_memory_stats()
        t0, seen, run_loss = time.time(), 0, 0.0
        for step, b in enumerate(train_loader):
            b = to_device(b, device)
            with torch.autocast(device_type="cuda", dtype=amp_dtype):
                logits = train_model(b)
                loss = F.binary_cross_entropy_with_logits(logits.float(), b["label"])
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            run_loss += loss.item()
            seen += b["label"].numel()
            if step % 200 == 0 and step > 0:
                print(f"epoch {epoch} step {step} loss {run_loss / 200:.4f} "
                      f"{seen / (time.time() - t0):.0f} samples/s")
                run_loss = 0.0
        auc = evaluate(model, test_loader, device, amp_dtype)
        peak = torch.cuda.max_memory_allocated() / 2 ** 20
        print(f"epoch {epoch} test AUC {auc:.4f} peak mem {peak:.0f} MiB")
        if auc > best:
            best = auc
            torch.save(model.state_dict(), os.path.join(args.out, "din_best.pt"))
    print(f"best test AUC {best:.4f}")


if __name__ == "__main__":
    main()
