"""LLaMA with batched LoRA adapters.

Every projection (q/k/v/o, gate/up/down) gets an ``add_lora_sgmv_custom_cutlass``
call on top of the dense matmul.  Requests in a batch are grouped by adapter
(``segment``) so a single kernel launch serves all adapters of a step.
"""
import dataclasses
import math
from typing import Dict, List, Optional, Tuple

import torch
from torch import nn
from transformers.models.llama.modeling_llama import (
    ACT2FN,
    LlamaConfig,
    PreTrainedModel,
    rotate_half,
)

from punica.models.llama import LlamaRMSNorm
from punica.ops import (
    BatchPrefillWithPagedKVCache,
    add_lora_sgmv_custom_cutlass,
    append_kv,
    batch_decode,
    init_kv,
    rms_norm,
)
from punica.utils.kvcache import BatchedKvCache


class LoraWeight:
    """LoRA A/B weights for one projection across all layers of one adapter.

    wa: ``[num_layers, lora_rank, in_features]``
    wb: ``[num_layers, lora_rank, out_features]``
    """

    def __init__(
        self,
        num_layers: int,
        in_features: int,
        out_features: int,
        lora_rank: int,
        dtype: torch.dtype,
        device: torch.device,
    ):
        # SGMV-Shrink custom CUTLASS kernel replaces the transpose of wa.
        self.wa = torch.zeros(
            (num_layers, lora_rank, in_features), dtype=dtype, device=device
        )
        self.wb = torch.zeros(
            (num_layers, lora_rank, out_features), dtype=dtype, device=device
        )

    def copy_from_tensor(self, a: torch.Tensor, b: torch.Tensor):
        """
        Args:
          a: Shape: `[num_layers, lora_rank, in_features]`.
          b: Shape: `[num_layers, lora_rank, out_features]`.
        """
        assert a.dtype == b.dtype
        assert a.device == b.device
        assert a.shape == self.wa.shape
        assert b.shape == self.wb.shape
        self.wa.copy_(a)
        self.wb.copy_(b)

    @property
    def device(self) -> torch.device:
        return self.wa.device

    @property
    def dtype(self) -> torch.dtype:
        return self.wa.dtype

    @property
    def num_layers(self) -> int:
        return self.wa.size(0)

    @property
    def lora_rank(self) -> int:
        return self.wa.size(1)


class LlamaLoraWeight:
    def __init__(
        self,
        config: LlamaConfig,
        lora_rank: int,
        dtype: torch.dtype,
        device: torch.device,
    ):
        self.q = LoraWeight(
            config.num_hidden_layers,
            config.hidden_size,
            config.hidden_size,
            lora_rank,
            dtype,
            device,
        )
        self.k = LoraWeight(
            config.num_hidden_layers,
            config.hidden_size,
            config.hidden_size,
            lora_rank,
            dtype,
            device,
        )
        self.v = LoraWeight(
            config.num_hidden_layers,
            config.hidden_size,
            config.hidden_size,
            lora_rank,
            dtype,
            device,
        )
        self.o = LoraWeight(
            config.num_hidden_layers,
            config.hidden_size,
            config.hidden_size,
            lora_rank,
            dtype,
            device,
        )
        self.gate = LoraWeight(
            config.num_hidden_layers,
            config.hidden_size,
            config.intermediate_size,
            lora_rank,
            dtype,
            device,
        )
        self.up = LoraWeight(
            config.num_hidden_layers,
            config.hidden_size,
            config.intermediate_size,
            lora_rank,
            dtype,
            device,
        )
        self.down = LoraWeight(
            config.num_hidden_layers,
            config.intermediate_size,
            config.hidden_size,
            lora_rank,
            dtype,
            device,
        )

    def copy_from_tensors(self, ts: Dict[str, torch.Tensor]):
        self.q.copy_from_tensor(ts["q.A"], ts["q.B"])
        self.k.copy_from_tensor(ts["k.A"], ts["k.B"])
        self.v.copy_from_tensor(ts["v.A"], ts["v.B"])
        self.o.copy_from_tensor(ts["o.A"], ts["o.B"])
        self.gate.copy_from_tensor(ts["gate.A"], ts["gate.B"])
        self.up.copy_from_tensor(ts["up.A"], ts["up.B"])
        self.down.copy_from_tensor(ts["down.A"], ts["down.B"])


class BatchedLoraWeight:
    """Pointer arrays + segment boundaries for one projection of a batch."""

    def __init__(self, weights: List[LoraWeight], lens: List[int]):
        assert len(weights) == len(lens)
        device = weights[0].device
        self.wa_ptr = torch.tensor(
            [w.wa.data_ptr() for w in weights], dtype=torch.int64, device=device
        )
        self.wb_ptr = torch.tensor(
            [w.wb.data_ptr() for w in weights], dtype=torch.int64, device=device
        )
        self.segment = torch.cumsum(
            torch.tensor([0] + lens, dtype=torch.int32, device=device),
            dim=0,
            dtype=torch.int32,
        )
        self.rank = weights[0].lora_rank


