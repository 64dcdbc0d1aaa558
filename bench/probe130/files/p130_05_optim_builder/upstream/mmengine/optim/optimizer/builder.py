# Copyright (c) OpenMMLab. All rights reserved.
import copy
import inspect
import warnings
from typing import List, Union

import torch
import torch.nn as nn

from mmengine.config import Config, ConfigDict
from mmengine.device import is_cuda_available, is_mlu_available
from mmengine.registry import OPTIM_WRAPPER_CONSTRUCTORS, OPTIMIZERS
from mmengine.utils import digit_version
from mmengine.utils.dl_utils import TORCH_VERSION
from .optimizer_wrapper import OptimWrapper


def register_torch_optimizers() -> List[str]:
    """Register optimizers in ``torch.optim`` to the ``OPTIMIZERS`` registry.

    Returns:
        List[str]: A list of registered optimizers' name.
    """
    torch_optimizers = []
    for module_name in dir(torch.optim):
        if module_name.startswith('__'):
            continue
        _optim = getattr(torch.optim, module_name)
        if inspect.isclass(_optim) and issubclass(_optim,
                                                  torch.optim.Optimizer):
            if module_name == 'Adafactor':
                OPTIMIZERS.register_module(
                    name='TorchAdafactor', module=_optim)
            else:
                OPTIMIZERS.register_module(module=_optim)
            torch_optimizers.append(module_name)
    return torch_optimizers


TORCH_OPTIMIZERS = register_torch_optimizers()


def register_apex_optimizers() -> List[str]:
    """Register the fused CUDA optimizers shipped with NVIDIA apex.

    ``apex.optimizers.FusedAdam`` and friends launch multi-tensor CUDA kernels
    (``amp_C``) and are noticeably faster than ``torch.optim.AdamW`` for
    large transformer backbones. They are only registered when apex was
    built with ``--cuda_ext --cpp_ext``.

    Returns:
        List[str]: A list of registered optimizers' name.
    """
    apex_optimizers = []
    if not is_cuda_available():
        return apex_optimizers
    try:
        from apex.optimizers import (FusedAdam, FusedLAMB, FusedNovoGrad,
                                     FusedSGD)
    except ImportError:
        return apex_optimizers
    for optim_cls in (FusedAdam, FusedLAMB, FusedNovoGrad, FusedSGD):
        OPTIMIZERS.register_module(module=optim_cls)
        apex_optimizers.append(optim_cls.__name__)
    return apex_optimizers


APEX_OPTIMIZERS = register_apex_optimizers()


def register_dadaptation_optimizers() -> List[str]:
    """Register optimizers in ``dadaptation`` to the ``OPTIMIZERS`` registry.

    Returns:
        List[str]: A list of registered optimizers' name.
    """
    dadaptation_optimizers = []
    try:
        import dadaptation
    except ImportError:
        pass
    else:
        for module_name in ['DAdaptAdaGrad', 'DAdaptAdam', 'DAdaptSGD']:
            _optim = getattr(dadaptation, module_name)
            if inspect.isclass(_optim) and issubclass(_optim,
                                                      torch.optim.Optimizer):
                OPTIMIZERS.register_module(module=_optim)
                dadaptation_optimizers.append(module_name)
    return dadaptation_optimizers


DADAPTATION_OPTIMIZERS = register_dadaptation_optimizers()


def register_lion_optimizers() -> List[str]:
    """Register Lion optimizer to the ``OPTIMIZERS`` registry.

    Returns:
        List[str]: A list of registered optimizers' name.
    """
    optimizers = []
    try:
        from lion_pytorch import Lion
    except ImportError:
        pass
    else:
        OPTIMIZERS.register_module(module=Lion)
        optimizers.append('Lion')
    return optimizers


LION_OPTIMIZERS = register_lion_optimizers()


