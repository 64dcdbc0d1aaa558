# Copyright (c) The InternLM team and The HuggingFace Inc. team. All rights reserved.
"""InternLM2 attention stack: packed wqkv, dynamic-NTK rotary and optional flash-attn kernels."""
import math
import warnings
from typing import Optional, Tuple

import torch
import torch.nn.functional as F
import torch.utils.checkpoint
from einops import rearrange
from torch import nn
from transformers.activations import ACT2FN
from transformers.utils import logging

from .configuration_internlm2 import InternLM2Config

logger = logging.get_logger(__name__)

flash_attn_func, flash_attn_varlen_func = None, None
pad_input, index_first_axis, unpad_input = None, None, None
apply_rotary_emb_func = None


def _import_flash_attn():
    global flash_attn_func, flash_attn_varlen_func
    global pad_input, index_first_axis, unpad_input, apply_rotary_emb_func
    try:
        from flash_attn import flash_attn_func as _flash_attn_func
        from flash_attn import flash_attn_varlen_func as _flash_attn_varlen_func
        from flash_attn.bert_padding import index_first_axis as _index_first_axis
        from flash_attn.bert_padding import pad_input as _pad_input
        from flash_attn.bert_padding import unpad_input as _unpad_input
        from flash_attn.layers.rotary import apply_rotary_emb_func as _apply_rotary_emb_func

        flash_attn_func, flash_attn_varlen_func = _flash_attn_func, _flash_attn_varlen_func
        pad_input, index_first_axis, unpad_input = _pad_input, _index_first_axis, _unpad_input
        apply_rotary_emb_func = _apply_rotary_emb_func
    except ImportError:
        raise ImportError("flash_attn is not installed.")


def _use_flash_attn(config) -> bool:
    if config.attn_implementation != "flash_attention_2":
        return False
    major, _ = torch.cuda.get_device_capability()
    if major < 8:
        warnings.warn("FlashAttention-2 needs Ampere or newer; falling back to eager attention.")
        return False
    return True


try:
    from flash_attn.ops.rms_norm import RMSNorm as FlashRMSNorm
except ImportError:
    FlashRMSNorm = None


class _TorchRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


InternLM2RMSNorm = FlashRMSNorm if FlashRMSNorm is not None else _TorchRMSNorm


