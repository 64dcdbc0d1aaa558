"""Lookahead-decoding additions for HF Llama.

Methods defined on the classes below are copied onto transformers' Llama classes by
lade.utils.inject_module, so the names must match the HF classes.
"""
import math
from dataclasses import dataclass
from typing import List, Optional, Tuple, Union

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from transformers.modeling_outputs import BaseModelOutputWithPast, CausalLMOutputWithPast
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb, repeat_kv
from transformers.utils import ModelOutput

try:
    from flash_attn import flash_attn_func, flash_attn_with_kvcache
except ImportError:  # eager path only
    flash_attn_func = None
    flash_attn_with_kvcache = None


@dataclass
class CausalLMOutputWithPastJacobi(ModelOutput):
    loss: Optional[torch.FloatTensor] = None
    logits: torch.FloatTensor = None
    past_key_values: Optional[Tuple[Tuple[torch.FloatTensor]]] = None
    hidden_states: Optional[Tuple[torch.FloatTensor]] = None
    attentions: Optional[Tuple[torch.FloatTensor]] = None
    guess_logits: torch.FloatTensor = None
    inp_logits: torch.FloatTensor = None
    out_logits: torch.FloatTensor = None
    kvcache: Optional[Tuple[Tuple[torch.FloatTensor]]] = None


def _make_causal_mask(
    input_ids_shape: torch.Size, dtype: torch.dtype, device: torch.device, past_key_values_length: int = 0
):
    """
    Make causal mask used for bi-directional self-attention.
    """
    bsz, tgt_len = input_ids_shape
    mask = torch.full((tgt_len, tgt_len), torch.finfo(dtype).min, device=device)
    mask_cond = torch.arange(mask.size(-1), device=device)
    mask.masked_fill_(mask_cond < (mask_cond + 1).view(mask.size(-1), 1), 0)
    mask = mask.to(dtype)

    if past_key_values_length > 0:
        mask = torch.cat([torch.zeros(tgt_len, past_key_values_length, dtype=dtype, device=device), mask], dim=-1)
    return mask[None, None, :, :].expand(bsz, 1, tgt_len, tgt_len + past_key_values_length)


def _expand_mask(mask: torch.Tensor, dtype: torch.dtype, tgt_len: Optional[int] = None):
    bsz, src_len = mask.size()
    tgt_len = tgt_len if tgt_len is not None else src_len

    expanded_mask = mask[:, None, None, :].expand(bsz, 1, tgt_len, src_len).to(dtype)

    inverted_mask = 1.0 - expanded_mask

    return inverted_mask.masked_fill(inverted_mask.to(torch.bool), torch.finfo(dtype).min)


def lookahead_window_mask(level, window, guess_size, n_guess, fill_level, dtype, device):
    """Mask for [lookahead window (level-1 rows of `window` tokens) | verification n-grams].

    Token j of row l attends to: the prefix (handled by the caller), token j of all earlier rows,
    and tokens < j of row 0 (the 'trajectory'). Each n-gram in the verification branch is causal
    within itself and blind to the other n-grams and to the lookahead window.
    """
    min_val = torch.finfo(dtype).min
    rows = fill_level + 1
    la_len = rows * window
    g_len = n_guess * guess_size
    total = la_len + g_len
    mask = torch.full((total, total), min_val, dtype=dtype, device=device)

    # lookahead branch
    for r in range(rows):
        for j in range(window):
            q = r * window + j
            mask[q, : j + 1] = 0  # trajectory of row 0
            for rr in range(1, r + 1):
                mask[q, rr * window + j] = 0
    # verification branch
    for g in range(n_guess):
        base = la_len + g * guess_size
        for k in range(guess_size):
            mask[base + k, base : base + k + 1] = 0
    return mask


