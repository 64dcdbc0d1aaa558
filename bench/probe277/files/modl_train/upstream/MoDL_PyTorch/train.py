"""Train MoDL (Model-based Deep Learning, Aggarwal et al. 2019) on the
multi-coil brain dataset released with the original TensorFlow code.

Usage:
    python train.py --config configs/modl_brain.yaml
    python train.py --config configs/modl_brain.yaml --k_iters 10 --resume

The network is trained in two stages as in the paper: first with K=1
(denoiser pre-training, no CG), then with the full number of unrolled
iterations, initialised from the K=1 weights.
"""
import argparse
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import yaml
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torch.utils.tensorboard import SummaryWriter

from datasets.modl_dataset import modl_dataset
from models.modl import MoDL
from utils import (AverageMeter, count_parameters, get_device, load_checkpoint,
                   psnr_batch, save_checkpoint, set_seed, ssim_batch)


def parse_args():
    parser = argparse.ArgumentParser(description="MoDL training")
    parser.add_argument("--config", type=str, default="configs/modl_brain.yaml")
    parser.add_argument("--k_iters", type=int, default=None,
                        help="override number of unrolled CG iterations")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
    parser.add_argument("--workers", type=int, default=None)
    return parser.parse_args()


def load_config(path, args):
    with open(path, "r") as f:
        config = yaml.safe_load(f)
    if args.k_iters is not None:
        config["model"]["k_iters"] = args.k_iters
    if args.workers is not None:
        config["data"]["num_workers"] = args.workers
    return config


def init_distributed(config, local_rank):
    """Initialise torch.distributed if we were launched with torchrun."""
    if "WORLD_SIZE" not in os.environ or int(os.environ["WORLD_SIZE"]) < 2:
        return False, 0, 1
    dist_cfg = config.get("distributed", {})
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend=dist_cfg.get("backend", "nccl"),
                            init_method=dist_cfg.get("init_method", "env://"))
    return True, dist.get_rank(), dist.get_world_size()


def build_loaders(config, distributed):
    data_cfg = config["data"]
    train_set = modl_dataset(mode="train", dataset_path=data_cfg["path"], sigma=data_cfg["sigma"])
    val_set = modl_dataset(mode="val", dataset_path=data_cfg["path"], sigma=data_cfg["sigma"])

    train_sampler = DistributedSampler(train_set) if distributed else None
    train_loader = DataLoader(train_set,
                              batch_size=data_cfg["batch_size"],
                              shuffle=(train_sampler is None),
                              sampler=train_sampler,
                              num_workers=data_cfg["num_workers"],
                              pin_memory=data_cfg.get("pin_memory", True),
                              drop_last=True)
    val_loader = DataLoader(val_set, batch_size=1, shuffle=False,
                            num_workers=data_cfg["num_workers"], pin_memory=True)
    return train_loader, val_loader, train_sampler


def train_one_epoch(model, loader, optimizer, scaler, criterion, device, epoch, config, writer, rank):
    model.train()
    losses = AverageMeter("loss")
    use_amp = config["train"].get("amp", False)
    clip = config["train"].get("grad_clip", None)
    t0 = time.time()

    for it, (x0, gt, csm, mask) in enumerate(loader):
        x0 = x0.to(device, non_blocking=True)
        gt = gt.to(device, non_blocking=True)
        csm = csm.to(device, non_blocking=True)
        # masks are stored as uint8 on disk; the CG operator wants float on the GPU
        mask = mask.float().cuda()

        optimizer.zero_grad(set_to_none=True)
        with torch.cuda.amp.autocast(enabled=use_amp):
            x_k = model(x0, csm, mask)
            loss = criterion(x_k, gt)

        scaler.scale(loss).backward()
        if clip is not None:
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), clip)
        scaler.step(optimizer)
        scaler.update()

        losses.update(loss.item(), x0.size(0))
        if rank == 0 and it % config["train"]["log_every"] == 0:
            step = epoch * len(loader) + it
            writer.add_scalar("train/loss", loss.item(), step)
            lam = model.module.dc.lam if hasattr(model, "module") else model.dc.lam
            writer.add_scalar("train/lambda", lam.item(), step)
            print(f"[epoch {epoch:03d} it {it:04d}] loss {losses.avg:.5f} "
                  f"({(time.time() - t0) / (it + 1):.3f}s/it)")
    return losses.avg


