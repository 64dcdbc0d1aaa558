"""Small causal transformer policy for neuroevolution on partially observable tasks.

The policy attends over the last ``context`` observations (like a tiny
decision transformer) and outputs an action for the latest step. It is
evolved directly with (separable) NES, so parameter count matters: the
default configuration has ~70k parameters. Attention uses xformers'
memory-efficient kernel, which handles the (population x envs) batch of short
sequences much better than a naive softmax(QK^T) implementation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from xformers.ops import LowerTriangularMask, memory_efficient_attention


@dataclass
class PolicyConfig:
    obs_dim: int
    act_dim: int
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    ffn_mult: float = 2.0
    context: int = 32
    rope_base: float = 10000.0
    norm_eps: float = 1e-6
    tanh_actions: bool = True


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        var = x.float().pow(2).mean(-1, keepdim=True)
        x = x.float() * torch.rsqrt(var + self.eps)
        return (x * self.weight.float()).to(self.weight.dtype)


def rotary_tables(seq_len: int, head_dim: int, base: float, device, dtype):
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, device=device, dtype=torch.float32) / head_dim))
    t = torch.arange(seq_len, device=device, dtype=torch.float32)
    freqs = torch.outer(t, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(q, k, cos, sin):
    # q, k: (B, S, H, D); cos/sin: (S, D)
    cos = cos[None, :, None, :]
    sin = sin[None, :, None, :]
    q = q * cos + rotate_half(q) * sin
    k = k * cos + rotate_half(k) * sin
    return q, k


class Attention(nn.Module):
    def __init__(self, cfg: PolicyConfig):
        super().__init__()
        self.n_heads = cfg.n_heads
        self.head_dim = cfg.d_model // cfg.n_heads
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=False)
        self.out = nn.Linear(cfg.d_model, cfg.d_model, bias=False)
        self.rope_base = cfg.rope_base

    def forward(self, x):
        B, S, _ = x.shape
        q, k, v = self.qkv(x).view(B, S, 3, self.n_heads, self.head_dim).unbind(dim=2)
        cos, sin = rotary_tables(S, self.head_dim, self.rope_base, x.device, x.dtype)
        q, k = apply_rotary(q, k, cos, sin)
        # xformers expects (B, S, H, D)
        y = memory_efficient_attention(q, k, v, attn_bias=LowerTriangularMask())
        return self.out(y.reshape(B, S, -1))


class SwiGLU(nn.Module):
    def __init__(self, d_model: int, mult: float):
        super().__init__()
        hidden = int(d_model * mult)
        self.w_gate = nn.Linear(d_model, hidden, bias=False)
        self.w_up = nn.Linear(d_model, hidden, bias=False)
        self.w_down = nn.Linear(hidden, d_model, bias=False)

    def forward(self, x):
        return self.w_down(F.silu(self.w_gate(x)) * self.w_up(x))


class Block(nn.Module):
    def __init__(self, cfg: PolicyConfig):
        super().__init__()
        self.norm1 = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.attn = Attention(cfg)
        self.norm2 = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.mlp = SwiGLU(cfg.d_model, cfg.ffn_mult)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TransformerPolicy(nn.Module):
    """obs history (B, S, obs_dim) -> action for the last step (B, act_dim)."""

    def __init__(self, cfg: PolicyConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Linear(cfg.obs_dim, cfg.d_model)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layers)])
        self.norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.head = nn.Linear(cfg.d_model, cfg.act_dim)

    def forward(self, obs_hist):
        x = self.embed(obs_hist[:, -self.cfg.context :])
        for blk in self.blocks:
            x = blk(x)
        a = self.head(self.norm(x[:, -1]))
        return torch.tanh(a) if self.cfg.tanh_actions else a

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())


class ObservationBuffer:
    """Rolling window of the last ``context`` observations for B parallel envs."""

    def __init__(self, batch: int, context: int, obs_dim: int, device):
        self.buf = torch.zeros(batch, context, obs_dim, device=device)

    def reset(self, mask=None):
        if mask is None:
            self.buf.zero_()
        else:
            self.buf[mask] = 0.0

    def push(self, obs: torch.Tensor) -> torch.Tensor:
        self.buf = torch.roll(self.buf, shifts=-1, dims=1)
        self.buf[:, -1] = obs
        return self.buf


def init_policy_params(policy: nn.Module, std: float = 0.02, seed: int = 0) -> torch.Tensor:
    """GPT-2 style init, returned as one flat vector (the NES centre)."""
    g = torch.Generator().manual_seed(seed)
    flat = []
    for name, p in policy.named_parameters():
        if p.ndim >= 2:
            w = torch.randn(p.shape, generator=g) * std
            if name.endswith("out.weight") or name.endswith("w_down.weight"):
                w /= math.sqrt(2 * policy.cfg.n_layers)
            flat.append(w.flatten())
        elif name.endswith("weight"):
            flat.append(torch.ones(p.numel()))
        else:
            flat.append(torch.zeros(p.numel()))
    return torch.cat(flat)


class PopulationEvaluator:
    """Runs P parameter vectors of the same TransformerPolicy in one batched call.

    Uses ``torch.func.functional_call`` with the population dimension folded
    into the batch: parameters are (P, ...) and observations (P, E, S, obs_dim).
    """

    def __init__(self, cfg: PolicyConfig, device):
        self.cfg = cfg
        self.device = torch.device(device)
        self.template = TransformerPolicy(cfg).to("meta")
        self.names = [n for n, _ in self.template.named_parameters()]
        self.shapes = [p.shape for _, p in self.template.named_parameters()]
        self.sizes = [int(math.prod(s)) for s in self.shapes]

    def unflatten(self, flat: torch.Tensor):
        chunks = torch.split(flat, self.sizes, dim=-1)
        return {n: c.reshape(flat.shape[0], *s) for n, c, s in zip(self.names, chunks, self.shapes)}

    @torch.no_grad()
    def __call__(self, flat_params: torch.Tensor, obs_hist: torch.Tensor) -> torch.Tensor:
        params = self.unflatten(flat_params.to(self.device))

        def single(p, o):
            return torch.func.functional_call(self.template, p, (o,))

        return torch.vmap(single, randomness="same")(params, obs_hist.to(self.device))
