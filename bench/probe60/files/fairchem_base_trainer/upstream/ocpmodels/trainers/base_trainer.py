"""
Copyright (c) Facebook, Inc. and its affiliates.

This source code is licensed under the MIT license found in the
LICENSE file in the root directory of this source tree.
"""
import datetime
import errno
import logging
import os
import random
from abc import ABC, abstractmethod
from typing import Dict, Optional

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.nn.parallel.distributed import DistributedDataParallel
from torch.utils.data import DataLoader

from ocpmodels.common import distutils, gp_utils
from ocpmodels.common.data_parallel import BalancedBatchSampler, OCPCollater
from ocpmodels.common.registry import registry
from ocpmodels.common.utils import load_state_dict, save_checkpoint
from ocpmodels.modules.evaluator import Evaluator
from ocpmodels.modules.exponential_moving_average import ExponentialMovingAverage
from ocpmodels.modules.loss import AtomwiseL2Loss, DDPLoss, L2MAELoss
from ocpmodels.modules.normalizer import Normalizer
from ocpmodels.modules.scaling.util import ensure_fitted
from ocpmodels.modules.scheduler import LRScheduler


@registry.register_trainer("base")
class BaseTrainer(ABC):
    def __init__(
        self,
        task,
        model,
        outputs,
        dataset,
        optimizer,
        loss_fns,
        eval_metrics,
        identifier: str,
        timestamp_id: Optional[str] = None,
        run_dir: Optional[str] = None,
        is_debug: bool = False,
        print_every: int = 100,
        seed: Optional[int] = None,
        logger: str = "wandb",
        local_rank: int = 0,
        amp: bool = False,
        cpu: bool = False,
        name: str = "ocp",
        slurm=None,
        noddp: bool = False,
    ) -> None:
        if slurm is None:
            slurm = {}
        self.name = name
        self.is_debug = is_debug
        self.cpu = cpu
        self.epoch = 0
        self.step = 0

        if torch.cuda.is_available() and not self.cpu:
            self.device = torch.device(f"cuda:{local_rank}")
        else:
            self.device = torch.device("cpu")
            self.cpu = True  # handle case when `--cpu` isn't specified
            # but there are no gpu devices available
        if run_dir is None:
            run_dir = os.getcwd()

        self.timestamp_id: str
        if timestamp_id is None:
            timestamp = torch.tensor(datetime.datetime.now().timestamp()).to(self.device)
            # create directories from master rank only
            distutils.broadcast(timestamp, 0)
            timestamp = datetime.datetime.fromtimestamp(timestamp.float().item()).strftime("%Y-%m-%d-%H-%M-%S")
            self.timestamp_id = f"{timestamp}-{identifier}" if identifier else timestamp
        else:
            self.timestamp_id = timestamp_id

        try:
            commit_hash = os.popen("git rev-parse --short HEAD").read().strip()
        except Exception:
            commit_hash = None

        logger_name = logger if isinstance(logger, str) else logger["name"]
        self.config = {
            "task": task,
            "trainer": name,
            "model": model.pop("name"),
            "model_attributes": model,
            "outputs": outputs,
            "optim": optimizer,
            "loss_fns": loss_fns,
            "eval_metrics": eval_metrics,
            "logger": logger,
            "amp": amp,
            "gpus": distutils.get_world_size() if not self.cpu else 0,
            "cmd": {
                "identifier": identifier,
                "print_every": print_every,
                "seed": seed,
                "timestamp_id": self.timestamp_id,
                "commit": commit_hash,
                "checkpoint_dir": os.path.join(run_dir, "checkpoints", self.timestamp_id),
                "results_dir": os.path.join(run_dir, "results", self.timestamp_id),
                "logs_dir": os.path.join(run_dir, "logs", logger_name, self.timestamp_id),
            },
            "slurm": slurm,
            "noddp": noddp,
        }
        # AMP Scaler
        self.scaler = torch.cuda.amp.GradScaler() if amp and not self.cpu else None

        if distutils.is_master():
            logging.info(f"amp: {amp}, device: {self.device}")

        self.load()

    @abstractmethod
    def train(self, disable_eval_tqdm: bool = False) -> None:
        """Run model training iterations."""

    def load(self) -> None:
        self.load_seed_from_config()
        self.load_logger()
        self.load_datasets()
        self.load_task()
        self.load_model()
        self.load_loss()
        self.load_optimizer()
        self.load_extras()

    def load_seed_from_config(self) -> None:
        # https://pytorch.org/docs/stable/notes/randomness.html
        seed = self.config["cmd"]["seed"]
        if seed is None:
            return

        random.seed(seed)
        np.random.seed(seed)
        torch.manual_seed(seed)
        torch.cuda.manual_seed_all(seed)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False

    def load_logger(self) -> None:
        self.logger = None
        if not self.is_debug and distutils.is_master():
            logger_name = self.config["logger"] if isinstance(self.config["logger"], str) else self.config["logger"]["name"]
            self.logger = registry.get_logger_class(logger_name)(self.config)

    def get_sampler(self, dataset, batch_size: int, shuffle: bool) -> BalancedBatchSampler:
        balancing_mode = self.config["optim"].get("load_balancing", "atoms")
        on_error = self.config["optim"].get("load_balancing_on_error", None)
        if gp_utils.initialized():
            num_replicas = gp_utils.get_dp_world_size()
            rank = gp_utils.get_dp_rank()
        else:
            num_replicas = distutils.get_world_size()
            rank = distutils.get_rank()
        return BalancedBatchSampler(
            dataset,
            batch_size=batch_size,
            num_replicas=num_replicas,
            rank=rank,
            device=self.device,
            mode=balancing_mode,
            shuffle=shuffle,
            on_error=on_error,
        )

    def get_dataloader(self, dataset, sampler) -> DataLoader:
        return DataLoader(
            dataset,
            collate_fn=OCPCollater(),
            num_workers=self.config["optim"]["num_workers"],
            pin_memory=True,
            pin_memory_device=f"cuda:{torch.cuda.current_device()}" if torch.cuda.is_available() else "",
            batch_sampler=sampler,
        )

    def load_datasets(self) -> None:
        self.train_loader = self.val_loader = self.test_loader = None

    def load_task(self):
        self.normalizers: Dict[str, Normalizer] = {}

    def load_model(self) -> None:
        # Build model
        if distutils.is_master():
            logging.info(f"Loading model: {self.config['model']}")
        self.model = registry.get_model_class(self.config["model"])(
            **self.config["model_attributes"],
        ).to(self.device)

        if distutils.is_master():
            logging.info(f"Loaded {self.model.__class__.__name__} with {self.model.num_params} parameters.")

        if self.logger is not None:
            self.logger.watch(self.model)

        if distutils.initialized() and not self.config["noddp"]:
            self.model = DistributedDataParallel(self.model, device_ids=None if self.cpu else [self.device])

    @property
    def _unwrapped_model(self):
        module = self.model
        while isinstance(module, DistributedDataParallel):
            module = module.module
        return module

    def load_checkpoint(self, checkpoint_path: str, checkpoint: Optional[Dict] = None) -> None:
        if not checkpoint:
            if not os.path.isfile(checkpoint_path):
                raise FileNotFoundError(errno.ENOENT, "Checkpoint file not found", checkpoint_path)
            logging.info(f"Loading checkpoint from: {checkpoint_path}")
            map_location = torch.device("cpu") if self.cpu else self.device
            checkpoint = torch.load(checkpoint_path, map_location=map_location)

        self.epoch = checkpoint.get("epoch", 0)
        self.step = checkpoint.get("step", 0)
        load_state_dict(self._unwrapped_model, checkpoint["state_dict"], strict=True)

        if "optimizer" in checkpoint:
            self.optimizer.load_state_dict(checkpoint["optimizer"])
        if "scheduler" in checkpoint and checkpoint["scheduler"] is not None:
            self.scheduler.scheduler.load_state_dict(checkpoint["scheduler"])
        if "ema" in checkpoint and checkpoint["ema"] is not None:
            self.ema.load_state_dict(checkpoint["ema"])
        else:
            self.ema = None

        if checkpoint.get("amp", None) is not None and self.scaler is not None:
            self.scaler.load_state_dict(checkpoint["amp"])

    def load_loss(self) -> None:
        self.loss_fns = []
        for target, loss_cfg in self.config["loss_fns"].items():
            name = loss_cfg.get("fn", "mae")
            coefficient = loss_cfg.get("coefficient", 1)
            if name in ["l1", "mae"]:
                loss_fn = nn.L1Loss()
            elif name == "mse":
                loss_fn = nn.MSELoss()
            elif name == "l2mae":
                loss_fn = L2MAELoss()
            elif name == "atomwisel2":
                loss_fn = AtomwiseL2Loss()
            else:
                raise NotImplementedError(f"Unknown loss function name: {name}")
            self.loss_fns.append((target, {"fn": DDPLoss(loss_fn), "coefficient": coefficient}))

    def load_optimizer(self) -> None:
        optimizer = getattr(optim, self.config["optim"].get("optimizer", "AdamW"))
        optimizer_params = self.config["optim"].get("optimizer_params", {})
        weight_decay = optimizer_params.pop("weight_decay", 0)
        self.optimizer = optimizer(
            self.model.parameters(),
            lr=self.config["optim"]["lr_initial"],
            weight_decay=weight_decay,
            **optimizer_params,
        )

    def load_extras(self) -> None:
        self.scheduler = LRScheduler(self.optimizer, self.config["optim"])
        self.clip_grad_norm = self.config["optim"].get("clip_grad_norm")
        self.ema_decay = self.config["optim"].get("ema_decay")
        if self.ema_decay:
            self.ema = ExponentialMovingAverage(self.model.parameters(), self.ema_decay)
        else:
            self.ema = None

    def _forward(self, batch) -> Dict[str, torch.Tensor]:
        with torch.cuda.amp.autocast(enabled=self.scaler is not None):
            out = self.model(batch.to(self.device))
        return out

    def _backward(self, loss) -> None:
        self.optimizer.zero_grad()
        loss.backward()
        # Scale down the gradients of shared parameters
        if hasattr(self.model, "shared_parameters"):
            for p, factor in self.model.shared_parameters:
                if hasattr(p, "grad") and p.grad is not None:
                    p.grad.detach().div_(factor)
        if self.clip_grad_norm:
            if self.scaler:
                self.scaler.unscale_(self.optimizer)
            grad_norm = torch.nn.utils.clip_grad_norm_(
                self.model.parameters(),
                max_norm=self.clip_grad_norm,
            )
            if self.logger is not None:
                self.logger.log({"grad_norm": grad_norm}, step=self.step, split="train")
        if self.scaler:
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            self.optimizer.step()
        if self.ema:
            self.ema.update()

    @torch.no_grad()
    def validate(self, split: str = "val", disable_tqdm: bool = False):
        ensure_fitted(self._unwrapped_model, warn=True)
        if distutils.is_master():
            logging.info(f"Evaluating on {split}.")
        self.model.eval()
        if self.ema:
            self.ema.store()
            self.ema.copy_to()
        evaluator, metrics = Evaluator(task=self.name), {}
        loader = self.val_loader if split == "val" else self.test_loader
        for batch in loader:
            # Forward.
            with torch.autocast("cuda", enabled=self.scaler is not None):
                batch.to(self.device)
                out = self._forward(batch)
            metrics = evaluator.eval(out, batch, prev_metrics=metrics)
        aggregated = {k: distutils.all_reduce(v["total"], average=False, device=self.device) for k, v in metrics.items()}
        if self.ema:
            self.ema.restore()
        torch.cuda.empty_cache()
        return aggregated

    def save(self, metrics=None, checkpoint_file: str = "checkpoint.pt", training_state: bool = True) -> Optional[str]:
        if not self.is_debug and distutils.is_master():
            state = {
                "epoch": self.epoch,
                "step": self.step,
                "state_dict": self.model.state_dict(),
                "optimizer": self.optimizer.state_dict() if training_state else None,
                "scheduler": self.scheduler.scheduler.state_dict() if self.scheduler.scheduler_type != "Null" else None,
                "config": self.config,
                "ema": self.ema.state_dict() if self.ema else None,
                "amp": self.scaler.state_dict() if self.scaler else None,
            }
            return save_checkpoint(state, checkpoint_dir=self.config["cmd"]["checkpoint_dir"], checkpoint_file=checkpoint_file)
        return None
