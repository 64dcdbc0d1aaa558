"""Batched token sampler for an LLM server: temperature, top-k, top-p, min-p, repetition penalty.

Uses FlashInfer's rejection-sampling kernels when available (no sort over the vocabulary), and a
pure-PyTorch path otherwise. Per-request seeds are honoured with per-row generators.
"""
from dataclasses import dataclass
from typing import List, Optional

import torch

try:
    from flashinfer.sampling import min_p_sampling_from_probs, top_k_top_p_sampling_from_logits
    HAS_FLASHINFER = True
except ImportError:
    HAS_FLASHINFER = False

from flashinfer.sampling import chain_speculative_sampling


@dataclass
class SamplingParams:
    temperature: float = 1.0
    top_k: int = -1
    top_p: float = 1.0
    min_p: float = 0.0
    repetition_penalty: float = 1.0
    seed: Optional[int] = None


class SamplingBatch:
    def __init__(self, params: List[SamplingParams], vocab_size: int, device: torch.device):
        self.device = device
        self.temperatures = torch.tensor([max(p.temperature, 1e-5) for p in params], dtype=torch.float32, device=device)
        self.top_ks = torch.tensor([p.top_k if p.top_k > 0 else vocab_size for p in params], dtype=torch.int32, device=device)
        self.top_ps = torch.tensor([p.top_p for p in params], dtype=torch.float32, device=device)
        self.min_ps = torch.tensor([p.min_p for p in params], dtype=torch.float32, device=device)
        self.rep = torch.tensor([p.repetition_penalty for p in params], dtype=torch.float32, device=device)
        self.need_min_p = any(p.min_p > 0 for p in params)
        self.need_rep = any(p.repetition_penalty != 1.0 for p in params)
        self.greedy = all(p.temperature == 0 for p in params)
        self.generators = [self._make_generator(p.seed) for p in params]

    def _make_generator(self, seed):
        if seed is None:
            return None
        g = torch.Generator(device="cuda")
        g.manual_seed(seed)
        return g


def apply_repetition_penalty(logits, prev_tokens, penalty):
    score = torch.gather(logits, 1, prev_tokens)
    score = torch.where(score < 0, score * penalty[:, None], score / penalty[:, None])
    return logits.scatter(1, prev_tokens, score)


def _torch_top_k_top_p(probs, top_ks, top_ps):
    sorted_probs, idx = probs.sort(dim=-1, descending=True)
    cum = sorted_probs.cumsum(dim=-1)
    mask_p = (cum - sorted_probs) > top_ps[:, None]
    ranks = torch.arange(probs.shape[-1], device=probs.device)[None]
    mask_k = ranks >= top_ks[:, None]
    sorted_probs = sorted_probs.masked_fill(mask_p | mask_k, 0.0)
    return torch.zeros_like(probs).scatter_(-1, idx, sorted_probs)


def sample(logits: torch.Tensor, batch: SamplingBatch, prev_tokens: Optional[torch.Tensor] = None) -> torch.Tensor:
    if batch.need_rep and prev_tokens is not None:
        logits = apply_repetition_penalty(logits, prev_tokens, batch.rep)
    if batch.greedy:
        return logits.argmax(dim=-1)
    logits = logits.float() / batch.temperatures[:, None]
    if HAS_FLASHINFER and logits.is_cuda and not any(batch.generators):
        if batch.need_min_p:
            probs = torch.softmax(logits, dim=-1)
            return min_p_sampling_from_probs(probs, batch.min_ps)
        return top_k_top_p_sampling_from_logits(logits, batch.top_ks, batch.top_ps)
    probs = torch.softmax(logits, dim=-1)
    probs = _torch_top_k_top_p(probs, batch.top_ks, batch.top_ps)
    if batch.need_min_p:
        thresh = probs.amax(dim=-1, keepdim=True) * batch.min_ps[:, None]
        probs = probs.masked_fill(probs < thresh, 0.0)
    probs = probs / probs.sum(dim=-1, keepdim=True)
    if any(batch.generators):
        rows = [torch.multinomial(probs[i], 1, generator=g) for i, g in enumerate(batch.generators)]
        return torch.cat(rows)
    return torch.multinomial(probs, 1).squeeze(-1)


def verify_draft_tokens(draft_probs, draft_token_ids, target_probs):
    """Speculative decoding acceptance via FlashInfer's chain rejection sampler."""
    b, k = draft_token_ids.shape
    uniform = torch.rand(b, k + 1, device=draft_probs.device)
    accepted, num_accepted, num_emitted = chain_speculative_sampling(
        draft_probs, draft_token_ids, uniform, target_probs)
    return accepted, num_emitted


def warmup(vocab_size: int = 152064, max_batch: int = 256):
    """Trigger kernel JIT / autotuning before serving traffic."""
    device = torch.device("cuda")
    for bs in (1, 8, 64, max_batch):
        params = [SamplingParams(temperature=0.7, top_k=50, top_p=0.9) for _ in range(bs)]
        batch = SamplingBatch(params, vocab_size, device)
        logits = torch.randn(bs, vocab_size, device=device)
        sample(logits, batch)
    torch.cuda.synchronize()
