"""SIIM-ACR Pneumothorax Segmentation - distributed training with NVIDIA apex.

Launch:
    python -m torch.distributed.launch --nproc_per_node=4 siim/train_apex.py \
        --config configs/siim_unet_se154.yaml --fold 0 --opt-level O1
"""
import argparse
import os
import shutil
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import yaml
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

try:
    from apex import amp
    from apex.parallel import DistributedDataParallel as DDP
    from apex.parallel import convert_syncbn_model
    from apex.optimizers import FusedAdam
except ImportError:
    raise ImportError("Please install apex from https://www.github.com/nvidia/apex to run this script.")

from siim.dataset import SIIMDataset, get_transforms
from siim.models import get_model
from src.data.prefetcher import DataPrefetcher
from src.losses import ComboLoss

parser = argparse.ArgumentParser()
parser.add_argument("--config", type=str, required=True)
parser.add_argument("--fold", type=int, default=0)
parser.add_argument("--local_rank", type=int, default=0)
parser.add_argument("--opt-level", type=str, default="O1")
parser.add_argument("--keep-batchnorm-fp32", type=str, default=None)
parser.add_argument("--loss-scale", type=str, default="dynamic")
parser.add_argument("--sync-bn", action="store_true")
parser.add_argument("--resume", type=str, default="")
args = parser.parse_args()


def reduce_tensor(tensor, world_size):
    rt = tensor.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    rt /= world_size
    return rt


def dice_metric(probs, truth, threshold=0.5, min_size=2048):
    batch_size = truth.shape[0]
    with torch.no_grad():
        probs = probs.view(batch_size, -1)
        truth = truth.view(batch_size, -1)
        p = (probs > threshold).float()
        # remove tiny predicted masks, as in the leaderboard post-processing
        p[p.sum(-1) < min_size] = 0
        t = (truth > 0.5).float()
        t_sum, p_sum = t.sum(-1), p.sum(-1)
        neg_index = torch.nonzero(t_sum == 0)
        pos_index = torch.nonzero(t_sum >= 1)
        dice_neg = (p_sum == 0).float()
        dice_pos = 2 * (p * t).sum(-1) / ((p + t).sum(-1))
        dice_neg = dice_neg[neg_index]
        dice_pos = dice_pos[pos_index]
        dice = torch.cat([dice_pos, dice_neg])
    return dice.mean()


def post_process(prob, threshold=0.5, min_size=2048):
    """Binarise a (H, W) probability map and drop connected components smaller than ``min_size``."""
    import cv2

    mask = (prob > threshold).astype(np.uint8)
    num, comp = cv2.connectedComponents(mask)
    out = np.zeros_like(mask)
    kept = 0
    for c in range(1, num):
        region = comp == c
        if region.sum() >= min_size:
            out[region] = 1
            kept += 1
    return out, kept


def mask_to_rle(mask):
    """SIIM's column-major RLE with relative starts ("-1" for an empty mask)."""
    flat = np.concatenate([[0], mask.T.flatten(), [0]])
    runs = np.where(flat[1:] != flat[:-1])[0]
    starts, ends = runs[::2], runs[1::2]
    if len(starts) == 0:
        return "-1"
    prev_end = np.concatenate([[0], ends[:-1]])
    rel = starts - prev_end
    return " ".join(f"{s} {l}" for s, l in zip(rel, ends - starts))


