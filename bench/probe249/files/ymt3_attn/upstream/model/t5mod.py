"""t5mod.py -- T5 v1.1 encoder/decoder blocks for YourMT3 with a pluggable attention backend.

attn_implementation:
    "eager": reference einsum/softmax implementation (supports relative position bias)
    "sdpa":  torch.nn.functional.scaled_dot_product_attention
    "flash": Dao-AILab flash-attn 2 (fp16/bf16 only, GPU only); falls back to sdpa if unavailable
"""
import math
import warnings
from typing import Dict, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    from flash_attn import flash_attn_func
    from flash_attn.layers.rotary import apply_rotary_emb_func
    _FLASH_ATTN_AVAILABLE = True
except ImportError:
    flash_attn_func = None
    apply_rotary_emb_func = None
    _FLASH_ATTN_AVAILABLE = False


class T5LayerNorm(nn.Module):
    """RMSNorm without mean subtraction (T5 style)."""

    def __init__(self, hidden_size: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        if self.weight.dtype in [torch.float16, torch.bfloat16]:
            hidden_states = hidden_states.to(self.weight.dtype)
        return self.weight * hidden_states


class T5GatedGeluFF(nn.Module):

    def __init__(self, d_model: int, d_ff: int, dropout_rate: float):
        super().__init__()
        self.wi_0 = nn.Linear(d_model, d_ff, bias=False)
        self.wi_1 = nn.Linear(d_model, d_ff, bias=False)
        self.wo = nn.Linear(d_ff, d_model, bias=False)
        self.dropout = nn.Dropout(dropout_rate)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.gelu(self.wi_0(x), approximate="tanh") * self.wi_1(x)
        return self.wo(self.dropout(h))


def sinusoidal_positions(num_positions: int, dim: int, device=None) -> torch.Tensor:
    inv_freq = 1.0 / (10000**(torch.arange(0, dim, 2, device=device).float() / dim))
    t = torch.arange(num_positions, device=device).float()
    freqs = torch.einsum("i,j->ij", t, inv_freq)
    return torch.cat([freqs.sin(), freqs.cos()], dim=-1)


class T5Attention(nn.Module):

    def __init__(self, d_model: int, num_heads: int, d_kv: int, dropout_rate: float, is_decoder: bool,
                 is_cross_attention: bool = False, has_relative_attention_bias: bool = False,
                 relative_attention_num_buckets: int = 32, attn_implementation: str = "sdpa"):
        super().__init__()
        self.is_decoder = is_decoder
        self.is_cross_attention = is_cross_attention
        self.has_relative_attention_bias = has_relative_attention_bias
        self.relative_attention_num_buckets = relative_attention_num_buckets
        self.d_model = d_model
        self.n_heads = num_heads
        self.key_value_proj_dim = d_kv
        self.inner_dim = num_heads * d_kv
        self.dropout = dropout_rate

        self.q = nn.Linear(d_model, self.inner_dim, bias=False)
        self.k = nn.Linear(d_model, self.inner_dim, bias=False)
        self.v = nn.Linear(d_model, self.inner_dim, bias=False)
        self.o = nn.Linear(self.inner_dim, d_model, bias=False)
        if self.has_relative_attention_bias:
            self.relative_attention_bias = nn.Embedding(relative_attention_num_buckets, num_heads)

        if attn_implementation == "flash" and not _FLASH_ATTN_AVAILABLE:
            warnings.warn("flash_attn is not installed; falling back to attn_implementation='sdpa'.")
            attn_implementation = "sdpa"
        self.attn_implementation = attn_implementation

    @staticmethod
    def _relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
        relative_buckets = 0
        if bidirectional:
            num_buckets //= 2
            relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
            relative_position = torch.abs(relative_position)
        else:
            relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
        max_exact = num_buckets // 2
        is_small = relative_position < max_exact
        relative_position_if_large = max_exact + (torch.log(relative_position.float() / max_exact) /
                                                  math.log(max_distance / max_exact) *
                                                  (num_buckets - max_exact)).to(torch.long)
        relative_position_if_large = torch.min(relative_position_if_large,
                                               torch.full_like(relative_position_if_large, num_buckets - 1))
        relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
        return relative_buckets

    def compute_bias(self, query_length: int, key_length: int, device=None) -> torch.Tensor:
        if device is None:
            device = self.relative_attention_bias.weight.device
        context_position = torch.arange(query_length, dtype=torch.long, device=device)[:, None]
        memory_position = torch.arange(key_length, dtype=torch.long, device=device)[None, :]
        relative_position = memory_position - context_position
        relative_position_bucket = self._relative_position_bucket(relative_position,
                                                                  bidirectional=(not self.is_decoder),
                                                                  num_buckets=self.relative_attention_num_buckets)
        values = self.relative_attention_bias(relative_position_bucket)
        values = values.permute([2, 0, 1]).unsqueeze(0)
        return values

    def _shape(self, x: torch.Tensor, bsz: int) -> torch.Tensor:
        return x.view(bsz, -1, self.n_heads, self.key_value_proj_dim)

    def forward(self,
                hidden_states: torch.Tensor,
                key_value_states: Optional[torch.Tensor] = None,
                position_bias: Optional[torch.Tensor] = None,
                attention_mask: Optional[torch.Tensor] = None,
                past_key_value: Optional[Tuple[torch.Tensor, torch.Tensor]] = None,
                use_cache: bool = False) -> Tuple[torch.Tensor, Optional[Tuple], Optional[torch.Tensor]]:
        bsz, q_len, _ = hidden_states.shape
        kv_input = hidden_states if key_value_states is None else key_value_states

        q = self._shape(self.q(hidden_states), bsz)  # (B, Lq, H, D)
        if self.is_cross_attention and past_key_value is not None:
            k, v = past_key_value
        else:
            k = self._shape(self.k(kv_input), bsz)
            v = self._shape(self.v(kv_input), bsz)
            if past_key_value is not None:
                k = torch.cat([past_key_value[0], k], dim=1)
                v = torch.cat([past_key_value[1], v], dim=1)
        present = (k, v) if use_cache else None
        k_len = k.shape[1]

        if position_bias is None and self.has_relative_attention_bias:
            position_bias = self.compute_bias(k_len, k_len, device=hidden_states.device)[:, :, -q_len:, :]

        dropout_p = self.dropout if self.training else 0.0
        causal = self.is_decoder and not self.is_cross_attention and q_len > 1

        if (self.attn_implementation == "flash" and position_bias is None and attention_mask is None
                and q.dtype in (torch.float16, torch.bfloat16)):
            # flash-attn works on (B, L, H, D) directly; T5 uses no 1/sqrt(d) scaling
            out = flash_attn_func(q, k, v, dropout_p=dropout_p, softmax_scale=1.0, causal=causal)
        elif self.attn_implementation in ("sdpa", "flash"):
            qh, kh, vh = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
            mask = position_bias
            if attention_mask is not None:
                mask = attention_mask if mask is None else mask + attention_mask
            out = F.scaled_dot_product_attention(qh, kh, vh, attn_mask=mask, dropout_p=dropout_p,
                                                 is_causal=causal and mask is None, scale=1.0)
            out = out.transpose(1, 2)
        else:
            scores = torch.einsum("bqhd,bkhd->bhqk", q, k)
            if position_bias is not None:
                scores = scores + position_bias
            if attention_mask is not None:
                scores = scores + attention_mask
            if causal:
                causal_mask = torch.ones(q_len, k_len, dtype=torch.bool, device=scores.device).triu(k_len - q_len + 1)
                scores = scores.masked_fill(causal_mask, torch.finfo(scores.dtype).min)
            attn = F.softmax(scores.float(), dim=-1).type_as(scores)
            attn = F.dropout(attn, p=dropout_p, training=self.training)
            out = torch.einsum("bhqk,bkhd->bqhd", attn, v)

        out = self.o(out.reshape(bsz, q_len, self.inner_dim))
        return out, present, position_bias


class T5Block(nn.Module):

    def __init__(self, cfg: Dict, is_decoder: bool, has_relative_attention_bias: bool, attn_implementation: str):
        super().__init__()
        d_model, num_heads = cfg["d_model"], cfg["num_heads"]
        d_kv = d_model // num_heads
        d_ff = d_model * cfg.get("ff_widening_factor", 2)
        self.is_decoder = is_decoder
        self.ln_self = T5LayerNorm(d_model)
        self.self_attn = T5Attention(d_model, num_heads, d_kv, cfg["dropout_rate"], is_decoder,
                                     has_relative_attention_bias=has_relative_attention_bias,
                                     attn_implementation=attn_implementation)
        if is_decoder:
            self.ln_cross = T5LayerNorm(d_model)
            self.cross_attn = T5Attention(d_model, num_heads, d_kv, cfg["dropout_rate"], is_decoder,
                                          is_cross_attention=True, attn_implementation=attn_implementation)
        self.ln_ff = T5LayerNorm(d_model)
        self.ff = T5GatedGeluFF(d_model, d_ff, cfg["dropout_rate"])
        self.dropout = nn.Dropout(cfg["dropout_rate"])

    def forward(self, x, encoder_hidden_states=None, position_bias=None, past_key_value=None, use_cache=False):
        self_past = past_key_value[:2] if past_key_value is not None else None
        cross_past = past_key_value[2:] if past_key_value is not None else None
        h, self_present, position_bias = self.self_attn(self.ln_self(x), position_bias=position_bias,
                                                        past_key_value=self_past, use_cache=use_cache)
        x = x + self.dropout(h)
        cross_present = None
        if self.is_decoder and encoder_hidden_states is not None:
            h, cross_present, _ = self.cross_attn(self.ln_cross(x), key_value_states=encoder_hidden_states,
                                                  past_key_value=cross_past, use_cache=use_cache)
            x = x + self.dropout(h)
        x = x + self.dropout(self.ff(self.ln_ff(x)))
        present = (self_present + cross_present) if use_cache and cross_present is not None else self_present
        return x, position_bias, present


class T5EncoderYMT3(nn.Module):

    def __init__(self, model_cfg: Dict, d_feat: int):
        super().__init__()
        cfg = model_cfg["encoder"]["t5"]
        attn_impl = model_cfg.get("attn_implementation", "sdpa")
        self.input_proj = nn.Linear(d_feat, cfg["d_model"])
        self.use_sinusoidal = cfg.get("position_encoding_type") == "sinusoidal"
        self.blocks = nn.ModuleList([
            T5Block(cfg, is_decoder=False, has_relative_attention_bias=(i == 0 and not self.use_sinusoidal),
                    attn_implementation=attn_impl) for i in range(cfg["num_layers"])
        ])
        self.final_ln = T5LayerNorm(cfg["d_model"])
        self.dropout = nn.Dropout(cfg["dropout_rate"])

    def forward(self, inputs_embeds: torch.Tensor) -> torch.Tensor:
        x = self.input_proj(inputs_embeds)
        if self.use_sinusoidal:
            x = x + sinusoidal_positions(x.shape[1], x.shape[2], device=x.device).to(x.dtype)
        x = self.dropout(x)
        position_bias = None
        for block in self.blocks:
            x, position_bias, _ = block(x, position_bias=position_bias)
        return self.dropout(self.final_ln(x))


class T5DecoderYMT3(nn.Module):

    def __init__(self, model_cfg: Dict, num_tokens: int, num_max_positions: int):
        super().__init__()
        cfg = model_cfg["decoder"]["t5"]
        attn_impl = model_cfg.get("attn_implementation", "sdpa")
        self.embed_tokens = nn.Embedding(num_tokens, cfg["d_model"])
        self.blocks = nn.ModuleList([
            T5Block(cfg, is_decoder=True, has_relative_attention_bias=(i == 0), attn_implementation=attn_impl)
            for i in range(cfg["num_layers"])
        ])
        self.final_ln = T5LayerNorm(cfg["d_model"])
        self.dropout = nn.Dropout(cfg["dropout_rate"])
        self.num_max_positions = num_max_positions

    def forward(self, input_ids, encoder_hidden_states, past_key_values=None, use_cache=False):
        x = self.dropout(self.embed_tokens(input_ids))
        position_bias = None
        presents = [] if use_cache else None
        for i, block in enumerate(self.blocks):
            past = past_key_values[i] if past_key_values is not None else None
            x, position_bias, present = block(x, encoder_hidden_states=encoder_hidden_states,
                                              position_bias=position_bias, past_key_value=past, use_cache=use_cache)
            if use_cache:
                presents.append(present)
        x = self.dropout(self.final_ln(x))
        if use_cache:
            return x, presents
        return x
