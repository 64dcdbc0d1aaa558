import numpy as np
import torch
import torch.nn.functional as F
from torch.autograd import Function
from typing import Any, Tuple, Optional, Callable, List
from numba import njit, prange, float32
from numba import cuda

from .parallel_scan import compute_linear_recurrence, WARPSIZE
from .recurrence import Recurrence

# maximum filter order handled by the shared-memory kernel
MAX_ORDER_CUDA = 1024


@cuda.jit
def lpc_cuda_kernel(padded_out: np.ndarray, A: np.ndarray) -> None:
    """One block per batch item, one thread per filter tap.

    padded_out: (B, T + order) -- the first `order` samples hold the initial conditions
    A:          (B, T, order)  -- time-varying all-pole coefficients, reversed along order
    """
    batch_idx = cuda.blockIdx.x
    tid = cuda.threadIdx.x

    B, T, order = A.shape
    if batch_idx >= B:
        return

    sm = cuda.shared.array(shape=(MAX_ORDER_CUDA,), dtype=float32)

    for t in range(T):
        # each thread computes one tap of the all-pole feedback
        sm[tid] = -A[batch_idx, t, tid] * padded_out[batch_idx, t + tid]
        cuda.syncthreads()

        if tid == 0:
            acc = padded_out[batch_idx, t + order]
            for i in range(order):
                acc += sm[i]
            padded_out[batch_idx, t + order] = acc
        cuda.syncthreads()


def lpc_cuda(x: torch.Tensor, A: torch.Tensor, zi: torch.Tensor) -> torch.Tensor:
    B, T, order = A.shape
    assert order <= MAX_ORDER_CUDA, f"order must be <= {MAX_ORDER_CUDA} for the CUDA kernel"
    padded_out = torch.cat([zi.flip(1), x], dim=1).contiguous()

    threads_per_block = order
    blocks_per_grid = B
    stream = cuda.external_stream(torch.cuda.current_stream().cuda_stream)

    lpc_cuda_kernel[blocks_per_grid, threads_per_block, stream](
        cuda.as_cuda_array(padded_out),
        cuda.as_cuda_array(A.flip(2).contiguous()),
    )

    return padded_out[:, order:]


@njit(parallel=True)
def lpc_np(x: np.ndarray, A: np.ndarray, zi: np.ndarray) -> np.ndarray:
    B, T = x.shape
    order = zi.shape[1]
    padded_y = np.empty((B, T + order), dtype=x.dtype)
    padded_y[:, :order] = zi[:, ::-1]
    padded_y[:, order:] = x

    for b in prange(B):
        for t in range(T):
            ref = padded_y[b, t + order]
            for i in range(order):
                ref -= A[b, t, i] * padded_y[b, t + order - i - 1]
            padded_y[b, t + order] = ref

    return padded_y[:, order:]


def _lpc_forward(x: torch.Tensor, A: torch.Tensor, zi: torch.Tensor) -> torch.Tensor:
    """Dispatch to the fastest available implementation for x.device."""
    if A.shape[2] == 1:
        # first-order filters reduce to a linear recurrence: use the scan op
        return Recurrence.apply(-A.squeeze(2), x, zi.squeeze(1))
    if x.is_cuda:
        return lpc_cuda(x, A, zi)
    y = lpc_np(
        x.detach().cpu().numpy(),
        A.detach().cpu().numpy(),
        zi.detach().cpu().numpy(),
    )
    return torch.from_numpy(y).to(x.device, x.dtype)


class LPC(Function):
    @staticmethod
    def forward(
        ctx: Any, x: torch.Tensor, A: torch.Tensor, zi: torch.Tensor
    ) -> torch.Tensor:
        y = _lpc_forward(x.detach(), A.detach(), zi.detach())
        ctx.save_for_backward(A, zi, y)
        return y

    @staticmethod
    def backward(
        ctx: Any, grad_y: torch.Tensor
    ) -> Tuple[Optional[torch.Tensor], Optional[torch.Tensor], Optional[torch.Tensor]]:
        A, zi, y = ctx.saved_tensors
        grad_x = grad_A = grad_zi = None
        B, T, order = A.shape

        flipped_A = A.flip(1)
        padded_flipped_A = F.pad(flipped_A.transpose(1, 2), (0, order + 1))
        shifted_A = (
            padded_flipped_A.reshape(B, T + order + 1, order)[:, :-1, :]
            .reshape(B, order, T + order)
            .transpose(1, 2)
            .flip(2)
        )

        if not ctx.needs_input_grad[2]:
            # grad_y is in reverse time: run the same filter on the flipped signal
            padded_grad_y = F.pad(grad_y.unsqueeze(1), (order, 0)).squeeze(1)
            flipped_grad_x = LPC.apply(
                padded_grad_y.flip(1)[:, :T],
                shifted_A[:, :T].conj_physical(),
                torch.zeros_like(zi),
            )
        else:
            padded_grad_y = F.pad(grad_y.unsqueeze(1), (0, order)).squeeze(1)
            flipped_grad_x = LPC.apply(
                padded_grad_y.flip(1),
                shifted_A.conj_physical(),
                torch.zeros_like(zi),
            )
            grad_zi = flipped_grad_x[:, -order:]
            flipped_grad_x = flipped_grad_x[:, :-order]

        if ctx.needs_input_grad[0]:
            grad_x = flipped_grad_x.flip(1)

        if ctx.needs_input_grad[1]:
            valid_y = y[:, :-1]
            padded_y = torch.cat([zi.flip(1), valid_y], dim=1)

            unfolded_y = padded_y.unfold(1, order, 1).flip(2)
            grad_A = unfolded_y.conj_physical() * -flipped_grad_x.flip(1).unsqueeze(2)

        return grad_x, grad_A, grad_zi
