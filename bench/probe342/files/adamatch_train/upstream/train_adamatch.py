"""
AdaMatch: A Unified Approach to Semi-Supervised Learning and Domain Adaptation (ICLR 2022).

PyTorch re-implementation. Single GPU:
    python train_adamatch.py --source mnist --target usps --gpu 0
Multi GPU (one process per GPU):
    torchrun --nproc_per_node=4 train_adamatch.py --source svhn --target mnist
"""
import argparse
import copy
import json
import logging
import math
import os
import random
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from adamatch.models import build_model
from adamatch.data import build_uda_datasets
from adamatch.utils import AverageMeter, accuracy, save_checkpoint

logger = logging.getLogger("adamatch")


def get_args():
    p = argparse.ArgumentParser("AdaMatch")
    p.add_argument("--source", default="mnist")
    p.add_argument("--target", default="usps")
    p.add_argument("--data-root", default="./data")
    p.add_argument("--arch", default="wrn-28-2")
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--steps-per-epoch", type=int, default=1024)
    p.add_argument("--batch-size", type=int, default=64, help="labelled source batch per GPU")
    p.add_argument("--uratio", type=int, default=3, help="target batch = uratio * batch-size")
    p.add_argument("--lr", type=float, default=0.03)
    p.add_argument("--wd", type=float, default=5e-4)
    p.add_argument("--tau", type=float, default=0.9, help="relative confidence threshold")
    p.add_argument("--ema", type=float, default=0.999)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--gpu", type=int, default=0, help="GPU id for single-process runs")
    p.add_argument("--amp", action="store_true", help="mixed precision (fp16, bf16 on Ampere+)")
    p.add_argument("--compile", action="store_true", help="torch.compile the model (PyTorch >= 2.0)")
    p.add_argument("--out", default="runs/adamatch")
    p.add_argument("--resume", default="")
    return p.parse_args()


def setup_distributed(args):
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        args.rank = int(os.environ["RANK"])
        args.world_size = int(os.environ["WORLD_SIZE"])
        args.local_rank = int(os.environ["LOCAL_RANK"])
        args.distributed = args.world_size > 1
    else:
        args.rank, args.world_size, args.local_rank = 0, 1, args.gpu
        args.distributed = False

    torch.cuda.set_device(args.local_rank)
    if args.distributed:
        dist.init_process_group(backend="nccl", init_method="env://")
        dist.barrier()
    args.device = torch.device("cuda", args.local_rank)
    return args


def is_main(args):
    return args.rank == 0


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


class ModelEMA:
    """Exponential moving average of weights (kept on the same device as the model)."""

    def __init__(self, model, decay):
        self.ema = copy.deepcopy(model)
        self.ema.eval()
        self.decay = decay
        for p in self.ema.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def update(self, model):
        msd = model.state_dict()
        for k, v in self.ema.state_dict().items():
            if v.dtype.is_floating_point:
                v.mul_(self.decay).add_(msd[k].detach(), alpha=1 - self.decay)
            else:
                v.copy_(msd[k])


def cosine_lr(optimizer, base_lr, step, total):
    lr = base_lr * math.cos(7 * math.pi * step / (16 * total))
    for g in optimizer.param_groups:
        g["lr"] = lr
    return lr


def adamatch_loss(model, x_s_weak, x_s_strong, y_s, x_t_weak, x_t_strong, tau, step, total_steps):
    n_s = x_s_weak.size(0) + x_s_strong.size(0)
    x_source = torch.cat([x_s_weak, x_s_strong])
    x_all = torch.cat([x_source, x_t_weak, x_t_strong])

    # logits with BN statistics from both domains
    logits_all = model(x_all)
    logits_source_all = logits_all[:n_s]
    logits_target = logits_all[n_s:]

    # logits with BN statistics from the source only (random logit interpolation)
    logits_source_only = model(x_source)
    lam = torch.rand_like(logits_source_only, device=logits_source_only.device)
    logits_source = lam * logits_source_all + (1 - lam) * logits_source_only

    logits_s_weak, logits_s_strong = logits_source.chunk(2)
    logits_t_weak, logits_t_strong = logits_target.chunk(2)

    # distribution alignment
    probs_s = F.softmax(logits_s_weak.detach(), dim=1)
    probs_t = F.softmax(logits_t_weak.detach(), dim=1)
    expected_ratio = probs_s.mean(0) / probs_t.mean(0)
    probs_t = probs_t * expected_ratio
    probs_t = probs_t / probs_t.sum(dim=1, keepdim=True)

    # relative confidence threshold
    row_max = probs_s.max(dim=1)[0]
    c_tau = tau * row_max.mean()
    max_t, pseudo = probs_t.max(dim=1)
    mask = (max_t >= c_tau).float()

    loss_s = F.cross_entropy(logits_s_weak, y_s) + F.cross_entropy(logits_s_strong, y_s)
    loss_t = (F.cross_entropy(logits_t_strong, pseudo, reduction="none") * mask).mean()

    mu = 0.5 - math.cos(min(math.pi, 2 * math.pi * step / total_steps)) / 2
    return loss_s + mu * loss_t, loss_s.detach(), loss_t.detach(), mask.mean().detach()


