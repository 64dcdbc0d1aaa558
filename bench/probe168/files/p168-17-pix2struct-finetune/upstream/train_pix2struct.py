"""
Fine-tune Pix2Struct (google/pix2struct-base or -docvqa-base) on a document/chart QA dataset.

Single GPU:
    python train_pix2struct.py --model google/pix2struct-docvqa-base --dataset_dir data/docvqa --bf16
Multi GPU (DDP):
    torchrun --nproc_per_node 4 train_pix2struct.py ... --bf16
"""
import argparse
import json
import logging
import math
import os
import random
import time
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
from PIL import Image
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoProcessor, Pix2StructForConditionalGeneration, get_cosine_schedule_with_warmup
from transformers.optimization import Adafactor

try:
    import bitsandbytes as bnb
except ImportError:  # optional: only needed for --optim adamw_8bit
    bnb = None

try:
    import wandb
except ImportError:
    wandb = None

logger = logging.getLogger("pix2struct-ft")
logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)

MAX_PATCHES = 2048


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="google/pix2struct-docvqa-base")
    p.add_argument("--dataset_dir", required=True, help="dir with train.jsonl / val.jsonl and images/")
    p.add_argument("--output_dir", default="runs/pix2struct")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch_size", type=int, default=2, help="per-GPU batch size")
    p.add_argument("--grad_accum", type=int, default=8)
    p.add_argument("--lr", type=float, default=1e-5)
    p.add_argument("--weight_decay", type=float, default=1e-5)
    p.add_argument("--warmup_steps", type=int, default=1000)
    p.add_argument("--max_patches", type=int, default=MAX_PATCHES)
    p.add_argument("--max_target_len", type=int, default=128)
    p.add_argument("--optim", choices=["adamw", "adafactor", "adamw_8bit"], default="adafactor")
    p.add_argument("--fp16", action="store_true")
    p.add_argument("--bf16", action="store_true")
    p.add_argument("--compile", action="store_true", help="wrap the model with torch.compile")
    p.add_argument("--gradient_checkpointing", action="store_true")
    p.add_argument("--num_workers", type=int, default=4)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--cpu", action="store_true", help="debug on CPU")
    p.add_argument("--log_every", type=int, default=20)
    p.add_argument("--eval_every", type=int, default=2000)
    p.add_argument("--wandb", action="store_true")
    return p.parse_args()


class DocQADataset(Dataset):
    """jsonl lines: {"image": "images/xxx.png", "question": "...", "answers": ["..."]}"""

    def __init__(self, root, split, processor, max_patches):
        self.root = Path(root)
        self.items = [json.loads(l) for l in open(self.root / f"{split}.jsonl")]
        self.processor = processor
        self.max_patches = max_patches

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        item = self.items[idx]
        image = Image.open(self.root / item["image"]).convert("RGB")
        # the question is rendered as a header on top of the image (Pix2Struct VQA convention)
        encoding = self.processor(
            images=image,
            text=item["question"],
            return_tensors="pt",
            max_patches=self.max_patches,
        )
        encoding = {k: v.squeeze(0) for k, v in encoding.items()}
        encoding["text"] = random.choice(item["answers"])
        return encoding


def make_collator(processor, max_target_len):
    def collator(batch):
        new_batch = {"flattened_patches": [], "attention_mask": []}
        texts = [item["text"] for item in batch]
        text_inputs = processor.tokenizer(
            text=texts,
            padding="max_length",
            truncation=True,
            return_tensors="pt",
            add_special_tokens=True,
            max_length=max_target_len,
        )
        labels = text_inputs.input_ids
        labels[labels == processor.tokenizer.pad_token_id] = -100
        new_batch["labels"] = labels
        for item in batch:
            new_batch["flattened_patches"].append(item["flattened_patches"])
            new_batch["attention_mask"].append(item["attention_mask"])
        new_batch["flattened_patches"] = torch.stack(new_batch["flattened_patches"])
        new_batch["attention_mask"] = torch.stack(new_batch["attention_mask"])
        return new_batch

    return collator


def setup_distributed():
    local_rank = int(os.environ.get("LOCAL_RANK", -1))
    if local_rank >= 0:
        torch.cuda.set_device(local_rank)
        dist.init_process_group(backend="nccl")
    return local_rank


def get_device(args, local_rank):
    if args.cpu or not torch.cuda.is_available():
        return torch.device("cpu")
    return torch.device(f"cuda:{local_rank}" if local_rank >= 0 else "cuda")


def is_main(local_rank):
    return local_rank in (-1, 0)


def build_optimizer(args, model):
    decay, no_decay = [], []
    for n, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.ndim < 2 or "norm" in n else decay).append(p)
    groups = [
        {"params": decay, "weight_decay": args.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    if args.optim == "adafactor":
        return Adafactor(groups, scale_parameter=False, relative_step=False, lr=args.lr)
    if args.optim == "adamw_8bit":
        if bnb is None:
            raise ImportError("pip install bitsandbytes to use --optim adamw_8bit")
        return bnb.optim.AdamW8bit(groups, lr=args.lr, betas=(0.9, 0.999))
    return torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, 0.999), fused=torch.cuda.is_available())


