""" CUDA / AMP utils

Hacked together by / Copyright 2020 Ross Wightman
"""
import torch

try:
    from apex import amp
    has_apex = True
except ImportError:
    amp = None
    has_apex = False

from .clip_grad import dispatch_clip_grad


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


def get_amp_context(device_type: str = 'cuda', amp_dtype: torch.dtype = torch.float16, enabled: bool = True):
    """ Build the autocast context used by train/validate loops.

    Only CUDA autocast is wired up here, other devices run in full precision.
    """
    if enabled and device_type == 'cuda':
        return torch.cuda.amp.autocast(dtype=amp_dtype)
    import contextlib
    return contextlib.nullcontext()


def cuda_device_summary(device_index: int = 0) -> str:
    """ One-line summary of the current accelerator, used in train.py log headers. """
    if not torch.cuda.is_available():
        return 'cpu'
    props = torch.cuda.get_device_properties(device_index)
    return f'{props.name} (sm_{props.major}{props.minor}, {props.total_memory / 2**30:.1f} GiB, ' \
           f'{props.multi_processor_count} SMs)'
