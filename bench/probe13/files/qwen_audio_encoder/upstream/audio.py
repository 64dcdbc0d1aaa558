# Whisper-style audio encoder used by a Qwen-Audio-like speech LLM.
# Mel frames -> conv stem -> transformer blocks -> pooled audio tokens that are spliced into the LLM input.
import base64
import gzip
import math
from dataclasses import dataclass
from typing import Iterable, List, Optional

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

try:
    from flash_attn.flash_attn_interface import flash_attn_varlen_func
    from flash_attn.layers.rotary import apply_rotary_emb_func
    HAS_FLASH_ATTN = True
except ImportError:
    HAS_FLASH_ATTN = False
    flash_attn_varlen_func = None

N_SAMPLES = 480000  # 30 s at 16 kHz
N_FRAMES = 3000


class LayerNorm(nn.LayerNorm):
    def forward(self, x: Tensor) -> Tensor:
        return super().forward(x.float()).type(x.dtype)


class Linear(nn.Linear):
    def forward(self, x: Tensor) -> Tensor:
        return F.linear(x, self.weight.to(x.dtype), None if self.bias is None else self.bias.to(x.dtype))


class Conv1d(nn.Conv1d):
    def _conv_forward(self, x: Tensor, weight: Tensor, bias: Optional[Tensor]) -> Tensor:
        return super()._conv_forward(x, weight.to(x.dtype), None if bias is None else bias.to(x.dtype))


def sinusoids(length, channels, max_timescale=10000):
    """Returns sinusoids for positional embedding"""
    assert channels % 2 == 0
    log_timescale_increment = np.log(max_timescale) / (channels // 2 - 1)
    inv_timescales = torch.exp(-log_timescale_increment * torch.arange(channels // 2))
    scaled_time = torch.arange(length)[:, np.newaxis] * inv_timescales[np.newaxis, :]
    return torch.cat([torch.sin(scaled_time), torch.cos(scaled_time)], dim=1)


class MultiHeadAttention(nn.Module):
    def __init__(self, n_state: int, n_head: int, use_flash_attn: bool = True):
        super().__init__()
        self.n_head = n_head
        self.query = Linear(n_state, n_state)
        self.key = Linear(n_state, n_state, bias=False)
        self.value = Linear(n_state, n_state)
        self.out = Linear(n_state, n_state)
        self.use_flash_attn = use_flash_attn and HAS_FLASH_ATTN

    def forward(self, x: Tensor, cu_seqlens: Optional[Tensor] = None, max_seqlen: int = 0, mask: Optional[Tensor] = None):
        q = self.query(x)
        k = self.key(x)
        v = self.value(x)
        if self.use_flash_attn and cu_seqlens is not None:
            # x is packed: (total_tokens, n_state)
            hd = q.shape[-1] // self.n_head
            q, k, v = (t.view(-1, self.n_head, hd) for t in (q, k, v))
            out = flash_attn_varlen_func(q, k, v, cu_seqlens, cu_seqlens, max_seqlen, max_seqlen,
                                         dropout_p=0.0, softmax_scale=hd ** -0.5, causal=False)
            return self.out(out.reshape(-1, self.n_head * hd))
        wv = self.qkv_attention(q, k, v, mask)
        return self.out(wv)

    def qkv_attention(self, q: Tensor, k: Tensor, v: Tensor, mask: Optional[Tensor] = None):
        n_batch, n_ctx, n_state = q.shape
        scale = (n_state // self.n_head) ** -0.25
        q = q.view(*q.shape[:2], self.n_head, -1).permute(0, 2, 1, 3) * scale
        k = k.view(*k.shape[:2], self.n_head, -1).permute(0, 2, 3, 1) * scale
        v = v.view(*v.shape[:2], self.n_head, -1).permute(0, 2, 1, 3)
        qk = q @ k
        if mask is not None:
            qk = qk + mask
        w = F.softmax(qk.float(), dim=-1).to(q.dtype)
        return (w @ v).permute(0, 2, 1, 3).flatten(start_dim=2)


class ResidualAttentionBlock(nn.Module):
    def __init__(self, n_state: int, n_head: int):
        super().__init__()
        self.attn = MultiHeadAttention(n_state, n_head)
        self.attn_ln = LayerNorm(n_state)
        n_mlp = n_state * 4
        self.mlp = nn.Sequential(Linear(n_state, n_mlp), nn.GELU(), Linear(n_mlp, n_state))
        self.mlp_ln = LayerNorm(n_state)

    def forward(self, x: Tensor, cu_seqlens=None, max_seqlen=0, mask=None):
        x = x + self.attn(self.attn_ln(x), cu_seqlens=cu_seqlens, max_seqlen=max_seqlen, mask=mask)
        x = x + self.mlp(self.mlp_ln(x))
        return x


class AudioEncoder(nn.Module):
    def __init__(self, n_mels: int, n_ctx: int, n_state: int, n_head: int, n_layer: int, output_dim: int = 4096,
                 avg_pool: bool = True):
        super().__init__()
        self.conv1 = Conv1d(n_mels, n_state, kernel_size=3, padding=1)
        self.conv2 = Conv1d(n_state, n_state, kernel_size=3, stride=2, padding=1)
        self.register_buffer("positional_embedding", sinusoids(n_ctx, n_state))
        self.blocks: Iterable[ResidualAttentionBlock] = nn.ModuleList(
            [ResidualAttentionBlock(n_state, n_head) for _ in range(n_layer)])
        self.ln_post = LayerNorm(n_state)
        self.avg_pooler = nn.AvgPool1d(2, stride=2) if avg_pool else None
        self.proj = nn.Linear(n_state, output_dim)

    @torch.cuda.amp.autocast(dtype=torch.bfloat16)
    def forward(self, x: Tensor, audio_lengths: Tensor):
        """x: (batch, n_mels, n_frames); audio_lengths: valid frames after the conv stem."""
        x = x.to(dtype=self.conv1.weight.dtype, device=self.conv1.weight.device)
        x = F.gelu(self.conv1(x))
        x = F.gelu(self.conv2(x))
        x = x.permute(0, 2, 1)
        bsz, n_ctx, _ = x.shape
        x = (x + self.positional_embedding[:n_ctx]).to(x.dtype)

        # pack valid frames for varlen flash attention
        lengths = audio_lengths.to(torch.int32)
        cu_seqlens = F.pad(torch.cumsum(lengths, dim=0, dtype=torch.int32), (1, 0))
        max_seqlen = int(lengths.max().item())
        valid = torch.arange(n_ctx, device=x.device)[None, :] < lengths[:, None]
        packed = x[valid]
        for block in self.blocks:
            packed = block(packed, cu_seqlens=cu_seqlens.cuda(), max_seqlen=max_seqlen)
        x = x.new_zeros(bsz, n_ctx, x.shape[-1])
        x[valid] = packed

        if self.avg_pooler is not None:
            x = self.avg_pooler(x.permute(0, 2, 1)).permute(0, 2, 1)
        x = self.ln_post(x)
        return self.proj(x)

    @torch.no_grad()
    def encode_audio_batch(self, mels: List[Tensor]):
        lengths = torch.tensor([m.shape[-1] // 2 for m in mels])
        batch = torch.zeros(len(mels), mels[0].shape[0], N_FRAMES)
        for i, m in enumerate(mels):
            batch[i, :, : m.shape[-1]] = m
        return self.forward(batch.cuda(non_blocking=True), lengths.cuda())
