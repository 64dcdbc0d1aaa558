"""
Train a wide MLP on Alpha360 features exported from qlib (one row = stock x day).

The whole training set (~8M rows x 360 floats) does not fit in GPU memory, so batches
are streamed from pinned host memory with a side-stream prefetcher, the model is
compiled, and multiple GPUs on the box are used with DataParallel when available.

    python examples/alpha_mlp/train_alpha_mlp.py --data data/alpha360_csi800.h5 --epochs 20
"""
import argparse
import math
import os
import time

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--batch_size", type=int, default=8192)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--weight_decay", type=float, default=1e-4)
    p.add_argument("--hidden", type=int, nargs="+", default=[1024, 512, 256])
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--amp", action="store_true")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--out", default="runs/alpha_mlp")
    return p.parse_args()


class AlphaMLP(nn.Module):
    def __init__(self, d_in=360, hidden=(1024, 512, 256), dropout=0.1):
        super().__init__()
        layers = [nn.BatchNorm1d(d_in)]
        prev = d_in
        for h in hidden:
            layers += [nn.Linear(prev, h), nn.BatchNorm1d(h), nn.SiLU(), nn.Dropout(dropout)]
            prev = h
        layers.append(nn.Linear(prev, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x).squeeze(-1)


class HostBatches:
    """Shuffled mini-batches from big numpy arrays, returned as pinned CPU tensors."""

    def __init__(self, x: np.ndarray, y: np.ndarray, batch_size: int, shuffle: bool):
        self.x, self.y = x, y
        self.batch_size = batch_size
        self.shuffle = shuffle

    def __len__(self):
        return math.ceil(len(self.x) / self.batch_size)

    def __iter__(self):
        idx = np.random.permutation(len(self.x)) if self.shuffle else np.arange(len(self.x))
        for i in range(0, len(idx), self.batch_size):
            b = np.sort(idx[i:i + self.batch_size])
            xb = torch.from_numpy(self.x[b]).pin_memory()
            yb = torch.from_numpy(self.y[b]).pin_memory()
            yield xb, yb


class CudaPrefetcher:
    """Overlap host->device copies with compute using a side stream (apex imagenet style)."""

    def __init__(self, loader, device):
        self.loader = iter(loader)
        self.device = device
        self.stream = torch.cuda.Stream(device=device)
        self.next = None
        self.preload()

    def preload(self):
        try:
            xb, yb = next(self.loader)
        except StopIteration:
            self.next = None
            return
        with torch.cuda.stream(self.stream):
            self.next = (xb.to(self.device, non_blocking=True), yb.to(self.device, non_blocking=True))

    def __iter__(self):
        return self

    def __next__(self):
        torch.cuda.current_stream(self.device).wait_stream(self.stream)
        if self.next is None:
            raise StopIteration
        xb, yb = self.next
        xb.record_stream(torch.cuda.current_stream(self.device))
        yb.record_stream(torch.cuda.current_stream(self.device))
        self.preload()
        return xb, yb


def load_h5(path):
    df = pd.read_hdf(path, key="data")
    feature = df["feature"].values.astype(np.float32)
    label = df["label"].values[:, 0].astype(np.float32)
    ok = np.isfinite(label)
    feature = np.nan_to_num(feature[ok], nan=0.0, posinf=0.0, neginf=0.0)
    index = df.index[ok]
    return feature, label[ok], index


def split_by_date(index, x, y, valid_start="2019-01-01", test_start="2020-01-01"):
    dates = index.get_level_values("datetime")
    tr = dates < pd.Timestamp(valid_start)
    va = (dates >= pd.Timestamp(valid_start)) & (dates < pd.Timestamp(test_start))
    te = dates >= pd.Timestamp(test_start)
    return (x[tr], y[tr]), (x[va], y[va]), (x[te], y[te], index[te])


def main():
    args = parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.backends.cudnn.benchmark = True
    os.makedirs(args.out, exist_ok=True)

    x, y, index = load_h5(args.data)
    (x_tr, y_tr), (x_va, y_va), (x_te, y_te, idx_te) = split_by_date(index, x, y)
    print(f"train {len(x_tr):,}  valid {len(x_va):,}  test {len(x_te):,}  features {x.shape[1]}")

    model = AlphaMLP(d_in=x.shape[1], hidden=tuple(args.hidden), dropout=args.dropout).to(device)
    if torch.cuda.device_count() > 1:
        print(f"using DataParallel over {torch.cuda.device_count()} GPUs")
        model = nn.DataParallel(model)
    if args.compile:
        model = torch.compile(model, mode="max-autotune")

    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay, fused=True)
    steps_per_epoch = math.ceil(len(x_tr) / args.batch_size)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, total_steps=args.epochs * steps_per_epoch)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    best, best_state = -np.inf, None
    for epoch in range(args.epochs):
        model.train()
        t0 = time.time()
        losses = []
        for xb, yb in CudaPrefetcher(HostBatches(x_tr, y_tr, args.batch_size, shuffle=True), device):
            with torch.cuda.amp.autocast(enabled=args.amp):
                pred = model(xb)
                loss = F.mse_loss(pred.float(), yb)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            losses.append(loss.item())

        model.eval()
        preds = []
        with torch.no_grad():
            for xb, _ in CudaPrefetcher(HostBatches(x_va, y_va, args.batch_size * 4, shuffle=False), device):
                preds.append(model(xb).float().cpu().numpy())
        pv = np.concatenate(preds)
        ic = np.corrcoef(pv, y_va)[0, 1]
        print(f"epoch {epoch:02d} loss {np.mean(losses):.5f} valid IC {ic:.4f} ({time.time() - t0:.0f}s)")
        if ic > best:
            best = ic
            raw = model.module if isinstance(model, nn.DataParallel) else model
            best_state = {k: v.detach().cpu().clone() for k, v in raw.state_dict().items()}

    torch.save(best_state, os.path.join(args.out, "best.pt"))
    print(f"best valid IC {best:.4f}")


if __name__ == "__main__":
    main()
