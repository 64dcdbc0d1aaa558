"""Mistral-7B reference model: sliding-window GQA attention over a rotating KV cache.

Sequences of one batch are concatenated along the token axis (no padding); xformers
block-diagonal attention biases keep them apart and implement the sliding window.
"""
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, List, Optional

import torch
from simple_parsing.helpers import Serializable
from torch import nn
from xformers.ops.fmha import memory_efficient_attention
from xformers.ops.fmha.attn_bias import (
    AttentionBias,
    BlockDiagonalCausalMask,
    BlockDiagonalCausalWithOffsetPaddedKeysMask,
    BlockDiagonalMask,
)


@dataclass
class ModelArgs(Serializable):
    dim: int
    n_layers: int
    head_dim: int
    hidden_dim: int
    n_heads: int
    n_kv_heads: int
    sliding_window: int
    norm_eps: float
    vocab_size: int
    rope_theta: float = 10000.0
    max_batch_size: int = 0


@dataclass
class InputMetadata:
    positions: torch.Tensor  # absolute position of every token
    cache_positions: torch.Tensor  # slot in the rotating buffer
    prefill: bool
    mask: AttentionBias
    seqlens: List[int]


def precompute_freqs_cis(dim: int, end: int, theta: float) -> torch.Tensor:
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)  # type: ignore
    freqs = torch.outer(t, freqs).float()  # type: ignore
    return torch.polar(torch.ones_like(freqs), freqs)  # complex64


def apply_rotary_emb(xq: torch.Tensor, xk: torch.Tensor, freqs_cis: torch.Tensor):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = freqs_cis[:, None, :]
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(2)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(2)
    return xq_out.type_as(xq), xk_out.type_as(xk)


class RotatingBufferCache:
    """KV cache of `sliding_window` slots per sequence; token i goes to slot i % sliding_window."""

    def __init__(self, n_layers: int, max_batch_size: int, sliding_window: int, n_kv_heads: int, head_dim: int):
        self.sliding_window = sliding_window
        self.n_kv_heads = n_kv_heads
        self.head_dim = head_dim
        self.cache_k = torch.empty((n_layers, max_batch_size, sliding_window, n_kv_heads, head_dim))
        self.cache_v = torch.empty((n_layers, max_batch_size, sliding_window, n_kv_heads, head_dim))
        # holds the valid length for each batch element in the cache
        self.kv_seqlens: Optional[torch.Tensor] = None

    @property
    def device(self):
        return self.cache_k.device

    def to(self, device: torch.device, dtype: torch.dtype):
        self.cache_k = self.cache_k.to(device=device, dtype=dtype)
        self.cache_v = self.cache_v.to(device=device, dtype=dtype)
        return self

    def reset(self):
        self.kv_seqlens = None

    def init_kvseqlens(self, batch_size: int):
        self.kv_seqlens = torch.zeros((batch_size,), device=self.device, dtype=torch.long)

    def get_input_metadata(self, seqlens: List[int]) -> InputMetadata:
        if self.kv_seqlens is None:
            self.init_kvseqlens(len(seqlens))
        assert len(seqlens) == len(self.kv_seqlens)
        seqpos = self.kv_seqlens.tolist()

        positions = torch.cat([torch.arange(pos, pos + s) for pos, s in zip(seqpos, seqlens)]).to(
            device=self.device, dtype=torch.long
        )
        batch_idx = torch.tensor(sum([[i] * s for i, s in enumerate(seqlens)], []), device=self.device, dtype=torch.long)
        cache_positions = positions % self.sliding_window + batch_idx * self.sliding_window

        first_prefill = seqpos[0] == 0
        subsequent_prefill = any(s > 1 for s in seqlens)
        if first_prefill:
            assert all([pos == 0 for pos in seqpos]), seqpos
            mask = BlockDiagonalCausalMask.from_seqlens(seqlens).make_local_attention(self.sliding_window)
        elif subsequent_prefill:
            mask = BlockDiagonalMask.from_seqlens(
                q_seqlen=seqlens,
                kv_seqlen=[s + min(c, self.sliding_window) for s, c in zip(seqlens, seqpos)],
            ).make_local_attention_from_bottomright(self.sliding_window)
        else:
            mask = BlockDiagonalCausalWithOffsetPaddedKeysMask.from_seqlens(
                q_seqlen=seqlens,
                kv_padding=self.sliding_window,
                kv_seqlen=(self.kv_seqlens + 1).clamp(max=self.sliding_window).tolist(),
            )
        self.kv_seqlens += torch.tensor(seqlens, device=self.device, dtype=torch.long)
        return InputMetadata(
            positions=positions,
            cache_positions=cache_positions,
            prefill=first_prefill or subsequent_prefill,
            mask=mask,
            seqlens=seqlens,
        )


