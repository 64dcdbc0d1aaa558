"""Base trainer for S2EF / IS2RE style tasks (energies and forces of catalyst slabs).

Handles device setup, DDP, AMP, EMA, checkpointing and the train/validate loop. Task-specific
trainers override `_forward` and `_compute_loss`.
"""
import datetime
import logging
import os
import random
import time
from abc import ABC, abstractmethod
from collections import defaultdict
from typing import Dict, Optional

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler

from ocpmodels.modules.ema import ExponentialMovingAverage
from ocpmodels.modules.scheduler import LRScheduler
from ocpmodels.common.registry import registry

log = logging.getLogger(__name__)


def is_master() -> bool:
    return not dist.is_initialized() or dist.get_rank() == 0


def all_reduce_dict(d: Dict[str, torch.Tensor], device) -> Dict[str, float]:
    if not dist.is_initialized():
        return {k: float(v) for k, v in d.items()}
    keys = sorted(d)
    t = torch.stack([d[k].detach().float().to(device) for k in keys])
    dist.all_reduce(t)
    t /= dist.get_world_size()
    return {k: float(v) for k, v in zip(keys, t)}


class BaseTrainer(ABC):
    def __init__(self, config: dict, seed: Optional[int] = None, cpu: bool = False, amp: bool = False):
        self.config = config
        self.epoch = 0
        self.step = 0
        self.best_val_metric = float("inf")
        self.local_rank = int(os.environ.get("LOCAL_RANK", config.get("local_rank", 0)))
        if torch.cuda.is_available() and not cpu:
            self.device = torch.device(f"cuda:{self.local_rank}")
        else:
            self.device = torch.device("cpu")
            cpu = True
        self.cpu = cpu
        if self.device.type == "cuda":
            torch.cuda.set_device(self.device)
        self.distributed = int(os.environ.get("WORLD_SIZE", 1)) > 1
        if self.distributed and not dist.is_initialized():
            dist.init_process_group(
                backend=config.get("distributed_backend", "nccl"),
                init_method="env://",
                timeout=datetime.timedelta(minutes=30),
            )
        self.scaler = torch.cuda.amp.GradScaler() if amp and not cpu else None
        self.timestamp_id = config.get("timestamp_id") or datetime.datetime.now().strftime("%Y-%m-%d-%H-%M-%S")
        self.checkpoint_dir = os.path.join(config.get("run_dir", "./runs"), "checkpoints", self.timestamp_id)
        if is_master():
            os.makedirs(self.checkpoint_dir, exist_ok=True)
        self.load_seed(seed if seed is not None else config.get("seed", 0))
        self.load_datasets()
        self.load_model()
        self.load_optimizer()
        self.metrics = defaultdict(list)

    # ------------------------------------------------------------------ setup
    def load_seed(self, seed: int):
        random.seed(seed)
        np.random.seed(seed)
        torch.manual_seed(seed)
        torch.cuda.manual_seed_all(seed)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False

    def get_dataloader(self, dataset, batch_size: int, shuffle: bool) -> DataLoader:
        sampler = DistributedSampler(dataset, shuffle=shuffle) if self.distributed else None
        return DataLoader(
            dataset,
            batch_size=batch_size,
            shuffle=shuffle and sampler is None,
            sampler=sampler,
            collate_fn=getattr(dataset, "collate", None),
            num_workers=self.config["optim"].get("num_workers", 4),
            pin_memory=True,
            persistent_workers=True,
        )

    def load_datasets(self):
        ds_cls = registry.get_dataset_class(self.config["task"]["dataset"])
        self.train_dataset = ds_cls(self.config["dataset"]["train"])
        self.val_dataset = ds_cls(self.config["dataset"]["val"]) if "val" in self.config["dataset"] else None
        bs = self.config["optim"]["batch_size"]
        self.train_loader = self.get_dataloader(self.train_dataset, bs, shuffle=True)
        self.val_loader = (
            self.get_dataloader(self.val_dataset, self.config["optim"].get("eval_batch_size", bs), shuffle=False)
            if self.val_dataset is not None else None
        )

    def load_model(self):
        model_cls = registry.get_model_class(self.config["model"]["name"])
        self.model = model_cls(**{k: v for k, v in self.config["model"].items() if k != "name"}).to(self.device)
        n_params = sum(p.numel() for p in self.model.parameters())
        log.info(f"model {self.config['model']['name']} with {n_params / 1e6:.2f}M parameters")
        if self.distributed:
            self.model = DistributedDataParallel(
                self.model, device_ids=None if self.cpu else [self.device], find_unused_parameters=True
            )

    def load_optimizer(self):
        optim_cfg = self.config["optim"]
        decay, no_decay = [], []
        for name, p in self.model.named_parameters():
            if not p.requires_grad:
                continue
            (no_decay if p.ndim <= 1 or name.endswith(".bias") else decay).append(p)
        self.optimizer = torch.optim.AdamW(
            [{"params": decay, "weight_decay": optim_cfg.get("weight_decay", 0.0)},
             {"params": no_decay, "weight_decay": 0.0}],
            lr=optim_cfg["lr_initial"],
        )
        self.scheduler = LRScheduler(self.optimizer, optim_cfg)
        self.ema = ExponentialMovingAverage(self.model.parameters(), optim_cfg["ema_decay"]) if optim_cfg.get("ema_decay") else None
        self.clip_grad_norm = optim_cfg.get("clip_grad_norm", None)

    # ------------------------------------------------------------------ checkpoints
    def save(self, name: str = "checkpoint.pt", metrics: Optional[dict] = None):
        if not is_master():
            return
        state = {
            "epoch": self.epoch,
            "step": self.step,
            "state_dict": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.scheduler.state_dict(),
            "ema": self.ema.state_dict() if self.ema else None,
            "amp": self.scaler.state_dict() if self.scaler else None,
            "config": self.config,
            "val_metrics": metrics,
        }
        torch.save(state, os.path.join(self.checkpoint_dir, name))

    def load_checkpoint(self, path: str):
        ckpt = torch.load(path, map_location=self.device)
        self.epoch = ckpt.get("epoch", 0)
        self.step = ckpt.get("step", 0)
        sd = ckpt["state_dict"]
        if not self.distributed and next(iter(sd)).startswith("module."):
            sd = {k[len("module."):]: v for k, v in sd.items()}
        self.model.load_state_dict(sd)
        self.optimizer.load_state_dict(ckpt["optimizer"])
        if self.ema and ckpt.get("ema"):
            self.ema.load_state_dict(ckpt["ema"])
        if self.scaler and ckpt.get("amp"):
            self.scaler.load_state_dict(ckpt["amp"])

    # ------------------------------------------------------------------ loop
    @abstractmethod
    def _forward(self, batch):
        ...

    @abstractmethod
    def _compute_loss(self, out, batch) -> torch.Tensor:
        ...

    def _backward(self, loss: torch.Tensor):
        self.optimizer.zero_grad(set_to_none=True)
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)
        else:
            loss.backward()
        grad_norm = None
        if self.clip_grad_norm:
            grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip_grad_norm)
        if self.scaler is not None:
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            self.optimizer.step()
        if self.ema:
            self.ema.update()
        return grad_norm

    def train(self):
        max_epochs = self.config["optim"]["max_epochs"]
        eval_every = self.config["optim"].get("eval_every", len(self.train_loader))
        for epoch in range(self.epoch, max_epochs):
            self.epoch = epoch
            if self.distributed:
                self.train_loader.sampler.set_epoch(epoch)
            self.model.train()
            t0 = time.time()
            for i, batch in enumerate(self.train_loader):
                batch = batch.to(self.device, non_blocking=True)
                with torch.cuda.amp.autocast(enabled=self.scaler is not None):
                    out = self._forward(batch)
                    loss = self._compute_loss(out, batch)
                grad_norm = self._backward(loss)
                self.scheduler.step()
                self.step += 1
                if self.step % self.config["cmd"].get("print_every", 100) == 0:
                    stats = all_reduce_dict({"loss": loss}, self.device)
                    if is_master():
                        mem = torch.cuda.max_memory_allocated() / 2 ** 30
                        log.info(
                            f"epoch {epoch} step {self.step} loss {stats['loss']:.4f} "
                            f"grad_norm {float(grad_norm or 0):.2f} lr {self.scheduler.get_lr():.2e} "
                            f"mem {mem:.1f}G {time.time() - t0:.1f}s"
                        )
                if self.val_loader is not None and self.step % eval_every == 0:
                    metrics = self.validate()
                    if metrics["loss"] < self.best_val_metric:
                        self.best_val_metric = metrics["loss"]
                        self.save("best_checkpoint.pt", metrics)
                    self.model.train()
            self.save()
        if self.distributed:
            dist.barrier()

    @torch.no_grad()
    def validate(self) -> Dict[str, float]:
        self.model.eval()
        if self.ema:
            self.ema.store()
            self.ema.copy_to()
        total, n = torch.zeros((), device=self.device), torch.zeros((), device=self.device)
        for batch in self.val_loader:
            batch = batch.to(self.device)
            with torch.cuda.amp.autocast(self.scaler is not None):
                out = self._forward(batch)
                loss = self._compute_loss(out, batch)
            total += loss.float() * batch.natoms.numel()
            n += batch.natoms.numel()
        if self.ema:
            self.ema.restore()
        metrics = all_reduce_dict({"loss": total / n}, self.device)
        torch.cuda.empty_cache()
        if is_master():
            log.info(f"val: {metrics}")
        return metrics
