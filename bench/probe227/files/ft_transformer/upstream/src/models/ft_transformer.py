"""FT-Transformer (Gorishniy et al., 2021) for tabular data.

Feature tokenizer -> [CLS] + n_features tokens -> pre-norm Transformer blocks -> head on [CLS].
Numerical features can use the piecewise-linear / periodic embeddings from
"On Embeddings for Numerical Features in Tabular Deep Learning".

Attention uses ``F.scaled_dot_product_attention``; on Ampere+ GPUs we force the
flash / memory-efficient kernels, and use flash-attn 2 directly when it is installed.
"""
from __future__ import annotations

import math
from typing import List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

try:  # optional: fused LayerNorm from NVIDIA apex (~10% faster on A100)
    from apex.normalization import FusedLayerNorm as LayerNorm
except ImportError:  # pragma: no cover
    LayerNorm = nn.LayerNorm

try:
    from flash_attn import flash_attn_func

    HAS_FLASH_ATTN = True
except ImportError:
    flash_attn_func = None
    HAS_FLASH_ATTN = False


class PeriodicEmbedding(nn.Module):
    """x -> [sin(2*pi*c*x), cos(2*pi*c*x)] with learned frequencies, then a linear layer."""

    def __init__(self, n_features: int, n_frequencies: int, sigma: float, d_token: int):
        super().__init__()
        self.coefficients = nn.Parameter(torch.normal(0.0, sigma, (n_features, n_frequencies)))
        self.linear = nn.Parameter(torch.empty(n_features, 2 * n_frequencies, d_token))
        self.bias = nn.Parameter(torch.zeros(n_features, d_token))
        nn.init.kaiming_uniform_(self.linear, a=math.sqrt(5))

    def forward(self, x):  # x: (B, F)
        v = 2 * math.pi * self.coefficients[None] * x[..., None]
        v = torch.cat([torch.sin(v), torch.cos(v)], dim=-1)  # (B, F, 2K)
        return torch.einsum("bfk,fkd->bfd", v, self.linear) + self.bias[None]


class FeatureTokenizer(nn.Module):
    def __init__(self, n_num: int, cat_cardinalities: List[int], d_token: int, periodic: bool = True):
        super().__init__()
        self.n_num = n_num
        if periodic and n_num:
            self.num = PeriodicEmbedding(n_num, n_frequencies=48, sigma=0.05, d_token=d_token)
        else:
            self.num_weight = nn.Parameter(torch.empty(n_num, d_token))
            self.num_bias = nn.Parameter(torch.zeros(n_num, d_token))
            nn.init.kaiming_uniform_(self.num_weight, a=math.sqrt(5))
            self.num = None
        self.cat_offsets = None
        if cat_cardinalities:
            offsets = torch.tensor([0] + cat_cardinalities[:-1]).cumsum(0)
            self.register_buffer("cat_offsets", offsets, persistent=False)
            self.cat_emb = nn.Embedding(sum(cat_cardinalities), d_token)
            nn.init.kaiming_uniform_(self.cat_emb.weight, a=math.sqrt(5))
        self.cls = nn.Parameter(torch.empty(1, 1, d_token))
        nn.init.normal_(self.cls, std=0.02)

    def forward(self, x_num: Optional[torch.Tensor], x_cat: Optional[torch.Tensor]):
        tokens = []
        if x_num is not None and self.n_num:
            if self.num is not None:
                tokens.append(self.num(x_num))
            else:
                tokens.append(x_num[..., None] * self.num_weight[None] + self.num_bias[None])
        if x_cat is not None and self.cat_offsets is not None:
            tokens.append(self.cat_emb(x_cat + self.cat_offsets[None]))
        x = torch.cat(tokens, dim=1)
        cls = self.cls.expand(x.shape[0], -1, -1)
        return torch.cat([cls, x], dim=1)


class MultiheadAttention(nn.Module):
    def __init__(self, d: int, n_heads: int, dropout: float):
        super().__init__()
        assert d % n_heads == 0
        self.n_heads = n_heads
        self.d_head = d // n_heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.dropout = dropout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        qkv = self.qkv(x).view(b, s, 3, self.n_heads, self.d_head)
        p = self.dropout if self.training else 0.0
        if HAS_FLASH_ATTN and x.is_cuda and x.dtype in (torch.float16, torch.bfloat16):
            q, k, v = qkv.unbind(dim=2)  # (b, s, h, dh)
            o = flash_attn_func(q, k, v, dropout_p=p, causal=False)
            o = o.reshape(b, s, d)
        else:
            q, k, v = qkv.permute(2, 0, 3, 1, 4)  # (b, h, s, dh)
            with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True):
                o = F.scaled_dot_product_attention(q, k, v, dropout_p=p)
            o = o.transpose(1, 2).reshape(b, s, d)
        return self.out(o)


