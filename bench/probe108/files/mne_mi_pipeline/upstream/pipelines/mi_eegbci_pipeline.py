#!/usr/bin/env python
"""Motor-imagery decoding on PhysioNet EEGBCI: MNE preprocessing + a small PyTorch CNN.

The preprocessing half follows the MNE "Motor imagery decoding from EEG data using
the Common Spatial Pattern (CSP)" tutorial; the second half replaces CSP+LDA by a
compact temporal/spatial ConvNet trained with plain PyTorch.

Filtering and resampling can be GPU accelerated by MNE (through CuPy) when
``--mne-cuda`` is passed; the network is trained on the first visible GPU if any.

Example
-------
    python pipelines/mi_eegbci_pipeline.py --subjects 1 2 3 --epochs 60 --mne-cuda
"""
import argparse
import logging
import os
import time
from pathlib import Path

import mne
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from mne.datasets import eegbci
from mne.io import concatenate_raws, read_raw_edf
from sklearn.model_selection import StratifiedKFold
from torch.utils.data import DataLoader, TensorDataset

logger = logging.getLogger("mi_pipeline")

RUNS_IMAGERY = [6, 10, 14]  # motor imagery: hands vs feet
EVENT_ID = dict(hands=2, feet=3)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--subjects", type=int, nargs="+", default=[1])
    parser.add_argument("--data-path", type=str, default=None,
                        help="MNE data folder (defaults to ~/mne_data)")
    parser.add_argument("--l-freq", type=float, default=7.0)
    parser.add_argument("--h-freq", type=float, default=30.0)
    parser.add_argument("--sfreq", type=float, default=128.0,
                        help="resample to this frequency before epoching")
    parser.add_argument("--tmin", type=float, default=-1.0)
    parser.add_argument("--tmax", type=float, default=4.0)
    parser.add_argument("--mne-cuda", action="store_true",
                        help="let MNE filter/resample on the GPU (requires cupy)")
    parser.add_argument("--gpu", type=int, default=0, help="GPU index for the network")
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--n-folds", type=int, default=5)
    parser.add_argument("--num-workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--out", type=str, default="results/mi_cnn")
    return parser.parse_args()


def get_device(gpu_id=0):
    """Return the torch device to train on (first GPU by default, CPU fallback)."""
    if torch.cuda.is_available():
        dev = torch.device(f"cuda:{gpu_id}")
        torch.cuda.set_device(dev)
        logger.info("training on %s (%s)", dev, torch.cuda.get_device_name(dev))
        return dev
    logger.warning("no GPU found, training on CPU - this will be slow")
    return torch.device("cpu")


def setup_mne_cuda(enabled):
    """Enable MNE's CuPy backend for FFT-based filtering and resampling."""
    if not enabled:
        return "1"
    mne.utils.set_config("MNE_USE_CUDA", "true")
    mne.cuda.init_cuda(verbose=True)
    return "cuda"


def load_subject(subject, data_path, l_freq, h_freq, sfreq, n_jobs):
    """Load, filter and resample the imagery runs of one subject."""
    raw_fnames = eegbci.load_data(subject, RUNS_IMAGERY, path=data_path, update_path=False)
    raw = concatenate_raws([read_raw_edf(f, preload=True, verbose="error") for f in raw_fnames])
    eegbci.standardize(raw)  # set channel names
    montage = mne.channels.make_standard_montage("standard_1005")
    raw.set_montage(montage)
    raw.annotations.rename(dict(T1="hands", T2="feet"))
    raw.set_eeg_reference(projection=True)

    # Apply band-pass filter (FIR, zero phase); with n_jobs="cuda" MNE runs the
    # overlap-add FFT convolution through cupy.
    raw.filter(l_freq, h_freq, fir_design="firwin", skip_by_annotation="edge", n_jobs=n_jobs)
    raw.resample(sfreq, n_jobs="cuda" if n_jobs == "cuda" else 1)
    return raw


def make_epochs(raw, tmin, tmax):
    picks = mne.pick_types(raw.info, meg=False, eeg=True, stim=False, eog=False, exclude="bads")
    epochs = mne.Epochs(
        raw, event_id=EVENT_ID, tmin=tmin, tmax=tmax, proj=True, picks=picks,
        baseline=None, preload=True, verbose="error",
    )
    X = epochs.get_data(copy=False).astype(np.float32) * 1e6  # V -> uV
    y = (epochs.events[:, -1] == EVENT_ID["feet"]).astype(np.int64)
    return X, y


