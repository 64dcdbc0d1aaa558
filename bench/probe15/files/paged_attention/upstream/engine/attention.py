"""Attention backends for the engine: prefill with FlashAttention-2 (varlen), decode with
paged attention over the block KV cache (vLLM kernels, or flash_attn_with_kvcache)."""
import math
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn.functional as F

try:
    from flash_attn import flash_attn_varlen_func, flash_attn_with_kvcache
    HAS_FLASH = True
except ImportError:
    HAS_FLASH = False

from vllm import _custom_ops as vllm_ops


@dataclass
class AttnMetadata:
    is_prefill: bool
    cu_seqlens_q: Optional[torch.Tensor]      # [batch + 1] int32
    max_seqlen_q: int
    seq_lens: torch.Tensor                    # [batch] int32, context length incl. new token
    max_seq_len: int
    block_tables: torch.Tensor                # [batch, max_blocks] int32
    slot_mapping: torch.Tensor                # [num_tokens] int64


class PagedAttention(torch.nn.Module):
    def __init__(self, num_heads: int, num_kv_heads: int, head_dim: int, block_size: int = 16,
                 use_flash_decode: bool = True):
        super().__init__()
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.head_dim = head_dim
        self.block_size = block_size
        self.scale = 1.0 / math.sqrt(head_dim)
        self.use_flash_decode = use_flash_decode and HAS_FLASH
        self.register_buffer("k_scale", torch.tensor(1.0), persistent=False)
        self.register_buffer("v_scale", torch.tensor(1.0), persistent=False)

    def write_kv(self, key, value, k_cache, v_cache, meta: AttnMetadata):
        # key/value: [num_tokens, num_kv_heads, head_dim]; caches: [num_blocks, block_size, kv_heads, head_dim]
        vllm_ops.reshape_and_cache_flash(key, value, k_cache, v_cache, meta.slot_mapping, "auto",
                                         self.k_scale, self.v_scale)

    def forward(self, q, k, v, k_cache, v_cache, meta: AttnMetadata):
        self.write_kv(k, v, k_cache, v_cache, meta)
        if meta.is_prefill:
            return self._prefill(q, k, v, meta)
        return self._decode(q, k_cache, v_cache, meta)

    def _prefill(self, q, k, v, meta: AttnMetadata):
        if HAS_FLASH:
            return flash_attn_varlen_func(
                q, k, v,
                cu_seqlens_q=meta.cu_seqlens_q,
                cu_seqlens_k=meta.cu_seqlens_q,
                max_seqlen_q=meta.max_seqlen_q,
                max_seqlen_k=meta.max_seqlen_q,
                softmax_scale=self.scale,
                causal=True,
            )
        # fallback: per-sequence SDPA
        outs = []
        starts = meta.cu_seqlens_q.tolist()
        for s, e in zip(starts[:-1], starts[1:]):
            qi, ki, vi = (t[s:e].transpose(0, 1).unsqueeze(0) for t in (q, k, v))
            oi = F.scaled_dot_product_attention(qi, ki, vi, is_causal=True, scale=self.scale,
                                                enable_gqa=self.num_heads != self.num_kv_heads)
            outs.append(oi.squeeze(0).transpose(0, 1))
        return torch.cat(outs, dim=0)

    def _decode(self, q, k_cache, v_cache, meta: AttnMetadata):
        # q: [batch, num_heads, head_dim]
        if self.use_flash_decode:
            out = flash_attn_with_kvcache(
                q.unsqueeze(1), k_cache, v_cache,
                cache_seqlens=meta.seq_lens,
                block_table=meta.block_tables,
                softmax_scale=self.scale,
                causal=True,
            )
            return out.squeeze(1)
        out = torch.empty_like(q)
        vllm_ops.paged_attention_v1(
            out, q, k_cache, v_cache, self.num_kv_heads, self.scale, meta.block_tables, meta.seq_lens,
            self.block_size, meta.max_seq_len, None, "auto", self.k_scale, self.v_scale,
        )
        return out


def build_metadata(seq_lens, new_tokens, block_tables, block_size, device="cuda"):
    is_prefill = any(n > 1 for n in new_tokens)
    q_lens = torch.tensor(new_tokens, dtype=torch.int32)
    cu = torch.zeros(len(new_tokens) + 1, dtype=torch.int32)
    cu[1:] = torch.cumsum(q_lens, 0)
    slots = []
    for i, (L, n) in enumerate(zip(seq_lens, new_tokens)):
        for pos in range(L - n, L):
            blk = block_tables[i][pos // block_size]
            slots.append(blk * block_size + pos % block_size)
    return AttnMetadata(
        is_prefill=is_prefill,
        cu_seqlens_q=cu.to(device),
        max_seqlen_q=max(new_tokens),
        seq_lens=torch.tensor(seq_lens, dtype=torch.int32, device=device),
        max_seq_len=max(seq_lens),
        block_tables=block_tables.to(device),
        slot_mapping=torch.tensor(slots, dtype=torch.int64, device=device),
    )
