import math
from typing import Iterable, Optional, Union

import torch
import torch.nn.functional as F
from einops import rearrange, repeat
from torch import Tensor, nn

from comfy.ldm.modules.attention import FeedForward, SpatialTransformer
from comfy.model_patcher import ModelPatcher
from comfy.ldm.modules.diffusionmodules import openaimodel
from comfy.ldm.modules.diffusionmodules.openaimodel import SpatialTransformer
from comfy.controlnet import broadcast_image_to
from comfy.utils import repeat_to_batch_size
import comfy.ops
import comfy.model_management

from .utils_model import BetaSchedules, ModelTypeSD
from .logger import logger

# until xformers bug is fixed, do not use xformers for VersatileAttention! TODO: change this when fix is out
# logic for choosing optimized_attention method taken from comfy/ldm/modules/attention.py
optimized_attention_mm = None
if comfy.model_management.xformers_enabled():
    pass
if comfy.model_management.pytorch_attention_enabled():
    from comfy.ldm.modules.attention import attention_pytorch
    optimized_attention_mm = attention_pytorch
else:
    from comfy.cli_args import args
    if args.use_split_cross_attention:
        from comfy.ldm.modules.attention import attention_split
        optimized_attention_mm = attention_split
    else:
        from comfy.ldm.modules.attention import attention_sub_quad
        optimized_attention_mm = attention_sub_quad


def zero_module(module):
    # Zero out the parameters of a module and return it.
    for p in module.parameters():
        p.detach().zero_()
    return module


class MotionModuleInfo:
    def __init__(self, mm_name: str, mm_type: str, sd_type: str):
        self.mm_name = mm_name
        self.mm_type = mm_type
        self.sd_type = sd_type


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.0, max_len=24):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(
            torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model)
        )
        pe = torch.zeros(1, max_len, d_model)
        pe[0, :, 0::2] = torch.sin(position * div_term)
        pe[0, :, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe)
        self.sub_idxs = None

    def set_sub_idxs(self, sub_idxs: list[int]):
        self.sub_idxs = sub_idxs

    def forward(self, x, mm_kwargs: dict[str] = {}):
        if self.sub_idxs is not None:
            x = x + self.pe[:, self.sub_idxs]
        else:
            x = x + self.pe[:, : x.size(1)]
        return self.dropout(x)


class CrossAttentionMM(nn.Module):
    def __init__(self, query_dim, context_dim=None, heads=8, dim_head=64, dropout=0., dtype=None, device=None,
                 operations=comfy.ops.disable_weight_init):
        super().__init__()
        inner_dim = dim_head * heads
        context_dim = query_dim if context_dim is None else context_dim

        self.heads = heads
        self.dim_head = dim_head
        self.scale = None
        self.default_scale = dim_head ** -0.5

        self.to_q = operations.Linear(query_dim, inner_dim, bias=False, dtype=dtype, device=device)
        self.to_k = operations.Linear(context_dim, inner_dim, bias=False, dtype=dtype, device=device)
        self.to_v = operations.Linear(context_dim, inner_dim, bias=False, dtype=dtype, device=device)

        self.to_out = nn.Sequential(operations.Linear(inner_dim, query_dim, dtype=dtype, device=device), nn.Dropout(dropout))

    def forward(self, x, context=None, value=None, mask=None, scale_mask=None, mm_kwargs=None, transformer_options=None):
        q = self.to_q(x)
        context = x if context is None else context
        k: Tensor = self.to_k(context)
        if value is not None:
            v = self.to_v(value)
            del value
        else:
            v = self.to_v(context)

        # apply custom scale by multiplying k by scale factor
        if self.scale is not None:
            k *= self.scale

        # apply scale mask, if present
        if scale_mask is not None:
            k *= scale_mask

        out = optimized_attention_mm(q, k, v, self.heads, mask)
        return self.to_out(out)