class ReGLU(nn.Module):
    def forward(self, x):
        a, b = x.chunk(2, dim=-1)
        return a * F.relu(b)


class Block(nn.Module):
    def __init__(self, d: int, n_heads: int, ffn_factor: float, attn_dropout: float, ffn_dropout: float,
                 residual_dropout: float, prenorm_first: bool = True):
        super().__init__()
        d_ffn = int(d * ffn_factor)
        self.norm1 = LayerNorm(d) if prenorm_first else nn.Identity()
        self.attn = MultiheadAttention(d, n_heads, attn_dropout)
        self.norm2 = LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, 2 * d_ffn), ReGLU(), nn.Dropout(ffn_dropout), nn.Linear(d_ffn, d))
        self.drop = nn.Dropout(residual_dropout)

    def forward(self, x):
        x = x + self.drop(self.attn(self.norm1(x)))
        x = x + self.drop(self.ffn(self.norm2(x)))
        return x


class FTTransformer(nn.Module):
    def __init__(
        self,
        n_num: int,
        cat_cardinalities: List[int],
        d_out: int = 1,
        d_token: int = 192,
        n_blocks: int = 3,
        n_heads: int = 8,
        ffn_factor: float = 4 / 3,
        attn_dropout: float = 0.2,
        ffn_dropout: float = 0.1,
        residual_dropout: float = 0.0,
        periodic: bool = True,
    ):
        super().__init__()
        self.tokenizer = FeatureTokenizer(n_num, cat_cardinalities, d_token, periodic)
        self.blocks = nn.ModuleList(
            [
                Block(d_token, n_heads, ffn_factor, attn_dropout, ffn_dropout, residual_dropout, prenorm_first=i > 0)
                for i in range(n_blocks)
            ]
        )
        self.head_norm = LayerNorm(d_token)
        self.head = nn.Linear(d_token, d_out)

    def forward(self, x_num: Optional[torch.Tensor], x_cat: Optional[torch.Tensor] = None) -> torch.Tensor:
        x = self.tokenizer(x_num, x_cat)
        for blk in self.blocks:
            x = blk(x)
        x = F.relu(self.head_norm(x[:, 0]))
        return self.head(x).squeeze(-1)

    def optimizer_groups(self, weight_decay: float):
        """No weight decay for norms, biases, embeddings and the CLS token (as in the paper)."""
        decay, no_decay = [], []
        for n, p in self.named_parameters():
            if p.ndim < 2 or "norm" in n or "tokenizer" in n:
                no_decay.append(p)
            else:
                decay.append(p)
        return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def build_ft_transformer(cfg, n_num: int, cat_cardinalities: List[int]) -> FTTransformer:
    return FTTransformer(
        n_num=n_num,
        cat_cardinalities=cat_cardinalities,
        d_out=cfg.get("d_out", 1),
        d_token=cfg.get("d_token", 192),
        n_blocks=cfg.get("n_blocks", 3),
        n_heads=cfg.get("n_heads", 8),
        attn_dropout=cfg.get("attn_dropout", 0.2),
        ffn_dropout=cfg.get("ffn_dropout", 0.1),
        residual_dropout=cfg.get("residual_dropout", 0.0),
        periodic=cfg.get("periodic", True),
    )


def fit_one_epoch(model: FTTransformer, loader, optimizer, device: torch.device, amp_dtype=torch.bfloat16,
                  grad_clip: float = 1.0, scheduler=None) -> float:
    """One pass over ``loader`` yielding (x_num, x_cat, y); autocast follows the model's device type."""
    model.train()
    total, count = 0.0, 0
    for x_num, x_cat, y in loader:
        x_num = x_num.to(device, non_blocking=True)
        x_cat = x_cat.to(device, non_blocking=True) if x_cat is not None else None
        y = y.to(device, non_blocking=True).float()
        with torch.autocast(device_type=device.type, dtype=amp_dtype, enabled=device.type != "cpu"):
            logits = model(x_num, x_cat)
            loss = F.binary_cross_entropy_with_logits(logits.float(), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if grad_clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
        total += loss.item() * y.shape[0]
        count += y.shape[0]
    return total / max(count, 1)


@torch.no_grad()
def predict_proba(model: FTTransformer, loader, device: torch.device) -> torch.Tensor:
    model.eval()
    outs = []
    for batch in loader:
        x_num, x_cat = batch[0].to(device), (batch[1].to(device) if batch[1] is not None else None)
        outs.append(torch.sigmoid(model(x_num, x_cat)).float().cpu())
    return torch.cat(outs)


if __name__ == "__main__":
    # smoke test
    m = FTTransformer(n_num=10, cat_cardinalities=[3, 7, 11])
    xn = torch.randn(4, 10)
    xc = torch.randint(0, 3, (4, 3))
    print(m(xn, xc).shape, sum(p.numel() for p in m.parameters()))
