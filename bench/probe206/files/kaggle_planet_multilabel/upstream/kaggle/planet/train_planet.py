"""Planet: Understanding the Amazon from Space -- multi-label fastai v2 pipeline.

5-fold CV with a timm/torchvision backbone and our own pooling head (concat of avg and
max pooling, like fastai's AdaptiveConcatPool2d but with a learnable GeM branch), then
thresholds are tuned per class on the OOF predictions.

    python train_planet.py --arch resnet50 --size 256 --folds 0,1,2,3,4 --epochs 12
"""
import argparse
import json
import os
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.metrics import fbeta_score
from sklearn.model_selection import KFold
from fastai.vision.all import *

DATA = Path(os.environ.get('PLANET_DIR', '~/.fastai/data/planet')).expanduser()


class GeM(nn.Module):
    "Generalized mean pooling (Radenovic et al.)"
    def __init__(self, p=3., eps=1e-6):
        super().__init__()
        self.p, self.eps = nn.Parameter(torch.ones(1) * p), eps

    def forward(self, x):
        return F.avg_pool2d(x.clamp(min=self.eps).pow(self.p), (x.size(-2), x.size(-1))).pow(1. / self.p)


class ConcatPoolHead(nn.Module):
    "avg + max + GeM pooling, then BN/dropout/linear"
    def __init__(self, nf, n_out, ps=0.5):
        super().__init__()
        self.avg = nn.AdaptiveAvgPool2d(1)
        self.max = nn.AdaptiveMaxPool2d(1)
        self.gem = GeM()
        self.fc = nn.Sequential(
            nn.Flatten(), nn.BatchNorm1d(nf * 3), nn.Dropout(ps / 2),
            nn.Linear(nf * 3, 512), nn.ReLU(inplace=True), nn.BatchNorm1d(512), nn.Dropout(ps),
            nn.Linear(512, n_out))

    def forward(self, x):
        return self.fc(torch.cat([self.avg(x), self.max(x), self.gem(x)], 1))


def get_dls(df, fold_idx, size, bs, device):
    dblock = DataBlock(blocks=(ImageBlock, MultiCategoryBlock),
                       get_x=ColReader(0, pref=str(DATA/'train-jpg') + os.sep, suff='.jpg'),
                       get_y=ColReader(1, label_delim=' '),
                       splitter=IndexSplitter(fold_idx),
                       item_tfms=Resize(size),
                       batch_tfms=[*aug_transforms(flip_vert=True, max_lighting=0.1, max_zoom=1.05, max_warp=0.),
                                   Normalize.from_stats(*imagenet_stats)])
    return dblock.dataloaders(df, bs=bs, num_workers=8, device=device, pin_memory=True)


def make_learner(dls, arch):
    body = create_body(getattr(models, arch)(weights='DEFAULT'), cut=-2)
    nf = num_features_model(body)
    model = nn.Sequential(body, ConcatPoolHead(nf, dls.c))
    f2 = FBetaMulti(2.0, thresh=0.2, average='samples')
    return Learner(dls, model, loss_func=BCEWithLogitsLossFlat(),
                   metrics=[partial(accuracy_multi, thresh=0.2), f2],
                   splitter=lambda m: [params(m[0]), params(m[1])]).to_fp16()


@torch.no_grad()
def predict_tta(model, dl, device, flips=True):
    "Manual TTA loop (much faster than learn.tta for 40k test images): identity + h/v flips"
    model.eval()
    out = []
    for xb, *_ in dl:
        xb = xb.cuda(non_blocking=True)
        with torch.cuda.amp.autocast():
            p = torch.sigmoid(model(xb))
            if flips:
                p = p + torch.sigmoid(model(xb.flip(-1))) + torch.sigmoid(model(xb.flip(-2)))
                p = p / 3
        out.append(p.float().cpu())
    return torch.cat(out)


def tune_thresholds(y_true, y_prob, grid=np.arange(0.05, 0.6, 0.01)):
    th = np.full(y_true.shape[1], 0.2)
    for c in range(y_true.shape[1]):
        scores = [fbeta_score(y_true[:, c], y_prob[:, c] > t, beta=2, zero_division=0) for t in grid]
        th[c] = grid[int(np.argmax(scores))]
    return th


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--arch', default='resnet50')
    ap.add_argument('--size', type=int, default=256)
    ap.add_argument('--bs', type=int, default=64)
    ap.add_argument('--epochs', type=int, default=12)
    ap.add_argument('--lr', type=float, default=3e-3)
    ap.add_argument('--folds', default='0,1,2,3,4')
    ap.add_argument('--out', default='runs/planet')
    args = ap.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    out_dir = Path(args.out); out_dir.mkdir(parents=True, exist_ok=True)

    df = pd.read_csv(DATA/'train_v2.csv')
    test_df = pd.DataFrame({'image_name': [p.stem for p in (DATA/'test-jpg').glob('*.jpg')], 'tags': ''})
    kf = KFold(n_splits=5, shuffle=True, random_state=42)
    folds = list(kf.split(df))
    oof = None
    test_preds = []

    for f in map(int, args.folds.split(',')):
        trn_idx, val_idx = folds[f]
        dls = get_dls(df, val_idx, args.size, args.bs, device)
        learn = make_learner(dls, args.arch)
        learn.fine_tune(args.epochs, args.lr, freeze_epochs=2)
        learn.save(out_dir/f'{args.arch}_f{f}')

        vocab = dls.vocab
        if oof is None: oof = np.zeros((len(df), len(vocab)), dtype=np.float32)
        oof[val_idx] = predict_tta(learn.model, dls.valid, device).numpy()

        tst_dl = dls.test_dl(test_df.assign(image_name=test_df.image_name), with_labels=False)
        test_preds.append(predict_tta(learn.model, tst_dl, device))
        del learn
        torch.cuda.empty_cache()

    y_true = np.stack([np.isin(vocab, t.split(' ')) for t in df.tags]).astype(np.uint8)
    th = tune_thresholds(y_true, oof)
    print('OOF F2 @ tuned thresholds:', fbeta_score(y_true, oof > th, beta=2, average='samples'))
    json.dump(dict(zip(vocab, th.tolist())), open(out_dir/'thresholds.json', 'w'), indent=1)

    probs = torch.stack(test_preds).mean(0).numpy()
    test_df['tags'] = [' '.join(np.array(vocab)[row > th]) for row in probs]
    test_df.to_csv(out_dir/'submission.csv', index=False)


if __name__ == '__main__':
    main()
