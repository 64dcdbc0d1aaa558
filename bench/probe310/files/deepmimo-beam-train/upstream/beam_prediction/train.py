"""Beam prediction / beam tracking on DeepMIMO (O1_28) and ViWi-BT style sequences.

Given the last `seq_len` optimal beam indices (and optionally the normalised UE
position / sub-6 GHz channel), predict the mmWave beam for the next `pred_len`
time steps.  A GRU encoder with a linear classifier over the codebook is the
baseline from the ViWi beam-tracking challenge; the sub-6 variant follows
Alrabeiah & Alkhateeb, "Deep learning for mmWave beam and blockage prediction
using sub-6 GHz channels".

    python beam_prediction/train.py --scenario O1_28 --codebook 128 --seq-len 8 --pred-len 1
"""
import argparse
import csv
import datetime
import os
import random

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader

from dataset import BeamSeqDataset, Sub6BeamDataset

GPU_ID = 0
device = torch.device(f"cuda:{GPU_ID}" if torch.cuda.is_available() else "cpu")


class GruModelSimple(nn.Module):
    """Embedding of past beams -> stacked GRU -> per-step classifier."""

    def __init__(self, num_classes, num_layers=2, hidden_size=64, embed_size=64, dropout=0.2,
                 aux_dim=0):
        super().__init__()
        self.num_classes = num_classes
        self.num_layers = num_layers
        self.hidden_size = hidden_size
        self.embed = nn.Embedding(num_classes, embed_size)
        self.aux = nn.Linear(aux_dim, embed_size) if aux_dim > 0 else None
        self.gru = nn.GRU(embed_size, hidden_size, num_layers, dropout=dropout, batch_first=True)
        self.fc = nn.Linear(hidden_size, num_classes)

    def init_hidden(self, batch_size):
        return torch.zeros(self.num_layers, batch_size, self.hidden_size).cuda()

    def forward(self, beams, aux=None, h=None):
        x = self.embed(beams)
        if self.aux is not None and aux is not None:
            x = x + self.aux(aux)
        if h is None:
            h = self.init_hidden(beams.size(0))
        out, h = self.gru(x, h)
        return self.fc(out), h


class Sub6ToMmWave(nn.Module):
    """Fully-connected mapping from the sub-6 GHz channel (real/imag, 32x64) to mmWave beams."""

    def __init__(self, in_dim, num_classes, hidden=(2048, 2048, 1024), p=0.3):
        super().__init__()
        layers, d = [], in_dim
        for hdim in hidden:
            layers += [nn.Linear(d, hdim), nn.BatchNorm1d(hdim), nn.ReLU(inplace=True), nn.Dropout(p)]
            d = hdim
        layers.append(nn.Linear(d, num_classes))
        self.net = nn.Sequential(*layers)

    def forward(self, h_sub6):
        return self.net(h_sub6.flatten(1))


def topk_accuracy(logits, target, ks=(1, 3, 5)):
    """Top-k beam accuracy; logits [N, C], target [N]."""
    maxk = max(ks)
    _, pred = logits.topk(maxk, dim=1)
    correct = pred.eq(target.view(-1, 1).expand_as(pred))
    return {k: correct[:, :k].any(dim=1).float().mean().item() for k in ks}


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False


