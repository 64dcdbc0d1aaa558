#!/usr/bin/env python
"""Distributed training of KWT on Google Speech Commands v2 (12 or 35 classes).

Single node, 8 GPUs:
    torchrun --standalone --nproc_per_node=8 train_ddp.py --config configs/kwt1_gsc12.yaml

Single GPU (no torchrun needed):
    python train_ddp.py --config configs/kwt1_gsc12.yaml

The log-mel frontend runs on the GPU right after the host->device copy, so the dataloader
workers only decode wavs and apply waveform augmentations.
"""

import argparse
import datetime
import math
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
import torchaudio
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from data.gsc import GoogleSpeechCommands, build_waveform_augment
from models.kwt import kwt_from_name
from utils.ema import ModelEma
from utils.logging import MetricLogger, get_logger

# surface NCCL errors as exceptions instead of hangs when a rank dies
os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")


def parse_args():
    parser = argparse.ArgumentParser(description="KWT distributed training")
    parser.add_argument("--config", type=str, required=True)
    parser.add_argument("--output_dir", type=str, default="runs/kwt")
    parser.add_argument("--resume", type=str, default="")
    parser.add_argument("--eval_only", action="store_true")
    parser.add_argument("--nvtx", action="store_true", help="emit NVTX ranges for nsys profiling")
    return parser.parse_args()


def setup_distributed(backend: str):
    """Initialise the default process group from torchrun's env vars.

    Returns (rank, local_rank, world_size); falls back to a single process when not launched by torchrun.
    """
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        return 0, 0, 1
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend=backend, init_method="env://",
                            timeout=datetime.timedelta(minutes=30))
    dist.barrier(device_ids=[local_rank])
    return rank, local_rank, world_size


def cosine_with_warmup(optimizer, warmup_steps, total_steps, min_ratio=0.0):
    def lr_lambda(step):
        if step < warmup_steps:
            return float(step + 1) / float(max(1, warmup_steps))
        progress = (step - warmup_steps) / float(max(1, total_steps - warmup_steps))
        return min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress))
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)


