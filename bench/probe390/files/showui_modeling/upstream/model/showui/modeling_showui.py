# coding=utf-8
# ShowUI: Qwen2-VL with UI-guided visual token selection and interleaved
# vision-language-action streaming. Built on transformers' modeling_qwen2_vl.
from dataclasses import dataclass
from typing import List, Optional, Tuple, Union

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import CrossEntropyLoss

from transformers.modeling_outputs import ModelOutput
from transformers.models.qwen2_vl.modeling_qwen2_vl import (
    Qwen2VisionTransformerPretrainedModel,
    Qwen2VLForConditionalGeneration,
    Qwen2VLModel,
    VisionRotaryEmbedding,
    apply_rotary_pos_emb_vision,
)
from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLConfig, Qwen2VLVisionConfig
from transformers.utils import logging

try:
    from flash_attn import flash_attn_varlen_func
except ImportError:  # flash-attn is optional; sdpa / eager do not need it
    flash_attn_varlen_func = None

logger = logging.get_logger(__name__)


@dataclass
class ShowUICausalLMOutputWithPast(ModelOutput):
    loss: Optional[torch.FloatTensor] = None
    logits: torch.FloatTensor = None
    past_key_values: Optional[List[torch.FloatTensor]] = None
    hidden_states: Optional[Tuple[torch.FloatTensor]] = None
    attentions: Optional[Tuple[torch.FloatTensor]] = None
    rope_deltas: Optional[torch.LongTensor] = None
    patch_assign: Optional[torch.LongTensor] = None


class VisionFlashAttention2Select(nn.Module):
    """Vision attention over packed variable-length images (cu_seqlens), flash-attn varlen kernel."""

    def __init__(self, dim: int, num_heads: int = 16) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(dim, dim * 3, bias=True)
        self.proj = nn.Linear(dim, dim)

    def forward(
        self, hidden_states: torch.Tensor, cu_seqlens: torch.Tensor, rotary_pos_emb: torch.Tensor = None
    ) -> torch.Tensor:
        seq_length = hidden_states.shape[0]
        q, k, v = self.qkv(hidden_states).reshape(seq_length, 3, self.num_heads, -1).permute(1, 0, 2, 3).unbind(0)
        q = apply_rotary_pos_emb_vision(q.unsqueeze(0), rotary_pos_emb).squeeze(0)
        k = apply_rotary_pos_emb_vision(k.unsqueeze(0), rotary_pos_emb).squeeze(0)

        max_seqlen = (cu_seqlens[1:] - cu_seqlens[:-1]).max().item()
        attn_output = flash_attn_varlen_func(q, k, v, cu_seqlens, cu_seqlens, max_seqlen, max_seqlen).reshape(
            seq_length, -1
        )
        attn_output = self.proj(attn_output)
        return attn_output


class VisionSdpaAttentionSelect(nn.Module):
    def __init__(self, dim: int, num_heads: int = 16) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(dim, dim * 3, bias=True)
        self.proj = nn.Linear(dim, dim)

    def forward(
        self, hidden_states: torch.Tensor, cu_seqlens: torch.Tensor, rotary_pos_emb: torch.Tensor = None
    ) -> torch.Tensor:
        seq_length = hidden_states.shape[0]
        q, k, v = self.qkv(hidden_states).reshape(seq_length, 3, self.num_heads, -1).permute(1, 0, 2, 3).unbind(0)
        q = apply_rotary_pos_emb_vision(q.unsqueeze(0), rotary_pos_emb).squeeze(0)
        k = apply_rotary_pos_emb_vision(k.unsqueeze(0), rotary_pos_emb).squeeze(0)

        attention_mask = torch.zeros([1, seq_length, seq_length], device=q.device, dtype=torch.bool)
        for i in range(1, len(cu_seqlens)):
            attention_mask[..., cu_seqlens[i - 1]: cu_seqlens[i], cu_seqlens[i - 1]: cu_seqlens[i]] = True
        q = q.transpose(0, 1)
        k = k.transpose(0, 1)
        v = v.transpose(0, 1)
        attn_output = F.scaled_dot_product_attention(q, k, v, attention_mask, dropout_p=0.0)
        attn_output = attn_output.transpose(0, 1)
        attn_output = attn_output.reshape(seq_length, -1)
        attn_output = self.proj(attn_output)
        return attn_output


