# GLM / CPM-Bee style rotary position embedding.
#   * 2D positions for GLM blank infilling (position_ids + block_position_ids)
#   * partial rotary (only the first `rotary_dim` channels rotate), interleaved layout
#   * the elementwise helpers are TorchScript-compiled so they fuse into one kernel
import math
from typing import Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


def _cos_sin_dtype():
    # bf16 caches lose too much precision at long context on Ampere+, keep fp32 there
    major, _ = torch.cuda.get_device_capability()
    return torch.float32 if major >= 8 else torch.float16


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, base=10000, precision=torch.half, learnable=False, max_seq_len=2048,
                 device=None):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, device=device).float() / dim))
        inv_freq = inv_freq.half() if precision == torch.half else inv_freq
        self.learnable = learnable
        if learnable:
            self.inv_freq = nn.Parameter(inv_freq)
            self.max_seq_len_cached = None
        else:
            self.register_buffer("inv_freq", inv_freq, persistent=False)
            self.max_seq_len_cached = None
            self.cos_cached = None
            self.sin_cached = None
        self.precision = precision
        self.max_seq_len = max_seq_len

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        pass

    def forward(self, x, seq_dim=1, seq_len=None):
        if seq_len is None:
            seq_len = x.shape[seq_dim]
        if self.max_seq_len_cached is None or (seq_len > self.max_seq_len_cached):
            self.max_seq_len_cached = None if self.learnable else seq_len
            t = torch.arange(seq_len, device=x.device, dtype=self.inv_freq.dtype)
            freqs = torch.einsum("i,j->ij", t, self.inv_freq)
            # Different from paper, but it uses a different permutation in order to obtain the same calculation
            emb = torch.cat((freqs, freqs), dim=-1).to(x.device)
            cache_dtype = _cos_sin_dtype() if self.precision == torch.bfloat16 else self.precision
            # [sx, 1 (b * np), hn]
            cos_cached = emb.cos()[:, None, :].to(cache_dtype)
            sin_cached = emb.sin()[:, None, :].to(cache_dtype)
            if self.learnable:
                return cos_cached, sin_cached
            self.cos_cached, self.sin_cached = cos_cached, sin_cached
        return self.cos_cached[:seq_len, ...], self.sin_cached[:seq_len, ...]

    def _apply(self, fn):
        if self.cos_cached is not None:
            self.cos_cached = fn(self.cos_cached)
        if self.sin_cached is not None:
            self.sin_cached = fn(self.sin_cached)
        return super()._apply(fn)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=x1.ndim - 1)  # dim=-1 triggers a bug in earlier torch versions


@torch.jit.script
def apply_rotary_pos_emb_index(q, k, cos, sin, position_id):
    # position_id: [sq, b], q, k: [sq, b, np, hn], cos: [sq, 1, hn] -> [sq, b, 1, hn]
    cos, sin = F.embedding(position_id, cos.squeeze(1)).unsqueeze(2), \
        F.embedding(position_id, sin.squeeze(1)).unsqueeze(2)
    q, k = (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)
    return q, k


@torch.jit.script
def apply_rotary_pos_emb_interleaved(x: torch.Tensor, rope_cache: torch.Tensor) -> torch.Tensor:
    # x: [sq, b, np, hn]; rope_cache: [sq, b, rot_dim/2, 2]
    sq, b, np_, hn = x.size(0), x.size(1), x.size(2), x.size(3)
    rot_dim = rope_cache.shape[-2] * 2
    x, x_pass = x[..., :rot_dim], x[..., rot_dim:]
    rope_cache = rope_cache[:sq]
    xshaped = x.reshape(sq, -1, np_, rot_dim // 2, 2)
    rope_cache = rope_cache.view(sq, -1, 1, xshaped.size(3), 2)
    x_out2 = torch.stack(
        [
            xshaped[..., 0] * rope_cache[..., 0] - xshaped[..., 1] * rope_cache[..., 1],
            xshaped[..., 1] * rope_cache[..., 0] + xshaped[..., 0] * rope_cache[..., 1],
        ],
        -1,
    )
    x_out2 = x_out2.flatten(3)
    return torch.cat((x_out2, x_pass), dim=-1)


class GLM2DRotary(nn.Module):
    """Applies two rotary embeddings: half the head dim sees the token position, half the block position."""

    def __init__(self, hidden_size_per_head, max_seq_len=2048, base=10000, precision=torch.half):
        super().__init__()
        self.rotary_emb = RotaryEmbedding(hidden_size_per_head // 2, base=base, precision=precision,
                                          max_seq_len=max_seq_len)

    def forward(self, q, k, position_ids):
        # q, k: [sq, b, np, hn]; position_ids: [b, 2, sq]
        q1, q2 = q.chunk(2, dim=(q.ndim - 1))
        k1, k2 = k.chunk(2, dim=(k.ndim - 1))
        cos, sin = self.rotary_emb(q1, seq_len=position_ids.max() + 1)
        position_ids, block_position_ids = position_ids[:, 0, :].transpose(0, 1).contiguous(), \
            position_ids[:, 1, :].transpose(0, 1).contiguous()
        q1, k1 = apply_rotary_pos_emb_index(q1, k1, cos, sin, position_ids)
        q2, k2 = apply_rotary_pos_emb_index(q2, k2, cos, sin, block_position_ids)
        return torch.cat([q1, q2], dim=(q1.ndim - 1)), torch.cat([k1, k2], dim=(k1.ndim - 1))


def build_rope_cache(seq_len: int, n_elem: int, dtype: torch.dtype, device: torch.device, base: int = 10000):
    """ChatGLM2-style interleaved cache: [seq_len, n_elem/2, 2] of (cos, sin)."""
    theta = 1.0 / (base ** (torch.arange(0, n_elem, 2, dtype=torch.float, device=device) / n_elem))
    seq_idx = torch.arange(seq_len, dtype=torch.float, device=device)
    idx_theta = torch.outer(seq_idx, theta).float()
    cache = torch.stack([torch.cos(idx_theta), torch.sin(idx_theta)], dim=-1)
    if dtype in (torch.float16, torch.bfloat16, torch.int8):
        cache = cache.bfloat16() if dtype == torch.bfloat16 else cache.half()
    return cache


if __name__ == "__main__":
    torch.manual_seed(0)
    q = torch.randn(128, 2, 32, 128, dtype=torch.half).cuda()
    k = torch.randn(128, 2, 32, 128, dtype=torch.half).cuda()
    pos = torch.stack([torch.arange(128), torch.zeros(128, dtype=torch.long)]).unsqueeze(0).repeat(2, 1, 1).cuda()
    rot = GLM2DRotary(128).cuda()
    q_out, k_out = rot(q, k, pos)
    print(q_out.shape, k_out.shape, (q_out - q).abs().mean().item())
