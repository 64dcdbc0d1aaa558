"""
PyTorch re-implementation of the Octo block-transformer building blocks
(octo/model/components/transformer.py in the JAX/Flax original).

Parameter names mirror the Flax module tree so that converted checkpoints load with a
simple key mapping (see scripts/convert_jax_checkpoint.py).
"""
import math
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import xformers.ops as xops  # optional, only used when explicitly requested

    HAS_XFORMERS = True
except ImportError:
    HAS_XFORMERS = False


class MlpBlock(nn.Module):
    """Transformer MLP / feed-forward block."""

    def __init__(self, dim: int, mlp_dim: int, dropout_rate: float = 0.1):
        super().__init__()
        self.Dense_0 = nn.Linear(dim, mlp_dim)
        self.Dense_1 = nn.Linear(mlp_dim, dim)
        self.dropout = nn.Dropout(dropout_rate)
        nn.init.xavier_uniform_(self.Dense_0.weight)
        nn.init.xavier_uniform_(self.Dense_1.weight)
        nn.init.normal_(self.Dense_0.bias, std=1e-6)
        nn.init.normal_(self.Dense_1.bias, std=1e-6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.Dense_0(x)
        x = F.gelu(x, approximate="tanh")  # flax.linen.gelu defaults to the tanh approximation
        x = self.dropout(x)
        x = self.Dense_1(x)
        x = self.dropout(x)
        return x


class MultiHeadDotProductAttention(nn.Module):
    def __init__(self, dim: int, num_heads: int, dropout_rate: float = 0.0, use_xformers: bool = False):
        super().__init__()
        assert dim % num_heads == 0, "dim must be divisible by num_heads"
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.query = nn.Linear(dim, dim)
        self.key = nn.Linear(dim, dim)
        self.value = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)
        self.dropout_rate = dropout_rate
        self.use_xformers = use_xformers and HAS_XFORMERS

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        b, n, _ = x.shape
        return x.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x: torch.Tensor, attention_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        """
        x: (batch, tokens, dim)
        attention_mask: bool (batch, 1 or heads, tokens, tokens), True = may attend
        """
        b, n, d = x.shape
        q, k, v = self._split(self.query(x)), self._split(self.key(x)), self._split(self.value(x))
        dropout_p = self.dropout_rate if self.training else 0.0

        if self.use_xformers and x.is_cuda:
            # xformers wants (b, n, h, d) and an additive float bias
            bias = None
            if attention_mask is not None:
                bias = torch.zeros(attention_mask.shape, dtype=q.dtype, device=q.device)
                bias.masked_fill_(~attention_mask, float("-inf"))
                bias = bias.expand(b, self.num_heads, n, n)
            out = xops.memory_efficient_attention(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), attn_bias=bias, p=dropout_p
            )
            out = out.reshape(b, n, d)
        else:
            # let PyTorch pick the fastest SDPA backend (flash / mem-efficient on GPU, math otherwise)
            with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True):
                out = F.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask, dropout_p=dropout_p)
            out = out.transpose(1, 2).reshape(b, n, d)
        return self.out(out)


class Encoder1DBlock(nn.Module):
    """Pre-LN transformer encoder layer."""

    def __init__(
        self,
        dim: int,
        mlp_dim: int,
        num_heads: int,
        dropout_rate: float = 0.1,
        attention_dropout_rate: float = 0.1,
        use_xformers: bool = False,
    ):
        super().__init__()
        self.LayerNorm_0 = nn.LayerNorm(dim, eps=1e-6)
        self.MultiHeadDotProductAttention_0 = MultiHeadDotProductAttention(
            dim, num_heads, dropout_rate=attention_dropout_rate, use_xformers=use_xformers
        )
        self.dropout = nn.Dropout(dropout_rate)
        self.LayerNorm_1 = nn.LayerNorm(dim, eps=1e-6)
        self.MlpBlock_0 = MlpBlock(dim, mlp_dim, dropout_rate)

    def forward(self, x: torch.Tensor, attention_mask: Optional[torch.Tensor]) -> torch.Tensor:
        y = self.LayerNorm_0(x)
        y = self.MultiHeadDotProductAttention_0(y, attention_mask)
        y = self.dropout(y)
        x = x + y
        z = self.LayerNorm_1(x)
        z = self.MlpBlock_0(z)
        return x + z


class Transformer(nn.Module):
    """Stack of Encoder1DBlocks with a final LayerNorm."""

    def __init__(
        self,
        dim: int,
        num_layers: int,
        mlp_dim: int,
        num_attention_heads: int,
        dropout_rate: float = 0.1,
        attention_dropout_rate: float = 0.1,
        add_position_embedding: bool = False,
        use_xformers: bool = False,
        gradient_checkpointing: bool = False,
    ):
        super().__init__()
        assert not add_position_embedding, "Octo adds position embeddings in the tokenizers"
        self.layers = nn.ModuleList(
            [
                Encoder1DBlock(
                    dim,
                    mlp_dim,
                    num_attention_heads,
                    dropout_rate=dropout_rate,
                    attention_dropout_rate=attention_dropout_rate,
                    use_xformers=use_xformers,
                )
                for _ in range(num_layers)
            ]
        )
        self.encoder_norm = nn.LayerNorm(dim, eps=1e-6)
        self.gradient_checkpointing = gradient_checkpointing

    def forward(self, x: torch.Tensor, attention_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                x = torch.utils.checkpoint.checkpoint(layer, x, attention_mask, use_reentrant=False)
            else:
                x = layer(x, attention_mask)
        return self.encoder_norm(x)


def common_transformer_sizes(transformer_size: str) -> tuple:
    """
    Args:
        transformer_size (str): The size of the transformer. One of "dummy", "vanilla", "vit_s", "vit_b", "vit_l", "vit_h"

    Returns:
            token_embedding_size (int): The size of the token embeddings
            transformer_kwargs (dict): The kwargs to pass to the transformer
    """
    assert transformer_size in ["dummy", "vanilla", "vit_t", "vit_s", "vit_b", "vit_l", "vit_h"]
    default_params = {
        "attention_dropout_rate": 0.0,
        "add_position_embedding": False,
    }

    TRANSFORMER_SIZES = {
        "dummy": dict(num_layers=1, mlp_dim=256, num_attention_heads=2, dropout_rate=0.1),
        "vanilla": dict(num_layers=4, mlp_dim=1024, num_attention_heads=8, dropout_rate=0.1),
        "vit_t": dict(num_layers=12, mlp_dim=768, num_attention_heads=3, dropout_rate=0.0),
        "vit_s": dict(num_layers=12, mlp_dim=1536, num_attention_heads=6, dropout_rate=0.0),
        "vit_b": dict(num_layers=12, mlp_dim=3072, num_attention_heads=12, dropout_rate=0.0),
        "vit_l": dict(num_layers=24, mlp_dim=4096, num_attention_heads=16, dropout_rate=0.1),
        "vit_h": dict(num_layers=32, mlp_dim=5120, num_attention_heads=16, dropout_rate=0.1),
    }

    TOKEN_DIMS = {
        "dummy": 256,
        "vanilla": 256,
        "vit_t": 192,
        "vit_s": 384,
        "vit_b": 768,
        "vit_l": 1024,
        "vit_h": 1280,
    }

    return TOKEN_DIMS[transformer_size], {
        **default_params,
        **TRANSFORMER_SIZES[transformer_size],
    }