class Trainer:
    def __init__(self, cfg):
        self.cfg = cfg
        self.distributed = int(os.environ.get("WORLD_SIZE", 1)) > 1
        self.world_size = 1
        if self.distributed:
            torch.cuda.set_device(args.local_rank)
            dist.init_process_group(backend="nccl", init_method="env://")
            self.world_size = dist.get_world_size()
        self.is_master = args.local_rank == 0
        torch.backends.cudnn.benchmark = True

        model = get_model(cfg["model"])
        if args.sync_bn:
            if self.is_master:
                print("using apex synced BN")
            model = convert_syncbn_model(model)
        self.model = model.cuda()
        lr = cfg["optim"]["lr"] * float(cfg["train"]["batch_size"] * self.world_size) / 16.0
        self.optimizer = FusedAdam(self.model.parameters(), lr=lr, weight_decay=cfg["optim"]["wd"])
        self.model, self.optimizer = amp.initialize(
            self.model, self.optimizer,
            opt_level=args.opt_level,
            keep_batchnorm_fp32=args.keep_batchnorm_fp32,
            loss_scale=args.loss_scale,
        )
        if self.distributed:
            # delay_allreduce delays all communication to the end of the backward pass
            self.model = DDP(self.model, delay_allreduce=True)
        self.criterion = ComboLoss({"bce": 3, "dice": 1, "focal": 4}, per_image=False).cuda()
        self.scheduler = torch.optim.lr_scheduler.MultiStepLR(self.optimizer, milestones=cfg["optim"]["milestones"],
                                                              gamma=0.5)
        self.start_epoch = 0
        self.best_dice = 0.0
        if args.resume:
            self.load(args.resume)

        trn_ds = SIIMDataset(cfg["data"], fold=args.fold, phase="train", transforms=get_transforms("train", cfg))
        val_ds = SIIMDataset(cfg["data"], fold=args.fold, phase="val", transforms=get_transforms("val", cfg))
        self.trn_sampler = DistributedSampler(trn_ds) if self.distributed else None
        self.trn_loader = DataLoader(trn_ds, batch_size=cfg["train"]["batch_size"],
                                     shuffle=self.trn_sampler is None, sampler=self.trn_sampler,
                                     num_workers=cfg["train"]["workers"], pin_memory=True, drop_last=True)
        self.val_loader = DataLoader(val_ds, batch_size=cfg["train"]["batch_size"], shuffle=False,
                                     num_workers=cfg["train"]["workers"], pin_memory=True)

    def load(self, path):
        ckpt = torch.load(path, map_location=lambda storage, loc: storage.cuda(args.local_rank))
        self.model.load_state_dict(ckpt["state_dict"])
        self.optimizer.load_state_dict(ckpt["optimizer"])
        amp.load_state_dict(ckpt["amp"])
        self.start_epoch = ckpt["epoch"] + 1
        self.best_dice = ckpt.get("best_dice", 0.0)

    def save(self, epoch, dice, out_dir):
        state = {
            "epoch": epoch,
            "state_dict": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "amp": amp.state_dict(),
            "best_dice": self.best_dice,
        }
        path = os.path.join(out_dir, "last.pth")
        torch.save(state, path)
        if dice >= self.best_dice:
            shutil.copyfile(path, os.path.join(out_dir, "best.pth"))

    def train_epoch(self, epoch):
        self.model.train()
        if self.trn_sampler is not None:
            self.trn_sampler.set_epoch(epoch)
        prefetcher = DataPrefetcher(self.trn_loader)
        images, masks = prefetcher.next()
        step, loss_sum, t0 = 0, 0.0, time.time()
        while images is not None:
            logits = self.model(images)
            loss = self.criterion(logits, masks)
            self.optimizer.zero_grad()
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
            self.optimizer.step()
            if self.distributed:
                reduced = reduce_tensor(loss.data, self.world_size)
            else:
                reduced = loss.data
            loss_sum += reduced.item()
            step += 1
            if self.is_master and step % 50 == 0:
                torch.cuda.synchronize()
                print(f"epoch {epoch} step {step} loss {loss_sum / step:.4f} {(time.time() - t0) / step:.3f}s/it")
            images, masks = prefetcher.next()
        return loss_sum / max(step, 1)

    @torch.no_grad()
    def validate(self):
        self.model.eval()
        dices = []
        for images, masks in self.val_loader:
            images = images.cuda(non_blocking=True)
            masks = masks.cuda(non_blocking=True)
            logits = self.model(images)
            logits_flip = self.model(images.flip(3)).flip(3)
            probs = (torch.sigmoid(logits) + torch.sigmoid(logits_flip)) / 2
            dices.append(dice_metric(probs, masks))
        dice = torch.stack(dices).mean()
        if self.distributed:
            dice = reduce_tensor(dice, self.world_size)
        return dice.item()

    def fit(self, out_dir):
        for epoch in range(self.start_epoch, self.cfg["train"]["epochs"]):
            loss = self.train_epoch(epoch)
            dice = self.validate()
            self.scheduler.step()
            if self.is_master:
                self.best_dice = max(self.best_dice, dice)
                print(f"== epoch {epoch} loss {loss:.4f} dice {dice:.4f} best {self.best_dice:.4f}")
                self.save(epoch, dice, out_dir)


def main():
    with open(args.config) as f:
        cfg = yaml.safe_load(f)
    out_dir = os.path.join(cfg["train"]["out_dir"], f"fold{args.fold}")
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(cfg["seed"])
    np.random.seed(cfg["seed"])
    trainer = Trainer(cfg)
    trainer.fit(out_dir)


if __name__ == "__main__":
    main()
