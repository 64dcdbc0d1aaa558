# Train a HawkEars model from a pickle file of spectrograms.
# Spectrograms are created with extract scripts and stored in a database; the
# pickle holds the specs (uint8, compressed) and labels for all training classes.

import argparse
import logging
import math
import os
import pickle
import random
import time
import zlib
from pathlib import Path

import numpy as np
import pynvml
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

from core import cfg
from core import util
from model import main_model


class SpecDataset(Dataset):
    def __init__(self, specs, labels, num_classes, augment=True):
        self.specs = specs
        self.labels = labels
        self.num_classes = num_classes
        self.augment = augment

    def __len__(self):
        return len(self.specs)

    def _decompress(self, spec):
        spec = np.frombuffer(zlib.decompress(spec), dtype=np.uint8)
        spec = spec.reshape(cfg.audio.spec_height, cfg.audio.spec_width).astype(np.float32) / 255
        return spec

    def _augment(self, spec):
        # random time shift and amplitude change
        if random.random() < 0.4:
            shift = random.randint(0, cfg.audio.spec_width // 8)
            spec = np.roll(spec, shift, axis=1)
        if random.random() < 0.3:
            spec = spec * random.uniform(0.6, 1.0)
        return spec

    def __getitem__(self, idx):
        spec = self._decompress(self.specs[idx])
        if self.augment:
            spec = self._augment(spec)
        label = np.zeros(self.num_classes, dtype=np.float32)
        label[self.labels[idx]] = 1.0
        return torch.from_numpy(spec).unsqueeze(0), torch.from_numpy(label)


def load_pickle(path):
    with open(path, "rb") as f:
        data = pickle.load(f)
    return data["specs"], data["labels"], data["class_names"], data["class_codes"]


def gpu_memory_used_mb(handle):
    return pynvml.nvmlDeviceGetMemoryInfo(handle).used / (1024 * 1024)


def set_seed(seed, deterministic):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    if deterministic:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    else:
        torch.backends.cudnn.benchmark = True


def evaluate(model, loader, device):
    model.eval()
    total_loss, total = 0.0, 0
    correct = 0
    with torch.no_grad():
        for specs, labels in loader:
            specs = specs.to(device, non_blocking=True)
            labels = labels.to(device, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16, enabled=cfg.train.mixed_precision):
                logits = model(specs)
                loss = F.binary_cross_entropy_with_logits(logits, labels)
            total_loss += loss.item() * len(specs)
            total += len(specs)
            correct += (logits.argmax(dim=1) == labels.argmax(dim=1)).sum().item()
    model.train()
    return total_loss / max(total, 1), correct / max(total, 1)


def main(args):
    logging.basicConfig(format="%(asctime)s %(message)s", level=logging.INFO)
    set_seed(cfg.train.seed, cfg.train.deterministic)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.type == "cuda":
        logging.info(f"Training on {torch.cuda.get_device_name(0)}")
        pynvml.nvmlInit()
        nvml_handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    else:
        nvml_handle = None

    specs, labels, class_names, class_codes = load_pickle(cfg.misc.train_pickle)
    num_classes = len(class_names)
    logging.info(f"Loaded {len(specs)} spectrograms for {num_classes} classes")

    indices = list(range(len(specs)))
    random.shuffle(indices)
    num_val = int(len(indices) * cfg.train.val_portion)
    val_idx, train_idx = indices[:num_val], indices[num_val:]

    train_set = SpecDataset([specs[i] for i in train_idx], [labels[i] for i in train_idx], num_classes, augment=True)
    train_loader = DataLoader(train_set, batch_size=cfg.train.batch_size, shuffle=True,
                              num_workers=cfg.train.num_workers, pin_memory=True,
                              persistent_workers=cfg.train.num_workers > 0, drop_last=True)
    val_loader = None
    if num_val > 0:
        val_set = SpecDataset([specs[i] for i in val_idx], [labels[i] for i in val_idx], num_classes, augment=False)
        val_loader = DataLoader(val_set, batch_size=cfg.train.batch_size, shuffle=False,
                                num_workers=cfg.train.num_workers, pin_memory=True)

    model = main_model.MainModel(class_names, class_codes, class_names, class_codes, None,
                                 cfg.train.model_name, cfg.train.load_weights, len(train_set),
                                 multi_label=cfg.train.multi_label)
    if cfg.train.pretrained_model_path is not None:
        logging.info(f"Loading weights from {cfg.train.pretrained_model_path}")
        state = torch.load(cfg.train.pretrained_model_path, map_location="cpu")
        model.load_state_dict(state["state_dict"], strict=False)
    if cfg.train.freeze_backbone:
        model.freeze_backbone()

    model = model.to(device)
    if cfg.train.compile:
        model = torch.compile(model)

    optimizer = torch.optim.AdamW(filter(lambda p: p.requires_grad, model.parameters()),
                                  lr=cfg.train.learning_rate, weight_decay=cfg.train.weight_decay)
    steps_per_epoch = len(train_loader)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=cfg.train.learning_rate,
                                                    epochs=cfg.train.num_epochs, steps_per_epoch=steps_per_epoch,
                                                    pct_start=max(cfg.train.warmup_fraction, 0.01))
    scaler = torch.cuda.amp.GradScaler(enabled=cfg.train.mixed_precision)

    out_dir = Path(args.output)
    out_dir.mkdir(parents=True, exist_ok=True)

    for epoch in range(cfg.train.num_epochs):
        start = time.time()
        running_loss = 0.0
        for step, (x, y) in enumerate(train_loader):
            x = x.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
            if cfg.train.label_smoothing > 0:
                y = y * (1 - cfg.train.label_smoothing) + 0.5 * cfg.train.label_smoothing

            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=cfg.train.mixed_precision):
                logits = model(x)
                loss = F.binary_cross_entropy_with_logits(logits, y)

            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()

            running_loss += loss.item()
            if step % 100 == 0:
                mem = f", gpu mem {gpu_memory_used_mb(nvml_handle):.0f} MB" if nvml_handle is not None else ""
                logging.info(f"epoch {epoch} step {step}/{steps_per_epoch} loss {running_loss / (step + 1):.4f}{mem}")

        msg = f"epoch {epoch} done in {time.time() - start:.1f}s, train loss {running_loss / steps_per_epoch:.4f}"
        if val_loader is not None:
            val_loss, val_acc = evaluate(model, val_loader, device)
            msg += f", val loss {val_loss:.4f}, val acc {val_acc:.4f}"
        logging.info(msg)

        if epoch >= cfg.train.num_epochs - cfg.train.save_last_n:
            ckpt_path = out_dir / f"{cfg.train.model_name}-e{epoch}.ckpt"
            raw_model = model._orig_mod if hasattr(model, "_orig_mod") else model
            torch.save({"state_dict": raw_model.state_dict(),
                        "hyper_parameters": dict(raw_model.hparams)}, ckpt_path)

    if nvml_handle is not None:
        pynvml.nvmlShutdown()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("-o", "--output", type=str, default="data/ckpt-new", help="Output directory for checkpoints.")
    parser.add_argument("-e", "--epochs", type=int, default=None, help="Override number of epochs.")
    parser.add_argument("-m", "--model", type=str, default=None, help="Override model name.")
    args = parser.parse_args()
    if args.epochs is not None:
        cfg.train.num_epochs = args.epochs
    if args.model is not None:
        cfg.train.model_name = args.model
    main(args)
