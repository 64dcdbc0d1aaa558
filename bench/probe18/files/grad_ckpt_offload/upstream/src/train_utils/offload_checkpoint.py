"""Gradient checkpointing that parks the saved layer inputs in pinned host memory.

Only the input hidden state of each decoder layer is saved (as in regular checkpointing), but it is
copied to the CPU on a side stream during forward and copied back right before recomputation.
For long-context fine-tuning this frees ~n_layers * seq * hidden * 2 bytes of GPU memory.
"""
import functools
import logging
from typing import Any, Callable, Optional

import torch
from torch.utils.checkpoint import checkpoint as torch_checkpoint

logger = logging.getLogger(__name__)

_OFFLOAD_STREAM: Optional[torch.cuda.Stream] = None


def _get_offload_stream() -> torch.cuda.Stream:
    global _OFFLOAD_STREAM
    if _OFFLOAD_STREAM is None:
        _OFFLOAD_STREAM = torch.cuda.Stream()
    return _OFFLOAD_STREAM


class _PinnedBufferPool:
    """Re-use pinned host buffers between steps; allocating pinned memory is slow."""

    def __init__(self):
        self._free = {}

    def get(self, shape, dtype) -> torch.Tensor:
        key = (tuple(shape), dtype)
        bucket = self._free.get(key)
        if bucket:
            return bucket.pop()
        return torch.empty(shape, dtype=dtype, device="cpu", pin_memory=True)

    def put(self, buf: torch.Tensor) -> None:
        self._free.setdefault((tuple(buf.shape), buf.dtype), []).append(buf)


_POOL = _PinnedBufferPool()


class OffloadedCheckpointFunction(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd
    def forward(ctx, forward_function: Callable, hidden_states: torch.Tensor, *args):
        stream = _get_offload_stream()
        host_buf = _POOL.get(hidden_states.shape, hidden_states.dtype)
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            host_buf.copy_(hidden_states, non_blocking=True)
            ready = torch.cuda.Event()
            ready.record(stream)
        with torch.no_grad():
            output = forward_function(hidden_states, *args)
        ctx.save_for_backward(host_buf)
        ctx.ready = ready
        ctx.forward_function = forward_function
        ctx.args = args
        ctx.device = hidden_states.device
        return output

    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(ctx, dY):
        (host_buf,) = ctx.saved_tensors
        ctx.ready.synchronize()
        hidden_states = host_buf.to("cuda", non_blocking=True).detach()
        hidden_states.requires_grad_(True)
        _POOL.put(host_buf)
        with torch.enable_grad():
            (output,) = ctx.forward_function(hidden_states, *ctx.args)
        torch.autograd.backward(output, dY)
        return (None, hidden_states.grad) + (None,) * len(ctx.args)


def offloaded_checkpoint(function: Callable, hidden_states: torch.Tensor, *args, **kwargs) -> Any:
    if kwargs:
        function = functools.partial(function, **kwargs)
    if not hidden_states.is_cuda:
        # CPU / debugging runs: plain non-reentrant checkpointing
        return torch_checkpoint(function, hidden_states, *args, use_reentrant=False)
    return OffloadedCheckpointFunction.apply(function, hidden_states, *args)


def enable_offloaded_gradient_checkpointing(model: torch.nn.Module) -> None:
    """Replace HF's `_gradient_checkpointing_func` with the offloading variant."""
    if not getattr(model, "supports_gradient_checkpointing", False):
        raise ValueError(f"{model.__class__.__name__} does not support gradient checkpointing.")

    def _func(func, *args, **kwargs):
        return offloaded_checkpoint(func, *args, **kwargs)

    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": True})
    for module in model.modules():
        if hasattr(module, "_gradient_checkpointing_func"):
            module._gradient_checkpointing_func = _func
    if hasattr(model, "enable_input_require_grads"):
        model.enable_input_require_grads()
    logger.info("Enabled gradient checkpointing with CPU offload of layer inputs.")


def report_offload_savings(model: torch.nn.Module, seq_len: int, micro_batch: int) -> str:
    cfg = model.config
    bytes_per = torch.finfo(model.dtype).bits // 8
    saved = cfg.num_hidden_layers * seq_len * micro_batch * cfg.hidden_size * bytes_per
    free, total = torch.cuda.mem_get_info()
    return (f"offloading saves ~{saved / 2**30:.2f} GiB of activations "
            f"({free / 2**30:.1f} GiB free of {total / 2**30:.1f} GiB on the GPU)")
