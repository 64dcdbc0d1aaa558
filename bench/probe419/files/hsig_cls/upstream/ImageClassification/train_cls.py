"""
Fine-tune HyperSIGMA (spatial + spectral ViT) for pixel-wise hyperspectral image classification.

    python train_cls.py --dataset IndianPines --patch_size 33 --train_num 10 --gpu 0 --fp16
"""
import argparse
import json
import os
import random
import time

import numpy as np
import scipy.io as sio
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.metrics import accuracy_score, cohen_kappa_score, confusion_matrix
from torch.utils.data import DataLoader, Dataset

from model.hypersigma import SpatSIGMA_Enhance, SpatSIGMA_Only

DATASETS = {
    'IndianPines': ('Indian_pines_corrected.mat', 'indian_pines_corrected', 'Indian_pines_gt.mat', 'indian_pines_gt'),
    'PaviaU': ('PaviaU.mat', 'paviaU', 'PaviaU_gt.mat', 'paviaU_gt'),
    'HoustonU': ('Houston.mat', 'Houston', 'Houston_gt.mat', 'Houston_gt'),
    'WHU-Hi-LongKou': ('WHU_Hi_LongKou.mat', 'WHU_Hi_LongKou', 'WHU_Hi_LongKou_gt.mat', 'WHU_Hi_LongKou_gt'),
}


def get_args():
    parser = argparse.ArgumentParser('HyperSIGMA classification')
    parser.add_argument('--dataset', default='IndianPines', choices=list(DATASETS))
    parser.add_argument('--data_root', default='./data')
    parser.add_argument('--model', default='enhance', choices=['enhance', 'spat'])
    parser.add_argument('--spat_weights', default='./pretrained/spat-vit-base-ultra-checkpoint-1599.pth')
    parser.add_argument('--spec_weights', default='./pretrained/spec-vit-base-ultra-checkpoint-1599.pth')
    parser.add_argument('--patch_size', type=int, default=33)
    parser.add_argument('--seg_patches', type=int, default=2)
    parser.add_argument('--train_num', type=int, default=10, help='labelled pixels per class')
    parser.add_argument('--epochs', type=int, default=200)
    parser.add_argument('--batch_size', type=int, default=64)
    parser.add_argument('--lr', type=float, default=6e-5)
    parser.add_argument('--weight_decay', type=float, default=5e-4)
    parser.add_argument('--fp16', action='store_true')
    parser.add_argument('--gpu', type=int, default=0)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--runs', type=int, default=1)
    parser.add_argument('--out_dir', default='./results')
    return parser.parse_args()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def load_scene(name, root):
    img_f, img_k, gt_f, gt_k = DATASETS[name]
    img = sio.loadmat(os.path.join(root, img_f))[img_k].astype(np.float32)
    gt = sio.loadmat(os.path.join(root, gt_f))[gt_k].astype(np.int64)
    # per-band min-max normalisation
    h, w, c = img.shape
    flat = img.reshape(-1, c)
    flat = (flat - flat.min(0)) / (flat.max(0) - flat.min(0) + 1e-8)
    return flat.reshape(h, w, c), gt


