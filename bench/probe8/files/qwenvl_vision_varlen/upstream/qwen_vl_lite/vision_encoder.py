"""Vision tower of a Qwen2-VL-style multimodal LLM.

Images and video frames of arbitrary resolution are cut into 14x14 patches (2 frames deep for
video), all images of a batch are concatenated into one long token sequence, and attention is
restricted to each image with cu_seqlens (flash-attn varlen). 2-D rotary embeddings encode
patch position; a 2x2 patch merger projects to the LLM width.
"""
import math
from dataclasses import dataclass
from typing import Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    from flash_attn import flash_attn_varlen_func
    from flash_attn.layers.rotary import apply_rotary_emb

    _FLASH_AVAILABLE = True
except ImportError:
    flash_attn_varlen_func = None
    apply_rotary_emb = None
    _FLASH_AVAILABLE = False


@dataclass
class VisionConfig:
    depth: int = 32
    embed_dim: int = 1280
    hidden_size: int = 3584
    num_heads: int = 16
    mlp_ratio: float = 4.0
    in_channels: int = 3
    patch_size: int = 14
    temporal_patch_size: int = 2
    spatial_merge_size: int = 2
    attn_implementation: str = "flash_attention_2"


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb_vision(t: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
    orig_dtype = t.dtype
    t = t.float()
    cos = freqs.cos().unsqueeze(1).repeat(1, 1, 2).float()
    sin = freqs.sin().unsqueeze(1).repeat(1, 1, 2).float()
    out = t * cos + rotate_half(t) * sin
    return out.to(orig_dtype)


def apply_rotary_pos_emb_flashatt(t: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
    cos = freqs.cos().float()
    sin = freqs.sin().float()
    return apply_rotary_emb(t.float().unsqueeze(0), cos, sin).squeeze(0).type_as(t)


class VisionRotaryEmbedding(nn.Module):
    def __init__(self, dim: int, theta: float = 10000.0):
        super().__init__()
        inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float) / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, seqlen: int) -> torch.Tensor:
        seq = torch.arange(seqlen, device=self.inv_freq.device, dtype=self.inv_freq.dtype)
        return torch.outer(seq, self.inv_freq)


class PatchEmbed(nn.Module):
    def __init__(self, patch_size=14, temporal_patch_size=2, in_channels=3, embed_dim=1152):
        super().__init__()
        self.patch_size = patch_size
        self.temporal_patch_size = temporal_patch_size
        self.in_channels = in_channels
        self.embed_dim = embed_dim
        kernel_size = [temporal_patch_size, patch_size, patch_size]
        self.proj = nn.Conv3d(in_channels, embed_dim, kernel_size=kernel_size, stride=kernel_size, bias=False)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        target_dtype = self.proj.weight.dtype
        hidden_states = hidden_states.view(
            -1, self.in_channels, self.temporal_patch_size, self.patch_size, self.patch_size
        )
        hidden_states = self.proj(hidden_states.to(dtype=target_dtype)).view(-1, self.embed_dim)
        return hidden_states


class PatchMerger(nn.Module):
    def __init__(self, dim: int, context_dim: int, spatial_merge_size: int = 2):
        super().__init__()
        self.hidden_size = context_dim * (spatial_merge_size ** 2)
        self.ln_q = nn.LayerNorm(context_dim, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(self.hidden_size, self.hidden_size), nn.GELU(),
                                 nn.Linear(self.hidden_size, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.mlp(self.ln_q(x).view(-1, self.hidden_size))


class VisionMlp(nn.Module):
    def __init__(self, dim: int, hidden_dim: int):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden_dim)
        self.act = nn.GELU(approximate="tanh")
        self.fc2 = nn.Linear(hidden_dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


class VisionAttention(nn.Module):
    def __init__(self, dim: int, num_heads: int = 16):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.qkv = nn.Linear(dim, dim * 3, bias=True)
        self.proj = nn.Linear(dim, dim)

    def _qkv(self, hidden_states, rotary_pos_emb, flash_rope: bool = False):
        seq_length = hidden_states.shape[0]
        q, k, v = self.qkv(hidden_states).reshape(seq_length, 3, self.num_heads, -1).permute(1, 0, 2, 3).unbind(0)
        rope = apply_rotary_pos_emb_flashatt if flash_rope else apply_rotary_pos_emb_vision
        return rope(q, rotary_pos_emb), rope(k, rotary_pos_emb), v

    def forward(self, hidden_states, cu_seqlens, rotary_pos_emb):
        seq_length = hidden_states.shape[0]
        q, k, v = self._qkv(hidden_states, rotary_pos_emb)
        mask = torch.full([1, seq_length, seq_length], torch.finfo(q.dtype).min, device=q.device, dtype=q.dtype)
        for i in range(1, len(cu_seqlens)):
            lo, hi = cu_seqlens[i - 1], cu_seqlens[i]
            mask[..., lo:hi, lo:hi] = 0
        q, k, v = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)
        attn = torch.matmul(q, k.transpose(1, 2)) / math.sqrt(self.head_dim) + mask
        attn = F.softmax(attn, dim=-1, dtype=torch.float32).to(q.dtype)
        out = torch.matmul(attn, v).transpose(0, 1).reshape(seq_length, -1)
        return self.proj(out)


class VisionFlashAttention2(VisionAttention):
    def forward(self, hidden_states, cu_seqlens, rotary_pos_emb):
        seq_length = hidden_states.shape[0]
        q, k, v = self._qkv(hidden_states, rotary_pos_emb, flash_rope=True)
        max_seqlen = (cu_seqlens[1:] - cu_seqlens[:-1]).max().item()
        attn_output = flash_attn_varlen_func(q, k, v, cu_seqlens, cu_seqlens, max_seqlen, max_seqlen).reshape(seq_length, -1)
        return self.proj(attn_output)


class VisionSdpaAttention(VisionAttention):
    def forward(self, hidden_states, cu_seqlens, rotary_pos_emb):
        seq_length = hidden_states.shape[0]
        q, k, v = self._qkv(hidden_states, rotary_pos_emb)
        mask = torch.zeros([1, seq_length, seq_length], device=q.device, dtype=torch.bool)
        for i in range(1, len(cu_seqlens)):
            mask[..., cu_seqlens[i - 1]:cu_seqlens[i], cu_seqlens[i - 1]:cu_seqlens[i]] = True
        q, k, v = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)
        with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True):
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=0.0)
        return self.proj(out.transpose(0, 1).reshape(seq_length, -1))