class LlamaAttention(nn.Module):
    def forward_lookahead(
        self,
        hidden_states: torch.Tensor,
        attention_mask: Optional[torch.Tensor] = None,
        position_ids: Optional[torch.LongTensor] = None,
        past_key_value: Optional[Tuple[torch.Tensor]] = None,
        use_flash: int = 0,
        prefix_len: int = 0,
    ):
        bsz, q_len, _ = hidden_states.size()

        query_states = self.q_proj(hidden_states)
        key_states = self.k_proj(hidden_states)
        value_states = self.v_proj(hidden_states)

        query_states = query_states.view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key_states = key_states.view(bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)
        value_states = value_states.view(bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)

        kv_seq_len = key_states.shape[-2]
        if past_key_value is not None:
            kv_seq_len += past_key_value[0].shape[-2]
        cos, sin = self.rotary_emb(value_states, seq_len=kv_seq_len)
        query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin, position_ids)

        if past_key_value is not None:
            # reuse k, v, self_attention
            key_states = torch.cat([past_key_value[0], key_states], dim=2)
            value_states = torch.cat([past_key_value[1], value_states], dim=2)
        past_key_value = (key_states, value_states)

        if use_flash and q_len == kv_seq_len:
            # prefill: plain causal attention, [bsz, seq, heads, dim] layout
            attn_output = flash_attn_func(
                query_states.transpose(1, 2),
                key_states.transpose(1, 2),
                value_states.transpose(1, 2),
                causal=True,
            )
            attn_output = attn_output.reshape(bsz, q_len, self.hidden_size)
            return self.o_proj(attn_output), None, past_key_value

        if use_flash and q_len == 1:
            # no lookahead branch this step (window still filling): decode one token
            attn_output = flash_attn_with_kvcache(
                query_states.transpose(1, 2),
                key_states.transpose(1, 2),
                value_states.transpose(1, 2),
                causal=True,
            )
            attn_output = attn_output.reshape(bsz, q_len, self.hidden_size)
            return self.o_proj(attn_output), None, past_key_value

        key_states = repeat_kv(key_states, self.num_key_value_groups)
        value_states = repeat_kv(value_states, self.num_key_value_groups)

        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) / math.sqrt(self.head_dim)

        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask

        # upcast attention to fp32
        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_states.dtype)
        attn_output = torch.matmul(attn_weights, value_states)

        attn_output = attn_output.transpose(1, 2).contiguous()
        attn_output = attn_output.reshape(bsz, q_len, self.hidden_size)
        attn_output = self.o_proj(attn_output)
        return attn_output, None, past_key_value


class LlamaDecoderLayer(nn.Module):
    def forward_lookahead(
        self,
        hidden_states,
        attention_mask=None,
        position_ids=None,
        past_key_value=None,
        use_flash=0,
    ):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states, _, present_key_value = self.self_attn.forward_lookahead(
            hidden_states=hidden_states,
            attention_mask=attention_mask,
            position_ids=position_ids,
            past_key_value=past_key_value,
            use_flash=use_flash,
        )
        hidden_states = residual + hidden_states

        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        hidden_states = residual + hidden_states
        return hidden_states, present_key_value


class LlamaModel(nn.Module):
    def j_prepare_decoder_attention_mask(
        self,
        attention_mask,
        input_shape,
        inputs_embeds,
        past_key_values_length,
        WINDOWS_SIZE=0,
        is_prefill=False,
        guess=None,
        guess_size=2,
        not_seq=False,
        continue_all=False,
        level_sizes=None,
        la_mask_offset=0,
    ):
        dtype = inputs_embeds.dtype
        device = inputs_embeds.device
        bsz, tgt_len = input_shape
        combined_attention_mask = None
        if is_prefill or tgt_len == 1:
            if tgt_len > 1:
                combined_attention_mask = _make_causal_mask(
                    input_shape, dtype, device=device, past_key_values_length=past_key_values_length
                )
        else:
            # [prefix tokens | input token | lookahead window | verification n-grams]
            n_guess = 0 if guess is None else len(guess) // guess_size
            fill_level = len(level_sizes) - 1 if level_sizes else 0
            la_mask = lookahead_window_mask(
                fill_level + 1, WINDOWS_SIZE, guess_size, n_guess, fill_level, dtype, device
            )
            cur = tgt_len - la_mask.shape[0]
            full = torch.full(
                (tgt_len, past_key_values_length + tgt_len), torch.finfo(dtype).min, dtype=dtype, device=device
            )
            full[:, : past_key_values_length + cur] = 0  # everyone sees the prefix and the input token(s)
            full[:cur, past_key_values_length : past_key_values_length + cur] = _make_causal_mask(
                (1, cur), dtype, device
            )[0, 0]
            full[cur:, past_key_values_length + cur :] = la_mask
            combined_attention_mask = full[None, None].expand(bsz, 1, -1, -1)

        if attention_mask is not None:
            expanded_attn_mask = _expand_mask(attention_mask, dtype, tgt_len=tgt_len).to(device)
            if combined_attention_mask is None:
                combined_attention_mask = expanded_attn_mask
            else:
                combined_attention_mask = expanded_attn_mask + combined_attention_mask
        return combined_attention_mask

    def LlamaModeljforward(
        self,
        input_ids=None,
        attention_mask=None,
        position_ids=None,
        past_key_values=None,
        inputs_embeds=None,
        WINDOWS_SIZE=0,
        guess_size=2,
        guess=None,
        not_seq=False,
        continue_all=False,
        level_sizes=None,
        la_mask_offset=0,
        use_flash=0,
        **kwargs,
    ):
        batch_size, seq_length = input_ids.shape
        past_key_values_length = 0 if past_key_values is None else past_key_values[0][0].shape[2]

        if position_ids is None:
            device = input_ids.device
            position_ids = torch.arange(
                past_key_values_length, seq_length + past_key_values_length, dtype=torch.long, device=device
            )
            position_ids = position_ids.unsqueeze(0).view(-1, seq_length)

        if inputs_embeds is None:
            inputs_embeds = self.embed_tokens(input_ids)

        attention_mask = self.j_prepare_decoder_attention_mask(
            attention_mask,
            (batch_size, seq_length),
            inputs_embeds,
            past_key_values_length,
            WINDOWS_SIZE=WINDOWS_SIZE,
            is_prefill=past_key_values is None,
            guess=guess,
            guess_size=guess_size,
            not_seq=not_seq,
            continue_all=continue_all,
            level_sizes=level_sizes,
            la_mask_offset=la_mask_offset,
        )

        hidden_states = inputs_embeds
        next_decoder_cache = ()
        for idx, decoder_layer in enumerate(self.layers):
            past_key_value = past_key_values[idx] if past_key_values is not None else None
            hidden_states, present = decoder_layer.forward_lookahead(
                hidden_states,
                attention_mask=attention_mask,
                position_ids=position_ids,
                past_key_value=past_key_value,
                use_flash=use_flash,
            )
            next_decoder_cache += (present,)

        hidden_states = self.norm(hidden_states)
        return BaseModelOutputWithPast(last_hidden_state=hidden_states, past_key_values=next_decoder_cache)


