"""Minimal re-implementation of the ``ever`` launcher used by ChangeStar.

Three flavours (``trainer=``):
  * ``apex_ddp``   -- NVIDIA apex mixed precision (O1) + torch DDP, optional apex SyncBN
  * ``th_amp_ddp`` -- native torch.cuda.amp + torch DDP
  * ``th_ddp``     -- fp32 + torch DDP
"""
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.cuda.amp import GradScaler, autocast
from torch.nn.parallel import DistributedDataParallel

try:
    from apex import amp
except ImportError:
    amp = None

try:
    from apex.parallel import convert_syncbn_model
except ImportError:
    convert_syncbn_model = None

try:
    from apex.optimizers import FusedAdam
except ImportError:
    FusedAdam = None

from core.lr import build_lr_schedule
from core.checkpoint import CheckPoint
from core.metric import evaluate_cd


def to_device(data, non_blocking=True):
    """Recursively move a (nested) batch to the current GPU."""
    if isinstance(data, torch.Tensor):
        return data.cuda(non_blocking=non_blocking)
    if isinstance(data, dict):
        return {k: to_device(v, non_blocking) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return type(data)(to_device(v, non_blocking) for v in data)
    return data


def build_optimizer(params, optimizer_config):
    opt_type = optimizer_config['type']
    opt_params = dict(optimizer_config.get('params', {}))
    if opt_type == 'sgd':
        return torch.optim.SGD(params, **opt_params)
    if opt_type == 'adamw':
        return torch.optim.AdamW(params, **opt_params)
    if opt_type == 'fused_adam':
        assert FusedAdam is not None, 'fused_adam needs apex built with --cuda_ext'
        return FusedAdam(params, adam_w_mode=True, **opt_params)
    raise ValueError('unknown optimizer type: %s' % opt_type)


class AverageMeter(object):
    def __init__(self):
        self.reset()

    def reset(self):
        self.sum = 0.0
        self.count = 0

    def update(self, val, n=1):
        self.sum += float(val) * n
        self.count += n

    @property
    def avg(self):
        return self.sum / max(self.count, 1)


class Launcher(object):
    def __init__(self, model_dir, model, train_config, optimizer_config, learning_rate_config,
                 trainer='apex_ddp', opt_level='O1', distributed=True, logger=None):
        self.model_dir = model_dir
        self.train_config = train_config
        self.trainer = trainer
        self.distributed = distributed
        self.logger = logger
        self.rank = dist.get_rank() if distributed else 0

        if train_config.get('sync_bn', False) and distributed:
            model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        elif train_config.get('apex_sync_bn', False) and distributed:
            assert convert_syncbn_model is not None, 'apex is required for apex_sync_bn'
            model = convert_syncbn_model(model)

        model = model.cuda()
        self.optimizer = build_optimizer(model.parameters(), optimizer_config)
        self.lr_schedule = build_lr_schedule(learning_rate_config)

        self.scaler = None
        if trainer == 'apex_ddp':
            assert amp is not None, 'apex is not installed, use --trainer th_amp_ddp'
            model, self.optimizer = amp.initialize(model, self.optimizer, opt_level=opt_level)
        elif trainer == 'th_amp_ddp':
            self.scaler = GradScaler()

        if distributed:
            model = DistributedDataParallel(model, device_ids=[torch.cuda.current_device()],
                                            find_unused_parameters=train_config.get('find_unused_parameters', False),
                                            broadcast_buffers=False)
        self.model = model
        self.checkpoint = CheckPoint(model_dir)
        self.global_step = 0

    @property
    def module(self):
        return self.model.module if isinstance(self.model, DistributedDataParallel) else self.model

    def _log(self, msg, *args):
        if self.logger is not None and self.rank == 0:
            self.logger.info(msg, *args)

    def _step(self, batch):
        img, y = to_device(batch)
        if self.trainer == 'th_amp_ddp':
            with autocast():
                loss_dict = self.model(img, y)
                loss = sum(v for k, v in loss_dict.items() if k.endswith('loss'))
            self.optimizer.zero_grad(set_to_none=True)
            self.scaler.scale(loss).backward()
            if self.train_config.get('grad_clip', None):
                self.scaler.unscale_(self.optimizer)
                nn.utils.clip_grad_norm_(self.model.parameters(), **self.train_config['grad_clip'])
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            loss_dict = self.model(img, y)
            loss = sum(v for k, v in loss_dict.items() if k.endswith('loss'))
            self.optimizer.zero_grad(set_to_none=True)
            if self.trainer == 'apex_ddp':
                with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            if self.train_config.get('grad_clip', None):
                nn.utils.clip_grad_norm_(self.model.parameters(), **self.train_config['grad_clip'])
            self.optimizer.step()
        return loss, loss_dict

    def profile(self, train_data_loader, steps=20, out_dir=None):
        """Short torch.profiler run for kernel-level timing; open the trace with TensorBoard."""
        from torch.profiler import profile, schedule, tensorboard_trace_handler, ProfilerActivity
        out_dir = out_dir or os.path.join(self.model_dir, 'profile')
        os.makedirs(out_dir, exist_ok=True)
        self.model.train()
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                       schedule=schedule(wait=2, warmup=3, active=max(steps - 5, 1), repeat=1),
                       on_trace_ready=tensorboard_trace_handler(out_dir),
                       record_shapes=True, profile_memory=True, with_stack=False)
        prof.start()
        for i, batch in enumerate(train_data_loader):
            if i >= steps:
                break
            self.lr_schedule.step(self.global_step, self.optimizer)
            self._step(batch)
            prof.step()
        prof.stop()
        self._log('profiler trace written to %s', out_dir)

    def train_by_config(self, train_data_loader, test_data_loader=None):
        num_iters = self.train_config['num_iters']
        log_interval = self.train_config.get('log_interval_step', 50)
        eval_interval = self.train_config.get('eval_interval_step', num_iters)
        save_interval = self.train_config.get('save_ckpt_interval_step', num_iters)

        if self.checkpoint.exists('model-last.pth'):
            state = self.checkpoint.load('model-last.pth', map_location='cpu')
            self.module.load_state_dict(state['model'])
            self.optimizer.load_state_dict(state['optimizer'])
            self.global_step = state['global_step']
            self._log('resumed from step %d', self.global_step)

        loss_meter = AverageMeter()
        data_time = AverageMeter()
        batch_time = AverageMeter()
        self.model.train()
        epoch = 0
        end = time.time()
        while self.global_step < num_iters:
            if self.distributed and hasattr(train_data_loader.sampler, 'set_epoch'):
                train_data_loader.sampler.set_epoch(epoch)
            for batch in train_data_loader:
                data_time.update(time.time() - end)
                self.lr_schedule.step(self.global_step, self.optimizer)
                loss, loss_dict = self._step(batch)
                loss_meter.update(loss.item())
                torch.cuda.synchronize()
                batch_time.update(time.time() - end)
                end = time.time()
                self.global_step += 1

                if self.global_step % log_interval == 0:
                    mem = torch.cuda.max_memory_allocated() / 1024.0 / 1024.0
                    self._log('step %d/%d | loss %.4f | lr %.6f | data %.3fs | batch %.3fs | mem %.0fMB',
                              self.global_step, num_iters, loss_meter.avg,
                              self.optimizer.param_groups[0]['lr'], data_time.avg, batch_time.avg, mem)
                    loss_meter.reset()
                    data_time.reset()
                    batch_time.reset()

                if self.global_step % save_interval == 0 and self.rank == 0:
                    self.checkpoint.save('model-last.pth', dict(model=self.module.state_dict(),
                                                                 optimizer=self.optimizer.state_dict(),
                                                                 global_step=self.global_step))

                if test_data_loader is not None and self.global_step % eval_interval == 0:
                    if self.rank == 0:
                        self.model.eval()
                        scores = evaluate_cd(self.module, test_data_loader, device=torch.device('cuda'))
                        self._log('eval @ %d: %s', self.global_step, scores)
                        self.model.train()
                    if self.distributed:
                        dist.barrier()

                if self.global_step >= num_iters:
                    break
            epoch += 1

        if self.rank == 0:
            self.checkpoint.save('model-%d.pth' % self.global_step, dict(model=self.module.state_dict()))
            torch.cuda.empty_cache()
