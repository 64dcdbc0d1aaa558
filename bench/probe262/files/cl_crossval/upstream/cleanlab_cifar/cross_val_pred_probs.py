#!/usr/bin/env python
"""Compute out-of-sample predicted probabilities on CIFAR-10 with K-fold cross-validation,
then hand them to cleanlab to find label issues.

This is the "confident learning" recipe: every training image gets a prediction from a
model that never saw it, so `pred_probs` are not overfit to the (noisy) given labels.

    python cross_val_pred_probs.py --data-dir ./data --noisy-labels labels/cifar10_noisy_40.json \
        --folds 4 --epochs 100 --out runs/cv_40

One fold fits comfortably on a single 24GB GPU with --amp; run folds on separate GPUs with --fold.
"""
import argparse
import json
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
import torchvision.transforms as T
from sklearn.model_selection import StratifiedKFold
from torch.utils.data import DataLoader, Subset

import cleanlab
from cleanlab.filter import find_label_issues
from cleanlab.rank import get_label_quality_scores


CIFAR_MEAN = (0.4914, 0.4822, 0.4465)
CIFAR_STD = (0.2470, 0.2435, 0.2616)


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument('--data-dir', default='./data')
    p.add_argument('--noisy-labels', required=True, help='json list with one (possibly wrong) label per train image')
    p.add_argument('--folds', type=int, default=4)
    p.add_argument('--fold', type=int, default=None, help='only train this fold (for running folds in parallel)')
    p.add_argument('--epochs', type=int, default=100)
    p.add_argument('--batch-size', type=int, default=256)
    p.add_argument('--lr', type=float, default=0.1)
    p.add_argument('--wd', type=float, default=5e-4)
    p.add_argument('--workers', type=int, default=8)
    p.add_argument('--amp', action='store_true', help='mixed precision (fp16) training')
    p.add_argument('--device', default='cuda', help="'cuda', 'cuda:1' or 'cpu'")
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--out', default='runs/cv')
    return p.parse_args()


def make_model(num_classes=10):
    # ResNet-18 adapted to 32x32 inputs
    model = torchvision.models.resnet18(num_classes=num_classes)
    model.conv1 = nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False)
    model.maxpool = nn.Identity()
    return model


class RelabeledCIFAR10(torchvision.datasets.CIFAR10):
    def __init__(self, root, labels, **kw):
        super().__init__(root, train=True, download=True, **kw)
        assert len(labels) == len(self.targets)
        self.true_targets = list(self.targets)
        self.targets = list(labels)


def train_one_fold(args, fold, train_idx, holdout_idx, train_ds, eval_ds, device):
    torch.manual_seed(args.seed + fold)
    model = make_model().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=args.wd, nesterov=True)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, epochs=args.epochs,
                                                steps_per_epoch=len(train_idx) // args.batch_size + 1)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    train_loader = DataLoader(Subset(train_ds, train_idx), batch_size=args.batch_size, shuffle=True,
                              num_workers=args.workers, pin_memory=True, drop_last=True, persistent_workers=True)
    holdout_loader = DataLoader(Subset(eval_ds, holdout_idx), batch_size=1024, shuffle=False,
                                num_workers=args.workers)

    for epoch in range(args.epochs):
        model.train()
        t0 = time.time()
        running = 0.0
        for x, y in train_loader:
            x = x.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
            with torch.cuda.amp.autocast(enabled=args.amp):
                loss = F.cross_entropy(model(x), y)
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            sched.step()
            running += loss.item()
        if epoch % 10 == 0 or epoch == args.epochs - 1:
            print('fold %d epoch %3d loss %.4f (%.0fs)' % (fold, epoch, running / len(train_loader), time.time() - t0))

    # out-of-sample predicted probabilities on the held-out part
    model.eval()
    probs = []
    with torch.no_grad(), torch.cuda.amp.autocast(enabled=args.amp):
        for x, _ in holdout_loader:
            logits = model(x.to(device))
            probs.append(F.softmax(logits.float(), dim=1).cpu())
    return torch.cat(probs).numpy()


def main():
    args = get_args()
    os.makedirs(args.out, exist_ok=True)
    device = torch.device(args.device if torch.cuda.is_available() else 'cpu')
    if device.type == 'cuda':
        torch.backends.cudnn.benchmark = True
        print('training on', torch.cuda.get_device_name(device))

    with open(args.noisy_labels) as f:
        noisy = np.asarray(json.load(f), dtype=np.int64)

    train_tf = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor(),
                          T.Normalize(CIFAR_MEAN, CIFAR_STD)])
    eval_tf = T.Compose([T.ToTensor(), T.Normalize(CIFAR_MEAN, CIFAR_STD)])
    train_ds = RelabeledCIFAR10(args.data_dir, noisy, transform=train_tf)
    eval_ds = RelabeledCIFAR10(args.data_dir, noisy, transform=eval_tf)

    skf = StratifiedKFold(n_splits=args.folds, shuffle=True, random_state=args.seed)
    pred_probs = np.zeros((len(noisy), 10), dtype=np.float32)
    for fold, (tr, ho) in enumerate(skf.split(np.zeros(len(noisy)), noisy)):
        if args.fold is not None and fold != args.fold:
            continue
        fold_file = os.path.join(args.out, 'pred_probs_fold%d.npy' % fold)
        if os.path.exists(fold_file):
            pred_probs[ho] = np.load(fold_file)
            continue
        p = train_one_fold(args, fold, tr, ho, train_ds, eval_ds, device)
        np.save(fold_file, p)
        pred_probs[ho] = p
        torch.cuda.empty_cache()

    if args.fold is not None:
        return

    np.save(os.path.join(args.out, 'pred_probs.npy'), pred_probs)
    acc = (pred_probs.argmax(1) == np.asarray(train_ds.true_targets)).mean()
    print('cross-validated accuracy w.r.t. true labels: %.4f' % acc)

    # confident learning on CPU
    issues = find_label_issues(labels=noisy, pred_probs=pred_probs, filter_by='prune_by_noise_rate',
                               return_indices_ranked_by='self_confidence', n_jobs=8)
    quality = get_label_quality_scores(noisy, pred_probs)
    truly_noisy = noisy != np.asarray(train_ds.true_targets)
    hit = truly_noisy[issues].mean() if len(issues) else 0.0
    print('cleanlab %s flagged %d issues, precision %.3f, recall %.3f'
          % (cleanlab.__version__, len(issues), hit, truly_noisy[issues].sum() / max(1, truly_noisy.sum())))
    np.save(os.path.join(args.out, 'label_issues.npy'), issues)
    np.save(os.path.join(args.out, 'label_quality.npy'), quality)


if __name__ == '__main__':
    main()
