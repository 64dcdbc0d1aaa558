#!/usr/bin/env python
# coding=utf-8
"""Fine-tune TrOCR (VisionEncoderDecoderModel) on line-level handwriting.

Plain PyTorch training loop (no Trainer), so that the data pipeline and the
generation settings are easy to poke at. Works on a single GPU or with torchrun:

    python train.py --data_dir data/IAM --output_dir runs/trocr-base-iam --fp16
    torchrun --nproc_per_node 4 train.py --distributed --data_dir data/IAM ...

Based on the "Fine-tune TrOCR on the IAM Handwriting Database" notebook.
"""
import argparse
import json
import logging
import math
import os
import random
import time

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from tqdm.auto import tqdm
from transformers import (
    TrOCRProcessor,
    VisionEncoderDecoderModel,
    get_linear_schedule_with_warmup,
)

from src.dataset import IAMDataset, load_iam_split
from src.metrics import CERMetric

logger = logging.getLogger(__name__)


def parse_args():
    p = argparse.ArgumentParser(description="Fine-tune TrOCR on handwritten text lines")
    p.add_argument("--model_name", default="microsoft/trocr-base-stage1",
                   help="pretrained checkpoint (stage1 for fine-tuning, -handwritten for eval)")
    p.add_argument("--data_dir", required=True)
    p.add_argument("--output_dir", default="runs/trocr")
    p.add_argument("--train_split", default="train")
    p.add_argument("--eval_split", default="validation")
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--batch_size", type=int, default=8, help="per-GPU batch size")
    p.add_argument("--eval_batch_size", type=int, default=16)
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument("--weight_decay", type=float, default=0.01)
    p.add_argument("--warmup_ratio", type=float, default=0.05)
    p.add_argument("--grad_accum", type=int, default=1)
    p.add_argument("--max_grad_norm", type=float, default=1.0)
    p.add_argument("--max_target_length", type=int, default=128)
    p.add_argument("--num_beams", type=int, default=4)
    p.add_argument("--num_workers", type=int, default=4)
    p.add_argument("--fp16", action="store_true", help="mixed precision with torch.cuda.amp")
    p.add_argument("--eval_every", type=int, default=1, help="evaluate every N epochs")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--distributed", action="store_true")
    p.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
    return p.parse_args()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def is_main_process(args):
    return not args.distributed or dist.get_rank() == 0


def setup_device(args):
    if args.distributed:
        dist.init_process_group(backend="nccl", init_method="env://")
        torch.cuda.set_device(args.local_rank)
        device = torch.device("cuda", args.local_rank)
    else:
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return device


def build_model(args, processor):
    model = VisionEncoderDecoderModel.from_pretrained(args.model_name)
    # special tokens used for creating the decoder_input_ids from the labels
    model.config.decoder_start_token_id = processor.tokenizer.cls_token_id
    model.config.pad_token_id = processor.tokenizer.pad_token_id
    # make sure vocab size is set correctly
    model.config.vocab_size = model.config.decoder.vocab_size

    # beam search parameters
    model.config.eos_token_id = processor.tokenizer.sep_token_id
    model.config.max_length = args.max_target_length
    model.config.early_stopping = True
    model.config.no_repeat_ngram_size = 3
    model.config.length_penalty = 2.0
    model.config.num_beams = args.num_beams
    return model


def build_loaders(args, processor):
    train_df = load_iam_split(args.data_dir, args.train_split)
    eval_df = load_iam_split(args.data_dir, args.eval_split)
    train_ds = IAMDataset(args.data_dir, train_df, processor,
                          max_target_length=args.max_target_length, augment=True)
    eval_ds = IAMDataset(args.data_dir, eval_df, processor,
                         max_target_length=args.max_target_length, augment=False)

    train_sampler = DistributedSampler(train_ds, shuffle=True) if args.distributed else None
    train_loader = DataLoader(
        train_ds,
        batch_size=args.batch_size,
        shuffle=train_sampler is None,
        sampler=train_sampler,
        num_workers=args.num_workers,
        pin_memory=True,
        drop_last=True,
    )
    eval_loader = DataLoader(eval_ds, batch_size=args.eval_batch_size, shuffle=False,
                             num_workers=args.num_workers)
    return train_loader, eval_loader, train_sampler


