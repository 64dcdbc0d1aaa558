"""Flash attention monkey patch for llama model, with sample packing (multipack) support.

Packed rows carry several samples back to back; `position_ids` restart at 0 at every
sample boundary, and cu_seqlens recovered from them keep attention inside each sample.
"""
# copied from https://github.com/lm-sys/FastChat/blob/main/fastchat/train/llama_flash_attn_monkey_patch.py

import logging
from functools import partial
from typing import Optional, Tuple

import torch
import transformers
from einops import rearrange
from flash_attn.flash_attn_interface import flash_attn_func, flash_attn_varlen_qkvpacked_func
from flash_attn.layers.rotary import apply_rotary_emb_func
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

LOG = logging.getLogger("axolotl")


def get_cu_seqlens_from_pos_ids(position_ids):
    """generate a cumulative sequence length mask for flash attention using pos ids"""
    if len(position_ids.shape) == 1:
        position_ids = position_ids.unsqueeze(0)

    device = position_ids.device
    results = []
    max_seq_lens = []

    for row in position_ids:
        # Count the number of consecutive zeros from the right side
        padding_length = (row == 0).int().flip(dims=[0]).cumprod(dim=0).sum().item()

        # Adjust the row to exclude padding
        adjusted_row = row[:-padding_length] if padding_length else row.clone()

        # Find where the position resets to 0 (indicating a new sequence)
        seq_starts = torch.cat(
            [
                torch.tensor([True], dtype=torch.bool, device=device),
                adjusted_row[1:] == 0,
            ]
        )
        # Get the indices where the sequence starts
        start_indices = torch.cat(
            [
                torch.nonzero(seq_starts).unbind(dim=1)[0],
                torch.tensor([len(adjusted_row)], dtype=torch.int32, device=device),
            ]
        )
        # Calculate the sequence lengths
        seq_lengths = start_indices[1:] - start_indices[:-1]
        # Calculate the cumulative sequence lengths
        cu_seqlens = torch.cat(
            [torch.tensor([0], dtype=torch.int32, device=device), seq_lengths.cumsum(0)]
        )
        # Append the padding length to the cumulative sequence lengths
        if padding_length:
            cu_seqlens = torch.cat(
                [cu_seqlens, torch.tensor([len(row)], dtype=torch.int32, device=device)]
            )
        max_seq_len = (cu_seqlens[1:] - cu_seqlens[:-1]).max()
        results.append(cu_seqlens)
        max_seq_lens.append(max_seq_len)

    return torch.stack(results).to(dtype=torch.int32), torch.stack(max_seq_lens)


def replace_llama_attn_with_flash_attn(
    packed: Optional[bool] = False,
    cross_entropy: Optional[bool] = False,
    rms_norm: Optional[bool] = False,
    use_rotary: Optional[bool] = False,
):
    transformers.models.llama.modeling_llama.LlamaAttention.forward = partial(
        flashattn_forward, use_rotary=use_rotary
    )
    if packed:
        LOG.info("patching LlamaAttention for sample packing (cu_seqlens from position_ids)")

    # skip only if explicitly disabled
    if cross_entropy:
        from flash_attn.losses.cross_entropy import CrossEntropyLoss

        LOG.info("patching with flash_attn.losses.cross_entropy")
        transformers.models.llama.modeling_llama.CrossEntropyLoss = partial(
            CrossEntropyLoss, inplace_backward=True
        )

    # skip only if explicitly disabled
    if rms_norm:
        from flash_attn.ops.rms_norm import RMSNorm

        class LlamaRMSNorm(RMSNorm):
            """Patched LLamaRMSNorm"""

            def __init__(self, hidden_size, eps=1e-6):
                super().__init__(hidden_size, eps=eps)

        LOG.info("patching with flash_attn.ops.rms_norm")
        transformers.models.llama.modeling_llama.LlamaRMSNorm = LlamaRMSNorm


def flashattn_forward(
    self,
    hidden_states: torch.Tensor,
    attention_mask: Optional[torch.Tensor] = None,
    position_ids: Optional[torch.LongTensor] = None,
    past_key_value: Optional[Tuple[torch.Tensor]] = None,
    output_attentions: bool = False,
    use_cache: bool = False,
    padding_mask: Optional[torch.LongTensor] = None,  # pylint: disable=unused-argument
    use_rotary: bool = False,
    **kwargs,  # pylint: disable=unused-argument
) -> Tuple[torch.Tensor, Optional[torch.Tensor], Optional[Tuple[torch.Tensor]]]:
    """Input shape: Batch x Time x Channel

    attention_mask: [bsz, q_len]
    """
    bsz, q_len, _ = hidden_states.size()

    query_states = self.q_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim)
    key_states = self.k_proj(hidden_states).view(bsz, q_len, self.num_key_value_heads, self.head_dim)
    value_states = self.v_proj(hidden_states).view(bsz, q_len, self.num_key_value_heads, self.head_dim)
    # [bsz, q_len, nh, hd]

    if use_rotary:
        # flash-attn's triton rotary kernel works directly on (b, s, h, d)
        cos, sin = self.rotary_emb(value_states, seq_len=q_len)
        cos, sin = cos[:q_len, : self.head_dim // 2], sin[:q_len, : self.head_dim // 2]
        query_states = apply_rotary_emb_func(query_states, cos, sin, interleaved=False, inplace=True)
        key_states = apply_rotary_emb_func(key_states, cos, sin, interleaved=False, inplace=True)
    else:
        query_states, key_states = query_states.transpose(1, 2), key_states.transpose(1, 2)
        cos, sin = self.rotary_emb(value_states, seq_len=q_len)
        query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin, position_ids)
        query_states, key_states = query_states.transpose(1, 2), key_states.transpose(1, 2)

    if past_key_value is not None:
        raise ValueError("past_key_value is not supported by the packed flash-attn patch (training only)")

    dropout_rate = 0.0 if not self.training else getattr(self, "attention_dropout", 0.0)

    if position_ids is not None and position_ids.shape[0] == 1 and self.training:
        # special handling using sample packing
        cu_seqlens, max_seqlen = get_cu_seqlens_from_pos_ids(position_ids)
        cu_seqlens = cu_seqlens.squeeze()
        qkv = torch.stack([query_states, key_states, value_states], dim=2)
        qkv = rearrange(qkv, "b s ... -> (b s) ...")
        output = flash_attn_varlen_qkvpacked_func(
            qkv,
            cu_seqlens,
            max_seqlen,
            dropout_p=dropout_rate,
            softmax_scale=None,
            causal=True,
        )
        output = rearrange(output, "(b s) ... -> b s ...", b=bsz)
    else:
        output = flash_attn_func(
            query_states,
            key_states,
            value_states,
            dropout_rate,
            softmax_scale=None,
            causal=True,
        )

    attn_output = output.reshape(bsz, q_len, self.num_heads * self.head_dim)
    attn_output = self.o_proj(attn_output)

    return attn_output, None, None
