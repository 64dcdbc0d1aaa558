"""
Fine- and coarse-grained (FC) attention used by Museformer.

Every music token attends
  * fine-grained: to all tokens of a few selected previous bars (1, 2, 4, 8, 12, 16, 24, 32 bars back)
  * coarse-grained: to the summary token of every other previous bar
and every summary token attends to the tokens of its own bar.

The pattern is expressed as a block-sparse layout (block = 64 tokens) and computed with the
Triton kernels in museformer/kernels. A dense masked implementation is kept for debugging
and for CPU runs; it is O(L^2) in memory and too slow for 10k+ token songs.
"""
import math
import logging
from typing import Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

from fairseq.modules.fairseq_dropout import FairseqDropout
from fairseq.modules.quant_noise import quant_noise

from ..kernels.block_sparse_softmax import BlockSparseSoftmax
from ..kernels.block_sparse_matmul import BlockSparseMatMul
from ..kernels.range_fill import batched_range_fill

logger = logging.getLogger(__name__)


def build_fc_layout(bar_ranges, n_tokens, block, fine_offsets, n_heads):
    """
    bar_ranges: list of (start, end) token positions of every bar (host list)
    returns a (n_heads, n_blocks, n_blocks) int layout covering fine + coarse connections
    and a dense bool mask of shape (n_tokens, n_tokens) with True = keep.
    """
    n_blocks = (n_tokens + block - 1) // block
    keep = torch.zeros(n_tokens, n_tokens, dtype=torch.bool)
    for i, (s, e) in enumerate(bar_ranges):
        # causal inside the bar
        keep[s:e, s:e] = torch.tril(torch.ones(e - s, e - s, dtype=torch.bool))
        for off in fine_offsets:
            j = i - off
            if j < 0:
                continue
            ps, pe = bar_ranges[j]
            keep[s:e, ps:pe] = True
    layout = keep.view(n_blocks, block, n_blocks, block).any(dim=3).any(dim=1)
    layout = layout.int().unsqueeze(0).expand(n_heads, -1, -1).contiguous()
    return layout, keep


