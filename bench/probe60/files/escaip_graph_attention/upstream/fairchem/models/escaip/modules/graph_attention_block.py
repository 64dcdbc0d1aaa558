"""Neighbor-list graph attention block (EScAIP-style).

Each atom attends over its padded neighbor list; edge features enter as an additive attention bias.
Shapes: node_features [N, C], edge_features [N, K, C], neighbor_mask [N, K] (True = padded).
"""

import math
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import xformers.ops as xops

    HAS_XFORMERS = True
except ImportError:
    HAS_XFORMERS = False


@dataclass
class GraphAttentionConfig:
    hidden_size: int = 512
    num_heads: int = 8
    atten_num_heads: int = 16
    edge_hidden: int = 128
    max_neighbors: int = 30
    dropout: float = 0.0
    use_xformers: bool = False
    use_efficient_kernel: bool = True
    ffn_hidden: int = 1024


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        variance = x.float().pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(variance + self.eps).to(x.dtype)
        return self.weight * x


class SwiGLUFeedForward(nn.Module):
    def __init__(self, dim: int, hidden: int, dropout: float = 0.0):
        super().__init__()
        self.w12 = nn.Linear(dim, 2 * hidden, bias=False)
        self.w3 = nn.Linear(hidden, dim, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x1, x2 = self.w12(x).chunk(2, dim=-1)
        return self.w3(self.dropout(F.silu(x1) * x2))


class EdgeBias(nn.Module):
    """Projects radial/edge features to one attention-bias value per head."""

    def __init__(self, edge_hidden: int, num_heads: int):
        super().__init__()
        self.proj = nn.Sequential(
            nn.Linear(edge_hidden, edge_hidden),
            nn.SiLU(),
            nn.Linear(edge_hidden, num_heads),
        )

    def forward(self, edge_features: torch.Tensor, neighbor_mask: torch.Tensor) -> torch.Tensor:
        bias = self.proj(edge_features)  # [N, K, H]
        bias = bias.masked_fill(neighbor_mask.unsqueeze(-1), float("-inf"))
        return bias.permute(0, 2, 1).unsqueeze(2)  # [N, H, 1, K]


class GraphAttention(nn.Module):
    def __init__(self, cfg: GraphAttentionConfig):
        super().__init__()
        self.cfg = cfg
        self.num_heads = cfg.atten_num_heads
        self.head_dim = cfg.hidden_size // cfg.atten_num_heads
        self.q_proj = nn.Linear(cfg.hidden_size, cfg.hidden_size)
        self.kv_proj = nn.Linear(cfg.hidden_size + cfg.edge_hidden, 2 * cfg.hidden_size)
        self.out_proj = nn.Linear(cfg.hidden_size, cfg.hidden_size)
        self.edge_bias = EdgeBias(cfg.edge_hidden, cfg.atten_num_heads)
        self.scale = 1.0 / math.sqrt(self.head_dim)

    def _shape(self, x: torch.Tensor, n: int, length: int) -> torch.Tensor:
        return x.view(n, length, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(
        self,
        node_features: torch.Tensor,
        neighbor_features: torch.Tensor,
        edge_features: torch.Tensor,
        neighbor_mask: torch.Tensor,
    ) -> torch.Tensor:
        n, k, _ = neighbor_features.shape
        q = self._shape(self.q_proj(node_features).unsqueeze(1), n, 1)  # [N, H, 1, D]
        kv = self.kv_proj(torch.cat([neighbor_features, edge_features], dim=-1))
        key, value = kv.chunk(2, dim=-1)
        key = self._shape(key, n, k)
        value = self._shape(value, n, k)
        bias = self.edge_bias(edge_features, neighbor_mask).to(q.dtype)

        if self.cfg.use_xformers and HAS_XFORMERS:
            out = xops.memory_efficient_attention(
                q.transpose(1, 2),
                key.transpose(1, 2),
                value.transpose(1, 2),
                attn_bias=bias.expand(n, self.num_heads, 1, k),
                p=self.cfg.dropout if self.training else 0.0,
            ).transpose(1, 2)
        elif self.cfg.use_efficient_kernel:
            # the memory-efficient kernel supports an arbitrary additive bias and its gradient
            with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=False, enable_mem_efficient=True):
                out = F.scaled_dot_product_attention(
                    q, key, value,
                    attn_mask=bias,
                    dropout_p=self.cfg.dropout if self.training else 0.0,
                )
        else:
            out = F.scaled_dot_product_attention(
                q, key, value,
                attn_mask=bias,
                dropout_p=self.cfg.dropout if self.training else 0.0,
            )

        out = out.transpose(1, 2).reshape(n, -1)
        return self.out_proj(out)


class GraphAttentionBlock(nn.Module):
    def __init__(self, cfg: GraphAttentionConfig):
        super().__init__()
        self.norm_attn = RMSNorm(cfg.hidden_size)
        self.norm_ffn = RMSNorm(cfg.hidden_size)
        self.attn = GraphAttention(cfg)
        self.ffn = SwiGLUFeedForward(cfg.hidden_size, cfg.ffn_hidden, cfg.dropout)
        self.neighbor_norm = nn.LayerNorm(cfg.hidden_size)

    @torch.compiler.disable
    def gather_neighbors(self, node_features: torch.Tensor, neighbor_index: torch.Tensor) -> torch.Tensor:
        # padded entries point at atom 0; they are masked out in the attention bias
        return node_features[neighbor_index.clamp(min=0)]

    def forward(
        self,
        node_features: torch.Tensor,
        edge_features: torch.Tensor,
        neighbor_index: torch.Tensor,
        neighbor_mask: torch.Tensor,
    ) -> torch.Tensor:
        h = self.norm_attn(node_features)
        neighbors = self.neighbor_norm(self.gather_neighbors(h, neighbor_index))
        node_features = node_features + self.attn(h, neighbors, edge_features, neighbor_mask)
        node_features = node_features + self.ffn(self.norm_ffn(node_features))
        return node_features


def build_blocks(cfg: GraphAttentionConfig, num_layers: int) -> nn.ModuleList:
    return nn.ModuleList([GraphAttentionBlock(cfg) for _ in range(num_layers)])


def neighbor_mask_from_index(neighbor_index: torch.Tensor) -> torch.Tensor:
    return neighbor_index < 0


def count_parameters(module: nn.Module, trainable_only: bool = True) -> int:
    return sum(p.numel() for p in module.parameters() if p.requires_grad or not trainable_only)


def attention_flops(n_atoms: int, k: int, hidden: int) -> float:
    return 4.0 * n_atoms * k * hidden


def init_weights(module: nn.Module, std: Optional[float] = None) -> None:
    for m in module.modules():
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=std or 1.0 / math.sqrt(m.in_features))
            if m.bias is not None:
                nn.init.zeros_(m.bias)
