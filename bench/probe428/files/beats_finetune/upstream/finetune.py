"""Fine-tune a pre-trained BEATs checkpoint (iter3 / iter3+ AS2M) on ESC-50 or AudioSet-20K.

    torchrun --nproc_per_node=4 finetune.py --config configs/esc50.yaml --amp

Frame features are mean-pooled over non-padded frames and fed to a linear head; the
encoder gets a smaller learning rate than the head (layer-wise decay is optional).
"""
import argparse
import datetime
import json
import math
import os
import time
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import yaml
from sklearn.metrics import average_precision_score
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from BEATs.BEATs import BEATs, BEATsConfig
from data.audio_dataset import AudioClipDataset, collate_fn, mixup
from utils import dist_utils
from utils.dist_utils import MetricLogger, SmoothedValue, get_rank, get_world_size, is_main_process


class BEATsClassifier(nn.Module):
    def __init__(self, ckpt_path, num_classes, layerdrop=0.05, freeze_encoder=False):
        super().__init__()
        checkpoint = torch.load(ckpt_path, map_location="cpu")
        cfg = BEATsConfig({**checkpoint["cfg"], "finetuned_model": False, "encoder_layerdrop": layerdrop})
        self.beats = BEATs(cfg)
        missing, unexpected = self.beats.load_state_dict(checkpoint["model"], strict=False)
        print(f"BEATs loaded: {len(missing)} missing / {len(unexpected)} unexpected keys")
        if freeze_encoder:
            for p in self.beats.parameters():
                p.requires_grad = False
        self.head = nn.Sequential(nn.LayerNorm(cfg.encoder_embed_dim), nn.Linear(cfg.encoder_embed_dim, num_classes))

    def forward(self, wav, padding_mask=None):
        feats, padding_mask = self.beats.extract_features(wav, padding_mask=padding_mask)
        if padding_mask is not None and padding_mask.any():
            keep = (~padding_mask).unsqueeze(-1).to(feats.dtype)
            pooled = (feats * keep).sum(1) / keep.sum(1).clamp(min=1.0)
        else:
            pooled = feats.mean(1)
        return self.head(pooled)


def param_groups(model, base_lr, encoder_lr_scale, weight_decay):
    enc, enc_no_wd, head = [], [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        if name.startswith("head") or name.startswith("module.head"):
            head.append(p)
        elif p.ndim == 1 or name.endswith(".bias"):
            enc_no_wd.append(p)
        else:
            enc.append(p)
    return [
        {"params": enc, "lr": base_lr * encoder_lr_scale, "weight_decay": weight_decay},
        {"params": enc_no_wd, "lr": base_lr * encoder_lr_scale, "weight_decay": 0.0},
        {"params": head, "lr": base_lr, "weight_decay": weight_decay},
    ]


def cosine_lr(optimizer, step, total_steps, warmup_steps, base_lrs):
    for g, base in zip(optimizer.param_groups, base_lrs):
        if step < warmup_steps:
            g["lr"] = base * step / max(1, warmup_steps)
        else:
            progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
            g["lr"] = base * 0.5 * (1.0 + math.cos(math.pi * progress))


def train_one_epoch(model, loader, optimizer, scaler, device, epoch, cfg, args, step, total_steps, base_lrs):
    model.train()
    logger = MetricLogger(delimiter="  ")
    logger.add_meter("lr", SmoothedValue(window_size=1, fmt="{value:.6f}"))
    multilabel = cfg["task"] == "multilabel"
    for wav, padding_mask, target in logger.log_every(loader, cfg["log_freq"], f"Epoch: [{epoch}]"):
        wav = wav.to(device, non_blocking=True)
        padding_mask = padding_mask.to(device, non_blocking=True)
        target = target.to(device, non_blocking=True)
        if cfg.get("mixup", 0) > 0:
            wav, target = mixup(wav, target, alpha=cfg["mixup"])

        cosine_lr(optimizer, step, total_steps, cfg["warmup_steps"], base_lrs)
        with torch.cuda.amp.autocast(enabled=args.amp):
            logits = model(wav, padding_mask)
            if multilabel:
                loss = F.binary_cross_entropy_with_logits(logits, target)
            else:
                loss = F.cross_entropy(logits, target, label_smoothing=cfg.get("label_smoothing", 0.0))

        if not math.isfinite(loss.item()):
            print(f"Loss is {loss.item()}, stopping training")
            raise SystemExit(1)

        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg["clip_grad"])
        scaler.step(optimizer)
        scaler.update()
        step += 1

        logger.update(loss=loss.item(), lr=optimizer.param_groups[-1]["lr"])
    logger.synchronize_between_processes()
    print("Averaged stats:", logger)
    return step, {k: meter.global_avg for k, meter in logger.meters.items()}


@torch.no_grad()
def evaluate(model, loader, device, cfg, args):
    model.eval()
    preds, targets = [], []
    for wav, padding_mask, target in loader:
        wav = wav.to(device, non_blocking=True)
        padding_mask = padding_mask.to(device, non_blocking=True)
        with torch.cuda.amp.autocast(enabled=args.amp, dtype=torch.float16):
            logits = model(wav, padding_mask)
        preds.append(logits.float())
        targets.append(target.to(device))
    preds = torch.cat(preds)
    targets = torch.cat(targets)
    if args.distributed:
        gathered_p = [torch.zeros_like(preds) for _ in range(get_world_size())]
        gathered_t = [torch.zeros_like(targets) for _ in range(get_world_size())]
        dist.all_gather(gathered_p, preds)
        dist.all_gather(gathered_t, targets)
        preds, targets = torch.cat(gathered_p), torch.cat(gathered_t)
    if cfg["task"] == "multilabel":
        mAP = average_precision_score(targets.cpu().numpy(), torch.sigmoid(preds).cpu().numpy(), average="macro")
        return {"mAP": float(mAP)}
    acc = (preds.argmax(-1) == targets).float().mean().item()
    return {"acc": acc}


