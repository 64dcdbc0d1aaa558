"""Train a StarDist2D (PyTorch) model on the DSB2018 / custom data.

Example:
    python scripts/train_stardist2d.py --data data/dsb2018 --name dsb2018_r32 --gpu_ids 0,1 --epochs 400
"""
import argparse
import os
import random
import sys
import time
from glob import glob
from pathlib import Path

import numpy as np
import torch
import torch.backends.cudnn as cudnn
import torch.nn as nn
from tifffile import imread
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from stardist_torch.data import StarDistData2D, random_fliprot, augmenter  # noqa: E402
from stardist_torch.losses import masked_bce, masked_mae_weighted  # noqa: E402
from stardist_torch.models.stardist2d import Config2D, StarDist2D  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True, help="folder with train/{images,masks} and test/{images,masks}")
    p.add_argument("--name", default="stardist2d")
    p.add_argument("--basedir", default="models")
    p.add_argument("--n_rays", type=int, default=32)
    p.add_argument("--grid", type=int, nargs=2, default=(2, 2))
    p.add_argument("--patch_size", type=int, nargs=2, default=(256, 256))
    p.add_argument("--batch_size", type=int, default=8)
    p.add_argument("--epochs", type=int, default=400)
    p.add_argument("--steps_per_epoch", type=int, default=100)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--gpu_ids", type=str, default="0", help="comma separated GPU ids, e.g. 0,1 (-1 for CPU)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--amp", action="store_true", help="train with torch.cuda.amp mixed precision")
    return p.parse_args()


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def load_split(folder):
    X = sorted(glob(os.path.join(folder, "images", "*.tif")))
    Y = sorted(glob(os.path.join(folder, "masks", "*.tif")))
    assert len(X) == len(Y) and len(X) > 0, f"no data in {folder}"
    X = [imread(x) for x in tqdm(X, desc="images")]
    Y = [imread(y) for y in tqdm(Y, desc="masks")]
    return X, Y


def main():
    args = parse_args()

    os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_ids
    use_cuda = args.gpu_ids != "-1" and torch.cuda.is_available()
    n_gpus = torch.cuda.device_count() if use_cuda else 0
    print(f"Using {n_gpus} GPU(s): {args.gpu_ids}" if use_cuda else "Training on CPU")

    seed_everything(args.seed)
    cudnn.benchmark = True

    X_trn, Y_trn = load_split(os.path.join(args.data, "train"))
    X_val, Y_val = load_split(os.path.join(args.data, "test"))

    conf = Config2D(n_rays=args.n_rays, grid=args.grid, train_patch_size=args.patch_size,
                    train_batch_size=args.batch_size, train_learning_rate=args.lr,
                    train_epochs=args.epochs)
    model = StarDist2D(conf, name=args.name, basedir=args.basedir, device="cpu")
    net = model.net

    if use_cuda:
        net = net.cuda()
        if n_gpus > 1:
            net = nn.DataParallel(net)

    trn_ds = StarDistData2D(X_trn, Y_trn, n_rays=conf.n_rays, grid=conf.grid,
                            patch_size=conf.train_patch_size, augmenter=augmenter)
    val_ds = StarDistData2D(X_val, Y_val, n_rays=conf.n_rays, grid=conf.grid,
                            patch_size=conf.train_patch_size, augmenter=None)
    trn_loader = DataLoader(trn_ds, batch_size=conf.train_batch_size, shuffle=True,
                            num_workers=args.workers, pin_memory=use_cuda, drop_last=True)
    val_loader = DataLoader(val_ds, batch_size=conf.train_batch_size, shuffle=False,
                            num_workers=args.workers, pin_memory=use_cuda)

    optimizer = torch.optim.Adam(net.parameters(), lr=conf.train_learning_rate)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=40, min_lr=1e-6)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    w_prob, w_dist = conf.train_loss_weights
    best_val = np.inf
    for epoch in range(conf.train_epochs):
        net.train()
        t0 = time.time()
        trn_loss = 0.0
        it = iter(trn_loader)
        for step in range(args.steps_per_epoch):
            try:
                img, prob_gt, dist_gt = next(it)
            except StopIteration:
                it = iter(trn_loader)
                img, prob_gt, dist_gt = next(it)
            if use_cuda:
                img = img.cuda(non_blocking=True)
                prob_gt = prob_gt.cuda(non_blocking=True)
                dist_gt = dist_gt.cuda(non_blocking=True)

            optimizer.zero_grad(set_to_none=True)
            with torch.cuda.amp.autocast(enabled=args.amp):
                prob, dist = net(img)
                loss = w_prob * masked_bce(prob, prob_gt) + w_dist * masked_mae_weighted(dist, dist_gt, prob_gt)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            trn_loss += loss.item()
        trn_loss /= args.steps_per_epoch

        net.eval()
        val_loss, n = 0.0, 0
        with torch.no_grad():
            for img, prob_gt, dist_gt in val_loader:
                if use_cuda:
                    img, prob_gt, dist_gt = img.cuda(), prob_gt.cuda(), dist_gt.cuda()
                prob, dist = net(img)
                val_loss += (w_prob * masked_bce(prob, prob_gt) + w_dist * masked_mae_weighted(dist, dist_gt, prob_gt)).item()
                n += 1
        val_loss /= max(n, 1)
        scheduler.step(val_loss)

        mem = torch.cuda.max_memory_allocated() / 2**30 if use_cuda else 0.0
        print(f"[{epoch:04d}] loss {trn_loss:.4f} val {val_loss:.4f} lr {optimizer.param_groups[0]['lr']:.2e} "
              f"{time.time() - t0:.1f}s mem {mem:.1f}G")

        if val_loss < best_val:
            best_val = val_loss
            model.net = net.module if isinstance(net, nn.DataParallel) else net
            model.save("best")
    model.net = net.module if isinstance(net, nn.DataParallel) else net
    model.save("last")

    print("optimizing thresholds on validation data ...")
    model.net.eval()
    model.device = next(model.net.parameters()).device
    print(model.optimize_thresholds(X_val[:20], Y_val[:20]))


if __name__ == "__main__":
    main()
