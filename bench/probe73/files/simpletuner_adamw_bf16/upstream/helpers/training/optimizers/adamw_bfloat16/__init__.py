"""
AdamW for pure-bf16 training with stochastic rounding of the parameter update.

Keeping weights in bf16 halves optimiser memory, but round-to-nearest loses small updates
(|update| < ulp/2 simply vanishes). Stochastic rounding keeps the update unbiased in
expectation. On GPUs the rounding runs as a fused Triton kernel; elsewhere it falls back to
an equivalent (slower) PyTorch implementation.
"""

import math
from typing import Callable, Iterable, Optional, Tuple

import torch
from torch.optim.optimizer import Optimizer

try:
    import triton
    import triton.language as tl

    _HAS_TRITON = True
except ImportError:  # pragma: no cover
    triton = None
    tl = None
    _HAS_TRITON = False


if _HAS_TRITON:

    @triton.autotune(
        configs=[
            triton.Config({"BLOCK_SIZE": 1024}, num_warps=4, num_stages=2),
            triton.Config({"BLOCK_SIZE": 2048}, num_warps=8, num_stages=2),
            triton.Config({"BLOCK_SIZE": 4096}, num_warps=8, num_stages=3),
        ],
        key=["n_elements"],
    )
    @triton.jit
    def _add_stochastic_kernel(
        target_ptr,  # bf16 parameter, viewed as int16
        update_ptr,  # fp32 update
        n_elements,
        alpha,
        seed,
        BLOCK_SIZE: tl.constexpr,
    ):
        pid = tl.program_id(axis=0)
        offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements

        target_bits = tl.load(target_ptr + offsets, mask=mask, other=0).to(tl.int32) << 16
        target = target_bits.to(tl.float32, bitcast=True)
        update = tl.load(update_ptr + offsets, mask=mask, other=0.0, cache_modifier=".cg")
        result = target + alpha * update

        # add 16 random low bits, then truncate to bf16
        rnd = tl.randint(seed, offsets) & 0xFFFF
        result_bits = result.to(tl.int32, bitcast=True) + rnd.to(tl.int32)
        result_bits = (result_bits >> 16).to(tl.int16)
        tl.store(target_ptr + offsets, result_bits, mask=mask)


def _copy_stochastic_torch_(target: torch.Tensor, source: torch.Tensor):
    # create a random 16 bit integer
    result = torch.randint_like(source, dtype=torch.int32, low=0, high=(1 << 16))
    # add the random number to the lower 16 bit of the mantissa
    result.add_(source.view(dtype=torch.int32))
    # mask off the lower 16 bit of the mantissa
    result.bitwise_and_(-65536)  # -65536 = FFFF0000 as a signed int32
    # copy the higher 16 bit into the target tensor
    target.copy_(result.view(dtype=torch.float32))


def add_stochastic_(target: torch.Tensor, update: torch.Tensor, alpha: float = 1.0):
    """target += alpha * update with stochastic rounding; target is bf16, update any float dtype."""
    if target.dtype != torch.bfloat16:
        target.add_(update, alpha=alpha)
        return
    update = update.float().contiguous()
    if _HAS_TRITON and target.is_cuda and target.is_contiguous():
        n = target.numel()
        seed = int(torch.randint(0, 2**31 - 1, (1,)).item())
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)  # noqa: E731
        _add_stochastic_kernel[grid](target.view(torch.int16), update, n, alpha, seed)
        return
    result = target.float().add_(update, alpha=alpha)
    _copy_stochastic_torch_(target, result)


class AdamWBF16(Optimizer):
    decay_threshold = 5e-3

    def __init__(
        self,
        params: Iterable[torch.nn.parameter.Parameter],
        lr: float = 1e-3,
        betas: Tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
    ):
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 <= eps:
            raise ValueError("Invalid epsilon value: {}".format(eps))
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError("Invalid beta parameter at index 0: {}".format(betas[0]))
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError("Invalid beta parameter at index 1: {}".format(betas[1]))
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure: Optional[Callable] = None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()

        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr = group["lr"]
            eps = group["eps"]
            weight_decay = group["weight_decay"]

            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.dtype != torch.bfloat16:
                    raise RuntimeError("AdamWBF16 expects bf16 parameters; use torch.optim.AdamW for fp32 weights.")

                grad = p.grad
                state = self.state[p]

                # State initialization
                if len(state) == 0:
                    state["step"] = 0
                    # Exponential moving average of gradient values
                    state["exp_avg"] = torch.zeros_like(p, dtype=torch.bfloat16)
                    # Exponential moving average of squared gradient values
                    state["exp_avg_sq"] = torch.zeros_like(p, dtype=torch.bfloat16)

                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                state["step"] += 1
                step = state["step"]

                # Decay the first and second moment running average coefficient
                exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)

                bias_correction1 = 1 - beta1**step
                bias_correction2 = 1 - beta2**step
                step_size = lr / bias_correction1

                denom = (exp_avg_sq.float().sqrt() / math.sqrt(bias_correction2)).add_(eps)
                update = exp_avg.float() / denom

                if weight_decay != 0 and lr * weight_decay > self.decay_threshold * lr:
                    update.add_(p.float(), alpha=weight_decay)

                add_stochastic_(p, update, alpha=-step_size)

        return loss
