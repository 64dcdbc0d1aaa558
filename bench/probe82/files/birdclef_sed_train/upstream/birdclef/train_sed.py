"""BirdCLEF 2023 - SED (sound event detection) model training on 5 s crops.

PANNs-style attention head over a timm CNN fed with on-device log-mel / PCEN features
(birdclef/gpu_features.py). Clip-level BCE on the attention output + frame-max auxiliary loss.

    python -m birdclef.train_sed --fold 0 --backbone tf_efficientnet_b0_ns --gpu 0
"""
import argparse
import contextlib
import math
import os
import time

import numpy as np
import pandas as pd
import soundfile as sf
import timm
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.metrics import average_precision_score
from torch.utils.data import DataLoader, Dataset

from birdclef.gpu_features import SR, build_extractor, mixup_batch, random_crop_batch
from src.utils.common import AverageMeter, get_logger, seed_everything, worker_init_fn

CLIP_SECONDS = 5
LOAD_SECONDS = 15


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--fold", type=int, default=0)
    p.add_argument("--backbone", default="tf_efficientnet_b0_ns")
    p.add_argument("--gpu", type=int, default=0)
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--bs", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--amp", type=int, default=1)
    p.add_argument("--mixup", type=float, default=0.5)
    p.add_argument("--data", default="../input/birdclef-2023")
    p.add_argument("--out", default="outputs/sed")
    return p.parse_args()


class WaveDataset(Dataset):
    """Returns the first LOAD_SECONDS of each recording as float32 (random crop happens on device)."""

    def __init__(self, df, root, n_classes, label_map):
        self.paths = [os.path.join(root, "train_audio", f) for f in df.filename.values]
        self.primary = [label_map[x] for x in df.primary_label.values]
        self.secondary = [[label_map[s] for s in eval(x) if s in label_map] for x in df.secondary_labels.values]
        self.n_classes = n_classes

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        wav, sr = sf.read(self.paths[i], frames=SR * LOAD_SECONDS, dtype="float32", always_2d=False)
        if wav.ndim > 1:
            wav = wav.mean(1)
        out = np.zeros(SR * LOAD_SECONDS, dtype=np.float32)
        out[: len(wav)] = wav[: SR * LOAD_SECONDS]
        y = np.zeros(self.n_classes, dtype=np.float32)
        y[self.primary[i]] = 1.0
        for s in self.secondary[i]:
            y[s] = max(y[s], 0.5)
        return torch.from_numpy(out), torch.from_numpy(y)


def init_layer(layer):
    nn.init.xavier_uniform_(layer.weight)
    if hasattr(layer, "bias") and layer.bias is not None:
        layer.bias.data.fill_(0.0)


class AttBlockV2(nn.Module):
    def __init__(self, in_features, out_features, activation="linear"):
        super().__init__()
        self.activation = activation
        self.att = nn.Conv1d(in_features, out_features, kernel_size=1, stride=1, padding=0, bias=True)
        self.cla = nn.Conv1d(in_features, out_features, kernel_size=1, stride=1, padding=0, bias=True)
        init_layer(self.att)
        init_layer(self.cla)

    def forward(self, x):
        # x: (n_samples, n_in, n_time)
        norm_att = torch.softmax(torch.tanh(self.att(x)), dim=-1)
        cla = self.cla(x)
        if self.activation == "sigmoid":
            cla = torch.sigmoid(cla)
        x = torch.sum(norm_att * cla, dim=2)
        return x, norm_att, cla


class SEDModel(nn.Module):
    def __init__(self, backbone, n_classes, pretrained=True):
        super().__init__()
        self.encoder = timm.create_model(backbone, pretrained=pretrained, in_chans=3, num_classes=0, global_pool="")
        n_feat = self.encoder.num_features
        self.bn0 = nn.BatchNorm2d(128)
        self.fc1 = nn.Linear(n_feat, n_feat, bias=True)
        self.att_block = AttBlockV2(n_feat, n_classes, activation="linear")
        init_layer(self.fc1)

    def forward(self, x):
        # x: (B, 3, n_mels, T)
        x = x.transpose(1, 2)
        x = self.bn0(x)
        x = x.transpose(1, 2)
        x = self.encoder(x)              # (B, C, F', T')
        x = torch.mean(x, dim=2)         # pool frequency
        x1 = F.max_pool1d(x, kernel_size=3, stride=1, padding=1)
        x2 = F.avg_pool1d(x, kernel_size=3, stride=1, padding=1)
        x = x1 + x2
        x = F.dropout(x, p=0.25, training=self.training)
        x = x.transpose(1, 2)
        x = F.relu_(self.fc1(x))
        x = x.transpose(1, 2)
        x = F.dropout(x, p=0.25, training=self.training)
        clip_logit, _, segment_logit = self.att_block(x)
        frame_max = segment_logit.max(dim=2).values
        return clip_logit, frame_max


