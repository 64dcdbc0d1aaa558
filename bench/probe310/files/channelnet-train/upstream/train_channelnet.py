#!/usr/bin/env python
"""ChannelNet: deep image-processing based channel estimation (Soltani et al., 2019).

Two-stage pipeline, trained separately and then fine-tuned end to end:
    1. SRCNN   -- super-resolves the LS estimate at pilot positions to the full
                  time-frequency grid (72 subcarriers x 14 OFDM symbols)
    2. DnCNN   -- residual denoiser on the interpolated grid

Datasets are produced with DeepMIMO (O1_60 / I1_2p4) or the VehA model in
MATLAB and stored as .npz with keys  H_ls (N, 2, 72, 14) and H (N, 2, 72, 14).

Example:
    python train_channelnet.py --stage srcnn  --snr 12 --pilots 48 --amp
    python train_channelnet.py --stage dncnn  --snr 12 --pilots 48 --amp
    python train_channelnet.py --stage joint  --snr 12 --pilots 48
"""
import argparse
import json
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset, random_split

from models.channelnet import SRCNN, DnCNN, ChannelNet

DEFAULT_CFG = {
    "data_root": "./data/deepmimo_O1_60",
    "n_subcarriers": 72,
    "n_symbols": 14,
    "batch_size": 128,
    "epochs": {"srcnn": 300, "dncnn": 200, "joint": 50},
    "lr": {"srcnn": 1e-3, "dncnn": 1e-3, "joint": 1e-4},
    "val_split": 0.1,
}


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--stage", choices=["srcnn", "dncnn", "joint"], default="srcnn")
    p.add_argument("--snr", type=int, default=12, help="SNR (dB) of the training set")
    p.add_argument("--pilots", type=int, default=48)
    p.add_argument("--config", type=str, default=None, help="optional json overriding DEFAULT_CFG")
    p.add_argument("--amp", action="store_true")
    p.add_argument("--device", type=str, default="cuda:0")
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--out", type=str, default="./weights")
    p.add_argument("--log-every", type=int, default=100)
    return p.parse_args()


class ChannelGridDataset(Dataset):
    """(noisy LS grid, true channel grid) pairs stored as float32 real/imag planes."""

    def __init__(self, root, snr, pilots, split="train"):
        f = os.path.join(root, "%s_snr%d_p%d.npz" % (split, snr, pilots))
        d = np.load(f)
        self.h_ls = torch.from_numpy(d["H_ls"].astype(np.float32))
        self.h = torch.from_numpy(d["H"].astype(np.float32))
        # per-dataset normalisation (kept for de-normalising at test time)
        self.scale = float(np.abs(d["H"]).max())
        self.h_ls /= self.scale
        self.h /= self.scale

    def __len__(self):
        return self.h.shape[0]

    def __getitem__(self, idx):
        return self.h_ls[idx], self.h[idx]


def nmse_db(h_hat, h):
    err = torch.sum((h_hat - h) ** 2, dim=(1, 2, 3))
    pw = torch.sum(h ** 2, dim=(1, 2, 3))
    return 10 * torch.log10(torch.mean(err / pw))


def build_model(stage, out_dir):
    if stage == "srcnn":
        return SRCNN()
    if stage == "dncnn":
        return DnCNN(depth=20, n_channels=64)
    net = ChannelNet()
    net.sr.load_state_dict(torch.load(os.path.join(out_dir, "srcnn.pth"), map_location="cpu"))
    net.dn.load_state_dict(torch.load(os.path.join(out_dir, "dncnn.pth"), map_location="cpu"))
    return net


def stage_io(stage, model, h_ls, h, sr_model=None):
    """What goes in / what is the target for each stage."""
    if stage == "srcnn":
        return model(h_ls), h
    if stage == "dncnn":
        with torch.no_grad():
            h_sr = sr_model(h_ls)
        return model(h_sr), h
    return model(h_ls), h