def split_train_test(gt, per_class, seed):
    rng = np.random.RandomState(seed)
    train_idx, test_idx = [], []
    for c in np.unique(gt):
        if c == 0:
            continue
        idx = np.argwhere(gt == c)
        rng.shuffle(idx)
        n = min(per_class, len(idx) // 2)
        train_idx.append(idx[:n])
        test_idx.append(idx[n:])
    return np.concatenate(train_idx), np.concatenate(test_idx)


class PatchSet(Dataset):
    def __init__(self, img, gt, coords, patch):
        self.pad = patch // 2
        self.img = np.pad(img, ((self.pad, self.pad), (self.pad, self.pad), (0, 0)), mode='reflect')
        self.gt = gt
        self.coords = coords
        self.patch = patch

    def __len__(self):
        return len(self.coords)

    def __getitem__(self, i):
        r, c = self.coords[i]
        cube = self.img[r:r + self.patch, c:c + self.patch].transpose(2, 0, 1)
        return torch.from_numpy(np.ascontiguousarray(cube)), int(self.gt[r, c]) - 1


def build_model(args, in_chans, num_classes):
    if args.model == 'enhance':
        model = SpatSIGMA_Enhance(img_size=args.patch_size, in_channels=in_chans, num_classes=num_classes,
                                  seg_patches=args.seg_patches)
        model.spat_encoder.init_weights(args.spat_weights)
        model.spec_encoder.init_weights(args.spec_weights)
    else:
        model = SpatSIGMA_Only(img_size=args.patch_size, in_channels=in_chans, num_classes=num_classes,
                               seg_patches=args.seg_patches)
        model.spat_encoder.init_weights(args.spat_weights)
    return model


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    preds, labels = [], []
    for x, y in loader:
        x = x.to(device, non_blocking=True)
        logits = model(x)
        preds.append(logits.argmax(1).cpu())
        labels.append(y)
    preds = torch.cat(preds).numpy()
    labels = torch.cat(labels).numpy()
    cm = confusion_matrix(labels, preds)
    each = np.diag(cm) / np.maximum(cm.sum(1), 1)
    return accuracy_score(labels, preds), each.mean(), cohen_kappa_score(labels, preds), each


def run_once(args, run, img, gt, device):
    set_seed(args.seed + run)
    train_xy, test_xy = split_train_test(gt, args.train_num, args.seed + run)
    num_classes = int(gt.max())
    train_set = PatchSet(img, gt, train_xy, args.patch_size)
    test_set = PatchSet(img, gt, test_xy, args.patch_size)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, num_workers=4,
                              pin_memory=True, drop_last=False)
    test_loader = DataLoader(test_set, batch_size=256, shuffle=False, num_workers=4, pin_memory=True)

    model = build_model(args, img.shape[-1], num_classes).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs, eta_min=1e-6)
    scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)
    criterion = nn.CrossEntropyLoss()

    torch.cuda.reset_peak_memory_stats()
    tic = time.time()
    for epoch in range(args.epochs):
        model.train()
        running = 0.0
        for x, y in train_loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=args.fp16):
                logits = model(x)
                loss = criterion(logits, y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            running += loss.item() * x.size(0)
        scheduler.step()
        if (epoch + 1) % 20 == 0:
            print('run {} epoch {:3d}  loss {:.4f}  lr {:.2e}  peak mem {:.0f} MB'.format(
                run, epoch + 1, running / len(train_set), scheduler.get_last_lr()[0],
                torch.cuda.max_memory_allocated() / 2 ** 20))
    train_time = time.time() - tic

    tic = time.time()
    oa, aa, kappa, each = evaluate(model, test_loader, device)
    test_time = time.time() - tic
    torch.save(model.state_dict(), os.path.join(args.out_dir, '{}_{}_run{}.pth'.format(args.dataset, args.model, run)))
    del model, optimizer
    torch.cuda.empty_cache()
    return {'OA': oa, 'AA': aa, 'Kappa': kappa, 'each': each.tolist(),
            'train_time': train_time, 'test_time': test_time}


def main():
    args = get_args()
    os.makedirs(args.out_dir, exist_ok=True)
    torch.cuda.set_device(args.gpu)
    device = torch.device(f'cuda:{args.gpu}')
    img, gt = load_scene(args.dataset, args.data_root)
    print('{}: {} x {} x {}, {} classes'.format(args.dataset, *img.shape, int(gt.max())))

    results = [run_once(args, r, img, gt, device) for r in range(args.runs)]
    oa = np.array([r['OA'] for r in results])
    aa = np.array([r['AA'] for r in results])
    kappa = np.array([r['Kappa'] for r in results])
    print('OA {:.2f}+-{:.2f}  AA {:.2f}+-{:.2f}  Kappa {:.2f}+-{:.2f}'.format(
        oa.mean() * 100, oa.std() * 100, aa.mean() * 100, aa.std() * 100, kappa.mean() * 100, kappa.std() * 100))
    with open(os.path.join(args.out_dir, '{}_{}.json'.format(args.dataset, args.model)), 'w') as f:
        json.dump({'args': vars(args), 'runs': results}, f, indent=2)


if __name__ == '__main__':
    main()