def padded_cmap(y_true, y_pred, padding_factor=5):
    """Competition metric: macro AP with 5 rows of positive padding per class."""
    n_classes = y_true.shape[1]
    pad = np.ones((padding_factor, n_classes))
    y_true = np.concatenate([y_true, pad])
    y_pred = np.concatenate([y_pred, pad])
    return average_precision_score(y_true, y_pred, average="macro")


@torch.no_grad()
def predict_soundscape(model, extractor, chunker, path, device, labels):
    """Rows of (row_id, probs) for one test soundscape, one row per 5 s window."""
    wav, _ = sf.read(path, dtype="float32")
    windows = chunker(wav).to(device)
    model.eval()
    extractor.eval()
    probs = []
    for s in range(0, len(windows), 32):
        clip_logit, frame_max = model(extractor(windows[s:s + 32]))
        probs.append((0.5 * torch.sigmoid(clip_logit) + 0.5 * torch.sigmoid(frame_max)).float().cpu().numpy())
    probs = np.concatenate(probs)
    stem = os.path.splitext(os.path.basename(path))[0]
    rows = [f"{stem}_{t}" for t in chunker.end_times(len(probs))]
    return pd.DataFrame(probs, columns=labels).assign(row_id=rows)


def main():
    args = parse_args()
    out_dir = os.path.join(args.out, args.backbone, f"fold{args.fold}")
    os.makedirs(out_dir, exist_ok=True)
    logger = get_logger(os.path.join(out_dir, "train.log"))
    seed_everything(42 + args.fold)
    device = torch.device("cuda:%d" % args.gpu)
    torch.cuda.set_device(args.gpu)

    df = pd.read_csv(os.path.join(args.data, "train_metadata_folds.csv"))
    labels = sorted(df.primary_label.unique())
    label_map = {k: i for i, k in enumerate(labels)}
    trn = df[df.fold != args.fold].reset_index(drop=True)
    val = df[df.fold == args.fold].reset_index(drop=True)
    trn_dl = DataLoader(WaveDataset(trn, args.data, len(labels), label_map), batch_size=args.bs, shuffle=True,
                        num_workers=8, pin_memory=True, drop_last=True, worker_init_fn=worker_init_fn)
    val_dl = DataLoader(WaveDataset(val, args.data, len(labels), label_map), batch_size=args.bs, shuffle=False,
                        num_workers=8, pin_memory=True)

    extractor = build_extractor({"pcen": True, "specaug": True})
    model = SEDModel(args.backbone, len(labels)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-2)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, epochs=args.epochs,
                                                    steps_per_epoch=len(trn_dl), pct_start=0.1)
    scaler = torch.cuda.amp.GradScaler(enabled=bool(args.amp))
    amp_ctx = (lambda: torch.autocast(device_type="cuda", dtype=torch.float16)) if args.amp else contextlib.nullcontext
    bce = nn.BCEWithLogitsLoss()

    best = 0.0
    for epoch in range(args.epochs):
        model.train()
        extractor.train()
        meter = AverageMeter()
        torch.cuda.reset_peak_memory_stats()
        t0 = time.time()
        for wav, y in trn_dl:
            wav, y = wav.to(device, non_blocking=True), y.to(device, non_blocking=True)
            wav = random_crop_batch(wav, SR * CLIP_SECONDS)
            feats = extractor(wav)
            if np.random.rand() < args.mixup:
                feats, y = mixup_batch(feats, y)
            with amp_ctx():
                clip_logit, frame_max = model(feats)
                loss = bce(clip_logit.float(), y) + 0.5 * bce(frame_max.float(), y)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            meter.update(loss.item(), wav.size(0))

        model.eval()
        extractor.eval()
        preds, gts = [], []
        with torch.no_grad():
            for wav, y in val_dl:
                wav = wav.to(device)[:, : SR * CLIP_SECONDS]
                with amp_ctx():
                    clip_logit, _ = model(extractor(wav))
                preds.append(torch.sigmoid(clip_logit.float()).cpu().numpy())
                gts.append((y.numpy() >= 1.0).astype(np.float32))
        score = padded_cmap(np.concatenate(gts), np.concatenate(preds))
        peak = torch.cuda.max_memory_allocated(device) / 2 ** 30
        logger.info(f"epoch {epoch} loss {meter.avg:.4f} cmAP {score:.4f} "
                    f"{time.time() - t0:.0f}s peak {peak:.1f}GiB")
        if score > best:
            best = score
            torch.save(model.state_dict(), os.path.join(out_dir, "best.pth"))
    logger.info(f"best padded cmAP {best:.4f}")


if __name__ == "__main__":
    main()
