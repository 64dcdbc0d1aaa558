"""Llama with a static KV cache and arbitrary (tree) attention masks, for Sequoia verification.

attention_mask here is the *additive* [1, 1, q_len, max_length] mask built by the tree
search; when it is None the step is a plain autoregressive decode and we take the
FlashAttention-2 kv-cache kernel instead.
"""
import math
from typing import Optional

import torch
import torch.nn.functional as F
from flash_attn import flash_attn_with_kvcache
from flash_attn.ops.rms_norm import rms_norm as flash_rms_norm
from torch import nn
from transformers.activations import ACT2FN
from transformers.models.llama.modeling_llama import LlamaConfig, LlamaPreTrainedModel, LlamaRotaryEmbedding


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, position_ids):
    cos = cos[position_ids].unsqueeze(1)  # [bs, 1, seq_len, dim]
    sin = sin[position_ids].unsqueeze(1)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


class LlamaRMSNorm_FI(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        return flash_rms_norm(hidden_states, self.weight, self.variance_epsilon)


class LlamaAttention_FI(nn.Module):
    def __init__(self, config: LlamaConfig, layer_idx: int):
        super().__init__()
        self.config = config
        self.layer_idx = layer_idx
        self.hidden_size = config.hidden_size
        self.num_heads = config.num_attention_heads
        self.head_dim = self.hidden_size // self.num_heads
        self.num_key_value_heads = getattr(config, "num_key_value_heads", self.num_heads)
        self.num_key_value_groups = self.num_heads // self.num_key_value_heads
        self.max_position_embeddings = config.max_position_embeddings
        self.q_proj = nn.Linear(self.hidden_size, self.num_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(self.hidden_size, self.num_key_value_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(self.hidden_size, self.num_key_value_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(self.num_heads * self.head_dim, self.hidden_size, bias=False)
        self.rotary_emb = LlamaRotaryEmbedding(self.head_dim, max_position_embeddings=self.max_position_embeddings)

    def forward(
        self,
        hidden_states: torch.Tensor,
        max_length: int,
        storage_ids: torch.LongTensor,
        attention_mask: Optional[torch.Tensor],
        position_ids: torch.LongTensor,
        kv_cache,
        debug: bool = False,
    ):
        bsz, q_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)

        cos, sin = self.rotary_emb(value_states, seq_len=max_length)
        cos = cos.squeeze(1).squeeze(0) if cos.dim() == 4 else cos
        sin = sin.squeeze(1).squeeze(0) if sin.dim() == 4 else sin
        query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin, position_ids)

        key_states, value_states = kv_cache.update_kv_cache(
            key_states, value_states, self.layer_idx, storage_ids=storage_ids, debug=debug
        )

        if attention_mask is None:
            # plain decode: cache holds kv_offset + q_len valid rows
            cache_seqlens = torch.full(
                (bsz,), kv_cache.kv_offset + q_len, dtype=torch.int32, device=query_states.device
            )
            attn_output = flash_attn_with_kvcache(
                query_states.transpose(1, 2),
                key_states.transpose(1, 2),
                value_states.transpose(1, 2),
                cache_seqlens=cache_seqlens,
                causal=True,
            )
            attn_output = attn_output.reshape(bsz, q_len, self.hidden_size)
            return self.o_proj(attn_output)

        if self.num_key_value_groups > 1:
            key_states = key_states.repeat_interleave(self.num_key_value_groups, dim=1)
            value_states = value_states.repeat_interleave(self.num_key_value_groups, dim=1)

        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) / math.sqrt(self.head_dim)
        attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_states.dtype)
        attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose(1, 2).contiguous().reshape(bsz, q_len, self.hidden_size)
        return self.o_proj(attn_output)


