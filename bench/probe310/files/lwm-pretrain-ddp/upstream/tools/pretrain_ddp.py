"""Masked channel modelling (MCM) pre-training of the Large Wireless Model (LWM).

Channels from many DeepMIMO scenarios are split into patches of 16 real
values (8 complex antenna x subcarrier entries), 15% of the patches are masked
and the transformer encoder is trained to reconstruct them.

Launch (single node, 8 GPUs):
    torchrun --nproc_per_node 8 tools/pretrain_ddp.py --config configs/lwm_base.yaml
"""
import argparse
import datetime
import math
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from lwm.data import DeepMIMOPatchDataset, mcm_collate
from lwm.model import LWM

os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="configs/lwm_base.yaml")
    ap.add_argument("--resume", default="")
    ap.add_argument("--output", default="./runs/lwm")
    ap.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
    return ap.parse_args()


def setup_distributed(args):
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        rank = int(os.environ["RANK"])
        world_size = int(os.environ["WORLD_SIZE"])
        local_rank = int(os.environ["LOCAL_RANK"])
    else:
        rank, world_size, local_rank = 0, 1, args.local_rank
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", init_method="env://", world_size=world_size, rank=rank,
                            timeout=datetime.timedelta(minutes=60))
    dist.barrier()
    return rank, world_size, local_rank


def is_main():
    return not dist.is_initialized() or dist.get_rank() == 0


def log(msg):
    if is_main():
        print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def cosine_lr(step, total, warmup, base_lr, min_lr):
    if step < warmup:
        return base_lr * step / max(1, warmup)
    p = (step - warmup) / max(1, total - warmup)
    return min_lr + 0.5 * (base_lr - min_lr) * (1 + math.cos(math.pi * p))


def reduce_mean(t):
    t = t.clone()
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t / dist.get_world_size()


def nmse_db(pred, target):
    num = ((pred - target) ** 2).sum(-1)
    den = (target ** 2).sum(-1).clamp_min(1e-12)
    return 10 * torch.log10((num / den).mean())


@torch.no_grad()
def evaluate_heldout(model, cfg, device, world_size, rank):
    """MCM reconstruction NMSE on scenarios that were not used for pre-training."""
    ds = DeepMIMOPatchDataset(cfg["data"]["root"], cfg["data"]["heldout_scenarios"],
                              patch_size=cfg["model"]["patch_size"], mask_ratio=cfg["data"]["mask_ratio"],
                              seed=1234)
    sampler = DistributedSampler(ds, num_replicas=world_size, rank=rank, shuffle=False)
    loader = DataLoader(ds, batch_size=cfg["train"]["batch_size"], sampler=sampler,
                        num_workers=4, collate_fn=mcm_collate)
    model.eval()
    tot_err = torch.zeros(1, device=device)
    tot_pow = torch.zeros(1, device=device)
    for tokens, masked_pos, masked_target in loader:
        tokens = tokens.to(device, non_blocking=True)
        masked_pos = masked_pos.to(device, non_blocking=True)
        masked_target = masked_target.to(device, non_blocking=True)
        pred = model(tokens, masked_pos).float()
        tot_err += ((pred - masked_target) ** 2).sum()
        tot_pow += (masked_target ** 2).sum()
    dist.all_reduce(tot_err)
    dist.all_reduce(tot_pow)
    model.train()
    return 10 * torch.log10(tot_err / tot_pow).item()