class TemporalSpatialNet(nn.Module):
    """Shallow ConvNet-like model: temporal conv -> spatial conv -> square -> log-var pooling."""

    def __init__(self, n_chans, n_times, n_classes=2, n_filters=40, kernel_t=25, pool=75, stride=15,
                 drop=0.5):
        super().__init__()
        self.temporal = nn.Conv2d(1, n_filters, (1, kernel_t))
        self.spatial = nn.Conv2d(n_filters, n_filters, (n_chans, 1), bias=False)
        self.bn = nn.BatchNorm2d(n_filters, momentum=0.1)
        self.pool = nn.AvgPool2d((1, pool), stride=(1, stride))
        self.drop = nn.Dropout(drop)
        with torch.no_grad():
            n_out = self._features(torch.zeros(1, 1, n_chans, n_times)).shape[-1]
        self.classifier = nn.Linear(n_filters * n_out, n_classes)

    def _features(self, x):
        x = self.temporal(x)
        x = self.spatial(x)
        x = self.bn(x)
        x = x * x
        x = self.pool(x)
        x = torch.log(torch.clamp(x, min=1e-6))
        return x

    def forward(self, x):
        x = x.unsqueeze(1)  # (B, 1, C, T)
        x = self.drop(self._features(x))
        return self.classifier(x.flatten(1))


def run_fold(X_tr, y_tr, X_te, y_te, args, device):
    model = TemporalSpatialNet(X_tr.shape[1], X_tr.shape[2]).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-3)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    train_ds = TensorDataset(torch.from_numpy(X_tr), torch.from_numpy(y_tr))
    test_ds = TensorDataset(torch.from_numpy(X_te), torch.from_numpy(y_te))
    train_loader = DataLoader(
        train_ds, batch_size=args.batch_size, shuffle=True, drop_last=False,
        num_workers=args.num_workers, pin_memory=torch.cuda.is_available(),
    )
    test_loader = DataLoader(test_ds, batch_size=256, shuffle=False)

    for epoch in range(args.epochs):
        model.train()
        running = 0.0
        for xb, yb in train_loader:
            xb = xb.to(device, non_blocking=True)
            yb = yb.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            optimizer.step()
            running += loss.item() * xb.shape[0]
        scheduler.step()
        if (epoch + 1) % 10 == 0:
            logger.info("  epoch %3d  train loss %.4f", epoch + 1, running / len(train_ds))

    model.eval()
    correct = 0
    with torch.no_grad():
        for xb, yb in test_loader:
            pred = model(xb.to(device)).argmax(1).cpu()
            correct += (pred == yb).sum().item()
    return correct / len(test_ds), model


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)

    n_jobs = setup_mne_cuda(args.mne_cuda)
    device = get_device(args.gpu)

    summary = {}
    for subject in args.subjects:
        t0 = time.time()
        raw = load_subject(subject, args.data_path, args.l_freq, args.h_freq, args.sfreq, n_jobs)
        X, y = make_epochs(raw, args.tmin, args.tmax)
        logger.info("subject %d: X=%s, %d hands / %d feet (%.1fs preprocessing)",
                    subject, X.shape, (y == 0).sum(), (y == 1).sum(), time.time() - t0)

        skf = StratifiedKFold(n_splits=args.n_folds, shuffle=True, random_state=args.seed)
        accs = []
        for fold, (tr, te) in enumerate(skf.split(X, y)):
            # per-fold channel standardisation with training statistics only
            mu = X[tr].mean(axis=(0, 2), keepdims=True)
            sd = X[tr].std(axis=(0, 2), keepdims=True) + 1e-6
            acc, model = run_fold((X[tr] - mu) / sd, y[tr], (X[te] - mu) / sd, y[te], args, device)
            accs.append(acc)
            logger.info("subject %d fold %d: acc %.3f", subject, fold, acc)
            torch.save(model.state_dict(), out_dir / f"sub{subject:03d}_fold{fold}.pt")
        summary[subject] = float(np.mean(accs))
        logger.info("subject %d: mean acc %.3f +- %.3f", subject, np.mean(accs), np.std(accs))

    np.save(out_dir / "summary.npy", summary)
    logger.info("done: %s", {k: round(v, 3) for k, v in summary.items()})
    if os.environ.get("MI_PIPELINE_PLOT"):
        import matplotlib.pyplot as plt

        plt.bar([str(s) for s in summary], list(summary.values()))
        plt.ylabel("accuracy")
        plt.savefig(out_dir / "summary.png", dpi=150)


if __name__ == "__main__":
    main()
