""" CUDA / AMP utils

Hacked together by / Copyright 2020 Ross Wightman
"""
import logging
from typing import Callable, Optional

import torch

try:
    from apex import amp
    has_apex = True
except ImportError:
    amp = None
    has_apex = False

from .clip_grad import dispatch_clip_grad

_logger = logging.getLogger(__name__)


class ApexScaler:
    state_dict_key = "amp"

    def __call__(
            self,
            loss,
            optimizer,
            clip_grad=None,
            clip_mode='norm',
            parameters=None,
            create_graph=False,
            need_update=True,
    ):
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward(create_graph=create_graph)
        if need_update:
            if clip_grad is not None:
                dispatch_clip_grad(amp.master_params(optimizer), clip_grad, mode=clip_mode)
            optimizer.step()

    def state_dict(self):
        if 'state_dict' in amp.__dict__:
            return amp.state_dict()

    def load_state_dict(self, state_dict):
        if 'load_state_dict' in amp.__dict__:
            amp.load_state_dict(state_dict)


class NativeScaler:
    state_dict_key = "amp_scaler"

    def __init__(self):
        self._scaler = torch.cuda.amp.GradScaler()

    def __call__(
            self,
            loss,
            optimizer,
            clip_grad=None,
            clip_mode='norm',
            parameters=None,
            create_graph=False,
            need_update=True,
    ):
        self._scaler.scale(loss).backward(create_graph=create_graph)
        if need_update:
            if clip_grad is not None:
                assert parameters is not None
                self._scaler.unscale_(optimizer)  # unscale the gradients of optimizer's assigned params in-place
                dispatch_clip_grad(parameters, clip_grad, mode=clip_mode)
            self._scaler.step(optimizer)
            self._scaler.update()

    def state_dict(self):
        return self._scaler.state_dict()

    def load_state_dict(self, state_dict):
        self._scaler.load_state_dict(state_dict)


def resolve_amp(amp_dtype: str = 'float16', use_apex: bool = False):
    """Pick an autocast context and a loss scaler for the requested precision."""
    amp_dtype = torch.bfloat16 if amp_dtype == 'bfloat16' else torch.float16
    if use_apex:
        assert has_apex, 'APEX AMP requested but apex is not installed.'
        return None, ApexScaler()
    from functools import partial
    amp_autocast = partial(torch.autocast, device_type='cuda', dtype=amp_dtype)
    loss_scaler = NativeScaler() if amp_dtype == torch.float16 else None
    return amp_autocast, loss_scaler


def setup_apex(model, optimizer, opt_level: str = 'O1'):
    """Legacy path kept for old configs; prefer native AMP."""
    model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level)
    _logger.info('Using NVIDIA APEX AMP. Training in mixed precision.')
    return model, optimizer


def create_fused_optimizer(params, opt: str, lr: float, weight_decay: float = 0.0, momentum: float = 0.9):
    """APEX fused optimizers, selected with the 'fused*' opt names."""
    assert has_apex and torch.cuda.is_available(), 'APEX and CUDA required for fused optimizers'
    from apex.optimizers import FusedAdam, FusedLAMB, FusedNovoGrad, FusedSGD
    opt_lower = opt.lower()
    if opt_lower == 'fusedsgd':
        return FusedSGD(params, lr=lr, momentum=momentum, nesterov=True, weight_decay=weight_decay)
    elif opt_lower == 'fusedadamw':
        return FusedAdam(params, lr=lr, adam_w_mode=True, weight_decay=weight_decay)
    elif opt_lower == 'fusedlamb':
        return FusedLAMB(params, lr=lr, weight_decay=weight_decay)
    elif opt_lower == 'fusednovograd':
        return FusedNovoGrad(params, lr=lr, betas=(0.95, 0.98), weight_decay=weight_decay)
    raise ValueError(f'Unknown fused optimizer {opt}')


def distribute_bn(model, world_size, reduce=False):
    # ensure every node has the same running bn stats
    from . import distributed as dist_utils
    for bn_name, bn_buf in model.named_buffers(recurse=True):
        if ('running_mean' in bn_name) or ('running_var' in bn_name):
            if reduce:
                # average bn stats across whole group
                torch.distributed.all_reduce(bn_buf, op=torch.distributed.ReduceOp.SUM)
                bn_buf /= float(world_size)
            else:
                # broadcast bn stats from rank 0 to whole group
                torch.distributed.broadcast(bn_buf, 0)


def train_one_step(
        model: torch.nn.Module,
        loss_fn: Callable,
        optimizer: torch.optim.Optimizer,
        batch,
        amp_autocast,
        loss_scaler: Optional[NativeScaler] = None,
        clip_grad: Optional[float] = None,
):
    input, target = batch
    input = input.cuda(non_blocking=True)
    target = target.cuda(non_blocking=True)
    input = input.contiguous(memory_format=torch.channels_last)

    with amp_autocast():
        output = model(input)
        loss = loss_fn(output, target)

    optimizer.zero_grad()
    if loss_scaler is not None:
        loss_scaler(loss, optimizer, clip_grad=clip_grad, parameters=model.parameters())
    else:
        loss.backward()
        if clip_grad is not None:
            dispatch_clip_grad(model.parameters(), clip_grad, mode='norm')
        optimizer.step()

    torch.cuda.synchronize()
    return loss.detach()


def log_memory(prefix: str = ''):
    allocated = torch.cuda.max_memory_allocated() / 1024 ** 3
    reserved = torch.cuda.memory_reserved() / 1024 ** 3
    _logger.info(f'{prefix} max allocated {allocated:.2f} GiB, reserved {reserved:.2f} GiB')
