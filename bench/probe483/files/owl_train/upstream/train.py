"""Fine-tune OWL-ViT / OWLv2 (HF transformers port) on a small COCO-style dataset.

    python train.py --config config.yaml
"""
import argparse
import json
import os
import random

import numpy as np
import torch
import yaml
from torch.utils.data import DataLoader
from tqdm import tqdm
from transformers import OwlViTForObjectDetection, OwlViTProcessor

from src.dataset import OwlDataset, collate_fn, get_dataloaders
from src.losses import PushPullLoss
from src.util import (BoxUtil, GeneralLossAccumulator, ProgressFormatter,
                      gpu_mem_used_mb, labels_to_classnames)

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.benchmark = True

device = "cuda" if torch.cuda.is_available() else "cpu"


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def get_training_config(path):
    with open(path) as f:
        data = yaml.safe_load(f)
    return data["training"], data["data"]


def build_model(model_name, freeze_backbone=True):
    model = OwlViTForObjectDetection.from_pretrained(model_name)
    if freeze_backbone:
        for name, p in model.named_parameters():
            if name.startswith("owlvit.vision_model") or name.startswith("owlvit.text_model"):
                p.requires_grad_(False)
    # the class / box heads and the layer norm before them are trained
    return model


@torch.no_grad()
def evaluate(model, processor, loader, class_names, amp_dtype):
    model.eval()
    losses = []
    for batch in tqdm(loader, desc="val", leave=False):
        images, targets = batch
        inputs = processor(text=[class_names] * len(images), images=images, return_tensors="pt")
        inputs = {k: v.to(device) for k, v in inputs.items()}
        with torch.autocast(device_type=device, dtype=amp_dtype, enabled=amp_dtype != torch.float32):
            outputs = model(**inputs)
        losses.append(outputs.logits.float().sigmoid().max(-1).values.mean().item())
    model.train()
    return float(np.mean(losses)) if losses else 0.0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="config.yaml")
    parser.add_argument("--output", default="results")
    parser.add_argument("--resume", default=None)
    args = parser.parse_args()

    training_cfg, data_cfg = get_training_config(args.config)
    seed_everything(training_cfg.get("seed", 0))
    os.makedirs(args.output, exist_ok=True)

    if training_cfg["precision"] == "bf16" and torch.cuda.is_bf16_supported():
        amp_dtype = torch.bfloat16
    elif training_cfg["precision"] == "fp16":
        amp_dtype = torch.float16
    else:
        amp_dtype = torch.float32
    print(f"Training on {device} ({torch.cuda.get_device_name(0) if device == 'cuda' else 'cpu'}), amp={amp_dtype}")

    processor = OwlViTProcessor.from_pretrained(training_cfg["base_model"])
    model = build_model(training_cfg["base_model"], training_cfg["freeze_backbone"]).to(device)
    if args.resume:
        model.load_state_dict(torch.load(args.resume, map_location=device))

    train_loader, val_loader, class_names = get_dataloaders(
        data_cfg, batch_size=training_cfg["batch_size"],
        num_workers=training_cfg["num_workers"], pin_memory=True)

    criterion = PushPullLoss(
        n_classes=len(class_names),
        scales=torch.tensor(training_cfg["class_scales"]).to(device) if training_cfg.get("class_scales") else None,
    )
    optimizer = torch.optim.AdamW(
        [p for p in model.parameters() if p.requires_grad],
        lr=float(training_cfg["learning_rate"]),
        weight_decay=float(training_cfg["weight_decay"]),
        fused=True,
    )
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(
        optimizer, T_max=training_cfg["n_epochs"] * len(train_loader))
    scaler = torch.cuda.amp.GradScaler(enabled=amp_dtype == torch.float16)

    general_loss = GeneralLossAccumulator()
    progress = ProgressFormatter()
    best = -1.0
    for epoch in range(training_cfg["n_epochs"]):
        model.train()
        for i, (images, targets) in enumerate(tqdm(train_loader, desc=f"epoch {epoch}")):
            inputs = processor(text=[class_names] * len(images), images=images, return_tensors="pt")
            inputs = {k: v.to(device, non_blocking=True) for k, v in inputs.items()}
            boxes = [t["boxes"].to(device, non_blocking=True) for t in targets]
            labels = [t["labels"].to(device, non_blocking=True) for t in targets]

            with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=amp_dtype != torch.float32):
                outputs = model(**inputs)
                pred_boxes = BoxUtil.box_convert(outputs.pred_boxes, "cxcywh", "xyxy")
                losses = criterion(outputs.logits, pred_boxes, boxes, labels)
                loss = (losses["loss_ce"] + losses["loss_bg"]
                        + training_cfg["box_weight"] * (losses["loss_bbox"] + losses["loss_giou"]))

            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()

            general_loss.update({k: v.item() for k, v in losses.items()})
            if i % training_cfg["log_every"] == 0:
                mem = gpu_mem_used_mb()
                tqdm.write(f"[{epoch}:{i}] loss={loss.item():.4f} lr={scheduler.get_last_lr()[0]:.2e} mem={mem}MB")

        score = evaluate(model, processor, val_loader, class_names, amp_dtype)
        progress.update(epoch, general_loss.get_values(), score)
        general_loss.reset()
        if score > best:
            best = score
            torch.save(model.state_dict(), os.path.join(args.output, "best.pt"))
        torch.cuda.empty_cache()

    progress.save(os.path.join(args.output, "progress.json"))
    with open(os.path.join(args.output, "classes.json"), "w") as f:
        json.dump(class_names, f)


if __name__ == "__main__":
    main()