class BatchedLlamaLoraWeight:
    def __init__(self, weights: List[LlamaLoraWeight], lens: List[int]):
        assert len(weights) == len(lens)
        self.q = BatchedLoraWeight([w.q for w in weights], lens)
        self.k = BatchedLoraWeight([w.k for w in weights], lens)
        self.v = BatchedLoraWeight([w.v for w in weights], lens)
        self.o = BatchedLoraWeight([w.o for w in weights], lens)
        self.gate = BatchedLoraWeight([w.gate for w in weights], lens)
        self.up = BatchedLoraWeight([w.up for w in weights], lens)
        self.down = BatchedLoraWeight([w.down for w in weights], lens)
        self.segment = self.q.segment
        self.rank = self.q.rank


@dataclasses.dataclass
class BatchLenInfo:
    prefills: List[int]
    decode: int
    indptr: torch.Tensor
    doff: int

    def __init__(
        self,
        prefills: List[int],
        decode: int,
        indptr_device: torch.device,
        indptr_dtype: torch.dtype = torch.int32,
    ):
        tmp = [0]
        tmp.extend(prefills)
        self.indptr = torch.tensor(tmp, dtype=indptr_dtype, device=indptr_device)
        torch.cumsum(self.indptr, dim=0, out=self.indptr)
        self.prefills = prefills
        self.decode = decode
        self.doff = sum(prefills)


