#!/usr/bin/env python
# -*- coding: utf-8 -*-
"""
Trainer class.
"""

import json
import logging
import os
import sys
import time

import numpy as np
import torch
from tqdm import tqdm

from plato.args import str2bool
from plato.data.data_loader import DataLoader
from plato.metrics.metrics_tracker import MetricsTracker
from plato.metrics.metrics import bleu
from plato.metrics.metrics import distinct
import plato.modules.parallel as parallel


def get_logger(log_path, name="default"):
    logger = logging.getLogger(name)
    logger.propagate = False
    logger.setLevel(logging.DEBUG)

    formatter = logging.Formatter("%(message)s")

    sh = logging.StreamHandler(sys.stdout)
    sh.setFormatter(formatter)
    logger.addHandler(sh)

    fh = logging.FileHandler(log_path, mode="w")
    fh.setFormatter(formatter)
    logger.addHandler(fh)

    return logger


class Trainer(object):

    @classmethod
    def add_cmdline_argument(cls, parser):
        """ Add the cmdline arguments of trainer. """
        group = parser.add_argument_group("Trainer")
        group.add_argument("--valid_metric_name", type=str, default="-loss",
                           help="The validation metric determining which checkpoint is the best.")
        group.add_argument("--num_epochs", type=int, default=10,
                           help="Total number of training epochs to perform.")
        group.add_argument("--save_dir", type=str, required=True,
                           help="The output directory where the model will be saved.")
        group.add_argument("--batch_size", type=int, default=8,
                           help="Total batch size for training/evaluation/inference.")
        group.add_argument("--log_steps", type=int, default=100,
                           help="The number of training steps to output current metrics "
                           "on past training dataset.")
        group.add_argument("--valid_steps", type=int, default=2000,
                           help="The number of training steps to perform a evaluation "
                           "on validation datasets.")
        group.add_argument("--save_checkpoint", type=str2bool, default=True,
                           help="Whether to save one checkpoints for each training epoch.")
        group.add_argument("--use_amp", type=str2bool, default=False,
                           help="Whether to use automatic mixed precision (torch.cuda.amp).")
        return group

    def __init__(self, model, to_tensor, hparams, logger=None):
        # Use data distributed
        if hparams.use_data_distributed:
            self.model = torch.nn.parallel.DistributedDataParallel(
                model, device_ids=[hparams.local_rank], output_device=hparams.local_rank)
        else:
            self.model = model
        self.to_tensor = to_tensor

        self.is_decreased_valid_metric = hparams.valid_metric_name[0] == "-"
        self.valid_metric_name = hparams.valid_metric_name[1:]
        self.num_epochs = hparams.num_epochs
        self.save_dir = hparams.save_dir
        self.log_steps = hparams.log_steps
        self.valid_steps = hparams.valid_steps
        self.save_checkpoint = hparams.save_checkpoint
        self.use_gpu = hparams.use_gpu
        self.use_amp = hparams.use_amp
        self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)

        self.is_master = parallel.Env().local_rank == 0
        if not os.path.exists(self.save_dir):
            os.makedirs(self.save_dir, exist_ok=True)

        self.logger = logger or get_logger(os.path.join(self.save_dir, "trainer.log"), "trainer")
        self.batch_metrics_tracker = MetricsTracker()
        self.token_metrics_tracker = MetricsTracker()

        self.best_valid_metric = float("inf" if self.is_decreased_valid_metric else "-inf")
        self.epoch = 0
        self.batch_num = 0

    def train_epoch(self, train_iter, valid_iter, infer_iter=None, infer_parse_dict=None):
        """
        Train an epoch.
        """
        self.epoch += 1
        num_batches = len(train_iter)
        self.batch_metrics_tracker.clear()
        self.token_metrics_tracker.clear()
        times = []
        for batch_id, (batch, batch_size) in enumerate(train_iter, 1):
            batch = type(batch)(map(lambda kv: (kv[0], self.to_tensor(kv[1])), batch.items()))
            batch["epoch"] = self.epoch
            batch["num_steps"] = self.batch_num

            # Do a training iteration
            start_time = time.time()
            with torch.cuda.amp.autocast(enabled=self.use_amp):
                metrics = self.model(batch, is_training=True)
            loss = metrics["loss"]
            self.model.optimizer.zero_grad()
            self.scaler.scale(loss).backward()
            if self.model.grad_clip is not None and self.model.grad_clip > 0:
                self.scaler.unscale_(self.model.optimizer)
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.model.grad_clip)
            self.scaler.step(self.model.optimizer)
            self.scaler.update()
            if self.model.lr_scheduler is not None:
                self.model.lr_scheduler.step()
            if self.use_gpu:
                torch.cuda.synchronize()
            elapsed = time.time() - start_time
            times.append(elapsed)

            metrics = {k: v.item() if isinstance(v, torch.Tensor) else v for k, v in metrics.items()}
            batch_metrics = {k: v for k, v in metrics.items() if "token" not in k}
            token_metrics = {k: v for k, v in metrics.items() if "token" in k}
            self.batch_metrics_tracker.update(batch_metrics, batch_size)
            self.token_metrics_tracker.update(token_metrics, metrics["token_num"])
            self.batch_num += 1

            if self.log_steps and batch_id % self.log_steps == 0:
                batch_metrics_message = self.batch_metrics_tracker.value()
                token_metrics_message = self.token_metrics_tracker.value()
                message_prefix = f"[Train][{self.epoch}][{batch_id}/{num_batches}]"
                avg_time = f"AVG_Time-{sum(times[-self.log_steps:]) / self.log_steps:.3f}"
                if self.use_gpu:
                    avg_time += f"   Mem-{torch.cuda.max_memory_allocated() / 2 ** 30:.1f}G"
                message = "   ".join([message_prefix, batch_metrics_message, token_metrics_message,
                                      avg_time])
                self.logger.info(message)

            if self.save_checkpoint and self.valid_steps and batch_id % self.valid_steps == 0:
                self.evaluate(valid_iter)

        self.evaluate(valid_iter)
        return

    def save(self, is_best=False):
        """ Save checkpoint. """
        model_file = os.path.join(self.save_dir, f"state_epoch_{self.epoch}.model")
        torch.save(self.model.state_dict(), model_file)
        self.logger.info(f"Saved model state to '{model_file}'")
        if is_best:
            best_model_file = os.path.join(self.save_dir, "best.model")
            torch.save(self.model.state_dict(), best_model_file)
            self.logger.info(
                f"Saved best model state to '{best_model_file}' with new best valid metric "
                f"{self.valid_metric_name.upper()}-{self.best_valid_metric:.3f}")
        return

    def load(self, model_file):
        """ Load checkpoint. """
        state_dict = torch.load(model_file, map_location=lambda storage, loc: storage)
        self.model.load_state_dict(state_dict)
        self.logger.info(f"Loaded model state from '{model_file}'")
        return
