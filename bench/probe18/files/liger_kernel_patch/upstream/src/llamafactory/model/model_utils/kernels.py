# Copyright 2025 the LlamaFactory team.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
"""Fused kernels for training: Liger-Kernel patches, with a small Triton RMSNorm as fallback."""

import inspect
from typing import TYPE_CHECKING

import torch
import triton
import triton.language as tl

from ...extras import logging


if TYPE_CHECKING:
    from transformers import PretrainedConfig

    from ...hparams import ModelArguments


logger = logging.get_logger(__name__)


@triton.jit
def _rms_norm_fwd_kernel(X, Y, W, RSTD, stride, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
    w = tl.load(W + cols, mask=mask, other=0.0)
    var = tl.sum(x * x, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    tl.store(RSTD + row, rstd)
    y = (x * rstd).to(w.dtype) * w
    tl.store(Y + row * stride + cols, y, mask=mask)


class TritonRMSNorm(torch.nn.Module):
    """Forward-only fused RMSNorm used for evaluation / generation when Liger is not installed."""

    def __init__(self, hidden_size: int, eps: float = 1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        shape = hidden_states.shape
        x = hidden_states.reshape(-1, shape[-1]).contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        rstd = torch.empty(n_rows, dtype=torch.float32, device=x.device)
        BLOCK_SIZE = triton.next_power_of_2(n_cols)
        num_warps = 8 if BLOCK_SIZE >= 4096 else 4
        _rms_norm_fwd_kernel[(n_rows,)](
            x, y, self.weight, rstd, x.stride(0), n_cols, self.variance_epsilon,
            BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps,
        )
        return y.view(shape)


def patch_rms_norm_for_inference(model: torch.nn.Module) -> None:
    for name, module in model.named_modules():
        if module.__class__.__name__.endswith("RMSNorm") and hasattr(module, "weight"):
            eps = getattr(module, "variance_epsilon", getattr(module, "eps", 1e-6))
            fused = TritonRMSNorm(module.weight.shape[0], eps).to(module.weight.device, module.weight.dtype)
            fused.weight.data.copy_(module.weight.data)
            parent_name, _, child = name.rpartition(".")
            parent = model.get_submodule(parent_name) if parent_name else model
            setattr(parent, child, fused)


def apply_liger_kernel(
    config: "PretrainedConfig",
    model_args: "ModelArguments",
    is_trainable: bool,
    require_logits: bool,
) -> None:
    if not is_trainable or not model_args.enable_liger_kernel:
        return

    model_type = getattr(config, "model_type", None)
    if model_type == "gemma":
        from liger_kernel.transformers import apply_liger_kernel_to_gemma as apply_liger_kernel
    elif model_type == "gemma2":
        from liger_kernel.transformers import apply_liger_kernel_to_gemma2 as apply_liger_kernel
    elif model_type == "llama":
        from liger_kernel.transformers import apply_liger_kernel_to_llama as apply_liger_kernel
    elif model_type == "mistral":
        from liger_kernel.transformers import apply_liger_kernel_to_mistral as apply_liger_kernel
    elif model_type == "mixtral":
        from liger_kernel.transformers import apply_liger_kernel_to_mixtral as apply_liger_kernel
    elif model_type == "qwen2":
        from liger_kernel.transformers import apply_liger_kernel_to_qwen2 as apply_liger_kernel
    elif model_type == "qwen2_vl":
        from liger_kernel.transformers import apply_liger_kernel_to_qwen2_vl as apply_liger_kernel
    else:
        logger.warning_rank0("Current model does not support liger kernel.")
        return

    if require_logits and "fused_linear_cross_entropy" in inspect.signature(apply_liger_kernel).parameters:
        logger.info_rank0("Current training stage does not support chunked cross entropy.")
        kwargs = {"fused_linear_cross_entropy": False, "cross_entropy": True}
    else:
        kwargs = {}

    apply_liger_kernel(**kwargs)
    logger.info_rank0("Liger kernel has been applied to the model.")


def configure_kernels(config: "PretrainedConfig", model_args: "ModelArguments", is_trainable: bool) -> None:
    """Pick kernels once per run; Triton needs an sm70+ GPU."""
    if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] < 7:
        logger.warning_rank0("Triton kernels need compute capability >= 7.0, disabling Liger.")
        model_args.enable_liger_kernel = False
        return
    apply_liger_kernel(config, model_args, is_trainable, require_logits=False)