@torch.no_grad()
def validate(model, loader, criterion, device):
    model.eval()
    losses = AverageMeter("val_loss")
    psnrs, ssims = [], []
    for x0, gt, csm, mask in loader:
        x0, gt, csm = x0.to(device), gt.to(device), csm.to(device)
        mask = mask.cuda().float()
        x_k = model(x0, csm, mask)
        losses.update(criterion(x_k, gt).item())
        out = torch.view_as_complex(x_k.permute(0, 2, 3, 1).contiguous()).abs().cpu().numpy()
        ref = torch.view_as_complex(gt.permute(0, 2, 3, 1).contiguous()).abs().cpu().numpy()
        psnrs.append(psnr_batch(ref, out))
        ssims.append(ssim_batch(ref, out))
    return losses.avg, float(np.mean(psnrs)), float(np.mean(ssims))


def main():
    args = parse_args()
    config = load_config(args.config, args)

    distributed, rank, world_size = init_distributed(config, args.local_rank)
    set_seed(config["seed"] + rank)

    if distributed:
        device = torch.device("cuda", args.local_rank)
    else:
        device = torch.device(config["device"])
    torch.backends.cudnn.benchmark = config["train"].get("cudnn_benchmark", True)

    save_dir = os.path.join(config["save_dir"], f"K{config['model']['k_iters']}")
    os.makedirs(save_dir, exist_ok=True)
    writer = SummaryWriter(os.path.join(save_dir, "tb")) if rank == 0 else None

    train_loader, val_loader, train_sampler = build_loaders(config, distributed)

    model = MoDL(n_layers=config["model"]["n_layers"],
                 k_iters=config["model"]["k_iters"],
                 lam_init=config["model"]["lam_init"]).to(device)
    if rank == 0:
        print(f"MoDL params: {count_parameters(model) / 1e3:.1f}k")

    # stage 2: initialise from the K=1 model
    if config["model"]["k_iters"] > 1 and config["model"].get("init_from_k1"):
        ckpt = torch.load(config["model"]["init_from_k1"], map_location="cpu")
        model.load_state_dict(ckpt["model"], strict=False)
        if rank == 0:
            print(f"initialised from {config['model']['init_from_k1']}")

    if distributed:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank],
                                                    output_device=args.local_rank)

    criterion = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=config["train"]["lr"])
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=config["train"]["lr_step"],
                                                gamma=config["train"]["lr_gamma"])
    scaler = torch.cuda.amp.GradScaler(enabled=config["train"].get("amp", False))

    start_epoch, best_psnr = 0, 0.0
    last_ckpt = os.path.join(save_dir, "last.pth")
    if args.resume and os.path.exists(last_ckpt):
        start_epoch, best_psnr = load_checkpoint(last_ckpt, model, optimizer, scheduler, device)

    for epoch in range(start_epoch, config["train"]["epochs"]):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        tr_loss = train_one_epoch(model, train_loader, optimizer, scaler, criterion,
                                  device, epoch, config, writer, rank)
        scheduler.step()

        if rank != 0:
            continue
        val_loss, val_psnr, val_ssim = validate(model, val_loader, criterion, device)
        writer.add_scalar("val/loss", val_loss, epoch)
        writer.add_scalar("val/psnr", val_psnr, epoch)
        writer.add_scalar("val/ssim", val_ssim, epoch)
        print(f"epoch {epoch}: train {tr_loss:.5f} val {val_loss:.5f} "
              f"PSNR {val_psnr:.2f} SSIM {val_ssim:.4f} "
              f"mem {torch.cuda.max_memory_allocated(device) / 2**30:.2f} GiB")

        is_best = val_psnr > best_psnr
        best_psnr = max(best_psnr, val_psnr)
        save_checkpoint({"epoch": epoch + 1,
                         "model": (model.module if distributed else model).state_dict(),
                         "optimizer": optimizer.state_dict(),
                         "scheduler": scheduler.state_dict(),
                         "best_psnr": best_psnr,
                         "config": config},
                        save_dir, is_best)

    if writer is not None:
        writer.close()
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
