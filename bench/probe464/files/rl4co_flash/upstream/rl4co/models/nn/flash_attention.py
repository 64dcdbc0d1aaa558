"""Optional FlashAttention adapters for RL4CO attention layers.

PyTorch >= 2.0 already dispatches `scaled_dot_product_attention` to a fused kernel on recent GPUs,
so these are only used when explicitly requested with `sdpa_fn="flash_attn"` (e.g. very long
sequences in large-scale routing, where the packed variable-length kernel saves padding).
"""

import math

import torch

from einops import rearrange

from rl4co.utils.pylogger import get_pylogger

log = get_pylogger(__name__)

try:
    from flash_attn.flash_attn_interface import flash_attn_qkvpacked_func, flash_attn_varlen_qkvpacked_func
    from flash_attn.bert_padding import pad_input, unpad_input
except ImportError:
    flash_attn_qkvpacked_func = None
    flash_attn_varlen_qkvpacked_func = None
    pad_input, unpad_input = None, None


def flash_attn_available() -> bool:
    """FlashAttention-2 needs the package and an Ampere (sm80) or newer GPU."""
    if flash_attn_qkvpacked_func is None:
        return False
    return torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8


def scaled_dot_product_attention_flash_attn(
    q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None
):
    """
    Flash attention adapter with the same interface as `torch.nn.functional.scaled_dot_product_attention`.
    q, k, v: (batch, heads, seq, head_dim) -- note FlashAttention wants (batch, seq, heads, head_dim).
    """
    assert attn_mask is None, "`attn_mask` is not supported by FlashAttention, use the varlen version"
    assert q.dtype in (torch.float16, torch.bfloat16), "FlashAttention only supports fp16 and bf16"
    q, k, v = [rearrange(x, "b h s d -> b s h d") for x in (q, k, v)]
    qkv = torch.stack([q, k, v], dim=2)  # (b, s, 3, h, d)
    out = flash_attn_qkvpacked_func(qkv, dropout_p=dropout_p, softmax_scale=scale, causal=is_causal)
    return rearrange(out, "b s h d -> b h s d")


def scaled_dot_product_attention_flash_attn_varlen(
    q, k, v, key_padding_mask, dropout_p=0.0, scale=None
):
    """
    Variable-length version: `key_padding_mask` (batch, seq) is True for valid (not padded) positions.
    Padded nodes (e.g. finished instances in a heterogeneous batch) are removed before the kernel.
    """
    b, h, s, d = q.shape
    q, k, v = [rearrange(x, "b h s d -> b s h d") for x in (q, k, v)]
    qkv = torch.stack([q, k, v], dim=2)
    qkv_unpad, indices, cu_seqlens, max_s = unpad_input(qkv, key_padding_mask)
    out_unpad = flash_attn_varlen_qkvpacked_func(
        qkv_unpad, cu_seqlens, max_s, dropout_p=dropout_p, softmax_scale=scale, causal=False
    )
    out = pad_input(out_unpad, indices, b, s)
    return rearrange(out, "b s h d -> b h s d")


def get_sdpa_fn(name: str = "default"):
    """Resolve the attention function used by `MultiHeadAttention`."""
    if name in (None, "default", "torch"):
        return torch.nn.functional.scaled_dot_product_attention
    if name == "flash_attn":
        if not flash_attn_available():
            log.warning("FlashAttention not available, falling back to torch scaled_dot_product_attention")
            return torch.nn.functional.scaled_dot_product_attention
        return scaled_dot_product_attention_flash_attn
    if name == "simple":
        return scaled_dot_product_attention_simple
    raise ValueError(f"Unknown sdpa_fn {name}")


def scaled_dot_product_attention_simple(
    q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None
):
    """Simple (exact) Scaled Dot-Product Attention in RL4CO without customized kernels (i.e. no Flash Attention)."""
    scale = 1.0 / math.sqrt(q.size(-1)) if scale is None else scale
    scores = torch.matmul(q, k.transpose(-2, -1)) * scale

    if is_causal:
        assert attn_mask is None, "Cannot use both causal and attn_mask"
        causal = torch.ones(q.size(-2), k.size(-2), dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(causal, float("-inf"))
    elif attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask

    attn = torch.softmax(scores, dim=-1)
    if dropout_p > 0.0:
        attn = torch.nn.functional.dropout(attn, p=dropout_p)
    return torch.matmul(attn, v)
