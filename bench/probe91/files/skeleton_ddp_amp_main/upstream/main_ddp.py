#!/usr/bin/env python
"""Distributed trainer for graph-convolutional skeleton action recognition.

InfoGCN / HD-GCN style processor rewritten for torchrun + DistributedDataParallel
with native mixed precision:

    torchrun --nproc_per_node=4 main_ddp.py --config config/nturgbd120-cross-subject/joint.yaml
"""
import argparse
import math
import os
import random
import shutil
import time
from collections import OrderedDict

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from tqdm import tqdm

from utils import AverageMeter, LabelSmoothingCrossEntropy, import_class


def init_seed(seed):
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    np.random.seed(seed)
    random.seed(seed)
    torch.backends.cudnn.deterministic = False
    torch.backends.cudnn.benchmark = True


def get_parser():
    parser = argparse.ArgumentParser(description='skeleton action recognition (DDP)')
    parser.add_argument('--config', required=True)
    parser.add_argument('--work-dir', default=None)
    parser.add_argument('--phase', default='train', choices=['train', 'test'])
    parser.add_argument('--weights', default=None)
    parser.add_argument('--resume', action='store_true')
    return parser


def load_config(path, overrides):
    with open(path) as f:
        cfg = yaml.safe_load(f)
    for k, v in vars(overrides).items():
        if v is not None:
            cfg[k.replace('-', '_')] = v
    return argparse.Namespace(**cfg)


class CUDAPrefetcher:
    """Overlaps host->device copies of the next batch with the current step."""

    def __init__(self, loader, device):
        self.loader = loader
        self.device = device
        self.stream = torch.cuda.Stream(device=device)

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        self.iter = iter(self.loader)
        self.preload()
        while self.next_data is not None:
            torch.cuda.current_stream(self.device).wait_stream(self.stream)
            data, label, index = self.next_data, self.next_label, self.next_index
            data.record_stream(torch.cuda.current_stream(self.device))
            label.record_stream(torch.cuda.current_stream(self.device))
            self.preload()
            yield data, label, index

    def preload(self):
        try:
            data, label, index = next(self.iter)
        except StopIteration:
            self.next_data = self.next_label = self.next_index = None
            return
        with torch.cuda.stream(self.stream):
            self.next_data = data.to(self.device, non_blocking=True).float()
            self.next_label = label.to(self.device, non_blocking=True).long()
            self.next_index = index


