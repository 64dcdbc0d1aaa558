import itertools
import math
from collections.abc import Callable
from typing import Any, Literal, Optional, cast

import delu
import rtdl_num_embeddings
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from torch.nn.parameter import Parameter

from .util import is_oom_exception

# ======================================================================================
# Initialization
# ======================================================================================
def init_rsqrt_uniform_(x: Tensor, d: int) -> Tensor:
    assert d > 0
    d_rsqrt = d**-0.5
    return nn.init.uniform_(x, -d_rsqrt, d_rsqrt)


@torch.inference_mode()
def init_random_signs_(x: Tensor) -> Tensor:
    return x.bernoulli_(0.5).mul_(2).add_(-1)


# ======================================================================================
# Modules
# ======================================================================================
class OneHotEncoding0d(nn.Module):
    # Input:  (*, n_cat_features=len(cardinalities))
    # Output: (*, sum(cardinalities))

    def __init__(self, cardinalities: list[int]) -> None:
        super().__init__()
        self._cardinalities = cardinalities

    def forward(self, x: Tensor) -> Tensor:
        assert x.ndim >= 1
        assert x.shape[-1] == len(self._cardinalities)

        return torch.cat(
            [
                # NOTE
                # This is a quick hack to support out-of-vocabulary categories.
                #
                # Recall that lib.data.transform_cat encodes categorical features
                # as follows:
                # - In-vocabulary values receive indices from `range(cardinality)`.
                # - All out-of-vocabulary values (i.e. new categories in validation
                #   and test data that are not presented in the training data)
                #   receive the index `cardinality`.
                #
                # As such, the line below will produce the standard one-hot encoding for
                # known categories, and the all-zeros encoding for unknown categories.
                # This may not be the best approach to deal with unknown values,
                # but should be enough for our purposes.
                F.one_hot(x[..., i], cardinality + 1)[..., :-1]
                for i, cardinality in enumerate(self._cardinalities)
            ],
            -1,
        )


class ScaleEnsemble(nn.Module):
    def __init__(self, k: int, d: int, *, init: Literal['ones', 'normal', 'random-signs']) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(k, d))
        self._weight_init = init
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self._weight_init == 'ones':
            nn.init.ones_(self.weight)
        elif self._weight_init == 'normal':
            nn.init.normal_(self.weight)
        elif self._weight_init == 'random-signs':
            init_random_signs_(self.weight)
        else:
            raise ValueError(f'Unknown weight_init: {self._weight_init}')

    def forward(self, x: Tensor) -> Tensor:
        assert x.ndim >= 2
        return x * self.weight


class LinearEfficientEnsemble(nn.Module):
    """BatchEnsemble-style linear layer: k members share W, each has its own r, s, b."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, *, k: int,
                 ensemble_scaling_in: bool, ensemble_scaling_out: bool, ensemble_bias: bool,
                 scaling_init: Literal['ones', 'random-signs']):
        assert k > 0
        if ensemble_bias:
            assert bias
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.register_parameter('r', nn.Parameter(torch.empty(k, in_features)) if ensemble_scaling_in else None)
        self.register_parameter('s', nn.Parameter(torch.empty(k, out_features)) if ensemble_scaling_out else None)
        self.register_parameter(
            'bias',
            nn.Parameter(torch.empty(out_features)) if bias and not ensemble_bias
            else nn.Parameter(torch.empty(k, out_features)) if ensemble_bias else None,
        )
        self.in_features = in_features
        self.out_features = out_features
        self.k = k
        self.scaling_init = scaling_init
        self.reset_parameters()

    def reset_parameters(self):
        init_rsqrt_uniform_(self.weight, self.in_features)
        scaling_init_fn = {'ones': nn.init.ones_, 'random-signs': init_random_signs_}[self.scaling_init]
        if self.r is not None:
            scaling_init_fn(self.r)
        if self.s is not None:
            scaling_init_fn(self.s)
        if self.bias is not None:
            bias_init = torch.empty(self.out_features, dtype=self.weight.dtype, device=self.weight.device)
            bias_init = init_rsqrt_uniform_(bias_init, self.in_features)
            with torch.inference_mode():
                self.bias.copy_(bias_init)

    def forward(self, x: Tensor) -> Tensor:
        # x.shape == (B, K, D)
        assert x.ndim == 3
        if self.r is not None:
            x = x * self.r
        x = x @ self.weight.T
        if self.s is not None:
            x = x * self.s
        if self.bias is not None:
            x = x + self.bias
        return x


# ======================================================================================
# Optimization
# ======================================================================================
def default_zero_weight_decay_condition(module_name: str, module: nn.Module, parameter_name: str, parameter: Parameter):
    del module_name, parameter
    return parameter_name.endswith('bias') or isinstance(
        module,
        (nn.BatchNorm1d, nn.LayerNorm, nn.InstanceNorm1d, rtdl_num_embeddings.LinearEmbeddings,
         rtdl_num_embeddings.LinearReLUEmbeddings, rtdl_num_embeddings._Periodic),
    )


def make_parameter_groups(
    module: nn.Module,
    zero_weight_decay_condition=default_zero_weight_decay_condition,
    custom_groups: Optional[list[dict[str, Any]]] = None,
) -> list[dict[str, Any]]:
    custom_groups = [] if custom_groups is None else custom_groups
    param_groups = [{'params': []}] + list(custom_groups) + [{'params': [], 'weight_decay': 0.0}]
    seen = set()
    for module_name, m in module.named_modules():
        for name, p in m.named_parameters(recurse=False):
            if p in seen:
                continue
            seen.add(p)
            (param_groups[-1] if zero_weight_decay_condition(module_name, m, name, p) else param_groups[0])['params'].append(p)
    return [g for g in param_groups if g['params']]


def make_optimizer(type: str, fused: bool = False, **kwargs) -> torch.optim.Optimizer:
    Optimizer = getattr(torch.optim, type)
    if fused and type in ('Adam', 'AdamW') and torch.cuda.is_available():
        # The fused CUDA kernels are ~10-15% faster for the small MLPs we train
        kwargs['fused'] = True
    return Optimizer(**kwargs)


def make_warmup_scheduler(n_warmup_steps: int) -> Callable[[int], float]:
    return lambda step: min(1.0, (step + 1) / n_warmup_steps)


def apply_warmup(optimizer: torch.optim.Optimizer, multiplier: float) -> None:
    for group in optimizer.param_groups:
        group.setdefault('initial_lr', group['lr'])
        group['lr'] = group['initial_lr'] * multiplier


def get_n_parameters(m: nn.Module) -> int:
    return sum(p.numel() for p in m.parameters() if p.requires_grad)


def get_d_out(n_classes: Optional[int]) -> int:
    return 1 if n_classes is None or n_classes == 2 else n_classes


def estimate_max_batch_size(model: nn.Module, make_batch: Callable[[int], tuple], start: int = 2**16) -> int:
    """Halve the batch size until a forward+backward pass fits into GPU memory."""
    batch_size = start
    while batch_size > 1:
        try:
            out = model(*make_batch(batch_size))
            out.float().sum().backward()
            model.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            return batch_size
        except RuntimeError as err:
            if not is_oom_exception(err):
                raise
            batch_size //= 2
            delu.cuda.free_memory()
    return 1
