"""
Train / evaluate AttnSense on PAMAP2, Skoda, UCI-HAR or HHAR.

    python train.py --dataset pamap2 --epochs 100 --batch_size 128 --amp
"""
import argparse
import json
import logging
import os
import time

import numpy as np
import torch
import torch.nn as nn
from sklearn.metrics import f1_score, accuracy_score, confusion_matrix
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.tensorboard import SummaryWriter

from attnsense.model import build_attnsense
from preprocess.fft_features import load_windows


logging.basicConfig(level=logging.INFO, format='%(asctime)s %(levelname)s %(message)s')
logger = logging.getLogger('attnsense')

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument('--dataset', default='pamap2', choices=['pamap2', 'skoda', 'ucihar', 'heterogeneous'])
    p.add_argument('--data_dir', default='./data')
    p.add_argument('--out_dir', default='./runs')
    p.add_argument('--win_len', type=int, default=128)
    p.add_argument('--epochs', type=int, default=100)
    p.add_argument('--batch_size', type=int, default=128)
    p.add_argument('--lr', type=float, default=1e-3)
    p.add_argument('--weight_decay', type=float, default=1e-4)
    p.add_argument('--num_workers', type=int, default=4)
    p.add_argument('--seed', type=int, default=42)
    p.add_argument('--amp', action='store_true', help='mixed precision training (fp16)')
    p.add_argument('--fft_cache', type=int, default=32, help='cuFFT plan cache size, 0 = leave default')
    p.add_argument('--eval_only', action='store_true')
    p.add_argument('--ckpt', default=None)
    return p.parse_args()


def make_loaders(args):
    (x_tr, y_tr), (x_va, y_va), (x_te, y_te), n_classes = load_windows(args.dataset, args.data_dir, args.win_len)
    logger.info('train %s / val %s / test %s windows, %d classes', x_tr.shape, x_va.shape, x_te.shape, n_classes)
    tr = TensorDataset(torch.from_numpy(x_tr).float(), torch.from_numpy(y_tr).long())
    va = TensorDataset(torch.from_numpy(x_va).float(), torch.from_numpy(y_va).long())
    te = TensorDataset(torch.from_numpy(x_te).float(), torch.from_numpy(y_te).long())
    kw = dict(num_workers=args.num_workers, pin_memory=True)
    return (DataLoader(tr, batch_size=args.batch_size, shuffle=True, drop_last=True, **kw),
            DataLoader(va, batch_size=args.batch_size * 2, shuffle=False, **kw),
            DataLoader(te, batch_size=args.batch_size * 2, shuffle=False, **kw),
            n_classes)


@torch.no_grad()
def evaluate(model, loader, criterion):
    model.eval()
    losses, preds, gts = [], [], []
    for x, y in loader:
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        logits = model(x)
        losses.append(criterion(logits, y).item())
        preds.append(logits.argmax(1).cpu().numpy())
        gts.append(y.cpu().numpy())
    preds, gts = np.concatenate(preds), np.concatenate(gts)
    return (float(np.mean(losses)), accuracy_score(gts, preds),
            f1_score(gts, preds, average='macro'), f1_score(gts, preds, average='weighted'), preds, gts)


def main():
    args = get_args()
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    torch.backends.cudnn.benchmark = True
    if args.fft_cache > 0:
        torch.backends.cuda.cufft_plan_cache.max_size = args.fft_cache

    os.makedirs(args.out_dir, exist_ok=True)
    run_dir = os.path.join(args.out_dir, '{}_{}'.format(args.dataset, time.strftime('%Y%m%d-%H%M%S')))
    os.makedirs(run_dir, exist_ok=True)
    writer = SummaryWriter(run_dir)
    with open(os.path.join(run_dir, 'args.json'), 'w') as f:
        json.dump(vars(args), f, indent=2)

    if device.type == 'cuda':
        logger.info('Training on %s', torch.cuda.get_device_name(0))
    else:
        logger.warning('No GPU found, training on CPU will be very slow')

    train_loader, val_loader, test_loader, n_classes = make_loaders(args)
    model = build_attnsense(args.dataset, n_classes, args.win_len).to(device)
    logger.info('AttnSense with %.2fM parameters', sum(p.numel() for p in model.parameters()) / 1e6)

    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    if args.eval_only:
        model.load_state_dict(torch.load(args.ckpt, map_location=device))
        loss, acc, f1m, f1w, _, _ = evaluate(model, test_loader, criterion)
        logger.info('test loss %.4f acc %.4f macro-F1 %.4f weighted-F1 %.4f', loss, acc, f1m, f1w)
        return

    best_f1, best_epoch = -1.0, -1
    for epoch in range(args.epochs):
        model.train()
        t0 = time.time()
        running = 0.0
        for step, (x, y) in enumerate(train_loader):
            x = x.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            with torch.cuda.amp.autocast(enabled=args.amp):
                logits = model(x)
                loss = criterion(logits, y)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            scaler.step(optimizer)
            scaler.update()
            running += loss.item()
        scheduler.step()

        val_loss, val_acc, val_f1m, val_f1w, _, _ = evaluate(model, val_loader, criterion)
        peak_mb = torch.cuda.max_memory_allocated() / 2 ** 20 if torch.cuda.is_available() else 0
        logger.info('epoch %03d | train loss %.4f | val loss %.4f acc %.4f F1m %.4f | %.1fs | peak mem %.0f MB',
                    epoch, running / len(train_loader), val_loss, val_acc, val_f1m, time.time() - t0, peak_mb)
        writer.add_scalar('loss/train', running / len(train_loader), epoch)
        writer.add_scalar('loss/val', val_loss, epoch)
        writer.add_scalar('f1/val_macro', val_f1m, epoch)

        if val_f1m > best_f1:
            best_f1, best_epoch = val_f1m, epoch
            torch.save(model.state_dict(), os.path.join(run_dir, 'best.pt'))

    logger.info('best val macro-F1 %.4f at epoch %d', best_f1, best_epoch)
    model.load_state_dict(torch.load(os.path.join(run_dir, 'best.pt'), map_location=device))
    loss, acc, f1m, f1w, preds, gts = evaluate(model, test_loader, criterion)
    logger.info('TEST acc %.4f macro-F1 %.4f weighted-F1 %.4f', acc, f1m, f1w)
    np.save(os.path.join(run_dir, 'confusion.npy'), confusion_matrix(gts, preds))
    writer.close()


if __name__ == '__main__':
    main()
