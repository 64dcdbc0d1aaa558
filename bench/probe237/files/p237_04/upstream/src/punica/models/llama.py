"""Plain LLaMA (no LoRA) running on punica kernels.

Used as the base model for benchmarks and as the building block for
``llama_lora``.  Loading converts HF checkpoints into the fused layouts that
the kernels expect.
"""
import math
import os
from typing import Optional, Tuple

import torch
from torch import nn
from transformers import LlamaConfig, PreTrainedModel
from transformers.activations import ACT2FN

from punica.ops import (
    BatchPrefillWithPagedKVCache,
    append_kv,
    batch_decode,
    init_kv,
    rms_norm,
)
from punica.utils.kvcache import BatchedKvCache

_PUNICA_DISABLE_FUSED_RMSNORM = os.environ.get("PUNICA_DISABLE_FUSED_RMSNORM", "0") == "1"


class LlamaRMSNorm(nn.Module):
    def __init__(self, hidden_size: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        if _PUNICA_DISABLE_FUSED_RMSNORM or not hidden_states.is_cuda:
            input_dtype = hidden_states.dtype
            hidden_states = hidden_states.to(torch.float32)
            variance = hidden_states.pow(2).mean(-1, keepdim=True)
            hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
            return self.weight * hidden_states.to(input_dtype)
        return rms_norm(hidden_states, self.weight, self.variance_epsilon)


class LlamaAttention(nn.Module):
    def __init__(self, config: LlamaConfig, layer_idx: int):
        super().__init__()
        self.hidden_size = config.hidden_size
        self.num_qo_heads = config.num_attention_heads
        self.num_kv_heads = config.num_key_value_heads
        self.head_dim = self.hidden_size // self.num_qo_heads
        self._scale = 1 / math.sqrt(self.head_dim)
        self.layer_idx = layer_idx
        self.q_proj = nn.Linear(self.hidden_size, self.num_qo_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(self.hidden_size, self.num_kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(self.hidden_size, self.num_kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(self.num_qo_heads * self.head_dim, self.hidden_size, bias=False)

    def forward(
        self,
        hidden_states: torch.Tensor,
        prefill_lens: list,
        prefill_indptr: torch.Tensor,
        prefill_kv: Optional[BatchedKvCache],
        decode_kv: Optional[BatchedKvCache],
        prefill_wrapper: BatchPrefillWithPagedKVCache,
    ) -> torch.Tensor:
        q = self.q_proj(hidden_states)
        k = self.k_proj(hidden_states)
        v = self.v_proj(hidden_states)

        n_prefill = sum(prefill_lens)
        outputs = []
        if prefill_kv is not None and n_prefill > 0:
            qp = q[:n_prefill].view(n_prefill, self.num_qo_heads, self.head_dim)
            kp = k[:n_prefill].view(n_prefill, self.num_kv_heads, self.head_dim)
            vp = v[:n_prefill].view(n_prefill, self.num_kv_heads, self.head_dim)
            init_kv(prefill_kv, kp, vp, prefill_indptr, self.layer_idx)
            o = prefill_wrapper.forward(qp, prefill_kv, self.layer_idx)
            outputs.append(o.view(n_prefill, self.hidden_size))
        if decode_kv is not None:
            nd = hidden_states.size(0) - n_prefill
            qd = q[n_prefill:].view(nd, self.num_qo_heads, self.head_dim)
            kd = k[n_prefill:].view(nd, self.num_kv_heads, self.head_dim)
            vd = v[n_prefill:].view(nd, self.num_kv_heads, self.head_dim)
            append_kv(decode_kv, kd, vd, self.layer_idx)
            o = batch_decode(qd, decode_kv, self.layer_idx)
            outputs.append(o.view(nd, self.hidden_size))
        attn = outputs[0] if len(outputs) == 1 else torch.cat(outputs, dim=0)
        return self.o_proj(attn)


class LlamaMLP(nn.Module):
    def __init__(self, config: LlamaConfig):
        super().__init__()
        self.gate_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.up_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.down_proj = nn.Linear(config.intermediate_size, config.hidden_size, bias=False)
        self.act_fn = ACT2FN[config.hidden_act]

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, config: LlamaConfig, layer_idx: int):
        super().__init__()
        self.self_attn = LlamaAttention(config, layer_idx)
        self.mlp = LlamaMLP(config)
        self.input_layernorm = LlamaRMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        self.post_attention_layernorm = LlamaRMSNorm(config.hidden_size, eps=config.rms_norm_eps)

    def forward(self, hidden_states, prefill_lens, prefill_indptr, prefill_kv, decode_kv, wrapper):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = self.self_attn(
            hidden_states, prefill_lens, prefill_indptr, prefill_kv, decode_kv, wrapper
        )
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        return residual + hidden_states


class LlamaModel(PreTrainedModel):
    config_class = LlamaConfig
    base_model_prefix = "model"
    _no_split_modules = ["LlamaDecoderLayer"]

    def __init__(self, config: LlamaConfig):
        super().__init__(config)
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size, config.pad_token_id)
        self.layers = nn.ModuleList(
            [LlamaDecoderLayer(config, i) for i in range(config.num_hidden_layers)]
        )
        self.norm = LlamaRMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        self.post_init()

    def forward(self, input_ids, prefill_lens, prefill_kv, decode_kv, wrapper):
        indptr = torch.tensor([0] + list(prefill_lens), dtype=torch.int32, device=input_ids.device)
        indptr = torch.cumsum(indptr, dim=0, dtype=torch.int32)
        if prefill_kv is not None and len(prefill_lens) > 0:
            wrapper.begin_forward(
                indptr,
                len(prefill_lens),
                self.config.num_attention_heads,
                self.config.num_key_value_heads,
            )
        h = self.embed_tokens(input_ids)
        for layer in self.layers:
            h = layer(h, prefill_lens, indptr, prefill_kv, decode_kv, wrapper)
        if prefill_kv is not None and len(prefill_lens) > 0:
            wrapper.end_forward()
        return self.norm(h)


class LlamaForCausalLM(PreTrainedModel):
    config_class = LlamaConfig
    base_model_prefix = "model"

    def __init__(self, config: LlamaConfig):
        super().__init__(config)
        self.model = LlamaModel(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.post_init()

    def forward(
        self,
        input_ids: torch.Tensor,
        prefill_lens: list,
        prefill_kv: Optional[BatchedKvCache],
        decode_kv: Optional[BatchedKvCache],
        wrapper: BatchPrefillWithPagedKVCache,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        h = self.model(input_ids, prefill_lens, prefill_kv, decode_kv, wrapper)
        return self.lm_head(h), h


def _default_dtype() -> torch.dtype:
    # bf16 needs Ampere; fall back to fp16 on Turing/Volta
    major, _ = torch.cuda.get_device_capability()
    return torch.bfloat16 if major >= 8 else torch.float16


def load_llama(
    model_path: str,
    device: Optional[torch.device] = None,
    dtype: Optional[torch.dtype] = None,
) -> Tuple[LlamaForCausalLM, LlamaConfig]:
    """Load an HF LLaMA checkpoint directly onto ``device`` (default: cuda:0)."""
    if device is None:
        device = torch.device("cuda:0")
    if dtype is None:
        dtype = _default_dtype()
    config = LlamaConfig.from_pretrained(model_path)
    with device:
        model = LlamaForCausalLM.from_pretrained(
            model_path, config=config, torch_dtype=dtype, low_cpu_mem_usage=True
        )
    model.eval()
    model.requires_grad_(False)
    return model.to(device), config


def make_workspace(device: torch.device, size_mb: int = 128) -> torch.Tensor:
    return torch.empty(size_mb * 1024 * 1024, dtype=torch.int8, device=device)
