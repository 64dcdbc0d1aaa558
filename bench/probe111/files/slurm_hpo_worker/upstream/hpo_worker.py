#!/usr/bin/env python
"""One HPO trial per process: ask the shared Optuna study for a config, train, tell.

Launched by ``slurm/hpo_array.sbatch`` (one array task = one trial = one GPU),
but also usable by hand::

    python hpo_worker.py --study-name resnet50-randsearch \
        --storage postgresql://optuna@login01:5432/optuna --device cuda --amp

Failure policy: a trial that runs out of GPU memory is retried once with half
the batch size; if it still does not fit, it is told to the study as FAIL
with the reason stored as a user attribute.
"""
import argparse
import json
import logging
import math
import os
import socket
import sys
import time

import optuna
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader
from torchvision import transforms as T

log = logging.getLogger("hpo_worker")

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


# ---------------------------------------------------------------------------
# search space
# ---------------------------------------------------------------------------
def sample_config(trial: optuna.Trial) -> dict:
    return {
        "arch": trial.suggest_categorical("arch", ["resnet50", "resnet101", "wide_resnet50_2"]),
        "lr": trial.suggest_float("lr", 0.02, 1.6, log=True),
        "wd": trial.suggest_float("wd", 1e-5, 5e-4, log=True),
        "batch_size": trial.suggest_categorical("batch_size", [128, 192, 256, 384]),
        "label_smoothing": trial.suggest_float("label_smoothing", 0.0, 0.2),
        "warmup_epochs": trial.suggest_int("warmup_epochs", 0, 5),
        "nesterov": trial.suggest_categorical("nesterov", [True, False]),
        "randaug_m": trial.suggest_int("randaug_m", 0, 15),
    }


# ---------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------
def build_loaders(data_dir, batch_size, workers, randaug_m):
    train_tf = [T.RandomResizedCrop(176), T.RandomHorizontalFlip()]
    if randaug_m > 0:
        train_tf.append(T.RandAugment(num_ops=2, magnitude=randaug_m))
    train_tf += [T.PILToTensor()]
    val_tf = T.Compose([T.Resize(232), T.CenterCrop(224), T.PILToTensor()])
    train_ds = torchvision.datasets.ImageFolder(os.path.join(data_dir, "train"), T.Compose(train_tf))
    val_ds = torchvision.datasets.ImageFolder(os.path.join(data_dir, "val"), val_tf)
    common = dict(num_workers=workers, pin_memory=True, pin_memory_device="cuda", persistent_workers=workers > 0)
    train_loader = DataLoader(train_ds, batch_size=batch_size, shuffle=True, drop_last=True, **common)
    val_loader = DataLoader(val_ds, batch_size=batch_size, shuffle=False, **common)
    return train_loader, val_loader, len(train_ds.classes)


class CudaPrefetcher:
    """Overlap H2D copies + normalisation with compute on a side stream.

    Batches arrive as uint8 NCHW from the loader; conversion to float and
    normalisation happen on the GPU.
    """

    def __init__(self, loader, device, channels_last=True):
        self.loader = loader
        self.device = device
        self.channels_last = channels_last
        self.stream = torch.cuda.Stream(device=device)
        self.mean = torch.tensor(IMAGENET_MEAN, device=device).view(1, 3, 1, 1) * 255
        self.std = torch.tensor(IMAGENET_STD, device=device).view(1, 3, 1, 1) * 255

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        it = iter(self.loader)
        nxt = self._preload(it)
        while nxt is not None:
            torch.cuda.current_stream(self.device).wait_stream(self.stream)
            images, targets = nxt
            images.record_stream(torch.cuda.current_stream(self.device))
            targets.record_stream(torch.cuda.current_stream(self.device))
            nxt = self._preload(it)
            yield images, targets

    def _preload(self, it):
        try:
            images, targets = next(it)
        except StopIteration:
            return None
        with torch.cuda.stream(self.stream):
            images = images.to(self.device, non_blocking=True)
            targets = targets.to(self.device, non_blocking=True)
            images = images.float().sub_(self.mean).div_(self.std)
            if self.channels_last:
                images = images.contiguous(memory_format=torch.channels_last)
        return images, targets


# ---------------------------------------------------------------------------
# training
# ---------------------------------------------------------------------------
def lr_at(epoch_float, cfg, epochs):
    if epoch_float < cfg["warmup_epochs"]:
        return cfg["lr"] * epoch_float / max(cfg["warmup_epochs"], 1e-8)
    t = (epoch_float - cfg["warmup_epochs"]) / max(epochs - cfg["warmup_epochs"], 1)
    return 0.5 * cfg["lr"] * (1 + math.cos(math.pi * t))


def pick_amp_dtype(device):
    # bf16 needs Ampere or newer; V100 / T4 nodes fall back to fp16 + loss scaling
    major, minor = torch.cuda.get_device_capability(device)
    return torch.bfloat16 if major >= 8 else torch.float16


