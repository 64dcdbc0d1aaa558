"""Token sampling for the batch scheduler (TGI / SGLang-like).

Per-request sampling parameters are batched into tensors; temperature, top-k, top-p, min-p and
repetition penalties are applied on the device, and the sampled ids are copied back to a pinned
host buffer on a side stream so the scheduler can overlap the copy with the next forward.
"""
import dataclasses
import logging
from typing import List, Optional

import torch

logger = logging.getLogger(__name__)

_SAMPLING_EPS = 1e-5
_MAX_TOP_K = 1 << 30


@dataclasses.dataclass
class SamplingParams:
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    min_p: float = 0.0
    repetition_penalty: float = 1.0
    seed: Optional[int] = None


class SamplingBatchInfo:

    def __init__(self, params: List[SamplingParams], vocab_size: int, device: str = "cuda"):
        self.vocab_size = vocab_size
        self.device = device
        self.temperatures = torch.tensor([max(p.temperature, _SAMPLING_EPS) for p in params],
                                         dtype=torch.float32, device=device).view(-1, 1)
        self.top_ps = torch.tensor([p.top_p for p in params], dtype=torch.float32, device=device)
        self.top_ks = torch.tensor([p.top_k if p.top_k > 0 else _MAX_TOP_K for p in params],
                                   dtype=torch.int32, device=device)
        self.min_ps = torch.tensor([p.min_p for p in params], dtype=torch.float32, device=device)
        self.rep_penalties = torch.tensor([p.repetition_penalty for p in params],
                                          dtype=torch.float32, device=device).view(-1, 1)
        self.is_all_greedy = all(p.temperature <= _SAMPLING_EPS for p in params)
        self.need_min_p = any(p.min_p > 0 for p in params)
        self.need_top_k_top_p = any(p.top_k > 0 or p.top_p < 1.0 for p in params)
        self.need_rep_penalty = any(p.repetition_penalty != 1.0 for p in params)
        self.generators = [self._make_generator(p.seed) if p.seed is not None else None for p in params]

    def _make_generator(self, seed):
        g = torch.Generator(device="cuda")
        g.manual_seed(seed)
        return g


def apply_repetition_penalty(logits: torch.Tensor, output_ids: torch.Tensor, penalties: torch.Tensor):
    # output_ids: [B, L] padded with -1
    mask = output_ids >= 0
    ids = output_ids.clamp(min=0)
    score = torch.gather(logits, 1, ids)
    score = torch.where(score < 0, score * penalties, score / penalties)
    logits.scatter_(1, torch.where(mask, ids, torch.zeros_like(ids)), torch.where(mask, score, torch.gather(logits, 1, ids)))
    return logits


def top_k_top_p_min_p_sampling_from_probs_torch(probs: torch.Tensor, top_ks: torch.Tensor,
                                                 top_ps: torch.Tensor, min_ps: torch.Tensor,
                                                 need_min_p: bool, generators=None) -> torch.Tensor:
    """Sorting-based reference implementation; works on any device."""
    probs_sort, probs_idx = probs.sort(dim=-1, descending=True)
    probs_sum = torch.cumsum(probs_sort, dim=-1)
    probs_sort[(probs_sum - probs_sort) > top_ps.view(-1, 1)] = 0.0
    probs_sort[torch.arange(0, probs.shape[-1], device=probs.device).view(1, -1) >= top_ks.view(-1, 1)] = 0.0
    if need_min_p:
        min_p_thresholds = probs_sort[:, 0] * min_ps
        probs_sort[probs_sort < min_p_thresholds.view(-1, 1)] = 0.0
    if generators is None or all(g is None for g in generators):
        sampled_index = torch.multinomial(probs_sort, num_samples=1)
    else:
        sampled_index = torch.stack([
            torch.multinomial(probs_sort[i:i + 1], num_samples=1, generator=g)[0] if g is not None
            else torch.multinomial(probs_sort[i:i + 1], num_samples=1)[0]
            for i, g in enumerate(generators)
        ])
    return torch.gather(probs_idx, dim=1, index=sampled_index).view(-1)


class Sampler:

    def __init__(self, max_batch_size: int = 256, use_flashinfer: bool = True):
        self.copy_stream = torch.cuda.Stream()
        self.out_host = torch.empty(max_batch_size, dtype=torch.int64, pin_memory=True)
        self.copy_done = torch.cuda.Event()
        self.use_flashinfer = use_flashinfer
        if use_flashinfer:
            try:
                from flashinfer.sampling import top_k_top_p_sampling_from_probs, min_p_sampling_from_probs
                self._fi_top_k_top_p = top_k_top_p_sampling_from_probs
                self._fi_min_p = min_p_sampling_from_probs
            except ImportError:
                logger.warning("flashinfer not available, falling back to the torch sampler")
                self.use_flashinfer = False

    @torch.no_grad()
    def __call__(self, logits: torch.Tensor, info: SamplingBatchInfo,
                 output_ids: Optional[torch.Tensor] = None) -> torch.Tensor:
        logits = logits.contiguous().float()
        if info.need_rep_penalty and output_ids is not None:
            logits = apply_repetition_penalty(logits, output_ids, info.rep_penalties)
        if torch.any(torch.isnan(logits)):
            logger.warning("Detected NaN in logits; replacing with -inf")
            logits = torch.where(torch.isnan(logits), torch.full_like(logits, float("-inf")), logits)

        if info.is_all_greedy:
            next_ids = torch.argmax(logits, -1)
        else:
            logits.div_(info.temperatures)
            probs = torch.softmax(logits, dim=-1)
            if self.use_flashinfer:
                if info.need_min_p:
                    probs = self._fi_top_k_top_p(probs, info.top_ks, info.top_ps, filter_apply_order="top_k_first",
                                                 deterministic=True, return_probs=True)
                    next_ids = self._fi_min_p(probs, info.min_ps)
                else:
                    next_ids = self._fi_top_k_top_p(probs, info.top_ks, info.top_ps, deterministic=True)
            else:
                next_ids = top_k_top_p_min_p_sampling_from_probs_torch(
                    probs, info.top_ks, info.top_ps, info.min_ps, info.need_min_p, info.generators)
        return next_ids.to(torch.int64)

    def copy_to_host_async(self, next_ids: torch.Tensor) -> torch.Tensor:
        """Start the D2H copy on the side stream; call `wait_host()` before reading the result."""
        n = next_ids.numel()
        self.copy_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.copy_stream):
            self.out_host[:n].copy_(next_ids, non_blocking=True)
            self.copy_done.record(self.copy_stream)
        next_ids.record_stream(self.copy_stream)
        return self.out_host[:n]

    def wait_host(self):
        self.copy_done.synchronize()


def batched_greedy_check(logits: torch.Tensor, draft_ids: torch.Tensor) -> torch.Tensor:
    """Speculative decoding helper: number of accepted draft tokens per row under greedy verification."""
    target = logits.argmax(-1)
    matches = (target[:, :-1] == draft_ids).int()
    accepted = torch.cumprod(matches, dim=1).sum(dim=1)
    return accepted