class FCAttention(nn.Module):
    """Multi-head fine/coarse-grained self attention (decoder only, no incremental state)."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, block_size=64,
                 fine_offsets=(1, 2, 4, 8, 12, 16, 24, 32), attention_impl="triton",
                 q_noise=0.0, qn_block_size=8):
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        assert self.head_dim * num_heads == embed_dim, "embed_dim must be divisible by num_heads"
        self.scaling = self.head_dim ** -0.5
        self.block_size = block_size
        self.fine_offsets = tuple(fine_offsets)
        self.attention_impl = attention_impl

        self.dropout_module = FairseqDropout(dropout, module_name=self.__class__.__name__)

        self.k_proj = quant_noise(nn.Linear(embed_dim, embed_dim, bias=bias), q_noise, qn_block_size)
        self.v_proj = quant_noise(nn.Linear(embed_dim, embed_dim, bias=bias), q_noise, qn_block_size)
        self.q_proj = quant_noise(nn.Linear(embed_dim, embed_dim, bias=bias), q_noise, qn_block_size)
        self.out_proj = quant_noise(nn.Linear(embed_dim, embed_dim, bias=bias), q_noise, qn_block_size)

        # summary-token projections (coarse-grained path)
        self.sum_k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.sum_v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)

        self._layout_cache = {}
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.xavier_uniform_(self.k_proj.weight, gain=1 / math.sqrt(2))
        nn.init.xavier_uniform_(self.v_proj.weight, gain=1 / math.sqrt(2))
        nn.init.xavier_uniform_(self.q_proj.weight, gain=1 / math.sqrt(2))
        nn.init.xavier_uniform_(self.out_proj.weight)
        if self.out_proj.bias is not None:
            nn.init.constant_(self.out_proj.bias, 0.0)
        nn.init.xavier_uniform_(self.sum_k_proj.weight)
        nn.init.xavier_uniform_(self.sum_v_proj.weight)

    # ------------------------------------------------------------------ #
    def _get_kernels(self, bar_ranges, n_tokens):
        key = (tuple(bar_ranges), n_tokens)
        if key not in self._layout_cache:
            layout, keep = build_fc_layout(bar_ranges, n_tokens, self.block_size,
                                           self.fine_offsets, self.num_heads)
            sdd = BlockSparseMatMul(layout, self.block_size, "sdd", trans_b=True)
            dsd = BlockSparseMatMul(layout, self.block_size, "dsd")
            softmax = BlockSparseSoftmax(layout, self.block_size)
            if len(self._layout_cache) > 64:
                self._layout_cache.clear()
            self._layout_cache[key] = (sdd, dsd, softmax, keep)
        return self._layout_cache[key]

    def _dense_attention(self, q, k, v, keep, key_padding_mask):
        # q, k, v: (bsz, heads, L, d)
        scores = torch.matmul(q, k.transpose(-1, -2)) * self.scaling
        scores = scores.float().masked_fill(~keep.to(scores.device)[None, None], float("-inf"))
        if key_padding_mask is not None:
            scores = scores.masked_fill(key_padding_mask[:, None, None, :].bool(), float("-inf"))
        probs = F.softmax(scores, dim=-1).type_as(q)
        probs = self.dropout_module(probs)
        return torch.matmul(probs, v)

    def _triton_attention(self, q, k, v, sdd, dsd, softmax, key_padding_mask):
        bsz, heads, L, d = q.shape
        pad = (-L) % self.block_size
        if pad:
            q = F.pad(q, (0, 0, 0, pad))
            k = F.pad(k, (0, 0, 0, pad))
            v = F.pad(v, (0, 0, 0, pad))
            if key_padding_mask is not None:
                key_padding_mask = F.pad(key_padding_mask, (0, pad), value=1)
        scores = sdd(q, k)                                  # packed blocks
        probs = softmax(scores, scale=self.scaling, key_padding_mask=key_padding_mask)
        probs = self.dropout_module(probs)
        out = dsd(probs, v)
        return out[:, :, :L]

    # ------------------------------------------------------------------ #
    def forward(
        self,
        x: torch.Tensor,                                # (L, bsz, C)
        bar_ranges,                                     # list of (start, end), shared by the batch
        summary: Optional[torch.Tensor] = None,         # (n_bars, bsz, C)
        key_padding_mask: Optional[torch.Tensor] = None,
    ) -> Tuple[torch.Tensor, None]:
        L, bsz, C = x.shape

        q = self.q_proj(x)
        k = self.k_proj(x)
        v = self.v_proj(x)

        def shape(t):
            return t.contiguous().view(-1, bsz, self.num_heads, self.head_dim).permute(1, 2, 0, 3)

        q, k, v = shape(q), shape(k), shape(v)

        sdd, dsd, softmax, keep = self._get_kernels(bar_ranges, L)

        if self.attention_impl == "triton" and x.is_cuda:
            attn = self._triton_attention(q, k, v, sdd, dsd, softmax, key_padding_mask)
        else:
            if self.training and L > 4096:
                logger.warning("dense FC attention with L=%d; this will be very slow", L)
            attn = self._dense_attention(q, k, v, keep, key_padding_mask)

        # coarse-grained: attend to summary tokens of all earlier bars
        if summary is not None:
            n_bars = summary.shape[0]
            sk = shape(self.sum_k_proj(summary))
            sv = shape(self.sum_v_proj(summary))
            starts = torch.tensor([s for s, _ in bar_ranges], device=x.device)
            ends = torch.tensor([e for _, e in bar_ranges], device=x.device)
            ranges = torch.stack([starts, ends], dim=-1)
            bar_of_token = batched_range_fill(
                [ranges], [torch.arange(n_bars, device=x.device)], L, pad_value=n_bars
            )[0]
            # token t may only look at summaries of bars strictly before its own bar
            sum_mask = torch.arange(n_bars, device=x.device)[None, :] >= bar_of_token[:, None]
            s_scores = torch.matmul(q, sk.transpose(-1, -2)) * self.scaling
            s_scores = s_scores.float().masked_fill(sum_mask[None, None], float("-inf"))
            s_probs = F.softmax(s_scores, dim=-1).nan_to_num(0.0).type_as(q)
            attn = attn + torch.matmul(self.dropout_module(s_probs), sv)

        attn = attn.permute(2, 0, 1, 3).contiguous().view(L, bsz, C)
        attn = self.out_proj(attn)
        return attn, None
