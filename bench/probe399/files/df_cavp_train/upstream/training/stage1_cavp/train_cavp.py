"""Stage-1: Contrastive Audio-Visual Pretraining (CAVP) on VGGSound + AudioSet-V2A.

Launch with torch.distributed.launch / torchrun, one process per GPU:
    python -m torch.distributed.launch --nproc_per_node 8 train_cavp.py --config configs/cavp.yaml
"""
import argparse
import logging
import math
import os
import random
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torch.utils.tensorboard import SummaryWriter
from omegaconf import OmegaConf

sys.path.append(os.path.join(os.path.dirname(__file__), "..", ".."))
from diff_foley.modules.cavp.cavp_model import CAVP, CAVPLoss
from diff_foley.data.video_spec_dataset import VideoSpecDataset

try:
    from apex.optimizers import FusedAdam as AdamW
except ImportError:
    from torch.optim import AdamW

logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
logger = logging.getLogger("cavp")


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", type=str, default="configs/cavp.yaml")
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
    parser.add_argument("--output_dir", type=str, default="logs/cavp")
    parser.add_argument("--resume", type=str, default="")
    parser.add_argument("--amp", action="store_true", help="use mixed precision")
    parser.add_argument("--seed", type=int, default=42)
    return parser.parse_args()


def setup_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def cosine_lr(optimizer, base_lr, warmup, total_steps):
    def _lr_adjuster(step):
        if step < warmup:
            lr = base_lr * (step + 1) / warmup
        else:
            e = step - warmup
            es = total_steps - warmup
            lr = 0.5 * (1 + math.cos(math.pi * e / es)) * base_lr
        for param_group in optimizer.param_groups:
            param_group["lr"] = lr
        return lr
    return _lr_adjuster


def init_distributed(args):
    if "WORLD_SIZE" in os.environ and int(os.environ["WORLD_SIZE"]) > 1:
        dist.init_process_group(backend="nccl", init_method="env://")
        args.world_size = dist.get_world_size()
        args.rank = dist.get_rank()
    else:
        args.world_size, args.rank = 1, 0
    torch.cuda.set_device(args.local_rank)
    args.device = torch.device("cuda", args.local_rank)
    return args


def train_one_epoch(model, criterion, loader, optimizer, scaler, scheduler, epoch, args, cfg, writer):
    model.train()
    step_per_epoch = len(loader)
    t0 = time.time()
    for i, batch in enumerate(loader):
        step = epoch * step_per_epoch + i
        lr = scheduler(step)
        video = batch["video"].cuda(args.local_rank, non_blocking=True)
        spec = batch["spec"].cuda(args.local_rank, non_blocking=True)

        optimizer.zero_grad(set_to_none=True)
        with torch.cuda.amp.autocast(enabled=args.amp):
            out = model(video, spec)
            loss, loss_dict = criterion(out)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.train.grad_clip)
        scaler.step(optimizer)
        scaler.update()

        # clamp to 4.6052 = ln(100), as in CLIP
        with torch.no_grad():
            model.module.logit_scale.clamp_(0, math.log(100))

        if args.rank == 0 and i % cfg.train.log_every == 0:
            batch_time = (time.time() - t0) / (i + 1)
            logger.info(f"epoch {epoch} [{i}/{step_per_epoch}] loss {loss.item():.4f} "
                        f"sem {loss_dict['semantic']:.4f} temp {loss_dict['temporal']:.4f} "
                        f"lr {lr:.2e} {batch_time:.3f}s/it")
            writer.add_scalar("train/loss", loss.item(), step)
            writer.add_scalar("train/lr", lr, step)
            writer.add_scalar("train/logit_scale", model.module.logit_scale.exp().item(), step)


@torch.no_grad()
def evaluate(model, loader, args):
    model.eval()
    video_feats, audio_feats = [], []
    for batch in loader:
        video = batch["video"].to(args.device)
        spec = batch["spec"].to(args.device)
        out = model(video, spec)
        video_feats.append(out["video_pooled"])
        audio_feats.append(out["audio_pooled"])
    v = torch.cat(video_feats)
    a = torch.cat(audio_feats)
    sim = v @ a.T
    ranks = (sim.argsort(dim=1, descending=True) == torch.arange(len(v), device=v.device)[:, None]).nonzero()[:, 1]
    r1 = (ranks < 1).float().mean().item()
    r5 = (ranks < 5).float().mean().item()
    return {"v2a_R@1": r1, "v2a_R@5": r5}


def main():
    args = parse_args()
    cfg = OmegaConf.load(args.config)
    args = init_distributed(args)
    setup_seed(args.seed + args.rank)
    torch.backends.cudnn.benchmark = True

    model = CAVP(**cfg.model).cuda(args.local_rank)
    if args.world_size > 1:
        model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = DDP(model, device_ids=[args.local_rank], find_unused_parameters=False)
    criterion = CAVPLoss(rank=args.rank, world_size=args.world_size)

    train_set = VideoSpecDataset(split="train", **cfg.data)
    val_set = VideoSpecDataset(split="test", **cfg.data)
    train_sampler = DistributedSampler(train_set, shuffle=True) if args.world_size > 1 else None
    train_loader = DataLoader(train_set, batch_size=cfg.train.batch_size, sampler=train_sampler,
                              shuffle=train_sampler is None, num_workers=cfg.train.num_workers,
                              pin_memory=True, drop_last=True, persistent_workers=True)
    val_loader = DataLoader(val_set, batch_size=cfg.train.batch_size, shuffle=False,
                            num_workers=4, pin_memory=True)

    optimizer = AdamW(model.parameters(), lr=cfg.train.lr, weight_decay=cfg.train.weight_decay,
                      betas=(0.9, 0.98), eps=1e-6)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)
    total_steps = cfg.train.epochs * len(train_loader)
    scheduler = cosine_lr(optimizer, cfg.train.lr, cfg.train.warmup_steps, total_steps)

    start_epoch = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location="cpu")
        model.module.load_state_dict(ckpt["state_dict"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scaler.load_state_dict(ckpt["scaler"])
        start_epoch = ckpt["epoch"] + 1
        logger.info(f"resumed from {args.resume} at epoch {start_epoch}")

    writer = SummaryWriter(args.output_dir) if args.rank == 0 else None
    for epoch in range(start_epoch, cfg.train.epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        train_one_epoch(model, criterion, train_loader, optimizer, scaler, scheduler, epoch, args, cfg, writer)
        if args.rank == 0:
            metrics = evaluate(model.module if hasattr(model, "module") else model, val_loader, args)
            logger.info(f"epoch {epoch} eval {metrics}")
            logger.info(f"max mem {torch.cuda.max_memory_allocated() / 1024 ** 3:.1f} GB")
            torch.save({"state_dict": model.module.state_dict(), "optimizer": optimizer.state_dict(),
                        "scaler": scaler.state_dict(), "epoch": epoch},
                       os.path.join(args.output_dir, f"cavp_epoch{epoch}.ckpt"))
        if args.world_size > 1:
            dist.barrier()


if __name__ == "__main__":
    main()
