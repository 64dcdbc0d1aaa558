# -*- coding: utf-8 -*-
import logging
import os
import random
from collections import OrderedDict
from copy import deepcopy

import numpy as np
import torch
import torch.distributed as dist
from torch import nn
from torch.backends import cudnn

LOGGER = logging.getLogger("main")


def customized_worker_init_fn(worker_id):
    worker_seed = torch.initial_seed() % 2 ** 32
    np.random.seed(worker_seed)


def set_seed_for_lib(seed):
    random.seed(seed)
    np.random.seed(seed)
    # 为了禁止hash随机化，使得实验可复现。
    os.environ["PYTHONHASHSEED"] = str(seed)
    torch.manual_seed(seed)  # 为CPU设置随机种子
    torch.cuda.manual_seed(seed)  # 为当前GPU设置随机种子
    torch.cuda.manual_seed_all(seed)  # 为所有GPU设置随机种子


def initialize_seed_cudnn(seed, deterministic):
    assert isinstance(deterministic, bool) and isinstance(seed, int)
    if seed >= 0:
        LOGGER.info(f"We will use a fixed seed {seed}")
    else:
        seed = np.random.randint(2 ** 32)
        LOGGER.info(f"We will use a random seed {seed}")
    set_seed_for_lib(seed)
    if not deterministic:
        LOGGER.info("We will use `torch.backends.cudnn.benchmark`")
    else:
        LOGGER.info("We will not use `torch.backends.cudnn.benchmark`")
    cudnn.enabled = True
    cudnn.benchmark = not deterministic
    cudnn.deterministic = deterministic
    if deterministic:
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
        torch.use_deterministic_algorithms(True, warn_only=True)


def to_device(data, device="cuda"):
    if isinstance(data, (tuple, list)):
        return [to_device(item, device) for item in data]
    elif isinstance(data, dict):
        return {name: to_device(item, device) for name, item in data.items()}
    elif isinstance(data, torch.Tensor):
        return data.to(device=device, non_blocking=True)
    else:
        raise TypeError(f"Unsupported type {type(data)}. Only support Tensor or tuple/list/dict containing Tensors.")


def frozen_bn_stats(model, freeze_affine=False):
    """
    Set all the bn layers to eval mode.
    Args:
        model (model): model to set bn layers to eval mode.
    """
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.eval()
            if freeze_affine:
                m.requires_grad_(False)