def run_sequence(args):
    train_set = BeamSeqDataset(args.data, "train", args.seq_len, args.pred_len, args.codebook)
    val_set = BeamSeqDataset(args.data, "val", args.seq_len, args.pred_len, args.codebook)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, num_workers=8,
                              pin_memory=True)
    val_loader = DataLoader(val_set, batch_size=1024, shuffle=False, num_workers=8)

    net = GruModelSimple(args.codebook, num_layers=args.layers, hidden_size=args.hidden,
                         dropout=args.dropout, aux_dim=2 if args.use_pos else 0)
    net = net.to(device)
    opt = optim.Adam(net.parameters(), lr=args.lr, weight_decay=1e-4)
    sched = optim.lr_scheduler.MultiStepLR(opt, milestones=[20, 40], gamma=0.1)
    crit = nn.CrossEntropyLoss()

    best_top1, history = 0.0, []
    for epoch in range(args.epochs):
        net.train()
        for beams, pos, target in train_loader:
            beams = beams.to(device)
            target = target.to(device)
            pos = pos.to(device) if args.use_pos else None
            logits, _ = net(beams, pos)
            logits = logits[:, -args.pred_len:, :]
            loss = crit(logits.reshape(-1, args.codebook), target.reshape(-1))
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), 5.0)
            opt.step()
        sched.step()

        net.eval()
        all_logits, all_t = [], []
        with torch.no_grad():
            for beams, pos, target in val_loader:
                beams, target = beams.cuda(), target.cuda()
                pos = pos.cuda() if args.use_pos else None
                logits, _ = net(beams, pos)
                all_logits.append(logits[:, -1, :])
                all_t.append(target[:, -1])
        acc = topk_accuracy(torch.cat(all_logits), torch.cat(all_t))
        history.append((epoch, loss.item(), acc[1], acc[3], acc[5]))
        print(f"[{epoch:03d}] loss {loss.item():.4f}  top1 {acc[1]:.4f}  top3 {acc[3]:.4f}  top5 {acc[5]:.4f}")
        if acc[1] > best_top1:
            best_top1 = acc[1]
            torch.save(net.state_dict(), os.path.join(args.out, "gru_best.pth"))
    return history


def run_sub6(args):
    train_set = Sub6BeamDataset(args.data, "train", args.codebook)
    val_set = Sub6BeamDataset(args.data, "val", args.codebook)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, num_workers=8,
                              pin_memory=True, persistent_workers=True)
    val_loader = DataLoader(val_set, batch_size=1024, num_workers=8)

    net = Sub6ToMmWave(train_set.in_dim, args.codebook).cuda()
    opt = optim.Adam(net.parameters(), lr=args.lr)
    crit = nn.CrossEntropyLoss()
    history, best_top1 = [], 0.0
    for epoch in range(args.epochs):
        net.train()
        for h_sub6, beam in train_loader:
            h_sub6, beam = h_sub6.to(device, non_blocking=True), beam.to(device, non_blocking=True)
            loss = crit(net(h_sub6), beam)
            opt.zero_grad()
            loss.backward()
            opt.step()
        net.eval()
        with torch.no_grad():
            logits, t = zip(*[(net(x.to(device)), y.to(device)) for x, y in val_loader])
        acc = topk_accuracy(torch.cat(logits), torch.cat(t))
        history.append((epoch, loss.item(), acc[1], acc[3], acc[5]))
        print(f"[sub6 {epoch:03d}] top1 {acc[1]:.4f} top3 {acc[3]:.4f}")
        if acc[1] > best_top1:
            best_top1 = acc[1]
            torch.save(net.state_dict(), os.path.join(args.out, "sub6_best.pth"))
    return history


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="./DeepMIMO_O1_28_beams")
    ap.add_argument("--mode", choices=["sequence", "sub6"], default="sequence")
    ap.add_argument("--codebook", type=int, default=128)
    ap.add_argument("--seq-len", type=int, default=8)
    ap.add_argument("--pred-len", type=int, default=1)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--dropout", type=float, default=0.2)
    ap.add_argument("--use-pos", action="store_true")
    ap.add_argument("--epochs", type=int, default=60)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=2023)
    ap.add_argument("--out", default="./results")
    args = ap.parse_args()

    seed_everything(args.seed)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    args.out = os.path.join(args.out, f"{args.mode}_{stamp}")
    os.makedirs(args.out, exist_ok=True)
    print(f"device: {device}  ({torch.cuda.get_device_name(GPU_ID) if torch.cuda.is_available() else 'cpu'})")

    history = run_sequence(args) if args.mode == "sequence" else run_sub6(args)
    with open(os.path.join(args.out, "history.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["epoch", "loss", "top1", "top3", "top5"])
        w.writerows(history)


if __name__ == "__main__":
    main()
