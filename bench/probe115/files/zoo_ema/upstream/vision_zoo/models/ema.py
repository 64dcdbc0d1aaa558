"""Exponential moving average of model weights (timm's ModelEmaV2 / V3, trimmed).

Keeping the EMA copy on the same GPU as the model is the fastest option; pass
``device="cpu"`` to trade speed for GPU memory on large models.
"""
from copy import deepcopy
from typing import Optional

import torch
import torch.nn as nn


class ModelEmaV2(nn.Module):
    def __init__(self, model: nn.Module, decay: float = 0.9999, device: Optional[torch.device] = None):
        super().__init__()
        # make a copy of the model for accumulating moving average of weights
        self.module = deepcopy(model)
        self.module.eval()
        self.decay = decay
        self.device = device  # perform ema on different device from model if set
        if self.device is not None:
            self.module.to(device=device)

    def _update(self, model: nn.Module, update_fn):
        with torch.no_grad():
            for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
                if self.device is not None:
                    model_v = model_v.to(device=self.device)
                ema_v.copy_(update_fn(ema_v, model_v))

    def update(self, model: nn.Module):
        self._update(model, update_fn=lambda e, m: self.decay * e + (1.0 - self.decay) * m)

    def set(self, model: nn.Module):
        self._update(model, update_fn=lambda e, m: m)

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)


class ModelEmaV3(nn.Module):
    """Warm-up aware EMA with a fused ``_foreach_lerp_`` fast path."""

    def __init__(
        self,
        model: nn.Module,
        decay: float = 0.9999,
        min_decay: float = 0.0,
        use_warmup: bool = False,
        warmup_gamma: float = 1.0,
        warmup_power: float = 2 / 3,
        device: Optional[torch.device] = None,
        foreach: bool = True,
    ):
        super().__init__()
        self.module = deepcopy(model)
        self.module.eval()
        self.decay = decay
        self.min_decay = min_decay
        self.use_warmup = use_warmup
        self.warmup_gamma = warmup_gamma
        self.warmup_power = warmup_power
        self.foreach = foreach
        self.device = device
        self.is_cuda_copy = device is not None and torch.device(device).type != "cpu"
        if self.device is not None and device != next(model.parameters()).device:
            self.foreach = False  # cannot use foreach methods with different devices
            self.module.to(device=device)

    def get_decay(self, step: Optional[int] = None) -> float:
        if step is None:
            return self.decay
        step = max(0, step - 1)
        if step <= 0:
            return 0.0
        if self.use_warmup:
            decay = 1 - (1 + step / self.warmup_gamma) ** -self.warmup_power
            decay = max(min(decay, self.decay), self.min_decay)
        else:
            decay = self.decay
        return decay

    @torch.no_grad()
    def update(self, model: nn.Module, step: Optional[int] = None):
        decay = self.get_decay(step)
        ema_lerp_values = []
        model_lerp_values = []
        for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
            if ema_v.is_floating_point():
                if self.foreach:
                    ema_lerp_values.append(ema_v)
                    model_lerp_values.append(model_v)
                else:
                    ema_v.lerp_(model_v.to(device=self.device), weight=1.0 - decay)
            else:
                ema_v.copy_(model_v.to(device=self.device))

        if self.foreach and ema_lerp_values:
            torch._foreach_lerp_(ema_lerp_values, model_lerp_values, weight=1.0 - decay)

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
