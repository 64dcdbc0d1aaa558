"""
Multi-GPU rate-distortion training for learned image codecs (ELIC / TCM / MLIC++ style
checkerboard + channel-context models built on CompressAI).

    torchrun --nproc_per_node=8 train_ddp.py -d /data/openimages --lambda 0.0130 \
        --model elic --epochs 400 --batch-size 8 --amp
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
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torch.utils.tensorboard import SummaryWriter
from torchvision import transforms

from compressai.datasets import ImageFolder
from models import build_model
from losses import RateDistortionLoss
from utils import AverageMeter, save_checkpoint, configure_optimizers

logger = logging.getLogger("lic")


def setup_distributed():
    if "RANK" not in os.environ:
        return 0, 0, 1
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")
    dist.barrier(device_ids=[local_rank])
    return rank, local_rank, world_size


def is_main(rank):
    return rank == 0


def reduce_mean(t, world_size):
    if world_size == 1:
        return t
    rt = t.detach().clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    return rt / world_size


def seed_everything(seed, rank):
    seed = seed + rank
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def train_one_epoch(model, criterion, loader, optimizer, aux_optimizer, scaler, epoch,
                    args, rank, world_size, writer, device):
    model.train()
    meters = {k: AverageMeter() for k in ("loss", "bpp_loss", "mse_loss", "aux_loss")}
    t0 = time.time()
    for i, x in enumerate(loader):
        x = x.cuda(non_blocking=True)

        optimizer.zero_grad(set_to_none=True)
        aux_optimizer.zero_grad(set_to_none=True)

        with torch.cuda.amp.autocast(enabled=args.amp, dtype=torch.float16):
            out_net = model(x)
            out_criterion = criterion(out_net, x)

        scaler.scale(out_criterion["loss"]).backward()
        if args.clip_max_norm > 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_max_norm)
        scaler.step(optimizer)
        scaler.update()

        # the auxiliary loss only touches the factorized-prior quantiles; keep it in fp32
        aux_loss = model.module.aux_loss() if world_size > 1 else model.aux_loss()
        aux_loss.backward()
        aux_optimizer.step()

        for k in ("loss", "bpp_loss", "mse_loss"):
            meters[k].update(reduce_mean(out_criterion[k], world_size).item())
        meters["aux_loss"].update(aux_loss.item())

        if i % args.log_interval == 0 and is_main(rank):
            mem = torch.cuda.max_memory_allocated() / 2 ** 30
            it_s = (i + 1) / (time.time() - t0)
            logger.info(
                f"epoch {epoch} [{i}/{len(loader)}] loss {meters['loss'].avg:.4f} "
                f"bpp {meters['bpp_loss'].avg:.4f} mse {meters['mse_loss'].avg:.6f} "
                f"aux {meters['aux_loss'].avg:.2f} | {it_s:.2f} it/s | mem {mem:.1f} GiB")
            step = epoch * len(loader) + i
            for k, m in meters.items():
                writer.add_scalar(f"train/{k}", m.avg, step)
    return meters["loss"].avg


@torch.no_grad()
def validate(model, criterion, loader, epoch, args, rank, world_size, writer):
    model.eval()
    meters = {k: AverageMeter() for k in ("loss", "bpp_loss", "mse_loss")}
    for x in loader:
        x = x.to("cuda", non_blocking=True)
        with torch.cuda.amp.autocast(enabled=args.amp):
            out_net = model(x)
            out_criterion = criterion(out_net, x)
        for k in meters:
            meters[k].update(reduce_mean(out_criterion[k], world_size).item())
    if is_main(rank):
        psnr = 10 * math.log10(1.0 / max(meters["mse_loss"].avg, 1e-10))
        logger.info(f"val epoch {epoch}: loss {meters['loss'].avg:.4f} "
                    f"bpp {meters['bpp_loss'].avg:.4f} psnr {psnr:.2f}")
        for k, m in meters.items():
            writer.add_scalar(f"val/{k}", m.avg, epoch)
    return meters["loss"].avg


def parse_args(argv):
    p = argparse.ArgumentParser()
    p.add_argument("-d", "--dataset", required=True)
    p.add_argument("--model", default="elic")
    p.add_argument("--N", type=int, default=192)
    p.add_argument("--M", type=int, default=320)
    p.add_argument("-e", "--epochs", type=int, default=400)
    p.add_argument("-lr", "--learning-rate", type=float, default=1e-4)
    p.add_argument("--aux-learning-rate", type=float, default=1e-3)
    p.add_argument("--lambda", dest="lmbda", type=float, default=0.0130)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--test-batch-size", type=int, default=1)
    p.add_argument("--patch-size", type=int, nargs=2, default=(256, 256))
    p.add_argument("-n", "--num-workers", type=int, default=8)
    p.add_argument("--clip_max_norm", type=float, default=1.0)
    p.add_argument("--amp", action="store_true", help="mixed precision (fp16 autocast)")
    p.add_argument("--compile", action="store_true", help="torch.compile the model")
    p.add_argument("--seed", type=int, default=1984)
    p.add_argument("--log-interval", type=int, default=100)
    p.add_argument("--checkpoint", type=str, default=None)
    p.add_argument("--save-dir", type=str, default="./checkpoints")
    return p.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    rank, local_rank, world_size = setup_distributed()
    device = torch.device("cuda", local_rank)
    seed_everything(args.seed, rank)

    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    logging.basicConfig(level=logging.INFO if is_main(rank) else logging.WARN,
                        format="%(asctime)s %(message)s")
    os.makedirs(args.save_dir, exist_ok=True)
    writer = SummaryWriter(os.path.join(args.save_dir, "tb")) if is_main(rank) else None

    train_tf = transforms.Compose([transforms.RandomCrop(args.patch_size),
                                   transforms.RandomHorizontalFlip(), transforms.ToTensor()])
    test_tf = transforms.Compose([transforms.ToTensor()])
    train_set = ImageFolder(args.dataset, split="train", transform=train_tf)
    test_set = ImageFolder(args.dataset, split="test", transform=test_tf)

    train_sampler = DistributedSampler(train_set, shuffle=True) if world_size > 1 else None
    test_sampler = DistributedSampler(test_set, shuffle=False) if world_size > 1 else None
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=train_sampler,
                              shuffle=train_sampler is None, num_workers=args.num_workers,
                              pin_memory=True, drop_last=True, persistent_workers=True)
    test_loader = DataLoader(test_set, batch_size=args.test_batch_size, sampler=test_sampler,
                             shuffle=False, num_workers=2, pin_memory=True)

    net = build_model(args.model, N=args.N, M=args.M).to(device)
    optimizer, aux_optimizer = configure_optimizers(net, args)
    lr_scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[300, 350],
                                                        gamma=0.1)
    criterion = RateDistortionLoss(lmbda=args.lmbda)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    last_epoch = 0
    best_loss = float("inf")
    if args.checkpoint:
        ckpt = torch.load(args.checkpoint, map_location=f"cuda:{local_rank}")
        net.load_state_dict(ckpt["state_dict"])
        optimizer.load_state_dict(ckpt["optimizer"])
        aux_optimizer.load_state_dict(ckpt["aux_optimizer"])
        lr_scheduler.load_state_dict(ckpt["lr_scheduler"])
        scaler.load_state_dict(ckpt.get("scaler", {}))
        last_epoch = ckpt["epoch"] + 1
        best_loss = ckpt.get("best_loss", best_loss)

    if world_size > 1:
        # EntropyBottleneck quantiles are only used by the aux loss
        net = DDP(net, device_ids=[local_rank], output_device=local_rank,
                  find_unused_parameters=True)
    if args.compile:
        net = torch.compile(net, mode="max-autotune")

    for epoch in range(last_epoch, args.epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        train_one_epoch(net, criterion, train_loader, optimizer, aux_optimizer, scaler,
                        epoch, args, rank, world_size, writer, device)
        loss = validate(net, criterion, test_loader, epoch, args, rank, world_size, writer)
        lr_scheduler.step()

        if is_main(rank):
            is_best = loss < best_loss
            best_loss = min(loss, best_loss)
            state = net.module.state_dict() if world_size > 1 else net.state_dict()
            save_checkpoint({
                "epoch": epoch,
                "state_dict": state,
                "loss": loss,
                "best_loss": best_loss,
                "optimizer": optimizer.state_dict(),
                "aux_optimizer": aux_optimizer.state_dict(),
                "lr_scheduler": lr_scheduler.state_dict(),
                "scaler": scaler.state_dict(),
            }, is_best, os.path.join(args.save_dir, f"{args.model}_{args.lmbda}.pth.tar"))
        torch.cuda.empty_cache()

    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1:])