def load_params_for_new_conv(conv_layer, new_conv_layer, in_dim):
    o, i, k_h, k_w = new_conv_layer.weight.shape
    ori_weight = conv_layer.weight
    if in_dim < 3:
        new_weight = ori_weight[:, :in_dim]
    else:
        new_weight = torch.repeat_interleave(ori_weight, repeats=in_dim // i + 1, dim=1)[:, :in_dim]
    new_conv_layer.weight = nn.Parameter(new_weight)
    new_conv_layer.bias = conv_layer.bias


def is_dist_avail_and_initialized():
    return dist.is_available() and dist.is_initialized()


def get_world_size():
    if not is_dist_avail_and_initialized():
        return 1
    return dist.get_world_size()


def _get_reduce_device():
    # NCCL can only reduce tensors that live on the GPU, gloo needs CPU tensors
    if dist.get_backend() == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


@torch.no_grad()
def reduce_dict(input_dict, average=True):
    """Reduce the values in the dictionary from all processes so that all processes have the averaged results."""
    world_size = get_world_size()
    if world_size < 2:
        return input_dict
    names = sorted(input_dict.keys())
    values = torch.stack([torch.as_tensor(input_dict[k], dtype=torch.float32) for k in names], dim=0)
    values = values.to(_get_reduce_device())
    dist.all_reduce(values)
    if average:
        values /= world_size
    return {k: v.item() for k, v in zip(names, values)}


def get_param_num(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def get_gpu_memory(device=None, unit="G"):
    """Peak-allocated / reserved memory of `device`, formatted for the training log."""
    scale = {"G": 1024 ** 3, "M": 1024 ** 2}[unit]
    reserved = torch.cuda.memory_reserved(device) / scale
    peak = torch.cuda.max_memory_allocated(device) / scale
    return f"{peak:.2f}/{reserved:.2f}{unit}"


class ModelEma(object):
    """Model Exponential Moving Average (adapted from timm).

    Keep a moving average of everything in the model state_dict (parameters and buffers).
    `device` lets the EMA copy live somewhere else than the model, e.g. "cpu" to save GPU memory.
    """

    def __init__(self, model, decay=0.9999, device="", resume=""):
        # make a copy of the model for accumulating moving average of weights
        self.ema = deepcopy(model)
        self.ema.eval()
        self.decay = decay
        self.device = device  # perform ema on different device from model if set
        if device:
            self.ema.to(device=device)
        self.ema_has_module = hasattr(self.ema, "module")
        if resume:
            self._load_checkpoint(resume)
        for p in self.ema.parameters():
            p.requires_grad_(False)

    def _load_checkpoint(self, checkpoint_path):
        checkpoint = torch.load(checkpoint_path, map_location="cpu")
        assert isinstance(checkpoint, dict)
        if "state_dict_ema" in checkpoint:
            new_state_dict = OrderedDict()
            for k, v in checkpoint["state_dict_ema"].items():
                # ema model may have been wrapped by DataParallel, and need module prefix
                if self.ema_has_module:
                    name = "module." + k if not k.startswith("module") else k
                else:
                    name = k
                new_state_dict[name] = v
            self.ema.load_state_dict(new_state_dict)
            LOGGER.info("Loaded state_dict_ema")
        else:
            LOGGER.warning("Failed to find state_dict_ema, starting from loaded model weights")

    def update(self, model):
        # correct a mismatch in state dict keys
        needs_module = hasattr(model, "module") and not self.ema_has_module
        with torch.no_grad():
            msd = model.state_dict()
            for k, ema_v in self.ema.state_dict().items():
                if needs_module:
                    k = "module." + k
                model_v = msd[k].detach()
                if self.device:
                    model_v = model_v.to(device=self.device)
                ema_v.copy_(ema_v * self.decay + (1.0 - self.decay) * model_v)


class Scaler:
    def __init__(
        self, optimizer, use_fp16=False, *, set_to_none=False, clip_grad=False, clip_mode=None, clip_cfg=None
    ) -> None:
        self.optimizer = optimizer
        self.set_to_none = set_to_none
        self.scaler = torch.cuda.amp.GradScaler(enabled=use_fp16)

        if clip_grad:
            self.grad_clip_ops = self._build_clip_ops(clip_mode, clip_cfg)
        else:
            self.grad_clip_ops = None

    @staticmethod
    def _build_clip_ops(clip_mode, clip_cfg):
        if clip_mode == "norm":
            if "max_norm" not in clip_cfg:
                raise ValueError(f"`clip_cfg` must contain `max_norm`.")
            return lambda params: nn.utils.clip_grad_norm_(
                params, max_norm=clip_cfg.get("max_norm"), norm_type=clip_cfg.get("norm_type", 2.0)
            )
        elif clip_mode == "value":
            if "clip_value" not in clip_cfg:
                raise ValueError(f"`clip_cfg` must contain `clip_value`.")
            return lambda params: nn.utils.clip_grad_value_(params, clip_value=clip_cfg.get("clip_value"))
        else:
            raise NotImplementedError

    def calculate_grad(self, loss):
        self.scaler.scale(loss).backward()
        if self.grad_clip_ops is not None:
            self.scaler.unscale_(self.optimizer)
            for group in self.optimizer.param_groups:
                self.grad_clip_ops(group["params"])

    def update_grad(self):
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad(set_to_none=self.set_to_none)

    def state_dict(self):
        r"""
        Returns the state of the scaler as a :class:`dict`.  It contains five entries:
        * ``"scale"`` - a Python float containing the current scale
        * ``"growth_factor"`` - a Python float containing the current growth factor
        * ``"backoff_factor"`` - a Python float containing the current backoff factor
        * ``"growth_interval"`` - a Python int containing the current growth interval
        * ``"_growth_tracker"`` - a Python int containing the number of recent consecutive unskipped steps.
        If this instance is not enabled, returns an empty dict.
        .. note::
           If you wish to checkpoint the scaler's state after a particular iteration, :meth:`state_dict`
           should be called after :meth:`update`.
        """
        return self.scaler.state_dict()

    def load_state_dict(self, state_dict):
        r"""
        Loads the scaler state.  If this instance is disabled, :meth:`load_state_dict` is a no-op.
        Args:
           state_dict(dict): scaler state.  Should be an object returned from a call to :meth:`state_dict`.
        """
        self.scaler.load_state_dict(state_dict)