def main():
    args = parse()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)
    rank, world_size, local_rank = setup_distributed(args)
    device = torch.device("cuda", local_rank)

    torch.manual_seed(cfg["seed"] + rank)
    np.random.seed(cfg["seed"] + rank)

    # Ampere+ : bf16 autocast and TF32; older cards fall back to fp16 + GradScaler
    major, _ = torch.cuda.get_device_capability(device)
    use_bf16 = cfg["train"]["amp"] and major >= 8 and torch.cuda.is_bf16_supported()
    amp_dtype = torch.bfloat16 if use_bf16 else torch.float16
    torch.backends.cuda.matmul.allow_tf32 = major >= 8
    log("world %d | amp dtype %s | device %s" % (world_size, amp_dtype, torch.cuda.get_device_name(device)))

    ds = DeepMIMOPatchDataset(cfg["data"]["root"], cfg["data"]["scenarios"],
                              patch_size=cfg["model"]["patch_size"], mask_ratio=cfg["data"]["mask_ratio"])
    sampler = DistributedSampler(ds, num_replicas=world_size, rank=rank, shuffle=True, drop_last=True)
    loader = DataLoader(ds, batch_size=cfg["train"]["batch_size"], sampler=sampler,
                        num_workers=cfg["data"]["workers"], pin_memory=True, collate_fn=mcm_collate,
                        persistent_workers=True, prefetch_factor=4)

    model = LWM(**cfg["model"]).to(device)
    if cfg["train"].get("sync_bn", False):
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = DDP(model, device_ids=[local_rank], output_device=local_rank,
                find_unused_parameters=False, gradient_as_bucket_view=True)
    if cfg["train"].get("fp16_allreduce", False):
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
        model.register_comm_hook(dist.group.WORLD, default_hooks.fp16_compress_hook)

    decay, no_decay = [], []
    for n, p in model.named_parameters():
        (no_decay if p.ndim < 2 or "norm" in n or "bias" in n else decay).append(p)
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": cfg["train"]["weight_decay"]},
         {"params": no_decay, "weight_decay": 0.0}],
        lr=cfg["train"]["lr"], betas=(0.9, 0.95), eps=1e-8, fused=True)
    scaler = torch.cuda.amp.GradScaler(enabled=cfg["train"]["amp"] and not use_bf16)

    start_epoch, step = 0, 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location={"cuda:0": "cuda:%d" % local_rank})
        model.module.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scaler.load_state_dict(ckpt["scaler"])
        start_epoch, step = ckpt["epoch"] + 1, ckpt["step"]
        log("resumed from %s (epoch %d)" % (args.resume, start_epoch))

    epochs = cfg["train"]["epochs"]
    total = epochs * len(loader)
    warmup = int(cfg["train"]["warmup_ratio"] * total)
    os.makedirs(args.output, exist_ok=True)

    for epoch in range(start_epoch, epochs):
        sampler.set_epoch(epoch)
        model.train()
        t0 = time.time()
        for it, (tokens, masked_pos, masked_target) in enumerate(loader):
            tokens = tokens.to(device, non_blocking=True)
            masked_pos = masked_pos.to(device, non_blocking=True)
            masked_target = masked_target.to(device, non_blocking=True)
            lr = cosine_lr(step, total, warmup, cfg["train"]["lr"], cfg["train"]["min_lr"])
            for g in optimizer.param_groups:
                g["lr"] = lr

            with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=cfg["train"]["amp"]):
                pred = model(tokens, masked_pos)
                loss = F.mse_loss(pred.float(), masked_target)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg["train"]["clip_grad"])
            scaler.step(optimizer)
            scaler.update()
            step += 1

            if step % cfg["train"]["log_every"] == 0:
                l = reduce_mean(loss.detach())
                nm = reduce_mean(nmse_db(pred.detach().float(), masked_target))
                mem = torch.cuda.max_memory_allocated(device) / 2 ** 30
                log("ep %d it %d/%d | lr %.2e | loss %.4e | NMSE %.2f dB | gnorm %.2f | %.1f GB | %.2f it/s" % (
                    epoch, it, len(loader), lr, l.item(), nm.item(), gnorm, mem, (it + 1) / (time.time() - t0)))

        if cfg["data"].get("heldout_scenarios"):
            nm = evaluate_heldout(model, cfg, device, world_size, rank)
            log("epoch %d | held-out MCM NMSE %.2f dB" % (epoch, nm))
        if is_main():
            torch.save({"model": model.module.state_dict(), "optimizer": optimizer.state_dict(),
                        "scaler": scaler.state_dict(), "epoch": epoch, "step": step, "config": cfg},
                       os.path.join(args.output, "lwm_epoch%03d.pth" % epoch))
        dist.barrier()

    if dist.get_backend() == "nccl":
        torch.cuda.synchronize()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