class LlamaMLP_FI(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.gate_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.up_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.down_proj = nn.Linear(config.intermediate_size, config.hidden_size, bias=False)
        self.act_fn = ACT2FN[config.hidden_act]

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer_FI(nn.Module):
    def __init__(self, config: LlamaConfig, layer_idx: int):
        super().__init__()
        self.hidden_size = config.hidden_size
        self.self_attn = LlamaAttention_FI(config=config, layer_idx=layer_idx)
        self.mlp = LlamaMLP_FI(config)
        self.input_layernorm = LlamaRMSNorm_FI(config.hidden_size, eps=config.rms_norm_eps)
        self.post_attention_layernorm = LlamaRMSNorm_FI(config.hidden_size, eps=config.rms_norm_eps)

    def forward(self, hidden_states, max_length, storage_ids, attention_mask, position_ids, kv_cache, debug=False):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = self.self_attn(
            hidden_states=hidden_states,
            max_length=max_length,
            storage_ids=storage_ids,
            attention_mask=attention_mask,
            position_ids=position_ids,
            kv_cache=kv_cache,
            debug=debug,
        )
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        return residual + hidden_states


class LlamaModel_FI(LlamaPreTrainedModel):
    def __init__(self, config: LlamaConfig):
        super().__init__(config)
        self.padding_idx = config.pad_token_id
        self.vocab_size = config.vocab_size
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size, self.padding_idx)
        self.layers = nn.ModuleList([LlamaDecoderLayer_FI(config, i) for i in range(config.num_hidden_layers)])
        self.norm = LlamaRMSNorm_FI(config.hidden_size, eps=config.rms_norm_eps)
        self.post_init()

    def forward(self, input_ids, max_length, storage_ids, attention_mask, position_ids, kv_cache, debug=False):
        hidden_states = self.embed_tokens(input_ids)
        for decoder_layer in self.layers:
            hidden_states = decoder_layer(
                hidden_states, max_length, storage_ids, attention_mask, position_ids, kv_cache, debug=debug
            )
        return self.norm(hidden_states)


class LlamaForCausalLM_FI(LlamaPreTrainedModel):
    _tied_weights_keys = ["lm_head.weight"]

    def __init__(self, config):
        super().__init__(config)
        self.model = LlamaModel_FI(config)
        self.vocab_size = config.vocab_size
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.post_init()

    def forward(
        self,
        input_ids: torch.LongTensor,
        max_length: int,
        storage_ids: torch.LongTensor,
        attention_mask: Optional[torch.Tensor],
        position_ids: torch.LongTensor,
        kv_cache,
        debug: bool = False,
    ):
        hidden_states = self.model(
            input_ids, max_length, storage_ids, attention_mask, position_ids, kv_cache, debug=debug
        )
        logits = self.lm_head(hidden_states).float()
        return logits


class LlamaForCausalLM_Offload(LlamaForCausalLM_FI):
    """Same forward, but decoder layers live in pinned host memory and are streamed to the GPU."""

    def set_offload(self, device, stay_layers, load_stream):
        self.offload_device = device
        self.stay_layers = stay_layers
        self.load_stream = load_stream
        self._host = {}  # layer idx -> pinned host master copies of its parameters

    def _fetch(self, idx):
        layer = self.model.layers[idx]
        host = self._host.setdefault(idx, [p.data for p in layer.parameters()])
        with torch.cuda.stream(self.load_stream):
            for p, h in zip(layer.parameters(), host):
                p.data = h.to(self.offload_device, non_blocking=True)
        return layer

    def _evict(self, idx):
        layer = self.model.layers[idx]
        for p, h in zip(layer.parameters(), self._host[idx]):
            p.data = h  # drop the device copy, keep the pinned master

    def forward(self, input_ids, max_length, storage_ids, attention_mask, position_ids, kv_cache, debug=False):
        hidden_states = self.model.embed_tokens(input_ids)
        n = len(self.model.layers)
        if self.stay_layers < n:
            self._fetch(self.stay_layers)
        for i, layer in enumerate(self.model.layers):
            torch.cuda.current_stream().wait_stream(self.load_stream)
            if i + 1 < n and i + 1 >= self.stay_layers:
                self._fetch(i + 1)
            hidden_states = layer(hidden_states, max_length, storage_ids, attention_mask, position_ids, kv_cache)
            if i >= self.stay_layers:
                self._evict(i)
        hidden_states = self.model.norm(hidden_states)
        return self.lm_head(hidden_states).float()