class Attention(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.args = args
        self.n_heads: int = args.n_heads
        self.n_kv_heads: int = args.n_kv_heads
        self.repeats = self.n_heads // self.n_kv_heads
        self.scale = self.args.head_dim**-0.5

        self.wq = nn.Linear(args.dim, args.n_heads * args.head_dim, bias=False)
        self.wk = nn.Linear(args.dim, args.n_kv_heads * args.head_dim, bias=False)
        self.wv = nn.Linear(args.dim, args.n_kv_heads * args.head_dim, bias=False)
        self.wo = nn.Linear(args.n_heads * args.head_dim, args.dim, bias=False)

    def forward(self, x, freqs_cis, layer_id: int, cache: Optional[RotatingBufferCache], meta: Optional[InputMetadata]):
        seqlen_sum, _ = x.shape
        xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)
        xq = xq.view(seqlen_sum, self.n_heads, self.args.head_dim)
        xk = xk.view(seqlen_sum, self.n_kv_heads, self.args.head_dim)
        xv = xv.view(seqlen_sum, self.n_kv_heads, self.args.head_dim)
        xq, xk = apply_rotary_emb(xq, xk, freqs_cis=freqs_cis)

        if cache is None:
            key, val = xk, xv
        else:
            flat_k = cache.cache_k[layer_id].view(-1, self.n_kv_heads, self.args.head_dim)
            flat_v = cache.cache_v[layer_id].view(-1, self.n_kv_heads, self.args.head_dim)
            flat_k.index_copy_(0, meta.cache_positions, xk)
            flat_v.index_copy_(0, meta.cache_positions, xv)
            key, val = (xk, xv) if meta.prefill else (flat_k, flat_v)

        # Repeat keys and values to match number of query heads
        key = torch.repeat_interleave(key, repeats=self.repeats, dim=1)
        val = torch.repeat_interleave(val, repeats=self.repeats, dim=1)

        # xformers requires (B=1, S, H, D)
        xq, key, val = xq[None, ...], key[None, ...], val[None, ...]
        output = memory_efficient_attention(xq, key, val, None if meta is None else meta.mask)

        return self.wo(output.view(seqlen_sum, self.n_heads * self.args.head_dim))


class RMSNorm(torch.nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        output = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + self.eps)
        return output.type_as(x) * self.weight


class FeedForward(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.w1 = nn.Linear(args.dim, args.hidden_dim, bias=False)
        self.w2 = nn.Linear(args.hidden_dim, args.dim, bias=False)
        self.w3 = nn.Linear(args.dim, args.hidden_dim, bias=False)

    def forward(self, x) -> torch.Tensor:
        return self.w2(nn.functional.silu(self.w1(x)) * self.w3(x))


class TransformerBlock(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.attention = Attention(args)
        self.feed_forward = FeedForward(args=args)
        self.attention_norm = RMSNorm(args.dim, eps=args.norm_eps)
        self.ffn_norm = RMSNorm(args.dim, eps=args.norm_eps)

    def forward(self, x, freqs_cis, layer_id, cache, meta) -> torch.Tensor:
        r = self.attention(self.attention_norm(x), freqs_cis, layer_id, cache, meta)
        h = x + r
        return h + self.feed_forward(self.ffn_norm(h))


class Transformer(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.args = args
        self.tok_embeddings = nn.Embedding(args.vocab_size, args.dim)
        self.layers = nn.ModuleList([TransformerBlock(args=args) for _ in range(args.n_layers)])
        self.norm = RMSNorm(args.dim, eps=args.norm_eps)
        self.output = nn.Linear(args.dim, args.vocab_size, bias=False)
        # complex64 cannot be a buffer of an fp16 module; kept as a plain attribute
        self._freqs_cis: Optional[torch.Tensor] = None

    @property
    def device(self) -> torch.device:
        return self.tok_embeddings.weight.device

    @property
    def freqs_cis(self) -> torch.Tensor:
        if self._freqs_cis is None:
            self._freqs_cis = precompute_freqs_cis(self.args.head_dim, 128_000, self.args.rope_theta)
        if self._freqs_cis.device != self.device:
            self._freqs_cis = self._freqs_cis.to(device=self.device)
        return self._freqs_cis

    def forward(self, input_ids: torch.Tensor, seqlens: List[int], cache: Optional[RotatingBufferCache] = None) -> torch.Tensor:
        assert len(seqlens) <= self.args.max_batch_size, f"Max batch size is {self.args.max_batch_size}, got batch size of {len(seqlens)}"
        assert sum(seqlens) == input_ids.shape[0], (sum(seqlens), input_ids.shape[0])
        meta = cache.get_input_metadata(seqlens) if cache is not None else None
        positions = meta.positions if meta is not None else torch.cat([torch.arange(s) for s in seqlens]).to(self.device)

        h = self.tok_embeddings(input_ids)
        freqs_cis = self.freqs_cis[positions]
        for layer_id, layer in enumerate(self.layers):
            h = layer(h, freqs_cis, layer_id, cache, meta)
        return self.output(self.norm(h)).float()

    @staticmethod
    def from_folder(folder: Path, max_batch_size: int = 1, device="cuda", dtype=torch.float16) -> "Transformer":
        with open(folder / "params.json", "r") as f:
            model_args = ModelArgs.from_dict(json.load(f))
        model_args.max_batch_size = max_batch_size
        with torch.device("meta"):
            model = Transformer(model_args)
        loaded = torch.load(str(folder / "consolidated.00.pth"), mmap=True)
        model.load_state_dict(loaded, assign=True)
        return model.to(device=device, dtype=dtype)


@torch.inference_mode()
def greedy_generate(prompts: List[List[int]], model: Transformer, max_tokens: int) -> List[List[int]]:
    seqlens = [len(p) for p in prompts]
    cache = RotatingBufferCache(
        model.args.n_layers, len(prompts), model.args.sliding_window, model.args.n_kv_heads, model.args.head_dim
    ).to(device=model.device, dtype=model.tok_embeddings.weight.dtype)

    prelogits = model(torch.tensor(sum(prompts, []), device=model.device, dtype=torch.long), seqlens, cache)
    last_positions = torch.tensor(seqlens, device=prelogits.device).cumsum(dim=0) - 1
    next_token = prelogits.index_select(0, last_positions).argmax(dim=-1)

    generated = [[t] for t in next_token.tolist()]
    for _ in range(max_tokens - 1):
        logits = model(next_token, [1] * len(prompts), cache)
        next_token = logits.argmax(dim=-1)
        for g, t in zip(generated, next_token.tolist()):
            g.append(t)
    return generated
