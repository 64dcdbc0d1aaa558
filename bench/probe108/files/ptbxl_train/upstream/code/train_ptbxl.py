"""PTB-XL benchmark: train a 1D CNN (xresnet1d101 / resnet1d_wang / inception1d) on 12-lead ECGs.

Reimplements the experiments of "Deep Learning for ECG Analysis: Benchmarks and
Insights from PTB-XL" (Strodthoff et al., 2020) in plain PyTorch instead of fastai.

    python code/train_ptbxl.py --datafolder data/ptbxl/ --experiment exp0 --model xresnet1d101 --gpu 0,1 --amp
"""
import argparse
import json
import os
import time

import numpy as np
import pandas as pd

parser = argparse.ArgumentParser(description="PTB-XL training")
parser.add_argument("--datafolder", default="data/ptbxl/", type=str)
parser.add_argument("--outputfolder", default="output/", type=str)
parser.add_argument("--experiment", default="exp0", choices=["exp0", "exp1", "exp1.1", "exp1.1.1", "exp2", "exp3"])
parser.add_argument("--model", default="xresnet1d101", type=str)
parser.add_argument("--sampling_frequency", default=100, type=int)
parser.add_argument("--input_size", default=250, type=int, help="random crop length (2.5 s at 100 Hz)")
parser.add_argument("--epochs", default=50, type=int)
parser.add_argument("--batch_size", default=128, type=int)
parser.add_argument("--lr", default=1e-2, type=float)
parser.add_argument("--wd", default=1e-2, type=float)
parser.add_argument("--workers", default=8, type=int)
parser.add_argument("--gpu", default="0", type=str, help="comma separated list of GPU ids, e.g. 0,1")
parser.add_argument("--amp", action="store_true", help="use torch.cuda.amp mixed precision")
parser.add_argument("--seed", default=42, type=int)
args = parser.parse_args()

# must happen before torch initialises CUDA
os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch.cuda.amp import GradScaler, autocast  # noqa: E402
from torch.utils.data import DataLoader, Dataset  # noqa: E402

from utils import utils  # noqa: E402
from models.resnet1d import resnet1d_wang  # noqa: E402
from models.xresnet1d import xresnet1d101  # noqa: E402
from models.inception1d import inception1d  # noqa: E402

EXPERIMENTS = {
    "exp0": ("all", "all"),
    "exp1": ("diagnostic", "diagnostic"),
    "exp1.1": ("subdiagnostic", "subdiagnostic"),
    "exp1.1.1": ("superdiagnostic", "superdiagnostic"),
    "exp2": ("form", "form"),
    "exp3": ("rhythm", "rhythm"),
}
MODELS = {"xresnet1d101": xresnet1d101, "resnet1d_wang": resnet1d_wang, "inception1d": inception1d}


class ECGWindowDataset(Dataset):
    """Random crops of ``input_size`` samples for training, full records for evaluation."""

    def __init__(self, X, y, input_size, train=True):
        self.X = X.astype(np.float32)  # (N, T, 12)
        self.y = y.astype(np.float32)
        self.input_size = input_size
        self.train = train

    def __len__(self):
        return len(self.X)

    def __getitem__(self, idx):
        x = self.X[idx]
        if self.train:
            start = np.random.randint(0, x.shape[0] - self.input_size + 1)
            x = x[start:start + self.input_size]
        return torch.from_numpy(x.T.copy()), torch.from_numpy(self.y[idx])


def sliding_window_predict(model, X, input_size, stride, device, batch_size=256):
    """Aggregate (max) predictions over sliding windows, as in the benchmark paper."""
    model.eval()
    preds = []
    with torch.no_grad():
        for i in range(0, len(X), batch_size):
            xb = torch.from_numpy(X[i:i + batch_size].astype(np.float32)).permute(0, 2, 1)
            windows = xb.unfold(2, input_size, stride)  # (B, 12, n_win, input_size)
            b, c, n_win, t = windows.shape
            windows = windows.permute(0, 2, 1, 3).reshape(b * n_win, c, t).to(device)
            with autocast(enabled=args.amp):
                out = torch.sigmoid(model(windows).float())
            preds.append(out.reshape(b, n_win, -1).max(dim=1).values.cpu().numpy())
    return np.concatenate(preds)


