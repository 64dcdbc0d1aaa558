from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange, repeat

try:
    import xformers.ops as xops
except ImportError:
    xops = None

from torch_brain.nn.rotary_embedding import apply_rotary_pos_emb


class RotaryCrossAttention(nn.Module):
    """Cross-attention layer with rotary positional embeddings (POYO latent <- spike tokens).

    This layer performs cross-attention between a query sequence and a context sequence,
    with rotary positional embeddings applied to the queries and keys (and optionally
    values). It first normalizes the inputs, projects them to query/key/value space,
    applies rotary embeddings and attention, then projects back to the original dimension.

    The layer provides two forward methods:
        - forward(): The default implementation that uses padding with a mask.
        - forward_varlen(): Uses sequence lengths instead of padding, which is more memory
          efficient. It needs xformers and a CUDA device.

    Args:
        dim (int): Dimension of input query embeddings
        context_dim (Optional[int]): Dimension of input context embeddings. Defaults to ``dim``.
        heads (int): Number of attention heads
        dim_head (int): Dimension of each attention head
        dropout (float): Dropout probability
        rotate_value (bool): Whether to apply rotary embeddings to values as well
    """

    def __init__(self, *, dim: int, context_dim: Optional[int] = None, heads: int = 8, dim_head: int = 64,
                 dropout: float = 0.0, rotate_value: bool = False):
        super().__init__()
        inner_dim = dim_head * heads
        context_dim = context_dim or dim
        self.heads = heads
        self.dropout = dropout
        self.rotate_value = rotate_value

        # build networks
        self.norm = nn.LayerNorm(dim)
        self.norm_context = nn.LayerNorm(context_dim)
        self.to_q = nn.Linear(dim, inner_dim, bias=False)
        self.to_kv = nn.Linear(context_dim, inner_dim * 2, bias=False)
        self.to_out = nn.Linear(inner_dim, dim)

    def forward(self, x_query, x_context, query_pos_emb, context_pos_emb, context_mask=None):
        """Padded forward: x_query (B, N_q, D), x_context (B, N_c, D_c), context_mask (B, N_c) bool."""
        x_query = self.norm(x_query)
        x_context = self.norm_context(x_context)

        q = self.to_q(x_query)
        k, v = self.to_kv(x_context).chunk(2, dim=-1)

        out = rotary_attn_pytorch_func(
            query=q, key=k, value=v, q_pos_emb=query_pos_emb, kv_pos_emb=context_pos_emb,
            attn_mask=context_mask, num_heads=self.heads, dropout_p=self.dropout if self.training else 0.0,
            rotate_value=self.rotate_value,
        )
        return self.to_out(out)

    def forward_varlen(self, x_query, x_context, query_pos_emb, context_pos_emb, query_seqlen, context_seqlen):
        """Packed forward: all sequences of the batch concatenated along dim 0, lengths in *_seqlen."""
        x_query = self.norm(x_query)
        x_context = self.norm_context(x_context)

        q = self.to_q(x_query)
        k, v = self.to_kv(x_context).chunk(2, dim=-1)

        out = rotary_attn_xformers_func(
            query=q, key=k, value=v, q_pos_emb=query_pos_emb, kv_pos_emb=context_pos_emb,
            q_seqlen=query_seqlen, kv_seqlen=context_seqlen, num_heads=self.heads,
            dropout_p=self.dropout if self.training else 0.0, rotate_value=self.rotate_value,
        )
        return self.to_out(out)


def rotary_attn_pytorch_func(*, query, key, value, q_pos_emb, kv_pos_emb, num_heads, attn_mask=None,
                             dropout_p=0.0, rotate_value=False):
    """Rotary attention on padded batches with torch's scaled_dot_product_attention."""
    query = rearrange(query, "b n (h d) -> b h n d", h=num_heads)
    key = rearrange(key, "b n (h d) -> b h n d", h=num_heads)
    value = rearrange(value, "b n (h d) -> b h n d", h=num_heads)

    # apply rotary embeddings
    query = apply_rotary_pos_emb(q_pos_emb, query, head_dim=1)
    key = apply_rotary_pos_emb(kv_pos_emb, key, head_dim=1)
    if rotate_value:
        value = apply_rotary_pos_emb(kv_pos_emb, value, head_dim=1)

    # attention mask: True means "attend"
    if attn_mask is not None:
        attn_mask = rearrange(attn_mask, "b n -> b () () n")

    out = F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p)

    if rotate_value:
        out = apply_rotary_pos_emb(-q_pos_emb, out, head_dim=1)

    out = rearrange(out, "b h n d -> b n (h d)")
    return out


def rotary_attn_xformers_func(*, query, key, value, q_pos_emb, kv_pos_emb, q_seqlen, kv_seqlen, num_heads,
                              dropout_p=0.0, rotate_value=False):
    """Rotary attention on packed (variable length) sequences with xformers' block-diagonal mask."""
    if xops is None:
        raise ImportError("xformers is not installed. Please install it with `pip install xformers`.")
    if not query.is_cuda:
        raise RuntimeError("Varlen attention (forward_varlen) is only supported on CUDA devices.")

    query = rearrange(query, "n (h d) -> () n h d", h=num_heads)
    key = rearrange(key, "n (h d) -> () n h d", h=num_heads)
    value = rearrange(value, "n (h d) -> () n h d", h=num_heads)

    # apply rotary embeddings
    query = apply_rotary_pos_emb(q_pos_emb.unsqueeze(0), query, head_dim=2)
    key = apply_rotary_pos_emb(kv_pos_emb.unsqueeze(0), key, head_dim=2)
    if rotate_value:
        value = apply_rotary_pos_emb(kv_pos_emb.unsqueeze(0), value, head_dim=2)

    attn_bias = xops.fmha.BlockDiagonalMask.from_seqlens(q_seqlen=q_seqlen.tolist(), kv_seqlen=kv_seqlen.tolist())
    out = xops.memory_efficient_attention(query, key, value, attn_bias=attn_bias, p=dropout_p)

    if rotate_value:
        out = apply_rotary_pos_emb(-q_pos_emb.unsqueeze(0), out, head_dim=2)

    out = rearrange(out, "() n h d -> n (h d)")
    return out