def train_and_eval(trial, cfg, args, device):
    train_loader, val_loader, num_classes = build_loaders(
        args.data_dir, cfg["batch_size"], args.workers, cfg["randaug_m"])
    model = torchvision.models.get_model(cfg["arch"], num_classes=num_classes)
    model = model.to(device, memory_format=torch.channels_last)
    if args.compile:
        model = torch.compile(model)

    params_bn = [p for n, p in model.named_parameters() if p.ndim <= 1]
    params_w = [p for n, p in model.named_parameters() if p.ndim > 1]
    optimizer = torch.optim.SGD([{"params": params_w, "weight_decay": cfg["wd"]},
                                 {"params": params_bn, "weight_decay": 0.0}],
                                lr=cfg["lr"], momentum=0.9, nesterov=cfg["nesterov"])
    criterion = nn.CrossEntropyLoss(label_smoothing=cfg["label_smoothing"])

    amp_dtype = pick_amp_dtype(device) if args.amp else None
    if trial.number < 3:
        trial.set_user_attr("synthetic_img_s", measure_throughput(model, cfg["batch_size"], device, amp_dtype))
    scaler = torch.cuda.amp.GradScaler(enabled=amp_dtype == torch.float16)

    steps_per_epoch = len(train_loader)
    best_top1 = 0.0
    for epoch in range(args.max_epochs):
        model.train()
        t0 = time.time()
        for i, (images, targets) in enumerate(CudaPrefetcher(train_loader, device)):
            lr = lr_at(epoch + i / steps_per_epoch, cfg, args.max_epochs)
            for g in optimizer.param_groups:
                g["lr"] = lr
            with torch.autocast("cuda", dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):
                loss = criterion(model(images), targets)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            if not torch.isfinite(loss):
                raise optuna.TrialPruned(f"non-finite loss at epoch {epoch} step {i}")

        top1 = evaluate(model, val_loader, device, amp_dtype)
        best_top1 = max(best_top1, top1)
        imgs_s = steps_per_epoch * cfg["batch_size"] / (time.time() - t0)
        log.info("trial %d epoch %d top1 %.4f (best %.4f) %.0f img/s", trial.number, epoch, top1, best_top1, imgs_s)
        trial.report(top1, epoch)
        if trial.should_prune():
            raise optuna.TrialPruned()
    return best_top1


@torch.no_grad()
def evaluate(model, loader, device, amp_dtype):
    model.eval()
    correct = torch.zeros((), dtype=torch.long, device=device)
    total = 0
    for images, targets in CudaPrefetcher(loader, device):
        with torch.autocast(device_type="cuda", dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):
            logits = model(images)
        correct += (logits.argmax(1) == targets).sum()
        total += targets.numel()
    return correct.item() / max(total, 1)


def measure_throughput(model, batch_size, device, amp_dtype, iters=20):
    """Images/s of a forward+backward pass on synthetic data (logged, not optimised)."""
    x = torch.randn(batch_size, 3, 176, 176, device=device).contiguous(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (batch_size,), device=device)
    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    for i in range(iters + 5):
        if i == 5:
            start_evt.record()
        with torch.autocast("cuda", dtype=amp_dtype or torch.float32, enabled=bool(amp_dtype)):
            loss = F.cross_entropy(model(x), y % model.fc.out_features)
        loss.backward()
        model.zero_grad(set_to_none=True)
    end_evt.record()
    torch.cuda.synchronize(device)
    return iters * batch_size / (start_evt.elapsed_time(end_evt) / 1000.0)


def fits_in_memory(cfg, device):
    """Cheap pre-check so obviously too-large configs fail fast instead of after data loading."""
    total_gb = torch.cuda.get_device_properties(device).total_memory / 2 ** 30
    per_sample_gb = {"resnet50": 0.09, "resnet101": 0.13, "wide_resnet50_2": 0.16}[cfg["arch"]]
    return per_sample_gb * cfg["batch_size"] < 0.9 * total_gb


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------
def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--study-name", required=True)
    p.add_argument("--storage", required=True)
    p.add_argument("--data-dir", required=True)
    p.add_argument("--trial-seed", type=int, default=0)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--workers", type=int, default=int(os.environ.get("SLURM_CPUS_PER_TASK", 8)))
    p.add_argument("--max-epochs", type=int, default=40)
    p.add_argument("--amp", action="store_true")
    p.add_argument("--compile", action="store_true")
    args = p.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.trial_seed)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True

    device = torch.device(args.device)
    if device.type == "cuda":
        torch.cuda.set_device(0)

    study = optuna.load_study(study_name=args.study_name, storage=args.storage,
                              sampler=optuna.samplers.RandomSampler(seed=args.trial_seed))
    trial = study.ask()
    cfg = sample_config(trial)
    trial.set_user_attr("host", socket.gethostname())
    trial.set_user_attr("slurm_job", os.environ.get("SLURM_JOB_ID", ""))
    trial.set_user_attr("gpu", torch.cuda.get_device_name(device))
    log.info("trial %d config %s", trial.number, json.dumps(cfg))

    if not fits_in_memory(cfg, device):
        trial.set_user_attr("fail_reason", "estimated OOM")
        study.tell(trial, state=optuna.trial.TrialState.FAIL)
        return 0

    for attempt in range(2):
        try:
            value = train_and_eval(trial, cfg, args, device)
        except optuna.TrialPruned as e:
            log.info("trial %d pruned: %s", trial.number, e)
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
            return 0
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            if attempt == 0 and cfg["batch_size"] > 64:
                cfg["batch_size"] //= 2
                cfg["lr"] /= 2
                trial.set_user_attr("batch_size_effective", cfg["batch_size"])
                log.warning("OOM, retrying trial %d with batch size %d", trial.number, cfg["batch_size"])
                continue
            trial.set_user_attr("fail_reason", "CUDA OOM")
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            return 0
        else:
            trial.set_user_attr("peak_mem_gb", torch.cuda.max_memory_allocated(device) / 2 ** 30)
            study.tell(trial, value)
            log.info("trial %d finished with top1 %.4f", trial.number, value)
            return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())
