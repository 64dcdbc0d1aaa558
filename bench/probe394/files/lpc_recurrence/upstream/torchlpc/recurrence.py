import torch
import numpy as np
from torch.autograd import Function
from numba import cuda
from typing import Tuple, Optional, Any, List

from .parallel_scan import compute_linear_recurrence, WARPSIZE

try:
    # compiled by setup.py; registers torch.ops.torchlpc.scan (CUDA) and
    # torch.ops.torchlpc.scan_cpu (CPU)
    from . import _C  # noqa: F401

    EXTENSION_LOADED = True
except ImportError:
    EXTENSION_LOADED = False


def _cuda_recurrence(
    impulse: torch.Tensor, decay: torch.Tensor, initial_state: torch.Tensor
) -> torch.Tensor:
    n_dims, n_steps = decay.shape
    if n_dims * WARPSIZE < n_steps:
        if EXTENSION_LOADED:
            runner = lambda x, y, z: torch.ops.torchlpc.scan(x, y, z)
        else:

            def runner(impulse, decay, initial_state):
                out = torch.empty_like(impulse)
                compute_linear_recurrence(
                    cuda.as_cuda_array(decay.detach()),
                    cuda.as_cuda_array(impulse.detach()),
                    cuda.as_cuda_array(initial_state.detach()),
                    cuda.as_cuda_array(out),
                    n_dims,
                    n_steps,
                )
                return out

    else:
        # short sequences: a plain loop over time is faster than the scan
        def runner(impulse, decay, initial_state):
            out = torch.empty_like(impulse)
            out[:, 0] = decay[:, 0] * initial_state + impulse[:, 0]
            for t in range(1, n_steps):
                out[:, t] = decay[:, t] * out[:, t - 1] + impulse[:, t]
            return out

    return runner(impulse, decay, initial_state)


def _cpu_recurrence(
    impulse: torch.Tensor, decay: torch.Tensor, initial_state: torch.Tensor
) -> torch.Tensor:
    if EXTENSION_LOADED:
        return torch.ops.torchlpc.scan_cpu(impulse, decay, initial_state)

    n_dims, n_steps = decay.shape
    out = torch.empty_like(impulse)
    out[:, 0] = decay[:, 0] * initial_state + impulse[:, 0]
    for t in range(1, n_steps):
        out[:, t] = decay[:, t] * out[:, t - 1] + impulse[:, t]
    return out


class Recurrence(Function):
    """y[t] = decay[t] * y[t-1] + impulse[t], differentiable w.r.t. all inputs."""

    @staticmethod
    def forward(
        ctx: Any,
        decay: torch.Tensor,
        impulse: torch.Tensor,
        initial_state: torch.Tensor,
    ) -> torch.Tensor:
        if decay.is_cuda:
            out = _cuda_recurrence(impulse, decay, initial_state)
        else:
            out = _cpu_recurrence(impulse, decay, initial_state)
        ctx.save_for_backward(decay, initial_state, out)
        return out

    @staticmethod
    def backward(
        ctx: Any, grad_out: torch.Tensor
    ) -> Tuple[Optional[torch.Tensor], Optional[torch.Tensor], Optional[torch.Tensor]]:
        decay, initial_state, out = ctx.saved_tensors
        grad_decay = grad_impulse = grad_initial_state = None
        n_dims, _ = decay.shape

        padded_decay = torch.cat([decay, decay.new_zeros(n_dims, 1)], dim=1)
        if ctx.needs_input_grad[1]:
            grad_impulse = Recurrence.apply(
                padded_decay[:, 1:].flip(1).conj_physical(),
                grad_out.flip(1),
                torch.zeros_like(initial_state),
            ).flip(1)

        if ctx.needs_input_grad[2]:
            grad_initial_state = grad_impulse[:, 0] * decay[:, 0].conj_physical()

        if ctx.needs_input_grad[0]:
            padded_out = torch.cat([initial_state.unsqueeze(1), out[:, :-1]], dim=1)
            grad_decay = padded_out.conj_physical() * grad_impulse

        return grad_decay, grad_impulse, grad_initial_state


# kept for backwards compatibility with torchlpc < 0.5
RecurrenceCUDA = Recurrence