class LlamaAttentionWithLora(nn.Module):
    def __init__(self, config: LlamaConfig, layer_idx: int):
        super().__init__()
        self.hidden_size = config.hidden_size
        self.num_heads = config.num_attention_heads
        self.head_dim = self.hidden_size // self.num_heads
        self.num_kv_heads = getattr(config, "num_key_value_heads", self.num_heads)
        self._scale = 1 / math.sqrt(self.head_dim)
        self.layer_idx = layer_idx

        self.q_proj = nn.Linear(self.hidden_size, self.num_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(self.hidden_size, self.num_kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(self.hidden_size, self.num_kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(self.num_heads * self.head_dim, self.hidden_size, bias=False)

    def forward(
        self,
        hidden_states: torch.Tensor,
        blen: BatchLenInfo,
        prefill_kv: Optional[BatchedKvCache],
        decode_kv: Optional[BatchedKvCache],
        lora: BatchedLlamaLoraWeight,
        prefill_wrapper: BatchPrefillWithPagedKVCache,
    ) -> torch.Tensor:
        q_proj = self.q_proj(hidden_states)
        k_proj = self.k_proj(hidden_states)
        v_proj = self.v_proj(hidden_states)

        add_lora_sgmv_custom_cutlass(
            q_proj, hidden_states, lora.q.wa_ptr, lora.q.wb_ptr, lora.segment, self.layer_idx, lora.rank
        )
        add_lora_sgmv_custom_cutlass(
            k_proj, hidden_states, lora.k.wa_ptr, lora.k.wb_ptr, lora.segment, self.layer_idx, lora.rank
        )
        add_lora_sgmv_custom_cutlass(
            v_proj, hidden_states, lora.v.wa_ptr, lora.v.wb_ptr, lora.segment, self.layer_idx, lora.rank
        )

        stack_attn_output = []

        if len(blen.prefills) > 0:
            assert prefill_kv is not None
            q = q_proj[: blen.doff].view(blen.doff, self.num_heads, self.head_dim)
            k = k_proj[: blen.doff].view(blen.doff, self.num_kv_heads, self.head_dim)
            v = v_proj[: blen.doff].view(blen.doff, self.num_kv_heads, self.head_dim)

            init_kv(prefill_kv, k, v, blen.indptr, self.layer_idx)
            attn_output = prefill_wrapper.forward(q, prefill_kv, self.layer_idx)
            attn_output = attn_output.view(blen.doff, self.hidden_size)
            stack_attn_output.append(attn_output)

        if blen.decode > 0:
            assert decode_kv is not None
            q = q_proj[blen.doff :].view(blen.decode, self.num_heads, self.head_dim)
            k = k_proj[blen.doff :].view(blen.decode, self.num_kv_heads, self.head_dim)
            v = v_proj[blen.doff :].view(blen.decode, self.num_kv_heads, self.head_dim)

            append_kv(decode_kv, k, v, self.layer_idx)
            attn_outputs = batch_decode(q, decode_kv, self.layer_idx)
            attn_outputs = attn_outputs.view(blen.decode, self.hidden_size)
            stack_attn_output.append(attn_outputs)

        if len(stack_attn_output) == 1:
            attn_outputs = stack_attn_output[0]
        else:
            attn_outputs = torch.cat(stack_attn_output, dim=0)

        o = self.o_proj(attn_outputs)
        add_lora_sgmv_custom_cutlass(
            o, attn_outputs, lora.o.wa_ptr, lora.o.wb_ptr, lora.segment, self.layer_idx, lora.rank
        )
        return o


class LlamaMlpWithLora(nn.Module):
    def __init__(self, config: LlamaConfig, layer_idx: int):
        super().__init__()
        self.hidden_size = config.hidden_size
        self.intermediate_size = config.intermediate_size
        self.gate_proj = nn.Linear(self.hidden_size, self.intermediate_size, bias=False)
        self.up_proj = nn.Linear(self.hidden_size, self.intermediate_size, bias=False)
        self.down_proj = nn.Linear(self.intermediate_size, self.hidden_size, bias=False)
        self.act_fn = ACT2FN[config.hidden_act]
        self.layer_idx = layer_idx

    def forward(self, x: torch.Tensor, lora: BatchedLlamaLoraWeight) -> torch.Tensor:
        gate = self.gate_proj(x)
        add_lora_sgmv_custom_cutlass(
            gate, x, lora.gate.wa_ptr, lora.gate.wb_ptr, lora.segment, self.layer_idx, lora.rank
        )
        up = self.up_proj(x)
        add_lora_sgmv_custom_cutlass(
            up, x, lora.up.wa_ptr, lora.up.wb_ptr, lora.segment, self.layer_idx, lora.rank
        )
        t = self.act_fn(gate) * up
        down = self.down_proj(t)
        add_lora_sgmv_custom_cutlass(
            down, t, lora.down.wa_ptr, lora.down.wb_ptr, lora.segment, self.layer_idx, lora.rank
        )
        return down


class LlamaDecoderLayerWithLora(nn.Module):
    def __init__(self, config: LlamaConfig, layer_idx: int):
        super().__init__()
        self.hidden_size = config.hidden_size
        self.self_attn = LlamaAttentionWithLora(config, layer_idx)
        self.mlp = LlamaMlpWithLora(config, layer_idx)
        self.input_layernorm = LlamaRMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        self.post_attention_layernorm = LlamaRMSNorm(config.hidden_size, eps=config.rms_norm_eps)

    def forward(self, hidden_states, blen, prefill_kv, decode_kv, lora, prefill_wrapper):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = self.self_attn(
            hidden_states, blen, prefill_kv, decode_kv, lora, prefill_wrapper
        )
        hidden_states = residual + hidden_states

        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states, lora)
        hidden_states = residual + hidden_states
        return hidden_states


class LlamaPreTrainedModel(PreTrainedModel):
    config_class = LlamaConfig
    base_model_prefix = "model"
    supports_gradient_checkpointing = False
    _no_split_modules = ["LlamaDecoderLayerWithLora"]
    _keys_to_ignore_on_load_unexpected = [r"decoder\.version"]


class LlamaModelWithLora(LlamaPreTrainedModel):
    def __init__(self, config: LlamaConfig):
        super().__init__(config)
        self.padding_idx = config.pad_token_id
        self.vocab_size = config.vocab_size
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size, self.padding_idx)
        self.layers = nn.ModuleList(
            [LlamaDecoderLayerWithLora(config, i) for i in range(config.num_hidden_layers)]
        )
        self.norm = LlamaRMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        # flashinfer needs a device workspace; 128 MB is enough for batch <= 256
        self._workspace = torch.empty(128 * 1024 * 1024, dtype=torch.int8, device="cuda:0")
        self.prefill_wrapper = BatchPrefillWithPagedKVCache(self._workspace, "NHD")
        self.post_init()

    def forward(
        self,
        input_ids: torch.Tensor,
        blen: BatchLenInfo,
        prefill_kv: Optional[BatchedKvCache],
        decode_kv: Optional[BatchedKvCache],
        lora: BatchedLlamaLoraWeight,
    ) -> torch.Tensor:
        torch.cuda.nvtx.range_push("embed")
        hidden_states = self.embed_tokens(input_ids)
        torch.cuda.nvtx.range_pop()  # embed

        if len(blen.prefills) > 0:
            self.prefill_wrapper.begin_forward(
                blen.indptr,
                len(blen.prefills),
                self.config.num_attention_heads,
                self.config.num_key_value_heads,
            )
        for layer_idx, decoder_layer in enumerate(self.layers):
            torch.cuda.nvtx.range_push(f"layer={layer_idx}")
            hidden_states = decoder_layer(
                hidden_states, blen, prefill_kv, decode_kv, lora, self.prefill_wrapper
            )
            torch.cuda.nvtx.range_pop()  # layer={layer_idx}
        if len(blen.prefills) > 0:
            self.prefill_wrapper.end_forward()

        hidden_states = self.norm(hidden_states)
        return hidden_states


class LlamaForCausalLMWithLora(LlamaPreTrainedModel):
    def __init__(self, config: LlamaConfig):
        super().__init__(config)
        self.model = LlamaModelWithLora(config)
        self.vocab_size = config.vocab_size
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.post_init()

    def forward(
        self,
        input_ids: torch.Tensor,
        blen: BatchLenInfo,
        prefill_kv: Optional[BatchedKvCache],
        decode_kv: Optional[BatchedKvCache],
        lora: BatchedLlamaLoraWeight,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        torch.cuda.nvtx.range_push("LlamaForCausalLMWithLora")
        hidden_states = self.model(input_ids, blen, prefill_kv, decode_kv, lora)
        logits = self.lm_head(hidden_states)
        torch.cuda.nvtx.range_pop()  # LlamaForCausalLMWithLora
        return logits, hidden_states