def param_groups(model, weight_decay):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        if p.ndim <= 1 or name.endswith(".bias") or "pos_embedding" in name or "cls_token" in name:
            no_decay.append(p)
        else:
            decay.append(p)
    return [{"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0}]


def unwrap(model):
    model = getattr(model, "_orig_mod", model)
    return model.module if isinstance(model, DDP) else model


@torch.no_grad()
def evaluate(model, loader, mel, device, amp_dtype, world_size):
    model.eval()
    stats = torch.zeros(3, device=device)  # loss_sum, correct, count
    for wav, target in loader:
        wav = wav.to(device, non_blocking=True)
        target = target.to(device, non_blocking=True)
        x = (mel(wav) + 1e-6).log().unsqueeze(1)
        with torch.autocast(device_type=device.type, dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):
            logits = model(x)
        stats[0] += F.cross_entropy(logits.float(), target, reduction="sum")
        stats[1] += (logits.argmax(-1) == target).sum()
        stats[2] += target.numel()
    if world_size > 1:
        dist.all_reduce(stats, op=dist.ReduceOp.SUM)
    model.train()
    return (stats[0] / stats[2]).item(), (stats[1] / stats[2]).item()


def main():
    args = parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)
    tcfg = cfg["trainer"]

    rank, local_rank, world_size = setup_distributed(tcfg["dist_backend"])
    device = torch.device(tcfg["device"], local_rank)
    is_main = rank == 0
    logger = get_logger(args.output_dir if is_main else None)

    torch.manual_seed(cfg["seed"] + rank)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True

    # ---- precision ----
    amp_cfg = tcfg.get("amp", "none")
    if amp_cfg == "bf16" and torch.cuda.is_bf16_supported():
        amp_dtype = torch.bfloat16
    elif amp_cfg in ("fp16", "bf16"):
        amp_dtype = torch.float16
    else:
        amp_dtype = None
    scaler = torch.cuda.amp.GradScaler(enabled=amp_dtype == torch.float16)

    # ---- model ----
    model = kwt_from_name(cfg["model"]["name"], num_classes=cfg["model"]["num_classes"]).to(device)
    ema = ModelEma(model, decay=tcfg.get("ema_decay", 0.9998)) if tcfg.get("ema", False) else None
    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank,
                    gradient_as_bucket_view=True, find_unused_parameters=False)
    if tcfg.get("compile", False):
        model = torch.compile(model, mode="max-autotune")

    # ---- data ----
    dcfg = cfg["data"]
    mel = torchaudio.transforms.MelSpectrogram(
        sample_rate=16000, n_fft=480, win_length=480, hop_length=160, n_mels=40, center=False).to(device)
    train_ds = GoogleSpeechCommands(dcfg["root"], "training", num_classes=cfg["model"]["num_classes"],
                                    transform=build_waveform_augment(dcfg))
    val_ds = GoogleSpeechCommands(dcfg["root"], "validation", num_classes=cfg["model"]["num_classes"])
    train_sampler = DistributedSampler(train_ds, shuffle=True, drop_last=True) if world_size > 1 else None
    val_sampler = DistributedSampler(val_ds, shuffle=False) if world_size > 1 else None
    per_rank_bs = tcfg["batch_size"] // world_size
    train_loader = DataLoader(train_ds, batch_size=per_rank_bs, sampler=train_sampler,
                              shuffle=train_sampler is None, num_workers=dcfg["num_workers"],
                              pin_memory=True, persistent_workers=True, drop_last=True)
    val_loader = DataLoader(val_ds, batch_size=per_rank_bs, sampler=val_sampler,
                            num_workers=dcfg["num_workers"], pin_memory=True)

    # ---- optimisation ----
    optimizer = torch.optim.AdamW(
        param_groups(model, tcfg["weight_decay"]),
        lr=tcfg["lr"] * tcfg["batch_size"] / 512,
        betas=(0.9, 0.98),
        fused=torch.cuda.is_available(),
    )
    steps_per_epoch = len(train_loader)
    scheduler = cosine_with_warmup(optimizer, tcfg["warmup_epochs"] * steps_per_epoch,
                                   tcfg["epochs"] * steps_per_epoch)

    start_epoch = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=device)
        unwrap(model).load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        scaler.load_state_dict(ckpt["scaler"])
        start_epoch = ckpt["epoch"] + 1

    if args.eval_only:
        loss, acc = evaluate(model, val_loader, mel, device, amp_dtype, world_size)
        if is_main:
            logger.info(f"eval loss {loss:.4f} acc {acc * 100:.2f}")
        return

    best_acc = 0.0
    for epoch in range(start_epoch, tcfg["epochs"]):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        model.train()
        metrics = MetricLogger()
        t0 = time.time()
        for step, (wav, target) in enumerate(train_loader):
            if args.nvtx:
                torch.cuda.nvtx.range_push(f"step{step}")
            wav = wav.to(device, non_blocking=True)
            target = target.to(device, non_blocking=True)
            with torch.no_grad():
                x = (mel(wav) + 1e-6).log().unsqueeze(1)

            with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=amp_dtype is not None):
                logits = model(x)
                loss = F.cross_entropy(logits, target, label_smoothing=tcfg.get("label_smoothing", 0.1))

            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), tcfg.get("clip_grad", 1.0))
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            if ema is not None:
                ema.update(unwrap(model))
            if args.nvtx:
                torch.cuda.nvtx.range_pop()

            metrics.update(loss=loss.item(), grad_norm=grad_norm.item(), lr=scheduler.get_last_lr()[0])
            if is_main and step % tcfg.get("log_every", 50) == 0:
                mem = torch.cuda.max_memory_allocated(device) / 2**30
                logger.info(f"ep {epoch} it {step}/{steps_per_epoch} {metrics} mem {mem:.2f}G")

        torch.cuda.synchronize()
        epoch_time = time.time() - t0
        eval_model = ema.module if ema is not None else model
        val_loss, val_acc = evaluate(eval_model, val_loader, mel, device, amp_dtype, world_size)
        if is_main:
            logger.info(f"epoch {epoch} took {epoch_time:.1f}s val_loss {val_loss:.4f} val_acc {val_acc * 100:.2f}")
            state = {
                "model": unwrap(model).state_dict(),
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
                "scaler": scaler.state_dict(),
                "epoch": epoch,
                "config": cfg,
            }
            os.makedirs(args.output_dir, exist_ok=True)
            torch.save(state, os.path.join(args.output_dir, "last.pt"))
            if val_acc > best_acc:
                best_acc = val_acc
                torch.save(state, os.path.join(args.output_dir, "best.pt"))

    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
