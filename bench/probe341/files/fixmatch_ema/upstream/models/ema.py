import copy
from copy import deepcopy

import torch
import torch.nn as nn


class ModelEMA(object):
    """Exponential moving average of the student weights (the FixMatch "teacher").

    The EMA copy lives on the same device as the training model (``args.device``),
    so no extra host<->GPU traffic happens in ``update``.
    """

    def __init__(self, args, model, decay):
        self.ema = deepcopy(model)
        self.ema.to(args.device)
        self.ema.eval()
        self.decay = decay
        self.ema_has_module = hasattr(self.ema, 'module')
        # Fix EMA. https://github.com/valencebond/FixMatch_pytorch thank you!
        self.param_keys = [k for k, _ in self.ema.named_parameters()]
        self.buffer_keys = [k for k, _ in self.ema.named_buffers()]
        for p in self.ema.parameters():
            p.requires_grad_(False)

    def update(self, model):
        needs_module = hasattr(model, 'module') and not self.ema_has_module
        with torch.no_grad():
            msd = model.state_dict()
            esd = self.ema.state_dict()
            for k in self.param_keys:
                if needs_module:
                    j = 'module.' + k
                else:
                    j = k
                model_v = msd[j].detach()
                ema_v = esd[k]
                esd[k].copy_(ema_v * self.decay + (1. - self.decay) * model_v)

            for k in self.buffer_keys:
                if needs_module:
                    j = 'module.' + k
                else:
                    j = k
                esd[k].copy_(msd[j])


class ModelEmaV2(nn.Module):
    """ Model Exponential Moving Average V2 (timm style)

    Keep a moving average of everything in the model state_dict (parameters and buffers).
    V2 of this module is simpler, it does not match params/buffers based on name but simply
    iterates in order. It works with torchscript (JIT of full model).

    A smoothed version of the weights is necessary for some training schemes to perform well.
    E.g. Google's hyper-params for training MNASNet, MobileNet-V3, EfficientNet, etc that use
    RMSprop with a short 2.4-3 epoch decay period and slow LR decay rate of .96-.99 requires EMA
    smoothing of weights to match results.

    This class is sensitive where it is initialized in the sequence of model init,
    GPU assignment and distributed training wrappers.

    Args:
        model: the student model, already moved to its device
        decay: EMA decay
        device: if set (e.g. 'cpu'), keep the EMA copy on that device to save GPU memory;
            by default it stays next to the student weights.
    """

    def __init__(self, model, decay=0.9999, device=None):
        super(ModelEmaV2, self).__init__()
        # make a copy of the model for accumulating moving average of weights
        self.module = deepcopy(model)
        self.module.eval()
        self.decay = decay
        self.device = device  # perform ema on different device from model if set
        if self.device is not None:
            self.module.to(device=device)

    def _update(self, model, update_fn):
        with torch.no_grad():
            for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
                if self.device is not None:
                    model_v = model_v.to(device=self.device)
                ema_v.copy_(update_fn(ema_v, model_v))

    def update(self, model):
        self._update(model, update_fn=lambda e, m: self.decay * e + (1. - self.decay) * m)

    def set(self, model):
        self._update(model, update_fn=lambda e, m: m)

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)


def copy_bn_stats(src, dst):
    """copy running statistics of every BatchNorm layer from ``src`` into ``dst``."""
    src_bns = [m for m in src.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    dst_bns = [m for m in dst.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    assert len(src_bns) == len(dst_bns), "models do not have the same BN layers"
    for s, d in zip(src_bns, dst_bns):
        d.running_mean.data.copy_(s.running_mean.data.to(d.running_mean.device))
        d.running_var.data.copy_(s.running_var.data.to(d.running_var.device))
        if s.num_batches_tracked is not None:
            d.num_batches_tracked.data.copy_(s.num_batches_tracked.data)


def model_size_mb(model):
    total = 0
    for p in copy.copy(list(model.parameters())):
        total += p.numel() * p.element_size()
    for b in model.buffers():
        total += b.numel() * b.element_size()
    return total / 1024 ** 2
