"""Linear probing of frozen PanDerm features.

Extracts [CLS]/mean-pooled features of the frozen encoder for the train / val /
test splits of a dermatology benchmark and fits a logistic-regression head
(sklearn, L-BFGS). This is the protocol behind the "linear probe" columns of
the PanDerm paper.

    python linear_eval.py --model PanDerm_Large_LP --pretrained_checkpoint ckpt.pth \
        --csv_path data/PAD-UFES-20.csv --root_path data/PAD-UFES-20/images --nb_classes 6
"""
import argparse
import os
import time

import numpy as np
import pandas as pd
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import balanced_accuracy_score, roc_auc_score, f1_score
from sklearn.preprocessing import StandardScaler
from timm.models import create_model
from torch.utils.data import DataLoader

from datasets import build_dataset
import models.modeling_finetune  # noqa: F401


def get_args():
    p = argparse.ArgumentParser('PanDerm linear probe')
    p.add_argument('--model', default='PanDerm_Large_LP', type=str)
    p.add_argument('--pretrained_checkpoint', required=True, type=str)
    p.add_argument('--csv_path', required=True, type=str)
    p.add_argument('--root_path', required=True, type=str)
    p.add_argument('--nb_classes', default=7, type=int)
    p.add_argument('--data_set', default='HAM10000', type=str)
    p.add_argument('--input_size', default=224, type=int)
    p.add_argument('--batch_size', default=256, type=int)
    p.add_argument('--num_workers', default=8, type=int)
    p.add_argument('--percent_data', default=1.0, type=float)
    p.add_argument('--C', default=None, type=float, help='inverse regularisation; None = sweep')
    p.add_argument('--max_iter', default=1000, type=int)
    p.add_argument('--output_dir', default='./linear_probe_results', type=str)
    p.add_argument('--fp16', action='store_true', help='extract features under autocast')
    p.add_argument('--seed', default=0, type=int)
    # unused by linear probe but read by build_dataset
    p.add_argument('--imagenet_default_mean_and_std', default=True, action='store_true')
    p.add_argument('--train_interpolation', default='bicubic', type=str)
    p.add_argument('--color_jitter', default=0.0, type=float)
    p.add_argument('--aa', default=None, type=str)
    p.add_argument('--reprob', default=0.0, type=float)
    p.add_argument('--remode', default='pixel', type=str)
    p.add_argument('--recount', default=1, type=int)
    return p.parse_args()


device = "cuda" if torch.cuda.is_available() else "cpu"


def load_encoder(args):
    model = create_model(args.model, pretrained=False, num_classes=0)
    ckpt = torch.load(args.pretrained_checkpoint, map_location='cpu')
    state = ckpt.get('model', ckpt)
    state = {k.replace('encoder.', '').replace('backbone.', ''): v for k, v in state.items()}
    msg = model.load_state_dict(state, strict=False)
    print('missing keys:', msg.missing_keys)
    model.eval()
    for p in model.parameters():
        p.requires_grad = False
    return model.to(device)


@torch.no_grad()
def extract(model, loader, fp16=False):
    feats, labels = [], []
    for images, target, _ in loader:
        images = images.to(device, non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=fp16):
            f = model.forward_features(images)
        feats.append(f.float().cpu().numpy())
        labels.append(target.numpy())
    return np.concatenate(feats), np.concatenate(labels)


def fit_probe(train_x, train_y, val_x, val_y, C=None, max_iter=1000, seed=0):
    scaler = StandardScaler().fit(train_x)
    train_x, val_x = scaler.transform(train_x), scaler.transform(val_x)
    grid = [C] if C is not None else [0.001, 0.01, 0.1, 0.316, 1.0, 3.16, 10.0]
    best, best_c, best_clf = -1, None, None
    for c in grid:
        clf = LogisticRegression(C=c, max_iter=max_iter, random_state=seed, n_jobs=-1)
        clf.fit(train_x, train_y)
        score = balanced_accuracy_score(val_y, clf.predict(val_x))
        print(f'  C={c:<7} val bacc={score:.4f}')
        if score > best:
            best, best_c, best_clf = score, c, clf
    return best_clf, scaler, best_c


def main():
    args = get_args()
    os.makedirs(args.output_dir, exist_ok=True)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)

    print(f'Running linear probe on {device} ({torch.cuda.device_count()} visible GPUs)')
    model = load_encoder(args)

    ds_train, _ = build_dataset(is_train=True, args=args, linear_probe=True)
    ds_val, _ = build_dataset(is_train=False, args=args)
    ds_test, _ = build_dataset(is_train=False, is_test=True, args=args)
    mk = lambda ds: DataLoader(ds, batch_size=args.batch_size, shuffle=False,
                               num_workers=args.num_workers, pin_memory=True)

    t0 = time.time()
    train_x, train_y = extract(model, mk(ds_train), args.fp16)
    val_x, val_y = extract(model, mk(ds_val), args.fp16)
    test_x, test_y = extract(model, mk(ds_test), args.fp16)
    print(f'feature extraction took {time.time() - t0:.1f}s; dim={train_x.shape[1]}')
    del model
    torch.cuda.empty_cache()

    clf, scaler, best_c = fit_probe(train_x, train_y, val_x, val_y, args.C, args.max_iter, args.seed)
    probs = clf.predict_proba(scaler.transform(test_x))
    pred = probs.argmax(1)
    res = {
        'dataset': args.data_set,
        'percent_data': args.percent_data,
        'C': best_c,
        'bacc': balanced_accuracy_score(test_y, pred),
        'f1': f1_score(test_y, pred, average='weighted'),
    }
    try:
        res['auc'] = (roc_auc_score(test_y, probs[:, 1]) if args.nb_classes == 2
                      else roc_auc_score(test_y, probs, multi_class='ovr'))
    except ValueError:
        res['auc'] = float('nan')
    print(res)
    out = os.path.join(args.output_dir, f'{args.data_set}_{args.model}_lp.csv')
    pd.DataFrame([res]).to_csv(out, index=False)


if __name__ == '__main__':
    main()
