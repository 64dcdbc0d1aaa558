# Copyright (c) 2018-2019, NVIDIA CORPORATION
# All rights reserved.
import os
import time
from copy import deepcopy

import numpy as np
import torch
import torch.nn as nn
import torch.distributed as dist
from torch.cuda.amp import autocast
from torch.nn.parallel import DistributedDataParallel as DDP

from . import logger as log
from . import utils
from .logger import TrainingMetrics, ValidationMetrics
from .models.common import EMA


class Executor:
    def __init__(self, model, loss, cuda=True, memory_format=torch.contiguous_format, amp=False,
                 scaler=None, divide_loss=1, ts_script=False):
        assert not (amp and scaler is None), "Gradient Scaler is needed for AMP"

        def xform(m):
            if cuda:
                m = m.cuda()
            m.to(memory_format=memory_format)
            return m

        self.model = xform(model)
        if ts_script:
            self.model = torch.jit.script(self.model)
        self.ts_script = ts_script
        self.loss = xform(loss) if loss is not None else None
        self.amp = amp
        self.scaler = scaler
        self.is_distributed = False
        self.divide_loss = divide_loss
        self._fwd_bwd = None
        self._forward = None

    def distributed(self, gpu_id):
        self.is_distributed = True
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            self.model = DDP(self.model, device_ids=[gpu_id], output_device=gpu_id)
        torch.cuda.current_stream().wait_stream(s)

    def _fwd_bwd_fn(self, input, target):
        with autocast(enabled=self.amp):
            loss = self.loss(self.model(input), target)
            loss /= self.divide_loss

        self.scaler.scale(loss).backward()
        return loss

    def _forward_fn(self, input, target):
        with torch.no_grad(), autocast(enabled=self.amp):
            output = self.model(input)
            loss = None if self.loss is None else self.loss(output, target)

        return output if loss is None else loss, output

    def optimize(self, fn):
        return fn

    @property
    def forward_backward(self):
        if self._fwd_bwd is None:
            self._fwd_bwd = self.optimize(self._fwd_bwd_fn)
        return self._fwd_bwd

    @property
    def forward(self):
        if self._forward is None:
            self._forward = self.optimize(self._forward_fn)
        return self._forward

    def train(self):
        self.model.train()
        if self.loss is not None:
            self.loss.train()

    def eval(self):
        self.model.eval()
        if self.loss is not None:
            self.loss.eval()


class Trainer:
    def __init__(self, executor, optimizer, grad_acc_steps, ema=None):
        self.executor = executor
        self.optimizer = optimizer
        self.grad_acc_steps = grad_acc_steps
        self.use_ema = False
        if ema is not None:
            self.ema_executor = deepcopy(self.executor)
            self.ema = EMA(ema, self.ema_executor.model)
            self.use_ema = True

        self.optimizer.zero_grad(set_to_none=True)
        self.steps_since_update = 0

    def train_step(self, input, target, step=None):
        loss = self.executor.forward_backward(input, target)

        self.steps_since_update += 1

        if self.steps_since_update == self.grad_acc_steps:
            if self.executor.scaler is not None:
                self.executor.scaler.step(self.optimizer)
                self.executor.scaler.update()
            else:
                self.optimizer.step()
            self.optimizer.zero_grad()
            self.steps_since_update = 0

        torch.cuda.synchronize()

        if self.use_ema:
            self.ema(self.executor.model, step=step)

        return loss


def train(train_step, train_loader, lr_scheduler, grad_scale_fn, log_fn, timeout_handler, prof=-1, step=0):
    interrupted = False

    end = time.time()

    data_iter = enumerate(train_loader)

    for i, (input, target) in data_iter:
        bs = input.size(0)
        lr = lr_scheduler(i)
        data_time = time.time() - end

        loss = train_step(input, target, step=step + i)
        it_time = time.time() - end

        with torch.no_grad():
            if torch.distributed.is_initialized():
                reduced_loss = utils.reduce_tensor(loss.detach())
            else:
                reduced_loss = loss.detach()

        log_fn(compute_ips=utils.calc_ips(bs, it_time - data_time), total_ips=utils.calc_ips(bs, it_time),
               data_time=data_time, compute_time=it_time - data_time, lr=lr, loss=reduced_loss.item())

        end = time.time()
        if prof > 0 and (i + 1 >= prof):
            time.sleep(5)
            break
        if ((i + 1) % 20 == 0) and timeout_handler.interrupted:
            time.sleep(5)
            interrupted = True
            break

    return interrupted


def validate(infer_fn, val_loader, log_fn, prof=-1, with_loss=True, topk=5):
    top1 = log.AverageMeter()
    end = time.time()
    data_iter = enumerate(val_loader)

    for i, (input, target) in data_iter:
        bs = input.size(0)
        data_time = time.time() - end

        if with_loss:
            loss, output = infer_fn(input, target)
        else:
            output = infer_fn(input)

        with torch.no_grad():
            precs = utils.accuracy(output.data, target, topk=(1, topk))
            if torch.distributed.is_initialized():
                precs = map(utils.reduce_tensor, precs)
            prec1, prec5 = [p.item() for p in precs]

        if torch.cuda.is_available():
            torch.cuda.synchronize(input.device)
        it_time = time.time() - end
        top1.record(prec1, bs)
        log_fn(compute_ips=utils.calc_ips(bs, it_time - data_time), top1=prec1, top5=prec5,
               data_time=data_time, compute_latency=it_time - data_time)
        end = time.time()
        if (prof > 0) and (i + 1 >= prof):
            time.sleep(5)
            break

    return top1.get_val()


def train_loop(trainer, lr_scheduler, train_loader, val_loader, logger, start_epoch=0, end_epoch=0,
               best_prec1=0, checkpoint_dir="./", save_checkpoints=True, checkpoint_filename="checkpoint.pth.tar"):
    for epoch in range(start_epoch, end_epoch):
        if logger is not None:
            logger.start_epoch()
        trainer.train()
        train(trainer.train_step, train_loader, lr_scheduler, None, None, None, step=epoch * len(train_loader))
        trainer.eval()
        prec1 = validate(trainer.executor.forward, val_loader, None)
        if save_checkpoints and (not torch.distributed.is_initialized() or torch.distributed.get_rank() == 0):
            is_best = prec1 > best_prec1
            best_prec1 = max(prec1, best_prec1)
            checkpoint_state = {"epoch": epoch + 1, "state_dict": trainer.executor.model.state_dict(),
                                "best_prec1": best_prec1, "optimizer": trainer.optimizer.state_dict()}
            utils.save_checkpoint(checkpoint_state, is_best, checkpoint_dir=checkpoint_dir,
                                  filename=checkpoint_filename)
        torch.cuda.empty_cache()
    return best_prec1
