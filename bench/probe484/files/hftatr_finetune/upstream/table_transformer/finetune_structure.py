#!/usr/bin/env python
"""Fine-tune TableTransformerForObjectDetection (structure recognition) on a COCO-format
dataset of cropped tables, e.g. FinTabNet.c or a custom annotated set.

    python finetune_structure.py --data-dir data/fintabnet_c --epochs 30 --batch-size 8 --amp

The dataset folder must contain `train/`, `val/` and `annotations/{train,val}.json`.
"""
import argparse
import json
import math
import os
import random
import time

import numpy as np
import torch
import torchvision
from torch.utils.data import DataLoader
from transformers import DetrImageProcessor, TableTransformerForObjectDetection, get_cosine_schedule_with_warmup


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


class CocoTables(torchvision.datasets.CocoDetection):
    def __init__(self, img_folder, ann_file, processor):
        super().__init__(img_folder, ann_file)
        self.processor = processor

    def __getitem__(self, idx):
        img, target = super().__getitem__(idx)
        image_id = self.ids[idx]
        target = {'image_id': image_id, 'annotations': target}
        encoding = self.processor(images=img, annotations=target, return_tensors="pt")
        pixel_values = encoding["pixel_values"].squeeze()
        target = encoding["labels"][0]
        return pixel_values, target


def make_collate(processor):
    def collate_fn(batch):
        pixel_values = [item[0] for item in batch]
        encoding = processor.pad(pixel_values, return_tensors="pt")
        labels = [item[1] for item in batch]
        return {
            'pixel_values': encoding['pixel_values'],
            'pixel_mask': encoding['pixel_mask'],
            'labels': labels,
        }
    return collate_fn


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data-dir", required=True)
    p.add_argument("--model", default="microsoft/table-transformer-structure-recognition")
    p.add_argument("--output-dir", default="checkpoints/tatr-structure-ft")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument("--lr-backbone", type=float, default=1e-5)
    p.add_argument("--weight-decay", type=float, default=1e-4)
    p.add_argument("--warmup-steps", type=int, default=500)
    p.add_argument("--clip-max-norm", type=float, default=0.1)
    p.add_argument("--num-workers", type=int, default=4)
    p.add_argument("--amp", action="store_true", help="mixed precision (fp16 autocast + GradScaler)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--log-every", type=int, default=50)
    return p.parse_args()


def to_device(batch, device):
    pixel_values = batch["pixel_values"].to(device, non_blocking=True)
    pixel_mask = batch["pixel_mask"].to(device, non_blocking=True)
    labels = [{k: v.to(device, non_blocking=True) for k, v in t.items()} for t in batch["labels"]]
    return pixel_values, pixel_mask, labels


@torch.no_grad()
def validate(model, loader, device, use_amp):
    model.eval()
    total, n = 0.0, 0
    for batch in loader:
        pixel_values, pixel_mask, labels = to_device(batch, device)
        with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=use_amp):
            outputs = model(pixel_values=pixel_values, pixel_mask=pixel_mask, labels=labels)
        total += outputs.loss.item() * pixel_values.shape[0]
        n += pixel_values.shape[0]
    model.train()
    return total / max(n, 1)


def main():
    args = parse_args()
    set_seed(args.seed)
    os.makedirs(args.output_dir, exist_ok=True)

    device = torch.device("cuda:0")
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    processor = DetrImageProcessor.from_pretrained(args.model)
    processor.size = {"shortest_edge": 800, "longest_edge": 1000}

    train_ds = CocoTables(os.path.join(args.data_dir, "train"),
                          os.path.join(args.data_dir, "annotations", "train.json"), processor)
    val_ds = CocoTables(os.path.join(args.data_dir, "val"),
                        os.path.join(args.data_dir, "annotations", "val.json"), processor)
    id2label = {k: v['name'] for k, v in train_ds.coco.cats.items()}
    print(f"train: {len(train_ds)} tables, val: {len(val_ds)} tables, classes: {id2label}")

    collate_fn = make_collate(processor)
    train_loader = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, drop_last=True,
                              num_workers=args.num_workers, collate_fn=collate_fn, pin_memory=True)
    val_loader = DataLoader(val_ds, batch_size=args.batch_size, shuffle=False,
                            num_workers=2, collate_fn=collate_fn, pin_memory=True)

    model = TableTransformerForObjectDetection.from_pretrained(
        args.model, id2label=id2label, label2id={v: k for k, v in id2label.items()},
        ignore_mismatched_sizes=True)
    model.to(device)

    param_dicts = [
        {"params": [p for n, p in model.named_parameters() if "backbone" not in n and p.requires_grad]},
        {"params": [p for n, p in model.named_parameters() if "backbone" in n and p.requires_grad],
         "lr": args.lr_backbone},
    ]
    optimizer = torch.optim.AdamW(param_dicts, lr=args.lr, weight_decay=args.weight_decay)
    steps_per_epoch = len(train_loader)
    scheduler = get_cosine_schedule_with_warmup(optimizer, args.warmup_steps, args.epochs * steps_per_epoch)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    best = math.inf
    history = []
    step = 0
    for epoch in range(args.epochs):
        model.train()
        t0 = time.time()
        torch.cuda.reset_peak_memory_stats()
        for batch in train_loader:
            pixel_values, pixel_mask, labels = to_device(batch, device)
            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.amp):
                outputs = model(pixel_values=pixel_values, pixel_mask=pixel_mask, labels=labels)
                loss = outputs.loss

            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            if args.clip_max_norm > 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_max_norm)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            step += 1

            if step % args.log_every == 0:
                ld = {k: round(v.item(), 4) for k, v in outputs.loss_dict.items()}
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} {ld} lr {scheduler.get_last_lr()[0]:.2e}")

        torch.cuda.synchronize()
        epoch_time = time.time() - t0
        val_loss = validate(model, val_loader, device, args.amp)
        mem = torch.cuda.max_memory_allocated(device) / 2**30
        print(f"epoch {epoch}: val loss {val_loss:.4f}, {epoch_time:.0f}s, peak mem {mem:.2f} GiB")
        history.append({"epoch": epoch, "val_loss": val_loss, "time": epoch_time, "peak_mem_gib": mem})

        if val_loss < best:
            best = val_loss
            model.save_pretrained(args.output_dir)
            processor.save_pretrained(args.output_dir)
            print(f"  saved new best model to {args.output_dir}")

    with open(os.path.join(args.output_dir, "history.json"), "w") as f:
        json.dump(history, f, indent=2)


if __name__ == "__main__":
    main()