@torch.no_grad()
def evaluate(model, loader, processor, device, amp_ctx, max_batches=50):
    model.eval()
    exact, total, loss_sum = 0, 0, 0.0
    for i, batch in enumerate(loader):
        if i >= max_batches:
            break
        batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
        with amp_ctx():
            out = model(**batch)
            preds = model.generate(
                flattened_patches=batch["flattened_patches"],
                attention_mask=batch["attention_mask"],
                max_new_tokens=32,
            )
        loss_sum += out.loss.item()
        labels = batch["labels"].masked_fill(batch["labels"] == -100, processor.tokenizer.pad_token_id)
        pred_txt = processor.batch_decode(preds, skip_special_tokens=True)
        gold_txt = processor.batch_decode(labels, skip_special_tokens=True)
        exact += sum(p.strip().lower() == g.strip().lower() for p, g in zip(pred_txt, gold_txt))
        total += len(gold_txt)
    model.train()
    return loss_sum / max(i, 1), exact / max(total, 1)


def main():
    args = parse_args()
    local_rank = setup_distributed()
    device = get_device(args, local_rank)

    seed = args.seed + max(local_rank, 0)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)

    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    processor = AutoProcessor.from_pretrained(args.model)
    model = Pix2StructForConditionalGeneration.from_pretrained(args.model)
    if args.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    model.to(device)

    # bf16 if the card supports it (A100/H100), else fp16 + loss scaling
    use_bf16 = args.bf16 and torch.cuda.is_bf16_supported()
    use_amp = args.fp16 or use_bf16
    amp_dtype = torch.bfloat16 if use_bf16 else torch.float16
    scaler = torch.cuda.amp.GradScaler(enabled=use_amp and not use_bf16)

    def amp_ctx():
        return torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=use_amp)

    if args.compile:
        model = torch.compile(model, mode="max-autotune")

    if local_rank >= 0:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank, find_unused_parameters=False)

    train_ds = DocQADataset(args.dataset_dir, "train", processor, args.max_patches)
    val_ds = DocQADataset(args.dataset_dir, "val", processor, args.max_patches)
    collate = make_collator(processor, args.max_target_len)
    train_sampler = DistributedSampler(train_ds, shuffle=True) if local_rank >= 0 else None
    train_loader = DataLoader(
        train_ds,
        batch_size=args.batch_size,
        shuffle=train_sampler is None,
        sampler=train_sampler,
        num_workers=args.num_workers,
        collate_fn=collate,
        pin_memory=True,
        persistent_workers=args.num_workers > 0,
    )
    val_loader = DataLoader(val_ds, batch_size=args.batch_size, shuffle=False, num_workers=2, collate_fn=collate)

    optimizer = build_optimizer(args, model)
    steps_per_epoch = math.ceil(len(train_loader) / args.grad_accum)
    total_steps = steps_per_epoch * args.epochs
    scheduler = get_cosine_schedule_with_warmup(optimizer, args.warmup_steps, total_steps)

    if is_main(local_rank):
        os.makedirs(args.output_dir, exist_ok=True)
        if args.wandb and wandb is not None:
            wandb.init(project="pix2struct-docqa", config=vars(args))
        logger.info("train=%d val=%d steps=%d device=%s amp=%s", len(train_ds), len(val_ds), total_steps, device, amp_dtype)

    raw_model = model.module if isinstance(model, DDP) else model
    global_step, t0 = 0, time.time()
    best_em = -1.0
    model.train()
    for epoch in range(args.epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        for it, batch in enumerate(train_loader):
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            with amp_ctx():
                loss = model(**batch).loss / args.grad_accum
            scaler.scale(loss).backward()

            if (it + 1) % args.grad_accum != 0:
                continue
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            scheduler.step()
            global_step += 1

            if is_main(local_rank) and global_step % args.log_every == 0:
                dt = (time.time() - t0) / args.log_every
                t0 = time.time()
                mem = torch.cuda.max_memory_allocated() / 2 ** 30
                logger.info(
                    "ep %d step %d loss %.4f lr %.2e %.2fs/it mem %.1fG",
                    epoch, global_step, loss.item() * args.grad_accum, scheduler.get_last_lr()[0], dt, mem,
                )
                if args.wandb and wandb is not None:
                    wandb.log({"loss": loss.item() * args.grad_accum, "lr": scheduler.get_last_lr()[0]}, step=global_step)

            if is_main(local_rank) and global_step % args.eval_every == 0:
                val_loss, em = evaluate(raw_model, val_loader, processor, device, amp_ctx)
                logger.info("eval step %d: val_loss %.4f exact_match %.4f", global_step, val_loss, em)
                if em > best_em:
                    best_em = em
                    raw_model.save_pretrained(os.path.join(args.output_dir, "best"))
                    processor.save_pretrained(os.path.join(args.output_dir, "best"))

        if is_main(local_rank):
            raw_model.save_pretrained(os.path.join(args.output_dir, f"epoch_{epoch}"))

    if local_rank >= 0:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