VISION_ATTENTION_CLASSES_SELECT = {
    "eager": VisionSdpaAttentionSelect,
    "flash_attention_2": VisionFlashAttention2Select,
    "sdpa": VisionSdpaAttentionSelect,
}


def build_ui_graph_assign(patch_pixels: torch.Tensor, grid_thw: torch.Tensor, diff: float = 1.0):
    """Union-find over the patch grid: neighbouring patches whose RGB values differ by less than
    `diff` end up in the same component. Returns one component id per (merged 2x2) patch."""
    assigns = []
    offset = 0
    for t, h, w in grid_thw.tolist():
        n = t * h * w
        patches = patch_pixels[offset: offset + n].float()
        offset += n
        parent = list(range(n))

        def find(x):
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        def union(a, b):
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[rb] = ra

        grid = patches.view(t, h, w, -1)
        right = (grid[:, :, 1:] - grid[:, :, :-1]).abs().amax(-1) < diff
        down = (grid[:, 1:, :] - grid[:, :-1, :]).abs().amax(-1) < diff
        for ti, yi, xi in right.nonzero().tolist():
            union(ti * h * w + yi * w + xi, ti * h * w + yi * w + xi + 1)
        for ti, yi, xi in down.nonzero().tolist():
            union(ti * h * w + yi * w + xi, ti * h * w + (yi + 1) * w + xi)
        roots = torch.tensor([find(i) for i in range(n)])
        _, assign = torch.unique(roots, return_inverse=True)
        assigns.append(assign)
    return assigns