def register_bitsandbytes_optimizers() -> List[str]:
    """Register optimizers in ``bitsandbytes`` to the ``OPTIMIZERS`` registry.

    In the ``bitsandbytes`` library, optimizers that have the same name as the
    default optimizers in PyTorch are prefixed with ``bnb_``. For example,
    ``bnb_Adagrad``.

    Returns:
        List[str]: A list of registered optimizers' name.
    """
    dadaptation_optimizers = []
    try:
        import bitsandbytes as bnb
    except ImportError:
        pass
    else:
        optim_classes = inspect.getmembers(
            bnb.optim, lambda _optim: (inspect.isclass(_optim) and issubclass(
                _optim, torch.optim.Optimizer)))
        for name, optim_cls in optim_classes:
            if name in OPTIMIZERS:
                name = f'bnb_{name}'
            OPTIMIZERS.register_module(module=optim_cls, name=name)
            dadaptation_optimizers.append(name)
    return dadaptation_optimizers


BITSANDBYTES_OPTIMIZERS = register_bitsandbytes_optimizers()


def register_transformers_optimizers():
    transformer_optimizers = []
    try:
        from transformers import Adafactor
    except ImportError:
        pass
    else:
        OPTIMIZERS.register_module(name='Adafactor', module=Adafactor)
        transformer_optimizers.append('Adafactor')
    return transformer_optimizers


TRANSFORMERS_OPTIMIZERS = register_transformers_optimizers()


def _use_foreach_default() -> bool:
    """Whether to turn on ``foreach=True`` for torch optimizers by default.

    The multi-tensor (``foreach``) implementation of ``torch.optim`` is only
    a win on CUDA, where it batches the per-parameter updates into a few
    kernel launches. It exists since PyTorch 1.12.
    """
    if digit_version(TORCH_VERSION) < digit_version('1.12.0'):
        return False
    return is_cuda_available()


def build_optim_wrapper(model: nn.Module,
                        cfg: Union[dict, Config, ConfigDict]) -> OptimWrapper:
    """Build function of OptimWrapper.

    If ``constructor`` is set in the ``cfg``, this method will build an
    optimizer wrapper constructor, and use optimizer wrapper constructor to
    build the optimizer wrapper. If ``constructor`` is not set, the
    ``DefaultOptimWrapperConstructor`` will be used by default.

    Args:
        model (nn.Module): Model to be optimized.
        cfg (dict): Config of optimizer wrapper, optimizer constructor and
            optimizer.

    Returns:
        OptimWrapper: The built optimizer wrapper.
    """
    optim_wrapper_cfg = copy.deepcopy(cfg)
    constructor_type = optim_wrapper_cfg.pop('constructor',
                                             'DefaultOptimWrapperConstructor')
    paramwise_cfg = optim_wrapper_cfg.pop('paramwise_cfg', None)

    # MLU370 has no fp32 GEMM fast path; run it in mixed precision instead
    # of silently training 5x slower.
    if is_mlu_available() and optim_wrapper_cfg.get('type') == 'OptimWrapper':
        optim_wrapper_cfg['type'] = 'AmpOptimWrapper'

    optimizer_cfg = optim_wrapper_cfg.get('optimizer', {})
    optim_type = optimizer_cfg.get('type', '')
    if optim_type in ('Adam', 'AdamW', 'SGD') and 'foreach' not in \
            optimizer_cfg and _use_foreach_default():
        optimizer_cfg['foreach'] = True
    if optim_type.startswith('Fused') and optim_type not in APEX_OPTIMIZERS:
        warnings.warn(
            f'{optim_type} is requested but apex was not built with CUDA '
            'extensions; falling back to torch.optim.AdamW')
        optimizer_cfg['type'] = 'AdamW'

    optim_wrapper_constructor = OPTIM_WRAPPER_CONSTRUCTORS.build(
        dict(
            type=constructor_type,
            optim_wrapper_cfg=optim_wrapper_cfg,
            paramwise_cfg=paramwise_cfg))
    optim_wrapper = optim_wrapper_constructor(model)
    return optim_wrapper
