#!/usr/bin/env python
"""Train SeFT (or a baseline) on PhysioNet 2012 / MIMIC-III mortality from a JSON config.

    python train.py --config configs/physionet2012.json [--override lr=5e-4 batch_size=64]
"""
import argparse
import json
import logging
import os
import random
import time
from collections import defaultdict

import numpy as np
import torch
from torch.utils.data import DataLoader
from sklearn.metrics import roc_auc_score, average_precision_score, balanced_accuracy_score

from seft.data import PhysioNet2012Dataset, MIMICMortalityDataset, collate_flat
from seft.models.seft import MODELS

logging.basicConfig(format='%(asctime)s %(levelname)s %(message)s', level=logging.INFO)
log = logging.getLogger('seft')

DATASETS = {
    'physionet2012': PhysioNet2012Dataset,
    'mimic3_mortality': MIMICMortalityDataset,
}


def parse_overrides(items):
    out = {}
    for item in items or []:
        k, v = item.split('=', 1)
        try:
            v = json.loads(v)
        except ValueError:
            pass
        out[k] = v
    return out


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def make_loaders(cfg):
    ds_cls = DATASETS[cfg['dataset']]
    root = cfg.get('data_dir', os.path.expanduser('~/.seft_data'))
    train = ds_cls(root, split='train', max_time=cfg['max_time'])
    val = ds_cls(root, split='validation', max_time=cfg['max_time'])
    test = ds_cls(root, split='test', max_time=cfg['max_time'])
    kw = dict(batch_size=cfg['batch_size'], num_workers=cfg['num_workers'],
              pin_memory=cfg['pin_memory'], collate_fn=collate_flat)
    return (DataLoader(train, shuffle=True, drop_last=True, **kw),
            DataLoader(val, shuffle=False, **kw),
            DataLoader(test, shuffle=False, **kw),
            train)


def to_device(batch, device):
    return {k: (v.to(device, non_blocking=True) if torch.is_tensor(v) else v) for k, v in batch.items()}


@torch.no_grad()
def evaluate(model, loader, device, amp):
    model.eval()
    ys, ps = [], []
    for batch in loader:
        batch = to_device(batch, device)
        with torch.cuda.amp.autocast(enabled=amp):
            logits = model(batch['statics'], batch['times'], batch['values'], batch['modalities'],
                           batch['lengths'])
        ps.append(torch.sigmoid(logits.float()).cpu().numpy())
        ys.append(batch['label'].cpu().numpy())
    y = np.concatenate(ys)
    p = np.concatenate(ps)
    return {
        'auroc': roc_auc_score(y, p),
        'auprc': average_precision_score(y, p),
        'balanced_acc': balanced_accuracy_score(y, p > 0.5),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--config', required=True)
    ap.add_argument('--override', nargs='*')
    ap.add_argument('--output', default='runs')
    args = ap.parse_args()

    with open(args.config) as f:
        cfg = json.load(f)
    cfg.update(parse_overrides(args.override))
    seed_everything(cfg['seed'])

    device = torch.device(cfg['device'] if torch.cuda.is_available() else 'cpu')
    log.info('device: %s (%s)', device,
             torch.cuda.get_device_name(device) if device.type == 'cuda' else 'cpu')

    train_loader, val_loader, test_loader, train_ds = make_loaders(cfg)
    model_cls = MODELS[cfg['model']]
    model = model_cls(n_modalities=train_ds.n_modalities, n_static=train_ds.n_static,
                      **cfg['model_params']).to(device)
    n_params = sum(p.numel() for p in model.parameters())
    log.info('%s with %d parameters', cfg['model'], n_params)

    pos = float(train_ds.labels.mean())
    criterion = torch.nn.BCEWithLogitsLoss(
        pos_weight=torch.tensor((1 - pos) / pos, device=device) if cfg['class_balance'] else None)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg['lr'], weight_decay=cfg['weight_decay'])
    scaler = torch.cuda.amp.GradScaler(enabled=cfg['amp'])

    run_dir = os.path.join(args.output, '{}_{}_{}'.format(cfg['dataset'], cfg['model'], int(time.time())))
    os.makedirs(run_dir, exist_ok=True)
    with open(os.path.join(run_dir, 'config.json'), 'w') as f:
        json.dump(cfg, f, indent=2)

    best, best_epoch, history = -1.0, -1, defaultdict(list)
    for epoch in range(cfg['max_epochs']):
        model.train()
        t0 = time.time()
        losses = []
        for step, batch in enumerate(train_loader):
            batch = to_device(batch, device)
            optimizer.zero_grad(set_to_none=True)
            with torch.cuda.amp.autocast(enabled=cfg['amp']):
                logits = model(batch['statics'], batch['times'], batch['values'], batch['modalities'],
                               batch['lengths'])
                loss = criterion(logits, batch['label'].float())
            scaler.scale(loss).backward()
            if cfg.get('clip_grad'):
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), cfg['clip_grad'])
            scaler.step(optimizer)
            scaler.update()
            losses.append(loss.item())

        metrics = evaluate(model, val_loader, device, cfg['amp'])
        for k, v in metrics.items():
            history['val_' + k].append(v)
        history['train_loss'].append(float(np.mean(losses)))
        log.info('epoch %3d  loss %.4f  val auprc %.4f auroc %.4f  (%.1fs)', epoch, np.mean(losses),
                 metrics['auprc'], metrics['auroc'], time.time() - t0)

        if metrics[cfg['early_stopping_metric']] > best:
            best, best_epoch = metrics[cfg['early_stopping_metric']], epoch
            torch.save(model.state_dict(), os.path.join(run_dir, 'best.pt'))
        elif epoch - best_epoch >= cfg['early_stopping']:
            log.info('early stopping (best epoch %d)', best_epoch)
            break

    model.load_state_dict(torch.load(os.path.join(run_dir, 'best.pt'), map_location=device))
    test_metrics = evaluate(model, test_loader, device, cfg['amp'])
    log.info('TEST %s', json.dumps(test_metrics))
    with open(os.path.join(run_dir, 'results.json'), 'w') as f:
        json.dump({'val_best': best, 'best_epoch': best_epoch, 'test': test_metrics,
                   'history': history}, f, indent=2)


if __name__ == '__main__':
    main()
