"""Batched Viterbi decoding and CRF log-partition with optional fused kernels.

The compiled extension (``fast_crf._C``) has two halves: CPU kernels, which
are always built, and CUDA kernels, built when nvcc is available. Everything
here falls back to a pure PyTorch implementation when neither applies, so the
module is importable everywhere.
"""
import logging
import warnings
from typing import List, Optional, Tuple

import torch

logger = logging.getLogger(__name__)

try:
    from fast_crf import _C  # type: ignore[attr-defined]

    HAS_EXT = True
    HAS_CUDA_KERNELS = bool(_C.with_cuda())
except ImportError:  # pragma: no cover - exercised in CI without the build
    _C = None
    HAS_EXT = False
    HAS_CUDA_KERNELS = False
    warnings.warn("fast_crf._C not found; using the (slower) PyTorch implementation")


def _check_inputs(emissions: torch.Tensor, transitions: torch.Tensor, lengths: torch.Tensor) -> None:
    if emissions.dim() != 3:
        raise ValueError(f"emissions must be (batch, seq_len, n_tags), got {tuple(emissions.shape)}")
    n_tags = emissions.size(-1)
    if transitions.shape != (n_tags, n_tags):
        raise ValueError(f"transitions must be ({n_tags}, {n_tags}), got {tuple(transitions.shape)}")
    if lengths.dim() != 1 or lengths.size(0) != emissions.size(0):
        raise ValueError("lengths must be a 1-D tensor with one entry per sequence")


@torch.jit.script
def _viterbi_torch(
    emissions: torch.Tensor,
    transitions: torch.Tensor,
    lengths: torch.Tensor,
    start_transitions: torch.Tensor,
    end_transitions: torch.Tensor,
) -> Tuple[torch.Tensor, torch.Tensor]:
    batch_size, seq_len, n_tags = emissions.shape
    score = start_transitions.unsqueeze(0) + emissions[:, 0]
    history = torch.zeros((seq_len, batch_size, n_tags), dtype=torch.long, device=emissions.device)
    mask = torch.arange(seq_len, device=emissions.device).unsqueeze(0) < lengths.unsqueeze(1)
    for t in range(1, seq_len):
        broadcast_score = score.unsqueeze(2)
        next_score = broadcast_score + transitions.unsqueeze(0) + emissions[:, t].unsqueeze(1)
        next_score, indices = next_score.max(dim=1)
        step_mask = mask[:, t].unsqueeze(1)
        score = torch.where(step_mask, next_score, score)
        history[t] = indices
    score = score + end_transitions.unsqueeze(0)
    best_score, best_last = score.max(dim=1)
    # backtrack (on device, one step at a time)
    best_paths = torch.zeros((batch_size, seq_len), dtype=torch.long, device=emissions.device)
    best_paths[:, 0] = best_last
    last = best_last
    for b in range(batch_size):
        cur = int(lengths[b].item()) - 1
        tag = last[b]
        best_paths[b, cur] = tag
        for t in range(cur, 0, -1):
            tag = history[t, b, tag]
            best_paths[b, t - 1] = tag
    return best_score, best_paths


def viterbi_decode(
    emissions: torch.Tensor,
    transitions: torch.Tensor,
    lengths: torch.Tensor,
    start_transitions: Optional[torch.Tensor] = None,
    end_transitions: Optional[torch.Tensor] = None,
) -> Tuple[torch.Tensor, List[List[int]]]:
    """Return (best scores, best tag sequences) for a padded batch."""
    _check_inputs(emissions, transitions, lengths)
    n_tags = emissions.size(-1)
    if start_transitions is None:
        start_transitions = emissions.new_zeros(n_tags)
    if end_transitions is None:
        end_transitions = emissions.new_zeros(n_tags)

    if HAS_EXT and emissions.is_cuda and HAS_CUDA_KERNELS:
        stream = torch.cuda.current_stream(emissions.device).cuda_stream
        scores, paths = _C.viterbi_forward_cuda(
            emissions.contiguous(), transitions.contiguous(), lengths.to(emissions.device, torch.int32),
            start_transitions, end_transitions, stream,
        )
    elif HAS_EXT and emissions.device.type == "cpu":
        scores, paths = _C.viterbi_forward_cpu(
            emissions.contiguous(), transitions.contiguous(), lengths.to(torch.int32),
            start_transitions, end_transitions,
        )
    else:
        scores, paths = _viterbi_torch(emissions, transitions, lengths.to(emissions.device), start_transitions, end_transitions)

    lengths_list = lengths.tolist()
    paths_cpu = paths.cpu()
    return scores, [paths_cpu[i, : lengths_list[i]].tolist() for i in range(len(lengths_list))]


class _LogPartitionFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, emissions, transitions, lengths):
        log_z, alphas = _C.crf_forward_cuda(emissions.contiguous(), transitions.contiguous(), lengths.int())
        ctx.save_for_backward(emissions, transitions, lengths, alphas, log_z)
        return log_z

    @staticmethod
    def backward(ctx, grad_log_z):
        emissions, transitions, lengths, alphas, log_z = ctx.saved_tensors
        grad_emissions, grad_transitions = _C.crf_backward_cuda(
            grad_log_z.contiguous(), emissions, transitions, lengths.int(), alphas, log_z
        )
        return grad_emissions, grad_transitions, None


def _log_partition_torch(emissions: torch.Tensor, transitions: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    batch_size, seq_len, n_tags = emissions.shape
    alpha = emissions[:, 0]
    mask = torch.arange(seq_len, device=emissions.device).unsqueeze(0) < lengths.to(emissions.device).unsqueeze(1)
    for t in range(1, seq_len):
        scores = alpha.unsqueeze(2) + transitions.unsqueeze(0) + emissions[:, t].unsqueeze(1)
        new_alpha = torch.logsumexp(scores, dim=1)
        alpha = torch.where(mask[:, t].unsqueeze(1), new_alpha, alpha)
    return torch.logsumexp(alpha, dim=1)


def log_partition(emissions: torch.Tensor, transitions: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """log Z for each sequence in the batch; differentiable."""
    _check_inputs(emissions, transitions, lengths)
    if HAS_CUDA_KERNELS and emissions.is_cuda and emissions.dtype in (torch.float32, torch.float64):
        return _LogPartitionFn.apply(emissions, transitions, lengths)
    return _log_partition_torch(emissions, transitions, lengths)


def benchmark(batch_size: int = 64, seq_len: int = 120, n_tags: int = 20, repeats: int = 20) -> None:
    """Compare the fused kernel against the PyTorch fallback on the current GPU."""
    import time

    device = torch.device("cuda")
    emissions = torch.randn(batch_size, seq_len, n_tags, device=device)
    transitions = torch.randn(n_tags, n_tags, device=device)
    lengths = torch.randint(seq_len // 2, seq_len + 1, (batch_size,))
    for name, fn in (("fused", viterbi_decode), ("torch", None)):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(repeats):
            if fn is None:
                _viterbi_torch(emissions, transitions, lengths.to(device), emissions.new_zeros(n_tags), emissions.new_zeros(n_tags))
            else:
                fn(emissions, transitions, lengths)
        torch.cuda.synchronize()  # kernels are async; wait before reading the clock
        logger.info("%s: %.2f ms/batch", name, (time.perf_counter() - start) * 1000 / repeats)