@torch.no_grad()
def evaluate(model, loader, processor, device, args):
    model.eval()
    metric = CERMetric()
    gen_model = model.module if hasattr(model, "module") else model
    for batch in tqdm(loader, desc="eval", disable=not is_main_process(args)):
        pixel_values = batch["pixel_values"].to(device)
        outputs = gen_model.generate(pixel_values, num_beams=args.num_beams,
                                     max_length=args.max_target_length)
        pred_str = processor.batch_decode(outputs, skip_special_tokens=True)
        labels = batch["labels"].clone()
        labels[labels == -100] = processor.tokenizer.pad_token_id
        label_str = processor.batch_decode(labels, skip_special_tokens=True)
        metric.update(pred_str, label_str)
    model.train()
    return metric.compute()


def save_checkpoint(model, processor, args, tag):
    out = os.path.join(args.output_dir, tag)
    os.makedirs(out, exist_ok=True)
    to_save = model.module if hasattr(model, "module") else model
    to_save.save_pretrained(out)
    processor.save_pretrained(out)
    logger.info("saved checkpoint to %s", out)


def main():
    args = parse_args()
    logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                        level=logging.INFO)
    device = setup_device(args)
    set_seed(args.seed)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.benchmark = True

    if is_main_process(args):
        os.makedirs(args.output_dir, exist_ok=True)
        with open(os.path.join(args.output_dir, "args.json"), "w") as f:
            json.dump(vars(args), f, indent=2)
        logger.info("device: %s, n_gpu visible: %d", device, torch.cuda.device_count())

    processor = TrOCRProcessor.from_pretrained("microsoft/trocr-base-handwritten")
    model = build_model(args, processor).to(device)
    if args.distributed:
        model = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[args.local_rank], output_device=args.local_rank)

    train_loader, eval_loader, train_sampler = build_loaders(args, processor)

    no_decay = ["bias", "LayerNorm.weight", "layer_norm.weight"]
    params = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
         "weight_decay": args.weight_decay},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
         "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(params, lr=args.lr)
    steps_per_epoch = math.ceil(len(train_loader) / args.grad_accum)
    total_steps = steps_per_epoch * args.epochs
    scheduler = get_linear_schedule_with_warmup(
        optimizer, int(args.warmup_ratio * total_steps), total_steps)
    scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)

    best_cer = float("inf")
    global_step = 0
    for epoch in range(args.epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        model.train()
        running = 0.0
        t0 = time.time()
        pbar = tqdm(train_loader, desc=f"epoch {epoch}", disable=not is_main_process(args))
        for step, batch in enumerate(pbar):
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            with torch.cuda.amp.autocast(enabled=args.fp16):
                outputs = model(**batch)
                loss = outputs.loss / args.grad_accum
            scaler.scale(loss).backward()

            if (step + 1) % args.grad_accum == 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad(set_to_none=True)
                scheduler.step()
                global_step += 1

            running += loss.item() * args.grad_accum
            if step % 50 == 0 and is_main_process(args):
                pbar.set_postfix(loss=f"{running / (step + 1):.4f}",
                                 lr=f"{scheduler.get_last_lr()[0]:.2e}")

        torch.cuda.synchronize()
        epoch_time = time.time() - t0
        if is_main_process(args):
            mem = torch.cuda.max_memory_allocated() / 1024 ** 3
            logger.info("epoch %d: train loss %.4f, %.1fs, peak GPU mem %.2f GiB",
                        epoch, running / len(train_loader), epoch_time, mem)

        if (epoch + 1) % args.eval_every == 0:
            torch.cuda.empty_cache()
            scores = evaluate(model, eval_loader, processor, device, args)
            if is_main_process(args):
                logger.info("epoch %d: validation CER %.4f WER %.4f",
                            epoch, scores["cer"], scores["wer"])
                if scores["cer"] < best_cer:
                    best_cer = scores["cer"]
                    save_checkpoint(model, processor, args, "best")
        if is_main_process(args):
            save_checkpoint(model, processor, args, "last")

    if args.distributed:
        dist.barrier()
        dist.destroy_process_group()
    if is_main_process(args):
        logger.info("done, best validation CER %.4f", best_cer)


if __name__ == "__main__":
    main()