class InternLM2DynamicNTKScalingRotaryEmbedding(nn.Module):
    def __init__(self, dim, max_position_embeddings=2048, base=10000, scaling_factor=1.0, device=None):
        super().__init__()
        self.dim = dim
        self.base = base
        self.scaling_factor = scaling_factor
        self.max_position_embeddings = max_position_embeddings
        inv_freq = 1.0 / (self.base ** (torch.arange(0, self.dim, 2).float().to(device) / self.dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    @torch.no_grad()
    def forward(self, x, position_ids):
        seq_len = torch.max(position_ids) + 1
        if seq_len > self.max_position_embeddings:
            base = self.base * (
                (self.scaling_factor * seq_len / self.max_position_embeddings) - (self.scaling_factor - 1)
            ) ** (self.dim / (self.dim - 2))
            inv_freq = 1.0 / (base ** (torch.arange(0, self.dim, 2, dtype=torch.int64).float().to(x.device) / self.dim))
        else:
            inv_freq = self.inv_freq
        inv_freq_expanded = inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        # force fp32: bf16 loses precision on long contexts
        device_type = x.device.type
        device_type = device_type if isinstance(device_type, str) and device_type != "mps" else "cpu"
        with torch.autocast(device_type=device_type, enabled=False):
            freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
            emb = torch.cat((freqs, freqs), dim=-1)
            cos, sin = emb.cos(), emb.sin()
        return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


class InternLM2MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.w1 = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.w3 = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.w2 = nn.Linear(config.intermediate_size, config.hidden_size, bias=False)
        self.act_fn = ACT2FN[config.hidden_act]

    def forward(self, x):
        return self.w2(self.act_fn(self.w1(x)) * self.w3(x))


class InternLM2FlashAttention2(nn.Module):
    def __init__(self, config: InternLM2Config, layer_idx: Optional[int] = None):
        super().__init__()
        self.config = config
        self.layer_idx = layer_idx
        self.hidden_size = config.hidden_size
        self.num_heads = config.num_attention_heads
        self.head_dim = self.hidden_size // self.num_heads
        self.num_key_value_heads = config.num_key_value_heads
        self.num_key_value_groups = self.num_heads // self.num_key_value_heads
        self.is_causal = True
        self.wqkv = nn.Linear(
            self.hidden_size, (self.num_heads + 2 * self.num_key_value_heads) * self.head_dim, bias=config.bias
        )
        self.wo = nn.Linear(self.num_heads * self.head_dim, self.hidden_size, bias=config.bias)
        self.rotary_emb = InternLM2DynamicNTKScalingRotaryEmbedding(
            self.head_dim, max_position_embeddings=config.max_position_embeddings,
            base=config.rope_theta, scaling_factor=config.rope_scaling["factor"] if config.rope_scaling else 1.0,
        )

    def forward(self, hidden_states, attention_mask=None, position_ids=None) -> Tuple[torch.Tensor, None]:
        bsz, q_len, _ = hidden_states.size()
        qkv_states = self.wqkv(hidden_states)
        qkv_states = rearrange(
            qkv_states, "b q (h gs d) -> b q h gs d", gs=2 + self.num_key_value_groups, d=self.head_dim
        )
        query_states = rearrange(qkv_states[..., : self.num_key_value_groups, :], "b q h gs d -> b q (h gs) d")
        key_states = qkv_states[..., -2, :]
        value_states = qkv_states[..., -1, :]

        cos, sin = self.rotary_emb(value_states, position_ids)
        if apply_rotary_emb_func is not None:
            # flash-attn's fused rotary kernel works in-place on (b, s, h, d) tensors
            query_states = apply_rotary_emb_func(query_states, cos[0, :, : self.head_dim // 2], sin[0, :, : self.head_dim // 2])
            key_states = apply_rotary_emb_func(key_states, cos[0, :, : self.head_dim // 2], sin[0, :, : self.head_dim // 2])
        else:
            query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin, unsqueeze_dim=2)

        attn_output = self._flash_attention_forward(query_states, key_states, value_states, attention_mask, q_len)
        attn_output = attn_output.reshape(bsz, q_len, self.hidden_size).contiguous()
        return self.wo(attn_output), None

    def _flash_attention_forward(self, query_states, key_states, value_states, attention_mask, query_length):
        causal = self.is_causal and query_length != 1
        if attention_mask is not None:
            batch_size = query_states.shape[0]
            q_unpad, indices_q, cu_seqlens_q, max_seqlen_q = unpad_input(query_states, attention_mask)
            k_unpad, _, cu_seqlens_k, max_seqlen_k = unpad_input(key_states, attention_mask)
            v_unpad, _, _, _ = unpad_input(value_states, attention_mask)
            out_unpad = flash_attn_varlen_func(
                q_unpad, k_unpad, v_unpad, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                dropout_p=0.0, causal=causal,
            )
            return pad_input(out_unpad, indices_q, batch_size, query_length)
        return flash_attn_func(query_states, key_states, value_states, 0.0, causal=causal)


class InternLM2Model(nn.Module):
    def __init__(self, config: InternLM2Config):
        super().__init__()
        self.config = config
        if _use_flash_attn(config):
            _import_flash_attn()
        self.tok_embeddings = nn.Embedding(config.vocab_size, config.hidden_size, config.pad_token_id)
        self.norm = InternLM2RMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        self.gradient_checkpointing = False

    def get_input_embeddings(self):
        return self.tok_embeddings
