"""
Simple training loop; boilerplate that could apply to any arbitrary neural network,
so nothing in this file really has anything to do with GPT specifically.
Extended here with optional mixed precision and a periodic throughput report.
"""

import time
import random
from collections import defaultdict

import numpy as np
import torch
from torch.utils.data.dataloader import DataLoader

from mingpt.utils import CfgNode as CN


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


class Trainer:

    @staticmethod
    def get_default_config():
        C = CN()
        # device to train on
        C.device = 'auto'
        # dataloder parameters
        C.num_workers = 4
        # optimizer parameters
        C.max_iters = None
        C.batch_size = 64
        C.learning_rate = 3e-4
        C.betas = (0.9, 0.95)
        C.weight_decay = 0.1  # only applied on matmul weights
        C.grad_norm_clip = 1.0
        # mixed precision (fp16 with dynamic loss scaling)
        C.use_amp = False
        C.report_every = 100
        return C

    def __init__(self, config, model, train_dataset):
        self.config = config
        self.model = model
        self.optimizer = None
        self.train_dataset = train_dataset
        self.callbacks = defaultdict(list)

        # determine the device we'll train on
        if config.device == 'auto':
            self.device = 'cuda' if torch.cuda.is_available() else 'cpu'
        else:
            self.device = config.device
        self.model = self.model.to(self.device)
        print("running on device", self.device)

        self.scaler = torch.cuda.amp.GradScaler(enabled=config.use_amp)

        # variables that will be assigned to trainer class later for logging and etc
        self.iter_num = 0
        self.iter_time = 0.0
        self.iter_dt = 0.0
        self.tokens_seen = 0

    def add_callback(self, onevent: str, callback):
        self.callbacks[onevent].append(callback)

    def set_callback(self, onevent: str, callback):
        self.callbacks[onevent] = [callback]

    def trigger_callbacks(self, onevent: str):
        for callback in self.callbacks.get(onevent, []):
            callback(self)

    def _make_loader(self):
        config = self.config
        sampler = torch.utils.data.RandomSampler(self.train_dataset, replacement=True, num_samples=int(1e10))
        return DataLoader(
            self.train_dataset,
            sampler=sampler,
            shuffle=False,
            pin_memory=True,
            batch_size=config.batch_size,
            num_workers=config.num_workers,
        )

    def _report(self, t_start):
        if self.iter_num % self.config.report_every != 0:
            return
        elapsed = time.time() - t_start
        rate = self.tokens_seen / max(elapsed, 1e-9)
        msg = f"iter {self.iter_num}: {rate:,.0f} tok/s, dt {self.iter_dt * 1000:.1f}ms"
        if self.device.startswith('cuda'):
            peak = torch.cuda.max_memory_allocated() / 2**20
            msg += f", peak mem {peak:.0f}MiB"
        print(msg)

    def run(self):
        model, config = self.model, self.config

        # setup the optimizer
        self.optimizer = model.configure_optimizers(config)

        # setup the dataloader
        train_loader = self._make_loader()

        model.train()
        self.iter_num = 0
        self.iter_time = time.time()
        t_start = self.iter_time
        data_iter = iter(train_loader)
        while True:

            # fetch the next batch (x, y) and re-init iterator if needed
            try:
                batch = next(data_iter)
            except StopIteration:
                data_iter = iter(train_loader)
                batch = next(data_iter)
            batch = [t.to(self.device) for t in batch]
            x, y = batch
            self.tokens_seen += x.numel()

            # forward the model
            with torch.cuda.amp.autocast(enabled=config.use_amp):
                logits, self.loss = model(x, y)

            # backprop and update the parameters
            model.zero_grad(set_to_none=True)
            self.scaler.scale(self.loss).backward()
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_norm_clip)
            self.scaler.step(self.optimizer)
            self.scaler.update()

            self.trigger_callbacks('on_batch_end')
            self.iter_num += 1
            tnow = time.time()
            self.iter_dt = tnow - self.iter_time
            self.iter_time = tnow
            self._report(t_start)

            # termination conditions
            if config.max_iters is not None and self.iter_num >= config.max_iters:
                break


def evaluate_split(trainer, dataset, max_batches=None):
    """Mean loss over (part of) a dataset, using the trainer's device."""
    model = trainer.model
    loader = DataLoader(dataset, batch_size=100, num_workers=0, drop_last=False)
    model.eval()
    losses = []
    with torch.no_grad():
        for b, (x, y) in enumerate(loader):
            x = x.to(trainer.device)
            y = y.to(trainer.device)
            _, loss = model(x, y)
            losses.append(loss.item())
            if max_batches is not None and b + 1 >= max_batches:
                break
    model.train()
    return float(np.mean(losses)) if losses else float('nan')