VISION_ATTENTION_CLASSES = {
    "eager": VisionAttention,
    "flash_attention_2": VisionFlashAttention2,
    "sdpa": VisionSdpaAttention,
}


class VisionBlock(nn.Module):
    def __init__(self, config: VisionConfig):
        super().__init__()
        self.norm1 = nn.LayerNorm(config.embed_dim, eps=1e-6)
        self.norm2 = nn.LayerNorm(config.embed_dim, eps=1e-6)
        self.attn = VISION_ATTENTION_CLASSES[config.attn_implementation](config.embed_dim, config.num_heads)
        self.mlp = VisionMlp(config.embed_dim, int(config.embed_dim * config.mlp_ratio))

    def forward(self, hidden_states, cu_seqlens, rotary_pos_emb):
        hidden_states = hidden_states + self.attn(self.norm1(hidden_states), cu_seqlens, rotary_pos_emb)
        return hidden_states + self.mlp(self.norm2(hidden_states))


class VisionTransformer(nn.Module):
    def __init__(self, config: VisionConfig):
        super().__init__()
        if config.attn_implementation == "flash_attention_2" and not _FLASH_AVAILABLE:
            raise ImportError("flash_attn is required for attn_implementation='flash_attention_2'")
        self.config = config
        self.spatial_merge_size = config.spatial_merge_size
        self.patch_embed = PatchEmbed(config.patch_size, config.temporal_patch_size, config.in_channels, config.embed_dim)
        head_dim = config.embed_dim // config.num_heads
        self.rotary_pos_emb = VisionRotaryEmbedding(head_dim // 2)
        self.blocks = nn.ModuleList([VisionBlock(config) for _ in range(config.depth)])
        self.merger = PatchMerger(config.hidden_size, config.embed_dim, config.spatial_merge_size)
        self.gradient_checkpointing = False

    def rot_pos_emb(self, grid_thw: torch.Tensor) -> torch.Tensor:
        pos_ids = []
        m = self.spatial_merge_size
        for t, h, w in grid_thw.tolist():
            hpos = torch.arange(h).unsqueeze(1).expand(-1, w)
            hpos = hpos.reshape(h // m, m, w // m, m).permute(0, 2, 1, 3).flatten()
            wpos = torch.arange(w).unsqueeze(0).expand(h, -1)
            wpos = wpos.reshape(h // m, m, w // m, m).permute(0, 2, 1, 3).flatten()
            pos_ids.append(torch.stack([hpos, wpos], dim=-1).repeat(t, 1))
        pos_ids = torch.cat(pos_ids, dim=0).to(grid_thw.device)
        max_grid = int(grid_thw[:, 1:].max())
        full = self.rotary_pos_emb(max_grid)
        return full[pos_ids].flatten(1)

    def forward(self, hidden_states: torch.Tensor, grid_thw: torch.Tensor) -> torch.Tensor:
        hidden_states = self.patch_embed(hidden_states)
        rotary_pos_emb = self.rot_pos_emb(grid_thw)
        cu_seqlens = torch.repeat_interleave(grid_thw[:, 1] * grid_thw[:, 2], grid_thw[:, 0]).cumsum(
            dim=0, dtype=torch.int32
        )
        cu_seqlens = F.pad(cu_seqlens, (1, 0), value=0)
        for blk in self.blocks:
            if self.gradient_checkpointing and self.training:
                hidden_states = torch.utils.checkpoint.checkpoint(blk, hidden_states, cu_seqlens, rotary_pos_emb,
                                                                  use_reentrant=False)
            else:
                hidden_states = blk(hidden_states, cu_seqlens, rotary_pos_emb)
        return self.merger(hidden_states)
