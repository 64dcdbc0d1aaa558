# Semantic segmentation of indoor scans (ScanNet-style) with a sparse Res16UNet on MinkowskiEngine.
import argparse
import logging
import os
import random
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

import MinkowskiEngine as ME

from lib.datasets.scannet import ScanNetVoxelized, collate_sparse
from lib.models.res16unet import Res16UNet34C
from lib.utils import AverageMeter, fast_hist, per_class_iu, save_checkpoint

logging.basicConfig(format="%(asctime)s %(message)s", level=logging.INFO)
log = logging.getLogger("semseg")

parser = argparse.ArgumentParser()
parser.add_argument("--data_root", type=str, default="./data/scannet_processed")
parser.add_argument("--voxel_size", type=float, default=0.02)
parser.add_argument("--batch_size", type=int, default=8)
parser.add_argument("--max_iter", type=int, default=120000)
parser.add_argument("--lr", type=float, default=1e-1)
parser.add_argument("--weight_decay", type=float, default=1e-4)
parser.add_argument("--num_workers", type=int, default=6)
parser.add_argument("--empty_cache_freq", type=int, default=1)
parser.add_argument("--val_freq", type=int, default=1000)
parser.add_argument("--log_dir", type=str, default="./outputs/res16unet34c")
parser.add_argument("--ignore_label", type=int, default=255)
parser.add_argument("--seed", type=int, default=123)
parser.add_argument("--distributed", action="store_true")

NUM_CLASSES = 20


def setup_distributed(args):
    args.rank = int(os.environ.get("RANK", 0))
    args.world_size = int(os.environ.get("WORLD_SIZE", 1))
    args.local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if args.distributed:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend="nccl", init_method="env://")
        dist.barrier()


def seed_all(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def to_sparse_input(coords, feats, device):
    # coords: (N, 4) int32 [batch, x, y, z]; feats: (N, 3) colors in [-0.5, 0.5]
    return ME.SparseTensor(
        features=feats,
        coordinates=coords,
        device=device,
        minkowski_algorithm=ME.MinkowskiAlgorithm.SPEED_OPTIMIZED,
    )


@torch.no_grad()
def validate(model, loader, device, args):
    model.eval()
    hist = np.zeros((NUM_CLASSES, NUM_CLASSES))
    losses = AverageMeter()
    criterion = nn.CrossEntropyLoss(ignore_index=args.ignore_label)
    for coords, feats, labels in loader:
        sinput = to_sparse_input(coords, feats, device)
        labels = labels.to(device)
        soutput = model(sinput)
        logits = soutput.F
        loss = criterion(logits, labels.long())
        losses.update(loss.item(), labels.size(0))
        pred = logits.argmax(dim=1)
        valid = labels != args.ignore_label
        hist += fast_hist(pred[valid].cpu().numpy(), labels[valid].cpu().numpy(), NUM_CLASSES)
    ious = per_class_iu(hist) * 100
    model.train()
    return losses.avg, np.nanmean(ious), ious


def main():
    args = parser.parse_args()
    setup_distributed(args)
    seed_all(args.seed + args.rank)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    os.makedirs(args.log_dir, exist_ok=True)

    train_set = ScanNetVoxelized(args.data_root, "train", voxel_size=args.voxel_size, augment=True)
    val_set = ScanNetVoxelized(args.data_root, "val", voxel_size=args.voxel_size, augment=False)
    train_sampler = DistributedSampler(train_set) if args.distributed else None
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=train_sampler is None,
                              sampler=train_sampler, num_workers=args.num_workers,
                              collate_fn=collate_sparse, pin_memory=True, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=1, shuffle=False, num_workers=2, collate_fn=collate_sparse)

    model = Res16UNet34C(in_channels=3, out_channels=NUM_CLASSES, D=3)
    if args.distributed:
        model = ME.MinkowskiSyncBatchNorm.convert_sync_batchnorm(model)
    model = model.to(device)
    if args.distributed:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank])
    log.info("params: %.2fM", sum(p.numel() for p in model.parameters()) / 1e6)

    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9,
                                dampening=0.1, weight_decay=args.weight_decay)
    scheduler = torch.optim.lr_scheduler.PolynomialLR(optimizer, total_iters=args.max_iter, power=0.9)
    criterion = nn.CrossEntropyLoss(ignore_index=args.ignore_label)

    it, epoch, best_miou = 0, 0, 0.0
    data_time, iter_time = AverageMeter(), AverageMeter()
    model.train()
    while it < args.max_iter:
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        tic = time.time()
        for coords, feats, labels in train_loader:
            data_time.update(time.time() - tic)
            sinput = to_sparse_input(coords, feats, device)
            labels = labels.to(device, non_blocking=True)

            soutput = model(sinput)
            loss = criterion(soutput.F, labels.long())

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            it += 1
            iter_time.update(time.time() - tic)

            # the coordinate manager keeps large hash maps alive between iterations
            if it % args.empty_cache_freq == 0:
                torch.cuda.empty_cache()

            if it % 50 == 0 and args.rank == 0:
                log.info("iter %d loss %.4f lr %.5f data %.3fs iter %.3fs mem %.1fG", it, loss.item(),
                         scheduler.get_last_lr()[0], data_time.avg, iter_time.avg,
                         torch.cuda.max_memory_allocated() / 1024 ** 3)

            if it % args.val_freq == 0 and args.rank == 0:
                val_loss, miou, _ = validate(model, val_loader, device, args)
                log.info("val loss %.4f mIoU %.2f", val_loss, miou)
                if miou > best_miou:
                    best_miou = miou
                    save_checkpoint(model, optimizer, it, epoch, args.log_dir, "best")
            if it >= args.max_iter:
                break
            tic = time.time()
        epoch += 1

    if args.rank == 0:
        save_checkpoint(model, optimizer, it, epoch, args.log_dir, "last")
        log.info("done, best mIoU %.2f", best_miou)


if __name__ == "__main__":
    main()