class LlamaForCausalLM(nn.Module):
    def jforward_multilevel(
        self,
        input_ids: torch.LongTensor = None,
        attention_mask: Optional[torch.Tensor] = None,
        position_ids: Optional[torch.LongTensor] = None,
        past_key_values: Optional[List[torch.FloatTensor]] = None,
        guess_tokens: Optional[List[int]] = None,
        return_dict: Optional[bool] = None,
        not_seq: bool = False,
        continue_all: bool = False,
        output_attentions: Optional[bool] = None,
        output_hidden_states: Optional[bool] = None,
        level: int = 3,
        WINDOWS_SIZE: int = 10,
        guess_size: int = 2,
        fill_level: int = -1,
        dist_workers: int = 1,
        la_mask_offset: int = 0,
        local_rank: int = 0,
        use_flash: int = 0,
        **kwargs,
    ):
        assert past_key_values is not None or fill_level == 0
        prefix_ids = input_ids
        window_ids = None
        if past_key_values is not None:
            # append lookahead window + guesses after the real input token(s)
            past_tokens = kwargs.get("past_tokens")
            window = [] if past_tokens is None else [t for row in past_tokens[: fill_level + 1] for t in row]
            guesses = guess_tokens or []
            extra = torch.tensor(window + guesses, dtype=input_ids.dtype, device=input_ids.device)[None]
            window_ids = extra
            input_ids = torch.cat([input_ids, extra], dim=1)
            start = position_ids[0, -1].item() + 1
            la_pos = torch.arange(start, start + WINDOWS_SIZE, device=input_ids.device).repeat(fill_level + 1)
            g_pos = torch.arange(start, start + guess_size, device=input_ids.device).repeat(len(guesses) // max(guess_size, 1))
            position_ids = torch.cat([position_ids, la_pos[None], g_pos[None]], dim=1)

        outputs = self.model.LlamaModeljforward(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=position_ids,
            past_key_values=past_key_values,
            WINDOWS_SIZE=WINDOWS_SIZE,
            guess_size=guess_size,
            guess=guess_tokens,
            not_seq=not_seq,
            continue_all=continue_all,
            level_sizes=[WINDOWS_SIZE] * (fill_level + 1),
            la_mask_offset=la_mask_offset,
            use_flash=use_flash,
        )
        hidden_states = outputs.last_hidden_state
        logits = self.lm_head(hidden_states).float()

        n_inp = prefix_ids.shape[1]
        out_logits = logits[:, n_inp - 1]
        inp_logits = None
        guess_logits = None
        if window_ids is not None:
            la_len = WINDOWS_SIZE * (fill_level + 1)
            inp_logits = logits[:, n_inp + la_len - WINDOWS_SIZE : n_inp + la_len]
            guess_logits = logits[:, n_inp + la_len :]

            if dist_workers > 1:
                # every worker computed the same window; keep rank 0's copy authoritative
                gathered = [torch.zeros_like(inp_logits) for _ in range(dist_workers)]
                dist.all_gather(gathered, inp_logits.contiguous())
                inp_logits = gathered[0]

        # trim the kv cache back to the accepted prefix; the caller extends it with accepted guesses
        kvcache = tuple(
            (k[:, :, : k.shape[2] - (input_ids.shape[1] - n_inp)], v[:, :, : v.shape[2] - (input_ids.shape[1] - n_inp)])
            for k, v in outputs.past_key_values
        )

        return CausalLMOutputWithPastJacobi(
            logits=logits,
            past_key_values=outputs.past_key_values,
            guess_logits=guess_logits,
            inp_logits=inp_logits,
            out_logits=out_logits,
            kvcache=kvcache,
        )
