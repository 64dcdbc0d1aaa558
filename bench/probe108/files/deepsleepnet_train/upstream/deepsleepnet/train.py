"""Train DeepSleepNet on Sleep-EDF (Fpz-Cz) with k-fold cross-validation.

Stage 1 pretrains the DeepFeatureNet on class-balanced (oversampled) single epochs,
stage 2 fine-tunes the whole sequence model on sequences of ``--seq_length`` epochs.

    python -m deepsleepnet.train --data_dir data/eeg_fpz_cz --fold 0 --gpu 0
    python -m deepsleepnet.train --data_dir data/eeg_fpz_cz --fold 0 --n_gpus 2 --amp
"""
import argparse
import glob
import json
import os
import random
import time

import numpy as np
import torch
import torch.nn as nn
from sklearn.metrics import cohen_kappa_score, confusion_matrix, f1_score
from torch.utils.data import DataLoader, Dataset

from deepsleepnet.model import DeepFeatureNet, DeepSleepNet, sequence_loss

CLASSES = ["W", "N1", "N2", "N3", "REM"]


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data_dir", type=str, required=True)
    p.add_argument("--output_dir", type=str, default="output")
    p.add_argument("--n_folds", type=int, default=20)
    p.add_argument("--fold", type=int, default=0)
    p.add_argument("--pretrain_epochs", type=int, default=100)
    p.add_argument("--finetune_epochs", type=int, default=200)
    p.add_argument("--batch_size", type=int, default=100)
    p.add_argument("--seq_batch_size", type=int, default=10)
    p.add_argument("--seq_length", type=int, default=25)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--gpu", type=int, default=0, help="GPU id (ignored with --no_cuda)")
    p.add_argument("--n_gpus", type=int, default=1, help="use nn.DataParallel over this many GPUs")
    p.add_argument("--no_cuda", action="store_true")
    p.add_argument("--amp", action="store_true", help="mixed precision training")
    p.add_argument("--resume", type=str, default=None)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--workers", type=int, default=4)
    return p.parse_args()


def set_seed(seed, use_cuda):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if use_cuda:
        torch.cuda.manual_seed(seed)


# --------------------------------------------------------------------------- data
def load_npz_files(files):
    xs, ys = [], []
    for f in files:
        with np.load(f) as d:
            xs.append(d["x"].astype(np.float32).squeeze())  # (n_epochs, 3000)
            ys.append(d["y"].astype(np.int64))
    return xs, ys


def split_subjects(data_dir, n_folds, fold):
    files = sorted(glob.glob(os.path.join(data_dir, "*.npz")))
    subjects = sorted({os.path.basename(f)[3:5] for f in files})
    valid_subjects = np.array_split(np.array(subjects), n_folds)[fold]
    train = [f for f in files if os.path.basename(f)[3:5] not in valid_subjects]
    valid = [f for f in files if os.path.basename(f)[3:5] in valid_subjects]
    return train, valid