class ShowUIVisionTransformer(Qwen2VisionTransformerPretrainedModel):
    def __init__(self, config: Qwen2VLVisionConfig) -> None:
        super().__init__(config)
        head_dim = config.embed_dim // config.num_heads
        self.rotary_pos_emb = VisionRotaryEmbedding(head_dim // 2)
        attn_cls = VISION_ATTENTION_CLASSES_SELECT[config._attn_implementation]
        for blk in self.blocks:
            blk.attn = attn_cls(config.embed_dim, num_heads=config.num_heads)

    def forward(self, hidden_states: torch.Tensor, grid_thw: torch.Tensor, patch_pos=None) -> torch.Tensor:
        hidden_states = self.patch_embed(hidden_states)
        rotary_pos_emb = self.rot_pos_emb(grid_thw)

        cu_seqlens = torch.repeat_interleave(grid_thw[:, 1] * grid_thw[:, 2], grid_thw[:, 0]).cumsum(
            dim=0, dtype=torch.int32
        )
        cu_seqlens = F.pad(cu_seqlens, (1, 0), value=0)

        if patch_pos is not None:
            # UI-guided token selection: keep one random token per component during training
            hidden_states = hidden_states[patch_pos]
            rotary_pos_emb = rotary_pos_emb[patch_pos]
            lengths = torch.bincount(self._image_index(grid_thw)[patch_pos], minlength=grid_thw.shape[0])
            cu_seqlens = F.pad(lengths.cumsum(0, dtype=torch.int32), (1, 0), value=0)

        for blk in self.blocks:
            if self.gradient_checkpointing and self.training:
                hidden_states = self._gradient_checkpointing_func(blk.__call__, hidden_states, cu_seqlens,
                                                                  rotary_pos_emb)
            else:
                hidden_states = blk(hidden_states, cu_seqlens=cu_seqlens, rotary_pos_emb=rotary_pos_emb)

        return self.merger(hidden_states)

    @staticmethod
    def _image_index(grid_thw):
        sizes = (grid_thw[:, 0] * grid_thw[:, 1] * grid_thw[:, 2]).tolist()
        return torch.cat([torch.full((s,), i, dtype=torch.long) for i, s in enumerate(sizes)]).to(grid_thw.device)


class ShowUIForConditionalGeneration(Qwen2VLForConditionalGeneration):
    def __init__(self, config: Qwen2VLConfig, lm_skip_ratio: float = 0.0, lm_skip_layer=None):
        super().__init__(config)
        self.visual = ShowUIVisionTransformer._from_config(
            config.vision_config, attn_implementation=config._attn_implementation
        )
        self.model = Qwen2VLModel(config)
        self.lm_skip_ratio = lm_skip_ratio
        self.lm_skip_layer = lm_skip_layer or [1, 28, 0]
        self.post_init()

    def _select_visual_tokens(self, image_embeds, patch_assign):
        if patch_assign is None or self.lm_skip_ratio <= 0 or not self.training:
            return image_embeds, None
        keep = []
        for comp in torch.unique(patch_assign):
            idx = (patch_assign == comp).nonzero(as_tuple=True)[0]
            n_keep = max(1, int(round(len(idx) * (1 - self.lm_skip_ratio))))
            perm = torch.randperm(len(idx), device=idx.device)[:n_keep]
            keep.append(idx[perm])
        keep = torch.sort(torch.cat(keep)).values
        return image_embeds[keep], keep

    def forward(
        self,
        input_ids: torch.LongTensor = None,
        attention_mask: Optional[torch.Tensor] = None,
        position_ids: Optional[torch.LongTensor] = None,
        past_key_values: Optional[List[torch.FloatTensor]] = None,
        inputs_embeds: Optional[torch.FloatTensor] = None,
        labels: Optional[torch.LongTensor] = None,
        use_cache: Optional[bool] = None,
        output_attentions: Optional[bool] = None,
        output_hidden_states: Optional[bool] = None,
        return_dict: Optional[bool] = None,
        pixel_values: Optional[torch.Tensor] = None,
        image_grid_thw: Optional[torch.LongTensor] = None,
        rope_deltas: Optional[torch.LongTensor] = None,
        patch_assign: Optional[torch.LongTensor] = None,
        patch_pos: Optional[torch.LongTensor] = None,
        select_mask: Optional[torch.BoolTensor] = None,
    ) -> Union[Tuple, ShowUICausalLMOutputWithPast]:
        output_attentions = output_attentions if output_attentions is not None else self.config.output_attentions
        output_hidden_states = (
            output_hidden_states if output_hidden_states is not None else self.config.output_hidden_states
        )
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict

        if inputs_embeds is None:
            inputs_embeds = self.model.embed_tokens(input_ids)
            if pixel_values is not None:
                pixel_values = pixel_values.type(self.visual.get_dtype())
                image_embeds = self.visual(pixel_values, grid_thw=image_grid_thw, patch_pos=patch_pos)
                image_mask = input_ids == self.config.image_token_id
                if select_mask is not None:
                    image_mask = image_mask & select_mask
                inputs_embeds[image_mask] = image_embeds.to(inputs_embeds.dtype)
            if attention_mask is not None:
                attention_mask = attention_mask.to(inputs_embeds.device)

        if position_ids is None and input_ids is not None:
            position_ids, rope_deltas = self.get_rope_index(input_ids, image_grid_thw, None, attention_mask)

        outputs = self.model(
            input_ids=None,
            position_ids=position_ids,
            attention_mask=attention_mask,
            past_key_values=past_key_values,
            inputs_embeds=inputs_embeds,
            use_cache=use_cache,
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
            return_dict=return_dict,
        )

        hidden_states = outputs[0]
        logits = self.lm_head(hidden_states)
        logits = logits.float()

        loss = None
        if labels is not None:
            # Shift so that tokens < n predict n
            shift_logits = logits[..., :-1, :].contiguous()
            shift_labels = labels[..., 1:].contiguous()
            loss_fct = CrossEntropyLoss()
            shift_logits = shift_logits.view(-1, self.config.vocab_size)
            shift_labels = shift_labels.view(-1)
            shift_labels = shift_labels.to(shift_logits.device)
            loss = loss_fct(shift_logits, shift_labels)

        if not return_dict:
            output = (logits,) + outputs[1:]
            return (loss,) + output if loss is not None else output

        return ShowUICausalLMOutputWithPast(
            loss=loss,
            logits=logits,
            past_key_values=outputs.past_key_values,
            hidden_states=outputs.hidden_states,
            attentions=outputs.attentions,
            rope_deltas=rope_deltas,
            patch_assign=patch_assign,
        )