@torch.no_grad()
def test_snr_sweep(model, cfg, device, pilots, snrs=(0, 5, 10, 15, 20, 25, 30)):
    """NMSE vs SNR of the trained network next to the LS and ideal-interpolation baselines."""
    model.eval()
    rows = []
    for snr in snrs:
        ds = ChannelGridDataset(cfg["data_root"], snr, pilots, "test")
        loader = DataLoader(ds, batch_size=512, shuffle=False)
        err_net = err_ls = pw = 0.0
        for h_ls, h in loader:
            h_ls, h = h_ls.to(device), h.to(device)
            h_hat = model(h_ls).float()
            err_net += torch.sum((h_hat - h) ** 2).item()
            err_ls += torch.sum((h_ls - h) ** 2).item()
            pw += torch.sum(h ** 2).item()
        rows.append((snr, 10 * np.log10(err_net / pw), 10 * np.log10(err_ls / pw)))
        print("SNR %2d dB | ChannelNet %.2f dB | LS(interp) %.2f dB" % rows[-1])
    return rows


def main():
    args = parse_args()
    cfg = dict(DEFAULT_CFG)
    if args.config:
        with open(args.config) as f:
            cfg.update(json.load(f))

    torch.set_default_tensor_type("torch.cuda.FloatTensor")
    device = torch.device(args.device)
    torch.backends.cudnn.benchmark = True
    print("[ChannelNet] stage=%s  snr=%ddB  pilots=%d  device=%s  amp=%s" % (
        args.stage, args.snr, args.pilots, device, args.amp))

    full = ChannelGridDataset(cfg["data_root"], args.snr, args.pilots, "train")
    n_val = int(len(full) * cfg["val_split"])
    train_set, val_set = random_split(full, [len(full) - n_val, n_val],
                                      generator=torch.Generator(device="cuda").manual_seed(0))
    train_loader = DataLoader(train_set, batch_size=cfg["batch_size"], shuffle=True,
                              num_workers=args.workers, pin_memory=True, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=cfg["batch_size"], shuffle=False,
                            num_workers=args.workers)

    os.makedirs(args.out, exist_ok=True)
    model = build_model(args.stage, args.out).to(device)
    sr_model = None
    if args.stage == "dncnn":
        sr_model = SRCNN().to(device)
        sr_model.load_state_dict(torch.load(os.path.join(args.out, "srcnn.pth"), map_location=device))
        sr_model.eval()

    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"][args.stage])
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=10)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)
    criterion = nn.MSELoss()

    best = float("inf")
    step = 0
    for epoch in range(cfg["epochs"][args.stage]):
        model.train()
        t0 = time.time()
        for h_ls, h in train_loader:
            h_ls = h_ls.to(device, non_blocking=True)
            h = h.to(device, non_blocking=True)
            optimizer.zero_grad()
            with torch.cuda.amp.autocast(enabled=args.amp):
                pred, target = stage_io(args.stage, model, h_ls, h, sr_model)
                loss = criterion(pred, target)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            step += 1
            if step % args.log_every == 0:
                print("  step %6d  loss %.4e" % (step, loss.item()))

        model.eval()
        val_nmse, n = 0.0, 0
        with torch.no_grad():
            for h_ls, h in val_loader:
                h_ls, h = h_ls.to(device), h.to(device)
                pred, target = stage_io(args.stage, model, h_ls, h, sr_model)
                val_nmse += nmse_db(pred.float(), target).item() * h.size(0)
                n += h.size(0)
        val_nmse /= n
        scheduler.step(val_nmse)
        print("epoch %3d  val NMSE %.2f dB  (%.1fs, lr %.1e)" % (
            epoch, val_nmse, time.time() - t0, optimizer.param_groups[0]["lr"]))

        if val_nmse < best:
            best = val_nmse
            torch.save(model.state_dict(), os.path.join(args.out, "%s.pth" % args.stage))

    print("best val NMSE: %.2f dB" % best)


if __name__ == "__main__":
    main()
