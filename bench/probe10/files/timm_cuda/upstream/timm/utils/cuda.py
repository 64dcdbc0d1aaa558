""" CUDA / AMP utils

Hacked together by / Copyright 2020 Ross Wightman
"""
import logging
from contextlib import suppress
from functools import partial
from typing import Callable, Optional, Tuple

import torch

try:
    from apex import amp
    has_apex = True
except ImportError:
    amp = None
    has_apex = False

from .clip_grad import dispatch_clip_grad

_logger = logging.getLogger(__name__)

has_native_amp = False
try:
    if getattr(torch.cuda.amp, 'autocast') is not None:
        has_native_amp = True
except AttributeError:
    pass


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


def resolve_amp(
        amp_enabled: bool,
        amp_impl: str,
        amp_dtype_name: str,
        device: torch.device,
) -> Tuple[Optional[str], Callable, Optional[object]]:
    """Work out which AMP implementation the train script should use.

    Returns (use_amp, amp_autocast, loss_scaler) where `use_amp` is None, 'apex' or 'native', `amp_autocast` is a
    context manager factory for the forward pass and `loss_scaler` wraps backward + optimizer step (None = plain).
    """
    use_amp = None
    amp_dtype = torch.float16
    if amp_enabled:
        if amp_impl == 'apex':
            assert has_apex, 'AMP impl specified as APEX but APEX is not installed.'
            use_amp = 'apex'
            assert amp_dtype_name == 'float16'
        else:
            assert has_native_amp, 'Please update PyTorch to a version with native AMP (or use APEX).'
            use_amp = 'native'
            assert amp_dtype_name in ('float16', 'bfloat16')
        if amp_dtype_name == 'bfloat16':
            amp_dtype = torch.bfloat16

    amp_autocast = suppress  # do nothing
    loss_scaler = None
    if use_amp == 'apex':
        assert device.type == 'cuda'
        loss_scaler = ApexScaler()
        _logger.info('Using NVIDIA APEX AMP. Training in mixed precision.')
    elif use_amp == 'native':
        try:
            amp_autocast = partial(torch.autocast, device_type=device.type, dtype=amp_dtype)
        except (AttributeError, TypeError):
            # fallback to CUDA only AMP for PyTorch < 1.10
            assert device.type == 'cuda'
            amp_autocast = torch.cuda.amp.autocast
        if device.type == 'cuda' and amp_dtype == torch.float16:
            # loss scaler only used for float16 (half) dtype, bfloat16 has essentially same dynamic range as float32
            loss_scaler = NativeScaler()
        _logger.info('Using native Torch AMP. Training in mixed precision.')
    else:
        _logger.info('AMP not enabled. Training in float32.')
    return use_amp, amp_autocast, loss_scaler


def setup_cudnn(benchmark: bool = True, deterministic: bool = False) -> None:
    """Backend flags the train / validate scripts set before building the model."""
    torch.backends.cudnn.benchmark = benchmark and not deterministic
    torch.backends.cudnn.deterministic = deterministic
    if torch.cuda.is_available():
        # TF32 on Ampere+; ignored elsewhere
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True


def synchronize_device(device: torch.device) -> None:
    """Block until all queued work on `device` is done (used around timing in benchmark.py / validate.py)."""
    if device.type == 'cuda':
        torch.cuda.synchronize(device)
    elif device.type == 'mps':
        torch.mps.synchronize()


def device_memory_summary(device: torch.device) -> str:
    """One-line peak-memory summary appended to the epoch log."""
    if device.type != 'cuda':
        return ''
    peak = torch.cuda.max_memory_allocated(device) / 1024 ** 3
    reserved = torch.cuda.max_memory_reserved(device) / 1024 ** 3
    return f'mem peak {peak:.2f}G, reserved {reserved:.2f}G'