def get_args():
    parser = argparse.ArgumentParser("BEATs fine-tuning")
    parser.add_argument("--config", required=True)
    parser.add_argument("--output_dir", default="./output/beats_ft")
    parser.add_argument("--amp", action="store_true", help="mixed precision (fp16 autocast + GradScaler)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resume", default="")
    parser.add_argument("--eval_only", action="store_true")
    parser.add_argument("--dist_url", default="env://")
    return parser.parse_args()


def main():
    args = get_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)
    dist_utils.init_distributed_mode(args)
    print("job dir: {}".format(os.path.dirname(os.path.realpath(__file__))))
    print(json.dumps(cfg, indent=2))

    device = torch.device(cfg["device"])
    seed = args.seed + get_rank()
    torch.manual_seed(seed)
    np.random.seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True

    train_set = AudioClipDataset(cfg["train_csv"], cfg["label_csv"], sample_rate=16000,
                                 clip_seconds=cfg["clip_seconds"], train=True)
    val_set = AudioClipDataset(cfg["val_csv"], cfg["label_csv"], sample_rate=16000,
                               clip_seconds=cfg["clip_seconds"], train=False)
    if args.distributed:
        train_sampler = DistributedSampler(train_set, num_replicas=get_world_size(), rank=get_rank(), shuffle=True)
        val_sampler = DistributedSampler(val_set, num_replicas=get_world_size(), rank=get_rank(), shuffle=False)
    else:
        train_sampler = torch.utils.data.RandomSampler(train_set)
        val_sampler = torch.utils.data.SequentialSampler(val_set)

    train_loader = DataLoader(train_set, sampler=train_sampler, batch_size=cfg["batch_size"],
                              num_workers=cfg["num_workers"], pin_memory=True, drop_last=True,
                              collate_fn=collate_fn)
    val_loader = DataLoader(val_set, sampler=val_sampler, batch_size=cfg["batch_size"] * 2,
                            num_workers=cfg["num_workers"], pin_memory=cfg["pin_mem"], collate_fn=collate_fn)

    model = BEATsClassifier(cfg["beats_ckpt"], cfg["num_classes"], layerdrop=cfg["layerdrop"],
                            freeze_encoder=cfg.get("freeze_encoder", False))
    model.to(device)
    model_without_ddp = model
    if args.distributed:
        model = DDP(model, device_ids=[args.gpu], find_unused_parameters=cfg["layerdrop"] > 0)
        model_without_ddp = model.module
    n_params = sum(p.numel() for p in model_without_ddp.parameters() if p.requires_grad)
    print(f"trainable params: {n_params / 1e6:.2f}M")

    groups = param_groups(model_without_ddp, cfg["lr"], cfg["encoder_lr_scale"], cfg["weight_decay"])
    optimizer = torch.optim.AdamW(groups, betas=(0.9, 0.98))
    base_lrs = [g["lr"] for g in optimizer.param_groups]
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    start_epoch, step, best = 0, 0, 0.0
    if args.resume:
        ckpt = torch.load(args.resume, map_location="cpu")
        model_without_ddp.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scaler.load_state_dict(ckpt["scaler"])
        start_epoch, step, best = ckpt["epoch"] + 1, ckpt["step"], ckpt.get("best", 0.0)

    if args.eval_only:
        print(evaluate(model, val_loader, device, cfg, args))
        return

    total_steps = cfg["epochs"] * len(train_loader)
    Path(args.output_dir).mkdir(parents=True, exist_ok=True)
    start = time.time()
    for epoch in range(start_epoch, cfg["epochs"]):
        if args.distributed:
            train_sampler.set_epoch(epoch)
        step, train_stats = train_one_epoch(model, train_loader, optimizer, scaler, device, epoch,
                                            cfg, args, step, total_steps, base_lrs)
        val_stats = evaluate(model, val_loader, device, cfg, args)
        metric = val_stats.get("mAP", val_stats.get("acc"))
        if is_main_process():
            state = {"model": model_without_ddp.state_dict(), "optimizer": optimizer.state_dict(),
                     "scaler": scaler.state_dict(), "epoch": epoch, "step": step, "best": max(best, metric),
                     "cfg": cfg}
            torch.save(state, os.path.join(args.output_dir, "checkpoint_last.pt"))
            if metric > best:
                torch.save(state, os.path.join(args.output_dir, "checkpoint_best.pt"))
            with open(os.path.join(args.output_dir, "log.txt"), "a") as f:
                f.write(json.dumps({"epoch": epoch, **{f"train_{k}": v for k, v in train_stats.items()},
                                    **{f"val_{k}": v for k, v in val_stats.items()}}) + "\n")
        best = max(best, metric)
        print(f"epoch {epoch}: {val_stats} (best {best:.4f}) "
              f"max mem {torch.cuda.max_memory_allocated() / 2 ** 20:.0f} MB")

    total_time = str(datetime.timedelta(seconds=int(time.time() - start)))
    print(f"Training time {total_time}, best {best:.4f}")
    if args.distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
