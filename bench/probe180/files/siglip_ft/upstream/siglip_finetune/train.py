#!/usr/bin/env python
"""Fine-tune a SigLIP (or CLIP) checkpoint from the HF hub on an image-text dataset.

Single GPU:
    python siglip_finetune/train.py --train-csv data/train.csv --image-root data/images
Multi GPU:
    torchrun --nproc_per_node 8 siglip_finetune/train.py --train-csv ... --bf16 --compile

The loss is the pairwise sigmoid loss from "Sigmoid Loss for Language Image Pre-Training"
(Zhai et al. 2023), computed against the text features of all ranks (all-gather with grad).
"""
import argparse
import json
import logging
import math
import os
import random
import time

import numpy as np
import pandas as pd
import torch
import torch.distributed as dist
import torch.distributed.nn.functional as dist_nn
import torch.nn.functional as F
from PIL import Image
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoModel, AutoProcessor, get_cosine_schedule_with_warmup

try:
    import bitsandbytes as bnb
except ImportError:
    bnb = None

logger = logging.getLogger("siglip_ft")


def parse_args():
    p = argparse.ArgumentParser(description="SigLIP / CLIP contrastive fine-tuning")
    p.add_argument("--model", default="google/siglip-so400m-patch14-384")
    p.add_argument("--train-csv", required=True, help="csv with columns image,caption")
    p.add_argument("--val-csv", default=None)
    p.add_argument("--image-root", default=".")
    p.add_argument("--output-dir", default="./siglip-ft")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=64, help="per-GPU batch size")
    p.add_argument("--lr", type=float, default=1e-5)
    p.add_argument("--text-lr", type=float, default=None, help="defaults to --lr")
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--warmup-steps", type=int, default=500)
    p.add_argument("--grad-clip", type=float, default=1.0)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--bf16", action="store_true", help="autocast to bfloat16 (A100/H100) instead of fp16 + GradScaler")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--gradient-checkpointing", action="store_true")
    p.add_argument("--attn-implementation", default="flash_attention_2",
                   choices=["eager", "sdpa", "flash_attention_2"])
    p.add_argument("--optim", default="adamw", choices=["adamw", "adamw_8bit"])
    p.add_argument("--freeze-vision", action="store_true")
    p.add_argument("--log-every", type=int, default=20)
    p.add_argument("--eval-every", type=int, default=1000)
    return p.parse_args()


def setup_distributed():
    if "LOCAL_RANK" not in os.environ:
        return 0, 1, 0
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")
    dist.init_process_group(backend="nccl")
    return dist.get_rank(), dist.get_world_size(), local_rank


def is_main(rank):
    return rank == 0


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


class CsvImageText(Dataset):
    def __init__(self, csv_path, image_root, processor, max_length=64):
        self.df = pd.read_csv(csv_path)
        self.image_root = image_root
        self.processor = processor
        self.max_length = max_length

    def __len__(self):
        return len(self.df)

    def __getitem__(self, idx):
        row = self.df.iloc[idx]
        image = Image.open(os.path.join(self.image_root, row["image"])).convert("RGB")
        pixel_values = self.processor.image_processor(image, return_tensors="pt")["pixel_values"][0]
        return pixel_values, str(row["caption"])


def make_collate(processor, max_length):
    def collate(batch):
        pixel_values = torch.stack([b[0] for b in batch])
        text = processor.tokenizer(
            [b[1] for b in batch],
            padding="max_length",
            truncation=True,
            max_length=max_length,
            return_tensors="pt",
        )
        return {"pixel_values": pixel_values, "input_ids": text["input_ids"]}
    return collate


def gather_with_grad(x, world_size):
    if world_size == 1:
        return x
    return torch.cat(dist_nn.all_gather(x), dim=0)


def siglip_loss(img_emb, txt_emb, logit_scale, logit_bias, rank, world_size):
    """Sigmoid loss against the text features of every rank (positives only on our diagonal block)."""
    all_txt = gather_with_grad(txt_emb, world_size)
    logits = logit_scale * img_emb @ all_txt.t() + logit_bias
    n = img_emb.size(0)
    labels = -torch.ones_like(logits)
    labels[:, rank * n:(rank + 1) * n] += 2 * torch.eye(n, device=logits.device, dtype=logits.dtype)
    return -F.logsigmoid(labels * logits).sum() / n


@torch.no_grad()
def evaluate(model, loader, device, amp_dtype):
    """Image->text and text->image R@1 / R@5 on the (small) val set, rank 0 only."""
    model.eval()
    img_feats, txt_feats = [], []
    for batch in loader:
        pixel_values = batch["pixel_values"].to(device, non_blocking=True)
        input_ids = batch["input_ids"].to(device, non_blocking=True)
        with torch.autocast(device_type=device.type, dtype=amp_dtype):
            img = model.get_image_features(pixel_values=pixel_values)
            txt = model.get_text_features(input_ids=input_ids)
        img_feats.append(F.normalize(img.float(), dim=-1).cpu())
        txt_feats.append(F.normalize(txt.float(), dim=-1).cpu())
    img_feats = torch.cat(img_feats)
    txt_feats = torch.cat(txt_feats)
    sims = img_feats @ txt_feats.t()
    gt = torch.arange(sims.size(0))
    metrics = {}
    for name, s in (("i2t", sims), ("t2i", sims.t())):
        ranks = (s.argsort(dim=1, descending=True) == gt[:, None]).nonzero()[:, 1]
        for k in (1, 5):
            metrics[f"{name}_R@{k}"] = (ranks < k).float().mean().item()
    model.train()
    return metrics