class Processor:
    def __init__(self, cfg):
        self.cfg = cfg
        self.local_rank = int(os.environ.get('LOCAL_RANK', 0))
        self.rank = int(os.environ.get('RANK', 0))
        self.world_size = int(os.environ.get('WORLD_SIZE', 1))

        if not torch.cuda.is_available():
            raise SystemExit('main_ddp.py needs at least one CUDA device')
        torch.cuda.set_device(self.local_rank)
        os.environ.setdefault('NCCL_ASYNC_ERROR_HANDLING', '1')
        dist.init_process_group(backend=cfg.dist_backend, init_method='env://')
        self.device = torch.device(f'{cfg.device}:{self.local_rank}')

        torch.backends.cuda.matmul.allow_tf32 = cfg.allow_tf32
        torch.backends.cudnn.allow_tf32 = cfg.allow_tf32

        # bf16 autocast on Ampere and newer, fp16 + loss scaling otherwise
        major, _ = torch.cuda.get_device_capability(self.device)
        self.amp_dtype = torch.bfloat16 if major >= 8 else torch.float16
        self.scaler = torch.cuda.amp.GradScaler(enabled=cfg.amp and self.amp_dtype == torch.float16)

        self.work_dir = cfg.work_dir
        if self.rank == 0:
            os.makedirs(self.work_dir, exist_ok=True)
            shutil.copy2(cfg.config, self.work_dir)
        self.best_acc, self.best_epoch, self.start_epoch = 0.0, 0, 0

        self.load_data()
        self.load_model()
        self.load_optimizer()

    def log(self, msg):
        if self.rank != 0:
            return
        msg = f'[{time.strftime("%m-%d %H:%M:%S")}] {msg}'
        print(msg)
        with open(os.path.join(self.work_dir, 'log.txt'), 'a') as f:
            print(msg, file=f)

    def load_data(self):
        Feeder = import_class(self.cfg.feeder)
        train_set = Feeder(**self.cfg.train_feeder_args)
        test_set = Feeder(**self.cfg.test_feeder_args)
        self.train_sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
        self.test_sampler = DistributedSampler(test_set, shuffle=False)
        self.train_loader = DataLoader(
            train_set, batch_size=self.cfg.batch_size // self.world_size, sampler=self.train_sampler,
            num_workers=self.cfg.num_worker, pin_memory=True, drop_last=True, persistent_workers=True)
        self.test_loader = DataLoader(
            test_set, batch_size=self.cfg.test_batch_size // self.world_size, sampler=self.test_sampler,
            num_workers=self.cfg.num_worker, pin_memory=True)

    def load_model(self):
        Model = import_class(self.cfg.model)
        model = Model(**self.cfg.model_args)
        if self.cfg.weights:
            state = torch.load(self.cfg.weights, map_location='cpu')
            state = OrderedDict((k.replace('module.', ''), v) for k, v in state.items())
            model.load_state_dict(state, strict=False)
        if self.cfg.sync_bn:
            model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = model.to(self.device)
        if self.cfg.compile:
            model = torch.compile(model, mode='max-autotune')
        self.model = DDP(model, device_ids=[self.local_rank], find_unused_parameters=False)
        self.criterion = LabelSmoothingCrossEntropy(smoothing=self.cfg.label_smoothing).to(self.device)

    def load_optimizer(self):
        decay, no_decay = [], []
        for name, p in self.model.named_parameters():
            if not p.requires_grad:
                continue
            (no_decay if p.ndim <= 1 or name.endswith('.A') else decay).append(p)
        groups = [{'params': decay, 'weight_decay': self.cfg.weight_decay},
                  {'params': no_decay, 'weight_decay': 0.0}]
        self.optimizer = torch.optim.SGD(groups, lr=self.cfg.base_lr, momentum=0.9, nesterov=True)
        if self.cfg.resume:
            ckpt = torch.load(os.path.join(self.work_dir, 'last.pt'), map_location=self.device)
            self.model.module.load_state_dict(ckpt['model'])
            self.optimizer.load_state_dict(ckpt['optimizer'])
            self.scaler.load_state_dict(ckpt['scaler'])
            self.start_epoch = ckpt['epoch']

    def adjust_learning_rate(self, epoch, step, steps_per_epoch):
        warm = self.cfg.warm_up_epoch
        t = epoch + step / steps_per_epoch
        if t < warm:
            lr = self.cfg.base_lr * (t + 1e-3) / warm
        else:
            progress = (t - warm) / max(1e-8, self.cfg.num_epoch - warm)
            lr = self.cfg.base_lr * 0.5 * (1.0 + math.cos(math.pi * progress))
        for g in self.optimizer.param_groups:
            g['lr'] = lr
        return lr

    def train(self, epoch):
        self.model.train()
        self.train_sampler.set_epoch(epoch)
        losses, accs = AverageMeter(), AverageMeter()
        loader = CUDAPrefetcher(self.train_loader, self.device)
        steps = len(loader)
        for step, (data, label, _) in enumerate(tqdm(loader, disable=self.rank != 0, ncols=80)):
            lr = self.adjust_learning_rate(epoch, step, steps)
            with torch.cuda.amp.autocast(enabled=self.cfg.amp, dtype=self.amp_dtype):
                output = self.model(data)
                loss = self.criterion(output, label)
            self.optimizer.zero_grad(set_to_none=True)
            self.scaler.scale(loss).backward()
            if self.cfg.grad_clip > 0:
                self.scaler.unscale_(self.optimizer)
                nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.grad_clip)
            self.scaler.step(self.optimizer)
            self.scaler.update()

            acc = (output.argmax(1) == label).float().mean()
            losses.update(loss.item(), data.size(0))
            accs.update(acc.item(), data.size(0))

        mem = torch.cuda.max_memory_allocated(self.device) / 2 ** 30
        self.log(f'epoch {epoch + 1}: loss {losses.avg:.4f} acc {accs.avg * 100:.2f}% lr {lr:.5f} mem {mem:.1f}G')

    @torch.no_grad()
    def evaluate(self, epoch):
        self.model.eval()
        correct = torch.zeros(1, device=self.device)
        total = torch.zeros(1, device=self.device)
        for data, label, _ in tqdm(self.test_loader, disable=self.rank != 0, ncols=80):
            data = data.to(self.device, non_blocking=True).float()
            label = label.to(self.device, non_blocking=True).long()
            with torch.cuda.amp.autocast(enabled=self.cfg.amp, dtype=self.amp_dtype):  # eval
                output = self.model(data)
            correct += (output.argmax(1) == label).sum()
            total += label.numel()
        dist.all_reduce(correct)
        dist.all_reduce(total)
        acc = (correct / total).item()
        if acc > self.best_acc:
            self.best_acc, self.best_epoch = acc, epoch + 1
            if self.rank == 0:
                torch.save(self.model.module.state_dict(), os.path.join(self.work_dir, 'best.pt'))
        self.log(f'eval epoch {epoch + 1}: top1 {acc * 100:.2f}% (best {self.best_acc * 100:.2f}% @ {self.best_epoch})')
        torch.cuda.empty_cache()
        return acc

    def save(self, epoch):
        if self.rank != 0:
            return
        torch.save({'model': self.model.module.state_dict(), 'optimizer': self.optimizer.state_dict(),
                    'scaler': self.scaler.state_dict(), 'epoch': epoch + 1},
                   os.path.join(self.work_dir, 'last.pt'))

    def start(self):
        if self.cfg.phase == 'test':
            self.evaluate(0)
            return
        self.log(f'world size {self.world_size}, amp {self.cfg.amp} ({self.amp_dtype})')
        for epoch in range(self.start_epoch, self.cfg.num_epoch):
            self.train(epoch)
            if (epoch + 1) % self.cfg.eval_interval == 0 or epoch + 1 == self.cfg.num_epoch:
                self.evaluate(epoch)
            self.save(epoch)
        dist.barrier()
        dist.destroy_process_group()


def main():
    args = get_parser().parse_args()
    cfg = load_config(args.config, args)
    cfg.config = args.config
    init_seed(cfg.seed + int(os.environ.get('RANK', 0)))
    Processor(cfg).start()


if __name__ == '__main__':
    main()