class EpochDataset(Dataset):
    """Single 30-s epochs, optionally class-balanced by oversampling (stage 1)."""

    def __init__(self, xs, ys, balance=False):
        x = np.concatenate(xs)
        y = np.concatenate(ys)
        if balance:
            counts = np.bincount(y, minlength=len(CLASSES))
            idx = []
            for c in range(len(CLASSES)):
                ci = np.where(y == c)[0]
                if len(ci) == 0:
                    continue
                reps = int(np.ceil(counts.max() / len(ci)))
                idx.append(np.tile(ci, reps)[: counts.max()])
            idx = np.concatenate(idx)
            x, y = x[idx], y[idx]
        self.x = torch.from_numpy(x).unsqueeze(1)
        self.y = torch.from_numpy(y)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class SequenceDataset(Dataset):
    """Non-overlapping sequences of consecutive epochs from each night (stage 2)."""

    def __init__(self, xs, ys, seq_length):
        self.items = []
        for x, y in zip(xs, ys):
            n = (len(y) // seq_length) * seq_length
            for s in range(0, n, seq_length):
                self.items.append((x[s:s + seq_length], y[s:s + seq_length]))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        x, y = self.items[i]
        return torch.from_numpy(x).unsqueeze(1), torch.from_numpy(y)


# --------------------------------------------------------------------------- loops
def evaluate(model, loader, device, sequence):
    model.eval()
    preds, trues = [], []
    with torch.no_grad():
        for x, y in loader:
            x = x.to(device, non_blocking=True)
            if sequence:
                logits, _ = model(x)
                logits = logits.reshape(-1, logits.shape[-1])
                y = y.reshape(-1)
            else:
                logits = model(x)
            preds.append(logits.argmax(-1).cpu().numpy())
            trues.append(y.numpy())
    p, t = np.concatenate(preds), np.concatenate(trues)
    return {
        "acc": float((p == t).mean()),
        "mf1": float(f1_score(t, p, average="macro")),
        "kappa": float(cohen_kappa_score(t, p)),
        "cm": confusion_matrix(t, p, labels=range(len(CLASSES))).tolist(),
    }


def run_stage(name, model, train_loader, valid_loader, optimizer, epochs, device, scaler, args, sequence):
    best, history = -1.0, []
    for epoch in range(1, epochs + 1):
        model.train()
        t0, total, n = time.time(), 0.0, 0
        for x, y in train_loader:
            x = x.cuda(args.gpu, non_blocking=True)
            y = y.cuda(args.gpu, non_blocking=True)
            optimizer.zero_grad()
            with torch.cuda.amp.autocast(enabled=args.amp):
                if sequence:
                    logits, _ = model(x)
                    loss = sequence_loss(logits, y)
                else:
                    loss = nn.functional.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=10.0)
            scaler.step(optimizer)
            scaler.update()
            total += loss.item() * y.numel()
            n += y.numel()
        metrics = evaluate(model, valid_loader, device, sequence)
        history.append({"epoch": epoch, "loss": total / n, **{k: v for k, v in metrics.items() if k != "cm"}})
        print(f"[{name}] epoch {epoch:3d} loss {total / n:.4f} valid acc {metrics['acc']:.3f} "
              f"mf1 {metrics['mf1']:.3f} k {metrics['kappa']:.3f} ({time.time() - t0:.1f}s)")
        if metrics["mf1"] > best:
            best = metrics["mf1"]
            target = model.module if isinstance(model, nn.DataParallel) else model
            torch.save({"model": target.state_dict(), "epoch": epoch, "metrics": metrics},
                       os.path.join(args.output_dir, f"{name}_fold{args.fold}_best.pt"))
    return history


def main():
    args = get_args()
    os.makedirs(args.output_dir, exist_ok=True)

    use_cuda = torch.cuda.is_available() and not args.no_cuda
    device = torch.device("cuda:%d" % args.gpu if use_cuda else "cpu")
    if use_cuda:
        torch.cuda.set_device(args.gpu)
        torch.backends.cudnn.benchmark = True
    set_seed(args.seed, use_cuda)
    print(f"device: {device}  amp: {args.amp}  n_gpus: {args.n_gpus}")

    train_files, valid_files = split_subjects(args.data_dir, args.n_folds, args.fold)
    tx, ty = load_npz_files(train_files)
    vx, vy = load_npz_files(valid_files)
    loader_kw = dict(num_workers=args.workers, pin_memory=use_cuda)

    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    # ---------------- stage 1: representation learning
    feature_net = DeepFeatureNet().to(device)
    pre_model = nn.DataParallel(feature_net, device_ids=list(range(args.n_gpus))) if args.n_gpus > 1 else feature_net
    opt = torch.optim.Adam(feature_net.parameters(), lr=args.lr, betas=(0.9, 0.999))
    hist1 = run_stage(
        "pretrain", pre_model,
        DataLoader(EpochDataset(tx, ty, balance=True), batch_size=args.batch_size, shuffle=True, **loader_kw),
        DataLoader(EpochDataset(vx, vy), batch_size=args.batch_size, **loader_kw),
        opt, args.pretrain_epochs, device, scaler, args, sequence=False,
    )

    # ---------------- stage 2: sequence residual learning
    model = DeepSleepNet(feature_net=feature_net, seq_length=args.seq_length).to(device)
    if args.resume:
        ckpt = torch.load(args.resume, map_location="cuda:%d" % args.gpu)
        model.load_state_dict(ckpt["model"])
    if args.n_gpus > 1:
        model = nn.DataParallel(model, device_ids=list(range(args.n_gpus)))
    opt = torch.optim.Adam(
        (model.module if args.n_gpus > 1 else model).param_groups(args.lr, args.lr * 10), betas=(0.9, 0.999)
    )
    hist2 = run_stage(
        "finetune", model,
        DataLoader(SequenceDataset(tx, ty, args.seq_length), batch_size=args.seq_batch_size, shuffle=True,
                   **loader_kw),
        DataLoader(SequenceDataset(vx, vy, args.seq_length), batch_size=args.seq_batch_size, **loader_kw),
        opt, args.finetune_epochs, device, scaler, args, sequence=True,
    )

    if use_cuda:
        print("max GPU memory allocated: %.1f MB" % (torch.cuda.max_memory_allocated() / 2 ** 20))
    with open(os.path.join(args.output_dir, f"history_fold{args.fold}.json"), "w") as f:
        json.dump({"pretrain": hist1, "finetune": hist2, "args": vars(args)}, f, indent=2)


if __name__ == "__main__":
    main()
