# -*- coding: utf-8 -*-
"""TransNet: full-attention network for CSI feedback in FDD massive MIMO.

Train:
    python main.py --data-dir ./COST2100 --scenario in --cr 4 --epochs 1000 --gpu 0,1 --amp
Test:
    python main.py --data-dir ./COST2100 --scenario in --cr 4 --evaluate --pretrained ckpt/best.pth
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
import torch.nn as nn
from torch.cuda.amp import GradScaler, autocast

from dataset import Cost2100DataLoader
from models.transnet import TransNet
from utils.statics import AverageMeter, evaluator

logging.basicConfig(
    format="%(asctime)s %(levelname)s %(message)s",
    level=logging.INFO,
    handlers=[logging.StreamHandler(sys.stdout)],
)
logger = logging.getLogger("transnet")


def get_args():
    p = argparse.ArgumentParser("TransNet CSI feedback")
    p.add_argument("--data-dir", type=str, required=True)
    p.add_argument("--scenario", type=str, default="in", choices=["in", "out"])
    p.add_argument("--cr", type=int, default=4, help="compression ratio 1/cr")
    p.add_argument("--epochs", type=int, default=1000)
    p.add_argument("-b", "--batch-size", type=int, default=200)
    p.add_argument("-j", "--workers", type=int, default=8)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--min-lr", type=float, default=5e-5)
    p.add_argument("--warmup", type=int, default=30)
    p.add_argument("--d-model", type=int, default=64)
    p.add_argument("--n-heads", type=int, default=2)
    p.add_argument("--n-layers", type=int, default=2)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--amp", action="store_true", help="mixed precision (fp16) training")
    p.add_argument("--gpu", type=str, default="0")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--pretrained", type=str, default=None)
    p.add_argument("--resume", type=str, default=None)
    p.add_argument("--evaluate", action="store_true")
    p.add_argument("--save-dir", type=str, default="./checkpoints")
    p.add_argument("--print-freq", type=int, default=20)
    return p.parse_args()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


class WarmUpCosineAnnealingLR(torch.optim.lr_scheduler._LRScheduler):
    """Linear warm-up followed by cosine annealing (per iteration)."""

    def __init__(self, optimizer, T_max, T_warmup, eta_min=0, last_epoch=-1):
        self.T_max = T_max
        self.T_warmup = T_warmup
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch < self.T_warmup:
            return [base_lr * (self.last_epoch + 1) / self.T_warmup for base_lr in self.base_lrs]
        k = (self.last_epoch - self.T_warmup) / max(1, self.T_max - self.T_warmup)
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * k)) / 2
                for base_lr in self.base_lrs]


def train_epoch(model, loader, criterion, optimizer, scheduler, scaler, epoch, args):
    model.train()
    losses = AverageMeter("loss")
    t0 = time.time()
    for i, (h,) in enumerate(loader):
        h = h.cuda(non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        with autocast(enabled=args.amp):
            h_hat = model(h)
            loss = criterion(h_hat, h)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        losses.update(loss.item(), h.size(0))
        if (i + 1) % args.print_freq == 0:
            logger.info("Epoch[%d][%d/%d] lr %.2e loss %.3e  %.2fs/it", epoch, i + 1, len(loader),
                        optimizer.param_groups[0]["lr"], losses.avg, (time.time() - t0) / (i + 1))
    return losses.avg


@torch.no_grad()
def evaluate(model, loader, criterion, device):
    model.eval()
    losses, rhos, nmses = AverageMeter("loss"), AverageMeter("rho"), AverageMeter("nmse")
    for h, h_raw in loader:
        h = h.to(device, non_blocking=True)
        h_raw = h_raw.to(device, non_blocking=True)
        h_hat = model(h)
        loss = criterion(h_hat, h)
        rho, nmse = evaluator(h_hat, h, h_raw)
        losses.update(loss.item(), h.size(0))
        rhos.update(rho.item(), h.size(0))
        nmses.update(nmse.item(), h.size(0))
    return losses.avg, rhos.avg, nmses.avg


def export_onnx(model, path, cr, opset=13):
    """Export encoder and decoder separately (UE side / BS side) for TensorRT deployment."""
    m = model.module if isinstance(model, nn.DataParallel) else model
    m.eval()
    dummy = torch.randn(1, 2, 32, 32).cuda()
    enc_path = path.replace(".onnx", "_encoder.onnx")
    dec_path = path.replace(".onnx", "_decoder.onnx")
    with torch.no_grad():
        code = m.encoder(dummy)
        torch.onnx.export(m.encoder, dummy, enc_path, opset_version=opset,
                          input_names=["csi"], output_names=["codeword"],
                          dynamic_axes={"csi": {0: "batch"}, "codeword": {0: "batch"}})
        torch.onnx.export(m.decoder, code, dec_path, opset_version=opset,
                          input_names=["codeword"], output_names=["csi_hat"],
                          dynamic_axes={"codeword": {0: "batch"}, "csi_hat": {0: "batch"}})
    logger.info("exported CR=1/%d encoder -> %s, decoder -> %s", cr, enc_path, dec_path)


def main():
    args = get_args()
    os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu
    set_seed(args.seed)

    if not torch.cuda.is_available():
        logger.error("TransNet training requires a CUDA device")
        sys.exit(1)
    device = torch.device("cuda:0")
    n_gpu = torch.cuda.device_count()
    logger.info("visible GPUs: %d (%s)", n_gpu, torch.cuda.get_device_name(device))
    torch.backends.cudnn.benchmark = True

    loaders = Cost2100DataLoader(root=args.data_dir, batch_size=args.batch_size,
                                 num_workers=args.workers, pin_memory=True,
                                 scenario=args.scenario)
    train_loader, val_loader, test_loader = loaders()

    model = TransNet(reduction=args.cr, d_model=args.d_model, n_heads=args.n_heads,
                     n_layers=args.n_layers, dropout=args.dropout)
    if args.pretrained:
        state = torch.load(args.pretrained, map_location="cpu")
        state = state.get("state_dict", state)
        state = {k.replace("module.", ""): v for k, v in state.items()}
        model.load_state_dict(state)
        logger.info("loaded pretrained weights from %s", args.pretrained)
    model.to(device)
    if n_gpu > 1:
        model = nn.DataParallel(model, device_ids=list(range(n_gpu)))

    criterion = nn.MSELoss().to(device)

    if args.evaluate:
        loss, rho, nmse = evaluate(model, test_loader, criterion, device)
        logger.info("TEST  loss %.3e  rho %.4f  NMSE %.2f dB", loss, rho, nmse)
        return

    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = WarmUpCosineAnnealingLR(optimizer, T_max=args.epochs * len(train_loader),
                                        T_warmup=args.warmup * len(train_loader), eta_min=args.min_lr)
    scaler = GradScaler(enabled=args.amp)

    start_epoch, best_nmse = 0, float("inf")
    if args.resume and os.path.isfile(args.resume):
        ckpt = torch.load(args.resume, map_location=device)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        scaler.load_state_dict(ckpt["scaler"])
        start_epoch, best_nmse = ckpt["epoch"] + 1, ckpt["best_nmse"]
        logger.info("resumed from epoch %d (best NMSE %.2f dB)", start_epoch, best_nmse)

    os.makedirs(args.save_dir, exist_ok=True)
    for epoch in range(start_epoch, args.epochs):
        train_loss = train_epoch(model, train_loader, criterion, optimizer, scheduler, scaler, epoch, args)
        if epoch % 10 == 0 or epoch == args.epochs - 1:
            val_loss, rho, nmse = evaluate(model, test_loader, criterion, device)
            logger.info("Epoch %d  train %.3e  test %.3e  rho %.4f  NMSE %.2f dB  peak mem %.1f GB",
                        epoch, train_loss, val_loss, rho, nmse,
                        torch.cuda.max_memory_allocated(device) / 1024 ** 3)
            state = {
                "epoch": epoch,
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
                "scaler": scaler.state_dict(),
                "best_nmse": min(best_nmse, nmse),
            }
            torch.save(state, os.path.join(args.save_dir, "last.pth"))
            if nmse < best_nmse:
                best_nmse = nmse
                torch.save(state, os.path.join(args.save_dir, "best.pth"))
                logger.info("new best NMSE %.2f dB", best_nmse)
            torch.cuda.empty_cache()

    logger.info("done. best NMSE %.2f dB", best_nmse)


if __name__ == "__main__":
    main()