class VersatileAttention(CrossAttentionMM):
    def __init__(self, attention_mode=None, cross_frame_attention_mode=None, temporal_position_encoding=False,
                 temporal_position_encoding_max_len=24, ops=comfy.ops.disable_weight_init, *args, **kwargs):
        super().__init__(operations=ops, *args, **kwargs)
        assert attention_mode == "Temporal"

        self.attention_mode = attention_mode
        self.is_cross_attention = kwargs["context_dim"] is not None

        self.pos_encoder = (
            PositionalEncoding(
                kwargs["query_dim"],
                dropout=0.0,
                max_len=temporal_position_encoding_max_len,
            )
            if (temporal_position_encoding and attention_mode == "Temporal")
            else None
        )

    def extra_repr(self):
        return f"(Module Info) Attention_Mode: {self.attention_mode}, Is_Cross_Attention: {self.is_cross_attention}"

    def set_scale_multiplier(self, multiplier: Union[float, None]):
        if multiplier is None or math.isclose(multiplier, 1.0):
            self.scale = None
        else:
            self.scale = multiplier

    def set_sub_idxs(self, sub_idxs: list[int]):
        if self.pos_encoder is not None:
            self.pos_encoder.set_sub_idxs(sub_idxs)

    def forward(self, x: Tensor, encoder_hidden_states=None, attention_mask=None, video_length=None,
                scale_mask=None, mm_kwargs: dict[str] = {}, transformer_options=None):
        if self.attention_mode != "Temporal":
            raise NotImplementedError

        d = x.shape[1]
        x = rearrange(x, "(b f) d c -> (b d) f c", f=video_length)

        if self.pos_encoder is not None:
            x = self.pos_encoder(x, mm_kwargs)

        encoder_hidden_states = (
            repeat(encoder_hidden_states, "b n c -> (b d) n c", d=d)
            if encoder_hidden_states is not None
            else encoder_hidden_states
        )

        if scale_mask is not None:
            scale_mask = repeat(scale_mask, "b f d -> (b d) f 1", d=d)

        x = super().forward(
            x,
            encoder_hidden_states,
            value=None,
            mask=attention_mask,
            scale_mask=scale_mask,
            mm_kwargs=mm_kwargs,
            transformer_options=transformer_options,
        )

        x = rearrange(x, "(b d) f c -> (b f) d c", d=d)

        return x


def get_sorted_list_via_attr(to_sort: list, attr: str):
    if not to_sort:
        return []
    elif len(to_sort) == 1:
        return [to_sort[0]]
    to_sort = to_sort.copy()
    sorted_list = []
    while len(to_sort) > 0:
        min_val = getattr(to_sort[0], attr)
        min_idx = 0
        for i, item in enumerate(to_sort):
            val = getattr(item, attr)
            if val < min_val:
                min_val = val
                min_idx = i
        sorted_list.append(to_sort.pop(min_idx))
    return sorted_list


class EncoderOnlyAnimateDiffModel(nn.Module):
    def __init__(self, mm_state_dict: dict[str, Tensor], mm_info: MotionModuleInfo):
        super().__init__()
        self.mm_info = mm_info
        self.down_blocks: Iterable[nn.Module] = nn.ModuleList([])
        self.encoding_config = {}
        self.AD_video_length = 24

    def set_video_length(self, video_length: int, full_length: int):
        self.AD_video_length = video_length

    def cleanup(self):
        pass


def create_sinusoidal_embedding(length: int, dim: int, device=None):
    half = dim // 2
    freqs = torch.exp(-math.log(10000) * torch.arange(start=0, end=half, dtype=torch.float32, device=device) / half)
    args = torch.arange(length, device=device, dtype=torch.float32)[:, None] * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


def debug_motion_memory(tag: str):
    # handy when tuning context length on 8GB cards
    if torch.cuda.is_available():
        alloc = torch.cuda.memory_allocated() / 2**20
        peak = torch.cuda.max_memory_allocated() / 2**20
        logger.debug(f"[{tag}] allocated={alloc:.0f}MiB peak={peak:.0f}MiB")
