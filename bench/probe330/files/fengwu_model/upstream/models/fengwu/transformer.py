"""FengWu-style multi-modal encoder / cross-modal fuser / decoder.

Each physical variable group (z, q, u, v, t on 37 levels, plus surface) gets its own
patch encoder; a shared 3D Swin transformer ("cross-modal fuser") mixes the modal
tokens, and per-modal decoders predict the next state together with a per-pixel
uncertainty (the loss is the Gaussian NLL, see losses.py).

Attention uses xformers' memory-efficient kernel: with 6 modalities x 32x64 tokens
per window row the plain softmax attention does not fit on a 40GB A100 at batch 1.
"""
from typing import List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
import xformers.ops as xops
from einops import rearrange
from timm.models.layers import DropPath, trunc_normal_

MODALITIES = ("z", "q", "u", "v", "t", "surface")


class MLP(nn.Module):
    def __init__(self, dim, hidden_ratio=4.0, drop=0.0):
        super().__init__()
        hidden = int(dim * hidden_ratio)
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)
        self.drop = nn.Dropout(drop)

    def forward(self, x):
        return self.drop(self.fc2(self.drop(self.act(self.fc1(x)))))


class MemEffAttention(nn.Module):
    """Multi-head self attention on (B, N, C) tokens via xformers."""

    def __init__(self, dim, num_heads, qkv_bias=True, attn_drop=0.0, proj_drop=0.0):
        super().__init__()
        assert dim % num_heads == 0
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.attn_drop = attn_drop
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)

    def forward(self, x: torch.Tensor, attn_bias: Optional[torch.Tensor] = None) -> torch.Tensor:
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim)
        q, k, v = qkv.unbind(2)  # each (B, N, H, D) -- the layout xformers expects
        x = xops.memory_efficient_attention(
            q, k, v,
            attn_bias=attn_bias,
            p=self.attn_drop if self.training else 0.0,
            scale=self.scale,
        )
        x = x.reshape(B, N, C)
        x = self.proj_drop(self.proj(x))
        return x


class TransformerBlock(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio=4.0, drop_path=0.0):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = MemEffAttention(dim, num_heads)
        self.drop_path = DropPath(drop_path) if drop_path > 0 else nn.Identity()
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = MLP(dim, mlp_ratio)

    def forward(self, x, attn_bias=None):
        x = x + self.drop_path(self.attn(self.norm1(x), attn_bias))
        x = x + self.drop_path(self.mlp(self.norm2(x)))
        return x


class ModalEncoder(nn.Module):
    """Patchify one modality (C_levels, H, W) -> tokens."""

    def __init__(self, in_chans, embed_dim, patch_size=4, depth=2, num_heads=8):
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)
        self.blocks = nn.ModuleList([TransformerBlock(embed_dim, num_heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(embed_dim)

    def forward(self, x):
        x = self.proj(x)  # B, C, h, w
        B, C, h, w = x.shape
        x = x.flatten(2).transpose(1, 2)
        for blk in self.blocks:
            x = blk(x)
        return self.norm(x), (h, w)


class ModalDecoder(nn.Module):
    def __init__(self, out_chans, embed_dim, patch_size=4, depth=2, num_heads=8):
        super().__init__()
        self.patch_size = patch_size
        self.out_chans = out_chans
        self.blocks = nn.ModuleList([TransformerBlock(embed_dim, num_heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(embed_dim)
        # predict mean and log-variance for every output channel
        self.head = nn.Linear(embed_dim, 2 * out_chans * patch_size * patch_size)

    def forward(self, x, hw):
        for blk in self.blocks:
            x = blk(x)
        x = self.head(self.norm(x))
        h, w = hw
        x = rearrange(x, "b (h w) (p1 p2 c) -> b c (h p1) (w p2)", h=h, w=w, p1=self.patch_size, p2=self.patch_size)
        mean, log_var = x.chunk(2, dim=1)
        return mean, log_var


class CrossModalFuser(nn.Module):
    """Shared transformer over the concatenated tokens of all modalities."""

    def __init__(self, embed_dim, depth=12, num_heads=16, drop_path_rate=0.1, n_modal=len(MODALITIES)):
        super().__init__()
        dpr = torch.linspace(0, drop_path_rate, depth).tolist()
        self.modal_embed = nn.Parameter(torch.zeros(n_modal, 1, embed_dim))
        trunc_normal_(self.modal_embed, std=0.02)
        self.blocks = nn.ModuleList([TransformerBlock(embed_dim, num_heads, drop_path=dpr[i]) for i in range(depth)])
        self.grad_checkpointing = False

    def forward(self, tokens: List[torch.Tensor]) -> List[torch.Tensor]:
        n_tok = [t.shape[1] for t in tokens]
        x = torch.cat([t + self.modal_embed[i] for i, t in enumerate(tokens)], dim=1)
        for blk in self.blocks:
            if self.grad_checkpointing and self.training:
                x = torch.utils.checkpoint.checkpoint(blk, x, use_reentrant=False)
            else:
                x = blk(x)
        return list(torch.split(x, n_tok, dim=1))


class FengWu(nn.Module):
    def __init__(self, levels=37, embed_dim=768, patch_size=4, fuser_depth=12, n_surface=4):
        super().__init__()
        chans = {m: levels for m in MODALITIES[:-1]}
        chans["surface"] = n_surface
        self.chans = chans
        self.encoders = nn.ModuleDict({m: ModalEncoder(c, embed_dim, patch_size) for m, c in chans.items()})
        self.fuser = CrossModalFuser(embed_dim, depth=fuser_depth)
        self.decoders = nn.ModuleDict({m: ModalDecoder(c, embed_dim, patch_size) for m, c in chans.items()})

    def set_grad_checkpointing(self, enable=True):
        self.fuser.grad_checkpointing = enable

    def forward(self, x: torch.Tensor):
        # x: (B, 5*levels + n_surface, H, W) channel-stacked in MODALITIES order
        splits = torch.split(x, [self.chans[m] for m in MODALITIES], dim=1)
        tokens, hws = [], []
        for m, xm in zip(MODALITIES, splits):
            t, hw = self.encoders[m](xm)
            tokens.append(t)
            hws.append(hw)
        tokens = self.fuser(tokens)
        means, log_vars = [], []
        for m, t, hw in zip(MODALITIES, tokens, hws):
            mu, lv = self.decoders[m](t, hw)
            means.append(mu)
            log_vars.append(lv)
        return torch.cat(means, dim=1), torch.cat(log_vars, dim=1)


def gaussian_nll(mean, log_var, target, lat_weight):
    """Uncertainty-weighted loss (Kendall & Gal), latitude weighted."""
    log_var = log_var.clamp(-10.0, 10.0)
    nll = 0.5 * (torch.exp(-log_var) * (mean - target) ** 2 + log_var)
    return (nll * lat_weight).mean()


if __name__ == "__main__":
    model = FengWu(levels=37, embed_dim=256, fuser_depth=2).cuda().half()
    x = torch.randn(1, 5 * 37 + 4, 128, 256, device="cuda", dtype=torch.half)
    with torch.no_grad():
        mu, lv = model(x)
    print(mu.shape, lv.shape, torch.cuda.max_memory_allocated() / 2**20, "MiB")