def main():
    args = parse_args()
    rank, world_size, local_rank = setup_distributed()
    logging.basicConfig(
        level=logging.INFO if is_main(rank) else logging.WARNING,
        format=f"[rank{rank}] %(asctime)s %(levelname)s %(message)s",
    )
    seed_everything(args.seed + rank)

    device = torch.device(f"cuda:{local_rank}")
    torch.backends.cuda.matmul.allow_tf32 = True

    if args.bf16 and not torch.cuda.is_bf16_supported():
        raise SystemExit("--bf16 requested but this GPU has no bf16 support (need Ampere or newer)")
    amp_dtype = torch.bfloat16 if args.bf16 else torch.float16

    processor = AutoProcessor.from_pretrained(args.model)
    model = AutoModel.from_pretrained(
        args.model,
        torch_dtype=torch.float32,
        attn_implementation=args.attn_implementation,
    )
    if args.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    if args.freeze_vision:
        for p in model.vision_model.parameters():
            p.requires_grad = False
    model.to(device)

    max_length = getattr(model.config.text_config, "max_position_embeddings", 64)
    collate = make_collate(processor, max_length)
    train_ds = CsvImageText(args.train_csv, args.image_root, processor, max_length)
    sampler = DistributedSampler(train_ds, shuffle=True, seed=args.seed) if world_size > 1 else None
    train_loader = DataLoader(
        train_ds,
        batch_size=args.batch_size,
        sampler=sampler,
        shuffle=sampler is None,
        num_workers=args.workers,
        pin_memory=True,
        drop_last=True,
        collate_fn=collate,
        persistent_workers=args.workers > 0,
    )
    val_loader = None
    if args.val_csv and is_main(rank):
        val_ds = CsvImageText(args.val_csv, args.image_root, processor, max_length)
        val_loader = DataLoader(val_ds, batch_size=256, num_workers=4, collate_fn=collate)

    text_lr = args.text_lr or args.lr
    decay, no_decay, text_decay, text_no_decay = [], [], [], []
    for n, p in model.named_parameters():
        if not p.requires_grad:
            continue
        is_text = n.startswith("text_model")
        if p.ndim < 2 or "norm" in n or "bias" in n or n in ("logit_scale", "logit_bias"):
            (text_no_decay if is_text else no_decay).append(p)
        else:
            (text_decay if is_text else decay).append(p)
    param_groups = [
        {"params": decay, "weight_decay": args.weight_decay, "lr": args.lr},
        {"params": no_decay, "weight_decay": 0.0, "lr": args.lr},
        {"params": text_decay, "weight_decay": args.weight_decay, "lr": text_lr},
        {"params": text_no_decay, "weight_decay": 0.0, "lr": text_lr},
    ]
    if args.optim == "adamw_8bit":
        assert bnb is not None, "pip install bitsandbytes for --optim adamw_8bit"
        optimizer = bnb.optim.AdamW8bit(param_groups, lr=args.lr, betas=(0.9, 0.95), eps=1e-6)
    else:
        optimizer = torch.optim.AdamW(param_groups, lr=args.lr, betas=(0.9, 0.95), eps=1e-6, fused=torch.cuda.is_available())

    total_steps = args.epochs * len(train_loader)
    scheduler = get_cosine_schedule_with_warmup(optimizer, args.warmup_steps, total_steps)
    scaler = torch.cuda.amp.GradScaler(enabled=not args.bf16)

    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], find_unused_parameters=args.freeze_vision)
    raw_model = model.module if isinstance(model, DDP) else model
    if args.compile:
        model = torch.compile(model, mode="max-autotune")

    if is_main(rank):
        os.makedirs(args.output_dir, exist_ok=True)
        with open(os.path.join(args.output_dir, "args.json"), "w") as f:
            json.dump(vars(args), f, indent=2)
        logger.info(f"world_size={world_size} steps={total_steps} amp_dtype={amp_dtype}")

    step = 0
    t0 = time.time()
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for batch in train_loader:
            pixel_values = batch["pixel_values"].to(device, non_blocking=True)
            input_ids = batch["input_ids"].to(device, non_blocking=True)

            with torch.autocast("cuda", dtype=amp_dtype):
                img = raw_model.get_image_features(pixel_values=pixel_values) if args.freeze_vision else None
                out = model(input_ids=input_ids, pixel_values=pixel_values, return_loss=False)
                img_emb = F.normalize(out.image_embeds if img is None else img, dim=-1)
                txt_emb = F.normalize(out.text_embeds, dim=-1)
                loss = siglip_loss(
                    img_emb, txt_emb,
                    raw_model.logit_scale.exp(), raw_model.logit_bias,
                    rank, world_size,
                )

            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            step += 1

            if step % args.log_every == 0 and is_main(rank):
                dt = (time.time() - t0) / args.log_every
                t0 = time.time()
                mem = torch.cuda.max_memory_allocated() / 2 ** 30
                logger.info(
                    f"ep {epoch} step {step}/{total_steps} loss {loss.item():.4f} "
                    f"lr {scheduler.get_last_lr()[0]:.2e} {args.batch_size * world_size / dt:.1f} img/s "
                    f"mem {mem:.1f}G"
                )

            if val_loader is not None and step % args.eval_every == 0:
                metrics = evaluate(raw_model, val_loader, device, amp_dtype)
                logger.info(f"step {step} val {metrics}")

        if world_size > 1:
            dist.barrier()
        torch.cuda.synchronize()
        if is_main(rank):
            ckpt_dir = os.path.join(args.output_dir, f"epoch_{epoch + 1}")
            raw_model.save_pretrained(ckpt_dir, safe_serialization=True)
            processor.save_pretrained(ckpt_dir)
            logger.info(f"saved {ckpt_dir}")

    if val_loader is not None:
        logger.info(f"final val {evaluate(raw_model, val_loader, device, amp_dtype)}")
    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