def main():
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    task, name = EXPERIMENTS[args.experiment]
    outdir = os.path.join(args.outputfolder, args.experiment, args.model)
    os.makedirs(outdir, exist_ok=True)

    # ------------------------------------------------------------------ data
    data, raw_labels = utils.load_dataset(args.datafolder, args.sampling_frequency)
    labels = utils.compute_label_aggregations(raw_labels, args.datafolder, task)
    data, labels, Y, mlb = utils.select_data(data, labels, task, min_samples=0, outputfolder=outdir)
    # folds 1-8 train, 9 validation, 10 test (recommended split)
    X_train, y_train = data[labels.strat_fold <= 8], Y[labels.strat_fold <= 8]
    X_val, y_val = data[labels.strat_fold == 9], Y[labels.strat_fold == 9]
    X_test, y_test = data[labels.strat_fold == 10], Y[labels.strat_fold == 10]
    X_train, X_val, X_test = utils.preprocess_signals(X_train, X_val, X_test, outdir)
    n_classes = y_train.shape[1]
    print(f"{args.experiment}/{name}: train {X_train.shape} val {X_val.shape} test {X_test.shape} "
          f"classes {n_classes}")

    train_loader = DataLoader(
        ECGWindowDataset(X_train, y_train, args.input_size, train=True),
        batch_size=args.batch_size, shuffle=True, num_workers=args.workers,
        pin_memory=True, drop_last=True,
    )

    # ------------------------------------------------------------------ model
    n_gpus = len(args.gpu.split(","))
    model = MODELS[args.model](num_classes=n_classes, input_channels=12, kernel_size=5, ps_head=0.5, lin_ftrs_head=[128])
    if n_gpus > 1:
        model = nn.DataParallel(model).cuda()
    else:
        model = model.cuda()
    torch.backends.cudnn.benchmark = True
    device = next(model.parameters()).device

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.wd)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=args.lr, epochs=args.epochs, steps_per_epoch=len(train_loader)
    )
    criterion = nn.BCEWithLogitsLoss()
    scaler = GradScaler(enabled=args.amp)

    best_auc, log = 0.0, []
    for epoch in range(args.epochs):
        model.train()
        t0, running = time.time(), 0.0
        for inputs, targets in train_loader:
            inputs = inputs.cuda(non_blocking=True)
            targets = targets.cuda(non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            with autocast(enabled=args.amp):
                loss = criterion(model(inputs), targets)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            running += loss.item()

        val_pred = sliding_window_predict(model, X_val, args.input_size, args.input_size // 2, device)
        val_auc = utils.challenge_metrics_auc(y_val, val_pred)
        log.append({"epoch": epoch, "loss": running / len(train_loader), "val_macro_auc": val_auc,
                    "time": time.time() - t0})
        print(f"epoch {epoch:3d} loss {running / len(train_loader):.4f} val macro-AUC {val_auc:.4f} "
              f"({time.time() - t0:.0f}s)")
        if val_auc > best_auc:
            best_auc = val_auc
            state = model.module.state_dict() if n_gpus > 1 else model.state_dict()
            torch.save(state, os.path.join(outdir, "model_best.pt"))
        torch.cuda.empty_cache()

    # ------------------------------------------------------------------ test
    state = torch.load(os.path.join(outdir, "model_best.pt"), map_location="cpu")
    (model.module if n_gpus > 1 else model).load_state_dict(state)
    test_pred = sliding_window_predict(model, X_test, args.input_size, args.input_size // 2, device)
    np.save(os.path.join(outdir, "y_test_pred.npy"), test_pred)
    res = utils.evaluate_experiment(y_test, test_pred)
    res_boot = utils.bootstrap_evaluate(y_test, test_pred, n_bootstraping_samples=100)
    pd.concat([res, res_boot]).to_csv(os.path.join(outdir, "te_results.csv"))
    with open(os.path.join(outdir, "train_log.json"), "w") as f:
        json.dump(log, f, indent=1)
    print(res)


if __name__ == "__main__":
    main()
