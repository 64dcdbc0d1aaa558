"""Epoch-based trainer used by tools/train.py.

The loop is deliberately close to torchvision's references/classification/train.py
(same EMA, same metric names) so numbers are comparable with the published recipes.
"""
import logging
import math
import os
import time
from contextlib import nullcontext

import torch
import torch.nn as nn
from torch.cuda.amp import GradScaler, autocast
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

from vision_zoo.data import build_dataset, build_sampler
from vision_zoo.models import build_model
from vision_zoo.models.ema import ModelEmaV2
from vision_zoo.utils.device import amp_dtype, empty_cache, gpu_mem_usage, num_gpus, reset_peak_memory, to_device
from vision_zoo.utils.dist_utils import all_reduce_mean, get_dist_info, master_only
from vision_zoo.utils.metrics import accuracy

try:
    from apex.optimizers import FusedLAMB

    HAS_APEX = True
except ImportError:
    HAS_APEX = False

logger = logging.getLogger(__name__)


def build_optimizer(cfg, model):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        if p.ndim <= 1 or name.endswith(".bias"):
            no_decay.append(p)
        else:
            decay.append(p)
    param_groups = [
        {"params": decay, "weight_decay": cfg.optim.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    # linear scaling rule: base lr is given for 256 images
    lr = cfg.optim.lr * cfg.data.batch_size * max(1, num_gpus()) / 256
    name = cfg.optim.name.lower()
    if name == "sgd":
        return torch.optim.SGD(param_groups, lr=lr, momentum=cfg.optim.momentum, nesterov=True, foreach=True)
    if name == "adamw":
        return torch.optim.AdamW(param_groups, lr=lr, betas=tuple(cfg.optim.betas), fused=True)
    if name == "lamb":
        if not HAS_APEX:
            raise RuntimeError("optim.name=lamb needs NVIDIA apex (pip install -v --no-cache-dir --global-option=--cpp_ext --global-option=--cuda_ext ./apex)")
        return FusedLAMB(param_groups, lr=lr, betas=tuple(cfg.optim.betas), max_grad_norm=cfg.optim.clip_grad or 0.0)
    raise ValueError(f"unknown optimizer {cfg.optim.name}")


def build_loader(cfg, dataset, sampler, train=True):
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    return torch.utils.data.DataLoader(
        dataset,
        batch_size=cfg.data.batch_size if train else cfg.data.eval_batch_size,
        sampler=sampler,
        num_workers=cfg.data.workers,
        pin_memory=cfg.data.pin_memory,
        pin_memory_device=f"cuda:{local_rank}" if cfg.data.pin_memory else "",
        drop_last=train,
        persistent_workers=cfg.data.workers > 0,
    )


class Trainer:
    def __init__(self, cfg, device):
        self.cfg = cfg
        self.device = device
        self.rank, self.world_size = get_dist_info()

        train_set = build_dataset(cfg.data, split="train")
        val_set = build_dataset(cfg.data, split="val")
        self.num_classes = train_set.num_classes
        self.train_sampler = build_sampler(train_set, shuffle=True, repeated_aug=cfg.data.get("ra_reps", 0))
        self.train_loader = build_loader(cfg, train_set, self.train_sampler, train=True)
        self.val_loader = build_loader(cfg, val_set, build_sampler(val_set, shuffle=False), train=False)

        model = build_model(cfg.model, num_classes=self.num_classes)
        if cfg.sync_bn and self.world_size > 1:
            model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model.to(self.device)
        if cfg.channels_last:
            model = model.to(memory_format=torch.channels_last)
        self.model_without_ddp = model

        self.ema = None
        if cfg.ema.enabled:
            # keep the EMA copy on the host when GPU memory is tight
            self.ema = ModelEmaV2(model, decay=cfg.ema.decay, device="cpu" if cfg.ema.cpu else None)

        if cfg.compile:
            model = torch.compile(model, mode="max-autotune")

        if self.world_size > 1:
            model = nn.parallel.DistributedDataParallel(
                model,
                device_ids=[self.device.index],
                broadcast_buffers=False,
                find_unused_parameters=cfg.model.get("find_unused_parameters", False),
            )
        self.model = model

        self.criterion = nn.CrossEntropyLoss(label_smoothing=cfg.loss.label_smoothing).to(self.device)
        self.optimizer = build_optimizer(cfg, self.model_without_ddp)
        self.scheduler = torch.optim.lr_scheduler.OneCycleLR(
            self.optimizer,
            max_lr=[g["lr"] for g in self.optimizer.param_groups],
            total_steps=cfg.epochs * len(self.train_loader),
            pct_start=cfg.optim.warmup_epochs / cfg.epochs,
        )

        self.amp_enabled = cfg.amp.enabled
        self.amp_dtype = amp_dtype(cfg.amp.dtype) if self.amp_enabled else torch.float32
        # bf16 does not need loss scaling
        self.scaler = GradScaler(enabled=self.amp_enabled and self.amp_dtype == torch.float16)
        self.start_epoch = 0
        self.best_acc1 = 0.0

    # ------------------------------------------------------------------ checkpoint
    def resume(self, path):
        ckpt = torch.load(path, map_location=self.device)
        self.model_without_ddp.load_state_dict(ckpt["model"])
        self.optimizer.load_state_dict(ckpt["optimizer"])
        self.scheduler.load_state_dict(ckpt["scheduler"])
        self.scaler.load_state_dict(ckpt["scaler"])
        if self.ema is not None and "ema" in ckpt:
            self.ema.module.load_state_dict(ckpt["ema"])
        self.start_epoch = ckpt["epoch"] + 1
        self.best_acc1 = ckpt.get("best_acc1", 0.0)
        logger.info("resumed from %s (epoch %d)", path, ckpt["epoch"])

    @master_only
    def save(self, epoch, is_best):
        state = {
            "model": self.model_without_ddp.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "scaler": self.scaler.state_dict(),
            "epoch": epoch,
            "best_acc1": self.best_acc1,
            "cfg": self.cfg.to_dict(),
        }
        if self.ema is not None:
            state["ema"] = self.ema.module.state_dict()
        os.makedirs(self.cfg.work_dir, exist_ok=True)
        torch.save(state, os.path.join(self.cfg.work_dir, "last.pth"))
        if is_best:
            torch.save(state, os.path.join(self.cfg.work_dir, "best.pth"))

    # ------------------------------------------------------------------ loops
    def _profiler(self):
        if not self.cfg.profile:
            return nullcontext()
        return profile(
            activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
            schedule=schedule(wait=5, warmup=5, active=10, repeat=1),
            on_trace_ready=tensorboard_trace_handler(os.path.join(self.cfg.work_dir, "trace")),
            record_shapes=True,
            with_stack=False,
        )

    def train_one_epoch(self, epoch):
        self.model.train()
        if hasattr(self.train_sampler, "set_epoch"):
            self.train_sampler.set_epoch(epoch)
        reset_peak_memory(self.device)
        accum = self.cfg.optim.get("accum_steps", 1)
        t0 = time.time()
        seen = 0
        with self._profiler() as prof:
            for step, (images, targets) in enumerate(self.train_loader):
                images, targets = to_device((images, targets), self.device)
                if self.cfg.channels_last:
                    images = images.contiguous(memory_format=torch.channels_last)
                with autocast(enabled=self.amp_enabled, dtype=self.amp_dtype):
                    logits = self.model(images)
                    loss = self.criterion(logits, targets) / accum

                self.scaler.scale(loss).backward()
                if (step + 1) % accum == 0:
                    if self.cfg.optim.clip_grad:
                        self.scaler.unscale_(self.optimizer)
                        nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.optim.clip_grad)
                    self.scaler.step(self.optimizer)
                    self.scaler.update()
                    self.optimizer.zero_grad(set_to_none=True)
                    self.scheduler.step()
                    if self.ema is not None:
                        self.ema.update(self.model_without_ddp)

                seen += images.size(0)
                if step % self.cfg.log_interval == 0:
                    loss_val = loss.item() * accum
                    if not math.isfinite(loss_val):
                        raise FloatingPointError(f"loss is {loss_val} at epoch {epoch} step {step}")
                    torch.cuda.synchronize()
                    elapsed = time.time() - t0
                    logger.info(
                        "epoch %d [%d/%d] loss %.4f lr %.5f img/s %.1f mem %s",
                        epoch,
                        step,
                        len(self.train_loader),
                        loss_val,
                        self.optimizer.param_groups[0]["lr"],
                        seen * self.world_size / max(elapsed, 1e-6),
                        gpu_mem_usage(),
                    )
                if prof is not None and hasattr(prof, "step"):
                    prof.step()

    @torch.no_grad()
    def evaluate(self, model=None, tag=""):
        model = model or self.model
        model.eval()
        device = next(model.parameters()).device
        top1_sum, top5_sum, n = 0.0, 0.0, 0
        for images, targets in self.val_loader:
            images, targets = to_device((images, targets), device)
            with autocast(enabled=self.amp_enabled, dtype=self.amp_dtype):
                logits = model(images)
            acc1, acc5 = accuracy(logits.float(), targets, topk=(1, 5))
            bs = images.size(0)
            top1_sum += acc1.item() * bs
            top5_sum += acc5.item() * bs
            n += bs
        top1_sum, top5_sum, n = all_reduce_mean([top1_sum, top5_sum, float(n)], self.device)
        acc1, acc5 = top1_sum / n, top5_sum / n
        logger.info("%s Acc@1 %.3f Acc@5 %.3f", tag or "val", acc1, acc5)
        empty_cache(self.device)
        return acc1

    def fit(self):
        for epoch in range(self.start_epoch, self.cfg.epochs):
            self.train_one_epoch(epoch)
            acc1 = self.evaluate()
            if self.ema is not None:
                self.evaluate(self.ema.module, tag="ema")
            is_best = acc1 > self.best_acc1
            self.best_acc1 = max(acc1, self.best_acc1)
            self.save(epoch, is_best)
        logger.info("best Acc@1 %.3f", self.best_acc1)