@torch.no_grad()
def evaluate(model, loader, args):
    model.eval()
    top1 = AverageMeter()
    for x, y in loader:
        x = x.to(args.device, non_blocking=True)
        y = y.to(args.device, non_blocking=True)
        out = model(x)
        top1.update(accuracy(out, y)[0].item(), x.size(0))
    acc = torch.tensor([top1.sum, top1.count], device=args.device, dtype=torch.float64)
    if args.distributed:
        dist.all_reduce(acc)
    model.train()
    return (acc[0] / acc[1]).item()


def main():
    args = get_args()
    args = setup_distributed(args)
    set_seed(args.seed + args.rank)
    torch.backends.cudnn.benchmark = True

    if is_main(args):
        os.makedirs(args.out, exist_ok=True)
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
        logger.info(json.dumps(vars(args), default=str, indent=2))
        logger.info("GPU: %s", torch.cuda.get_device_name(args.local_rank))

    src_train, tgt_train, tgt_test, num_classes = build_uda_datasets(args.source, args.target, args.data_root)
    samplers = [DistributedSampler(d) if args.distributed else None for d in (src_train, tgt_train)]
    src_loader = DataLoader(src_train, batch_size=args.batch_size, sampler=samplers[0],
                            shuffle=samplers[0] is None, num_workers=args.workers,
                            pin_memory=True, drop_last=True, persistent_workers=True)
    tgt_loader = DataLoader(tgt_train, batch_size=args.batch_size * args.uratio, sampler=samplers[1],
                            shuffle=samplers[1] is None, num_workers=args.workers,
                            pin_memory=True, drop_last=True, persistent_workers=True)
    test_loader = DataLoader(tgt_test, batch_size=256, shuffle=False, num_workers=args.workers,
                             pin_memory=True)

    model = build_model(args.arch, num_classes).to(args.device)
    if args.distributed:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    ema = ModelEMA(model, args.ema)

    decay, no_decay = [], []
    for n, p in model.named_parameters():
        (no_decay if ("bn" in n or "bias" in n) else decay).append(p)
    optimizer = torch.optim.SGD([{"params": decay, "weight_decay": args.wd},
                                 {"params": no_decay, "weight_decay": 0.0}],
                                lr=args.lr, momentum=0.9, nesterov=True)

    # bf16 needs no loss scaling; fall back to fp16 + GradScaler on older cards
    amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp and amp_dtype == torch.float16)

    start_epoch = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=lambda storage, loc: storage.cuda(args.local_rank))
        model.load_state_dict(ckpt["model"])
        ema.ema.load_state_dict(ckpt["ema"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scaler.load_state_dict(ckpt["scaler"])
        start_epoch = ckpt["epoch"] + 1

    if args.distributed:
        model = DDP(model, device_ids=[args.local_rank], output_device=args.local_rank)
    if args.compile:
        model = torch.compile(model)

    total_steps = args.epochs * args.steps_per_epoch
    best = 0.0
    src_iter, tgt_iter = iter(src_loader), iter(tgt_loader)
    for epoch in range(start_epoch, args.epochs):
        for s in samplers:
            if s is not None:
                s.set_epoch(epoch)
        meters = {k: AverageMeter() for k in ("loss", "loss_s", "loss_t", "mask")}
        torch.cuda.synchronize()
        t0 = time.time()
        for it in range(args.steps_per_epoch):
            step = epoch * args.steps_per_epoch + it
            try:
                (xs_w, xs_s), ys = next(src_iter)
            except StopIteration:
                src_iter = iter(src_loader)
                (xs_w, xs_s), ys = next(src_iter)
            try:
                (xt_w, xt_s), _ = next(tgt_iter)
            except StopIteration:
                tgt_iter = iter(tgt_loader)
                (xt_w, xt_s), _ = next(tgt_iter)

            xs_w, xs_s, ys = (t.to(args.device, non_blocking=True) for t in (xs_w, xs_s, ys))
            xt_w, xt_s = (t.to(args.device, non_blocking=True) for t in (xt_w, xt_s))

            cosine_lr(optimizer, args.lr, step, total_steps)
            with torch.cuda.amp.autocast(enabled=args.amp, dtype=amp_dtype):
                loss, loss_s, loss_t, mask = adamatch_loss(model, xs_w, xs_s, ys, xt_w, xt_s,
                                                           args.tau, step, total_steps)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            ema.update(model.module if hasattr(model, "module") else model)

            for k, v in zip(("loss", "loss_s", "loss_t", "mask"), (loss.detach(), loss_s, loss_t, mask)):
                meters[k].update(v.item())

        torch.cuda.synchronize(args.device)  # finish queued kernels before reading the clock
        epoch_time = time.time() - t0
        acc = evaluate(ema.ema, test_loader, args)
        torch.cuda.empty_cache()
        if is_main(args):
            mem = torch.cuda.max_memory_allocated(args.device) / 2 ** 30
            logger.info("epoch %d | %s | target acc (ema) %.2f | %.1fs | mem %.2f GiB", epoch,
                        " ".join(f"{k} {m.avg:.4f}" for k, m in meters.items()), acc, epoch_time, mem)
            is_best = acc > best
            best = max(acc, best)
            save_checkpoint({
                "epoch": epoch,
                "model": (model.module if hasattr(model, "module") else model).state_dict(),
                "ema": ema.ema.state_dict(),
                "optimizer": optimizer.state_dict(),
                "scaler": scaler.state_dict(),
                "best": best,
            }, is_best, args.out)

    if is_main(args):
        logger.info("best target accuracy: %.2f", best)
    if args.distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
