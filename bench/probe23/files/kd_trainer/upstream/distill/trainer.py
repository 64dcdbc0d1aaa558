"""Logit + feature knowledge distillation trainer.

The (large, frozen) teacher lives on a second GPU so that the student can use
the whole memory of the first one; teacher forward passes are issued on their
own CUDA stream and overlap with the student's backward pass.
"""
import logging
import math
import os
from dataclasses import dataclass, field
from typing import Dict, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("kd")


@dataclass
class KDConfig:
    temperature: float = 4.0
    alpha: float = 0.9            # weight of the soft (teacher) loss
    feat_weight: float = 0.0      # weight of the feature (hint) loss, 0 disables
    lr: float = 5e-4
    weight_decay: float = 0.05
    epochs: int = 100
    warmup_epochs: int = 5
    amp: bool = True
    grad_clip: Optional[float] = 5.0
    student_device: str = "cuda:0"
    teacher_device: str = "cuda:1"
    log_every: int = 50
    extra: Dict[str, float] = field(default_factory=dict)


def kd_loss(student_logits, teacher_logits, target, T, alpha):
    soft = F.kl_div(F.log_softmax(student_logits / T, dim=-1),
                    F.softmax(teacher_logits / T, dim=-1),
                    reduction="batchmean") * (T * T)
    hard = F.cross_entropy(student_logits, target)
    return alpha * soft + (1.0 - alpha) * hard


class HintAdapter(nn.Module):
    """1x1 conv that maps student features to the teacher's channel count."""

    def __init__(self, c_s, c_t):
        super().__init__()
        self.proj = nn.Sequential(nn.Conv2d(c_s, c_t, 1, bias=False), nn.BatchNorm2d(c_t))

    def forward(self, x):
        return self.proj(x)


class DistillTrainer:
    def __init__(self, student, teacher, cfg: KDConfig, adapter: Optional[nn.Module] = None):
        self.cfg = cfg
        if torch.cuda.device_count() < 2:
            log.warning("only one GPU visible; teacher and student share it")
            cfg.teacher_device = cfg.student_device
        self.s_dev = torch.device(cfg.student_device)
        self.t_dev = torch.device(cfg.teacher_device)

        self.student = student.to(self.s_dev)
        self.teacher = teacher.to(self.t_dev).eval()
        for p in self.teacher.parameters():
            p.requires_grad_(False)
        self.adapter = adapter.to(self.s_dev) if adapter is not None else None

        params = list(self.student.parameters())
        if self.adapter is not None:
            params += list(self.adapter.parameters())
        self.optimizer = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay, fused=True)
        self.scaler = torch.cuda.amp.GradScaler(enabled=cfg.amp)
        self.teacher_stream = torch.cuda.Stream(device=self.t_dev)
        self.step = 0

    def lr_at(self, epoch_float):
        cfg = self.cfg
        if epoch_float < cfg.warmup_epochs:
            return cfg.lr * epoch_float / cfg.warmup_epochs
        t = (epoch_float - cfg.warmup_epochs) / max(1e-8, cfg.epochs - cfg.warmup_epochs)
        return 0.5 * cfg.lr * (1 + math.cos(math.pi * t))

    @torch.no_grad()
    def teacher_forward(self, images):
        with torch.cuda.stream(self.teacher_stream):
            x_t = images.to(self.t_dev, non_blocking=True)
            with torch.autocast(device_type="cuda", dtype=torch.float16):
                logits, feats = self.teacher(x_t, return_features=True)
            return logits.float(), feats.float()

    def train_epoch(self, loader, epoch):
        self.student.train()
        n = len(loader)
        for i, (images, target) in enumerate(loader):
            for g in self.optimizer.param_groups:
                g["lr"] = self.lr_at(epoch + i / n)
            t_logits, t_feats = self.teacher_forward(images)

            images = images.to(self.s_dev, non_blocking=True)
            target = target.to(self.s_dev, non_blocking=True)
            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=self.cfg.amp):
                s_logits, s_feats = self.student(images, return_features=True)

            torch.cuda.current_stream(self.t_dev).wait_stream(self.teacher_stream)
            t_logits = t_logits.to(self.s_dev, non_blocking=True)
            loss = kd_loss(s_logits.float(), t_logits, target, self.cfg.temperature, self.cfg.alpha)
            if self.adapter is not None and self.cfg.feat_weight > 0:
                hint = self.adapter(s_feats.float())
                loss = loss + self.cfg.feat_weight * F.mse_loss(hint, t_feats.to(self.s_dev))

            self.optimizer.zero_grad(set_to_none=True)
            self.scaler.scale(loss).backward()
            if self.cfg.grad_clip:
                self.scaler.unscale_(self.optimizer)
                torch.nn.utils.clip_grad_norm_(self.student.parameters(), self.cfg.grad_clip)
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.step += 1
            if self.step % self.cfg.log_every == 0:
                log.info("ep %d it %d/%d loss %.4f scale %.0f mem %.1fG", epoch, i, n, loss.item(),
                         self.scaler.get_scale(), torch.cuda.memory_allocated(self.s_dev) / 1e9)

    def save(self, path):
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        torch.save({"student": self.student.state_dict(),
                    "adapter": self.adapter.state_dict() if self.adapter else None,
                    "optimizer": self.optimizer.state_dict(),
                    "scaler": self.scaler.state_dict(),
                    "step": self.step}, path)
