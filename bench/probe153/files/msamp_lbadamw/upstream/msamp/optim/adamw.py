# Copyright (c) Microsoft Corporation.
# Licensed under the MIT License.

"""LBAdamW: AdamW with low-bit (FP8 / FP16) optimizer states, backed by fused CUDA kernels."""

import math
from typing import List, Optional

import torch
from torch import Tensor

from msamp.common.dtype import Dtypes
from msamp.common.tensor import ScalingMeta, ScalingTensor
from msamp.optim.optimizer import LBAdamWBase

import msamp_adamw


def _new_meta(qtype, window_size: int = 1) -> ScalingMeta:
    """ScalingMeta whose scale/amax buffers live on the current GPU."""
    meta = ScalingMeta(qtype, window_size=window_size)
    meta.scale = torch.ones((), dtype=torch.float32, device='cuda')
    meta.scale_inv = torch.ones((), dtype=torch.float32, device='cuda')
    meta.amax = torch.zeros((window_size, ), dtype=torch.float32, device='cuda')
    return meta


class LBAdamW(LBAdamWBase):
    """Implements AdamW algorithm with weight prediction and low-bit states.

    The first moment is stored as FP8-E4M3 ScalingTensor (one scale per tensor), the second
    moment as FP16. The fused kernel dequantises, updates and requantises in one pass so the
    fp32 moments never exist in global memory.
    """

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        bias_correction: bool = True,
        betas=(0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        exp_avg_dtype=torch.uint8,
        exp_avg_sq_dtype=torch.float16,
        tensor_scale: bool = True,
    ):
        if not 0.0 <= lr:
            raise ValueError(f'Invalid learning rate: {lr}')
        if not 0.0 <= eps:
            raise ValueError(f'Invalid epsilon value: {eps}')
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f'Invalid beta parameter at index 0: {betas[0]}')
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f'Invalid beta parameter at index 1: {betas[1]}')
        if amsgrad:
            raise NotImplementedError('LBAdamW does not support amsgrad.')
        super().__init__(
            params,
            lr=lr,
            bias_correction=bias_correction,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
            exp_avg_dtype=exp_avg_dtype,
            exp_avg_sq_dtype=exp_avg_sq_dtype,
            tensor_scale=tensor_scale,
        )
        self.use_adam = not weight_decay

    def _init_state(self, state, param: Tensor):
        state['step'] = 0
        if self.exp_avg_dtype == torch.uint8:
            exp_avg = torch.zeros_like(param, dtype=torch.uint8, memory_format=torch.preserve_format)
            state['exp_avg'] = ScalingTensor(exp_avg, meta=_new_meta(Dtypes.kfloat8_e4m3))
        else:
            state['exp_avg'] = torch.zeros_like(param, dtype=self.exp_avg_dtype)
        state['exp_avg_sq'] = torch.zeros_like(param, dtype=self.exp_avg_sq_dtype)

    @torch.no_grad()
    def adamw_fn(
        self,
        params: List[Tensor],
        grads: List[Tensor],
        exp_avgs: List[Tensor],
        exp_avg_sqs: List[Tensor],
        max_exp_avg_sqs: List[Tensor],
        state_steps: List[int],
        *,
        amsgrad: bool,
        beta1: float,
        beta2: float,
        lr: float,
        weight_decay: float,
        eps: float,
        maximize: bool,
    ):
        """Functional API that performs the LBAdamW computation for one param group."""
        for i, param in enumerate(params):
            grad = grads[i] if not maximize else -grads[i]
            grad = grad.float()
            exp_avg = exp_avgs[i]
            exp_avg_sq = exp_avg_sqs[i]
            step = state_steps[i]

            bias_correction1 = 1 - beta1**step
            bias_correction2 = 1 - beta2**step

            param_value = param.value if isinstance(param, ScalingTensor) else param
            if not param_value.is_cuda:
                raise RuntimeError('LBAdamW only supports parameters on CUDA devices.')

            if isinstance(exp_avg, ScalingTensor):
                # stage 1: dequantise exp_avg, update both moments in fp32 registers,
                # write the new amax; the requantisation happens in stage 2 once the
                # global amax is known.
                exp_avg_value = torch.empty_like(grad, dtype=torch.float32)
                msamp_adamw.adamw_fp8_stage1_compute(
                    param_value,
                    grad,
                    exp_avg.value,
                    exp_avg.meta.scale_inv,
                    exp_avg_value,
                    exp_avg_sq,
                    beta1,
                    beta2,
                    eps,
                    step,
                    lr,
                    weight_decay,
                    bias_correction1,
                    bias_correction2,
                )
                exp_avg.meta.amax[0] = exp_avg_value.abs().max()
                exp_avg.meta.reset_scaling_factor()
                msamp_adamw.adamw_fp8_stage2_compute(
                    exp_avg_value,
                    exp_avg.value,
                    exp_avg.meta.scale,
                )
            else:
                msamp_adamw.adamw_compute(
                    param_value,
                    grad,
                    exp_avg,
                    exp_avg_sq,
                    beta1,
                    beta2,
                    eps,
                    step,
                    lr,
                    weight_decay,
                    bias_correction1,
                    bias_correction2,
                )

            if isinstance(param, ScalingTensor):
                param.meta.amax[0] = param_value.abs().max()
                param.meta.reset_scaling_factor()

    def state_memory_bytes(self) -> int:
        """Bytes held by optimizer states on this rank (for the memory report)."""
        total = 0
        for state in self.state.values():
            for key in ('exp_avg', 'exp_avg_sq'):
                value = state.get(key)
                if value is None:
                    continue
                tensor = value.value if isinstance(value, ScalingTensor) else value
                total += tensor.numel() * tensor.element_size()
        return total


def reference_adamw_step(
    param: Tensor,
    grad: Tensor,
    exp_avg: Tensor,
    exp_avg_sq: Tensor,
    *,
    step: int,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float,
    bias_correction1: Optional[float] = None,
    bias_correction2: Optional[float] = None,
) -> None:
    """Plain-PyTorch fp32 AdamW step used by the unit tests to check the fused kernels."""
    bias_correction1 = bias_correction1 if bias_correction1 is not None else 1 - beta1**step
    bias_correction2 = bias_correction2 if bias_correction2 is not None else 1 - beta2**step
    param.mul_(1 - lr * weight_decay)
    exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    denom = (exp_avg_sq.sqrt() / math.sqrt(bias_correction2)).add_(eps)
    step_size = lr / bias_correction1
    param.addcdiv_(exp_avg, denom, value=-step_size)
