#!/usr/bin/env python3
"""Train an emotion / paralinguistics head on pre-extracted openSMILE features.

    # 4-class IEMOCAP, eGeMAPS functionals, leave-one-session-out
    python train.py --features feats/egemaps.pkl --labels data/iemocap.csv --head mlp --folds session

    # arousal/valence regression on LLD sequences with a BiLSTM
    python train.py --features feats/egemaps_lld.pkl --labels data/msp.csv --head bilstm \
        --task regression --targets arousal valence --device cuda:1
"""
import argparse
import json
import logging
import os
import random

import numpy as np
import pandas as pd
import torch
from torch.utils.data import DataLoader, Dataset

from ser.models.heads import CCCLoss, build_head
from ser.training.trainer import TrainConfig, Trainer

log = logging.getLogger("train")


def get_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--features", required=True)
    p.add_argument("--labels", required=True)
    p.add_argument("--head", choices=["mlp", "bilstm"], default="mlp")
    p.add_argument("--task", choices=["classification", "regression"], default="classification")
    p.add_argument("--targets", nargs="+", default=["label"])
    p.add_argument("--folds", default="session", help="column used for leave-one-group-out")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--epochs", type=int, default=60)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--no-amp", action="store_true")
    p.add_argument("--multi-gpu", action="store_true")
    p.add_argument("--device", default="cuda:0" if torch.cuda.is_available() else "cpu")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="exp/egemaps")
    return p.parse_args()


def seed_all(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


class FeatureDataset(Dataset):
    """Functionals -> (D,), LLD -> (T, D) sequences grouped by file."""

    def __init__(self, feats, labels, targets, task, sequence):
        self.items = []
        for f, row in labels.iterrows():
            x = feats.loc[f].to_numpy(np.float32) if sequence else feats.loc[f].to_numpy(np.float32).reshape(-1)
            y = row[targets].to_numpy(np.float32) if task == "regression" else int(row[targets[0]])
            self.items.append((x, y))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def collate(batch):
    xs, ys = zip(*batch)
    if xs[0].ndim == 1:
        x = torch.from_numpy(np.stack(xs))
        lengths = torch.ones(len(xs), dtype=torch.long)
    else:
        lengths = torch.tensor([len(v) for v in xs])
        x = torch.zeros(len(xs), int(lengths.max()), xs[0].shape[-1])
        for i, v in enumerate(xs):
            x[i, : len(v)] = torch.from_numpy(v)
    y = torch.tensor(np.stack(ys)) if isinstance(ys[0], np.ndarray) else torch.tensor(ys)
    return x, lengths, y


def main():
    args = get_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    seed_all(args.seed)
    torch.backends.cudnn.benchmark = True

    device = torch.device(args.device)
    feats = pd.read_pickle(args.features)
    sequence = args.head == "bilstm"
    if "start" in feats.index.names:
        feats = feats.droplevel(["start", "end"]) if not sequence else feats.reset_index(level=["start", "end"], drop=True)
    labels = pd.read_csv(args.labels).set_index("file")
    if args.task == "classification":
        classes = sorted(labels[args.targets[0]].unique())
        labels[args.targets[0]] = labels[args.targets[0]].map({c: i for i, c in enumerate(classes)})
        num_outputs = len(classes)
    else:
        num_outputs = len(args.targets)
    in_dim = feats.shape[1]
    log.info("features %s, %d files, in_dim=%d, outputs=%d, device=%s", args.features, len(labels), in_dim, num_outputs, device)

    results = {}
    for fold in sorted(labels[args.folds].unique()):
        tr, te = labels[labels[args.folds] != fold], labels[labels[args.folds] == fold]
        train_ds = FeatureDataset(feats, tr, args.targets, args.task, sequence)
        test_ds = FeatureDataset(feats, te, args.targets, args.task, sequence)
        train_loader = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, num_workers=args.workers,
                                  collate_fn=collate, pin_memory=True, drop_last=True)
        test_loader = DataLoader(test_ds, batch_size=args.batch_size, shuffle=False, num_workers=args.workers,
                                 collate_fn=collate, pin_memory=True)

        model = build_head(args.head, in_dim, num_outputs)
        model.norm.fit(torch.cat([collate([it])[0] for it in train_ds.items]))
        cfg = TrainConfig(epochs=args.epochs, lr=args.lr, amp=not args.no_amp, task=args.task,
                          multi_gpu=args.multi_gpu, out_dir=os.path.join(args.out, f"fold_{fold}"),
                          metric="uar" if args.task == "classification" else "ccc")
        criterion = CCCLoss() if args.task == "regression" else None
        trainer = Trainer(model, cfg, device, criterion=criterion)
        trainer.fit(train_loader, test_loader)
        results[str(fold)] = trainer.evaluate(test_loader)
        log.info("fold %s: %s", fold, results[str(fold)])

    metric = "uar" if args.task == "classification" else "ccc"
    mean = float(np.mean([r[metric] for r in results.values()]))
    log.info("mean %s over %d folds: %.4f", metric, len(results), mean)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"folds": results, f"mean_{metric}": mean, "args": vars(args)}, f, indent=2)


if __name__ == "__main__":
    main()
