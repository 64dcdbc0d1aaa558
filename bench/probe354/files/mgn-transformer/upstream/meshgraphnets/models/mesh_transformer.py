"""Transformer processor for Lagrangian mesh simulators.

Replaces part of the message-passing stack with global self-attention over the
mesh nodes of each graph in the batch (graphs have different node counts, so
the nodes are "packed" and attention is restricted per graph). On GPU the
packed layout goes straight to FlashAttention-2's varlen kernel; otherwise the
batch is padded and fed to PyTorch SDPA.
"""
import math
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.backends.cuda import sdp_kernel

try:
    from flash_attn import flash_attn_varlen_func

    HAS_FLASH_ATTN = True
except ImportError:  # flash-attn is an optional CUDA-only dependency
    HAS_FLASH_ATTN = False


def batch_to_cu_seqlens(batch: torch.Tensor, num_graphs: int):
    """Cumulative node counts per graph (int32, as FlashAttention expects)."""
    counts = torch.bincount(batch, minlength=num_graphs)
    cu = torch.zeros(num_graphs + 1, dtype=torch.int32, device=batch.device)
    cu[1:] = torch.cumsum(counts, dim=0)
    return cu, int(counts.max().item())


def pad_packed(x: torch.Tensor, batch: torch.Tensor, num_graphs: int, max_len: int):
    """(N, H, D) packed -> (B, H, L, D) padded + (B, L) key padding mask."""
    n, h, d = x.shape
    counts = torch.bincount(batch, minlength=num_graphs)
    starts = torch.cumsum(counts, 0) - counts
    pos = torch.arange(n, device=x.device) - starts[batch]
    out = x.new_zeros(num_graphs, max_len, h, d)
    out[batch, pos] = x
    mask = torch.zeros(num_graphs, max_len, dtype=torch.bool, device=x.device)
    mask[batch, pos] = True
    return out.transpose(1, 2), mask, pos


def varlen_attention(q, k, v, batch, num_graphs, dropout_p=0.0):
    """Self-attention restricted to nodes of the same graph.

    q, k, v: (N, H, D) packed over all graphs of the batch.
    """
    cu_seqlens, max_len = batch_to_cu_seqlens(batch, num_graphs)
    if HAS_FLASH_ATTN and q.is_cuda and q.dtype in (torch.float16, torch.bfloat16):
        return flash_attn_varlen_func(
            q, k, v, cu_seqlens, cu_seqlens, max_len, max_len, dropout_p=dropout_p, causal=False
        )

    # Fallback: pad to a dense batch and let SDPA pick a kernel.
    qp, key_mask, pos = pad_packed(q, batch, num_graphs, max_len)
    kp, _, _ = pad_packed(k, batch, num_graphs, max_len)
    vp, _, _ = pad_packed(v, batch, num_graphs, max_len)
    attn_mask = key_mask[:, None, None, :]  # (B, 1, 1, L), True = attend
    with sdp_kernel(enable_flash=False, enable_math=True, enable_mem_efficient=True):
        out = F.scaled_dot_product_attention(qp, kp, vp, attn_mask=attn_mask, dropout_p=dropout_p)
    out = out.transpose(1, 2)  # (B, L, H, D)
    return out[batch, pos]


class MeshAttentionBlock(nn.Module):
    """Pre-norm transformer block over packed mesh nodes."""

    def __init__(self, dim: int = 128, heads: int = 4, mlp_ratio: float = 2.0, dropout: float = 0.0):
        super().__init__()
        assert dim % heads == 0
        self.heads = heads
        self.head_dim = dim // heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(
            nn.Linear(dim, int(dim * mlp_ratio)),
            nn.GELU(approximate="tanh"),
            nn.Linear(int(dim * mlp_ratio), dim),
        )
        self.dropout = dropout

    def forward(self, x: torch.Tensor, batch: torch.Tensor, num_graphs: int) -> torch.Tensor:
        n, c = x.shape
        qkv = self.qkv(self.norm1(x)).view(n, 3, self.heads, self.head_dim)
        q, k, v = qkv.unbind(dim=1)
        attn = varlen_attention(q, k, v, batch, num_graphs, self.dropout if self.training else 0.0)
        x = x + self.proj(attn.reshape(n, c))
        x = x + self.mlp(self.norm2(x))
        return x


class HybridProcessor(nn.Module):
    """Alternates local message passing layers with global attention blocks."""

    def __init__(self, mp_layers: nn.ModuleList, dim: int = 128, heads: int = 4, attn_every: int = 3):
        super().__init__()
        self.mp_layers = mp_layers
        self.attn_every = attn_every
        n_attn = math.ceil(len(mp_layers) / attn_every)
        self.attn_blocks = nn.ModuleList([MeshAttentionBlock(dim, heads) for _ in range(n_attn)])

    def forward(self, x, e, edge_index, batch: torch.Tensor, num_graphs: Optional[int] = None):
        if num_graphs is None:
            num_graphs = int(batch.max().item()) + 1
        a = 0
        for i, layer in enumerate(self.mp_layers):
            x, e = layer(x, e, edge_index)
            if (i + 1) % self.attn_every == 0:
                x = self.attn_blocks[a](x, batch, num_graphs)
                a += 1
        return x, e


if __name__ == "__main__":
    torch.manual_seed(0)
    dev = torch.device("cuda")
    blk = MeshAttentionBlock(128, 4).to(dev).half()
    batch = torch.repeat_interleave(torch.arange(3, device=dev), torch.tensor([500, 730, 612], device=dev))
    x = torch.randn(batch.numel(), 128, device=dev, dtype=torch.half)
    print(blk(x, batch, 3).shape, "flash" if HAS_FLASH_ATTN else "sdpa")
