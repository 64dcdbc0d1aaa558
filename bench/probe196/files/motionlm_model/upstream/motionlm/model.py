"""MotionLM: multi-agent motion forecasting as language modeling (Seff et al., ICCV 2023).

Unofficial PyTorch re-implementation.  Each agent's future is discretised into per-step (dx, dy) "verlet"
action tokens (13 x 13 bins); a causal transformer decoder attends to a scene encoding and autoregressively
emits joint tokens for all agents in a scene, interleaving agents at each time step.
"""
import math
from typing import Dict, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

NUM_BINS = 13
VOCAB_SIZE = NUM_BINS * NUM_BINS
MAX_DELTA = 18.0  # metres per 0.5 s step


def quantize_deltas(deltas: torch.Tensor) -> torch.Tensor:
    """(..., 2) float deltas -> (...,) int tokens in [0, VOCAB_SIZE)."""
    scaled = (deltas.clamp(-MAX_DELTA, MAX_DELTA) + MAX_DELTA) / (2 * MAX_DELTA) * (NUM_BINS - 1)
    idx = scaled.round().long()
    return idx[..., 0] * NUM_BINS + idx[..., 1]


def dequantize_tokens(tokens: torch.Tensor) -> torch.Tensor:
    ix = torch.div(tokens, NUM_BINS, rounding_mode="floor")
    iy = tokens % NUM_BINS
    idx = torch.stack([ix, iy], dim=-1).float()
    return idx / (NUM_BINS - 1) * (2 * MAX_DELTA) - MAX_DELTA


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        var = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(var + self.eps)).type_as(x) * self.weight


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, dropout: float):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.proj = nn.Linear(d_model, d_model, bias=False)
        self.dropout = dropout

    def forward(self, x: torch.Tensor, kv_cache: Optional[Dict[str, torch.Tensor]] = None,
                attn_bias: Optional[torch.Tensor] = None) -> torch.Tensor:
        B, L, D = x.shape
        q, k, v = self.qkv(x).split(D, dim=-1)
        q = q.view(B, L, self.n_heads, self.head_dim).transpose(1, 2)
        k = k.view(B, L, self.n_heads, self.head_dim).transpose(1, 2)
        v = v.view(B, L, self.n_heads, self.head_dim).transpose(1, 2)
        if kv_cache is not None:
            if "k" in kv_cache:
                k = torch.cat([kv_cache["k"], k], dim=2)
                v = torch.cat([kv_cache["v"], v], dim=2)
            kv_cache["k"], kv_cache["v"] = k, v
        dropout_p = self.dropout if self.training else 0.0
        if attn_bias is None:
            out = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=kv_cache is None)
        else:
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_bias, dropout_p=dropout_p)
        out = out.transpose(1, 2).reshape(B, L, D)
        return self.proj(out)


class CrossAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, dropout: float):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, n_heads, dropout=dropout, batch_first=True)

    def forward(self, x, memory, memory_mask):
        out, _ = self.attn(x, memory, memory, key_padding_mask=~memory_mask, need_weights=False)
        return out


class DecoderBlock(nn.Module):
    def __init__(self, d_model: int, n_heads: int, dropout: float):
        super().__init__()
        self.norm1 = RMSNorm(d_model)
        self.self_attn = CausalSelfAttention(d_model, n_heads, dropout)
        self.norm2 = RMSNorm(d_model)
        self.cross_attn = CrossAttention(d_model, n_heads, dropout)
        self.norm3 = RMSNorm(d_model)
        self.w12 = nn.Linear(d_model, 8 * d_model // 3 * 2, bias=False)
        self.w3 = nn.Linear(8 * d_model // 3, d_model, bias=False)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, memory, memory_mask, kv_cache=None, attn_bias=None):
        x = x + self.drop(self.self_attn(self.norm1(x), kv_cache, attn_bias))
        x = x + self.drop(self.cross_attn(self.norm2(x), memory, memory_mask))
        a, b = self.w12(self.norm3(x)).chunk(2, dim=-1)
        x = x + self.drop(self.w3(F.silu(a) * b))
        return x


class MotionLM(nn.Module):
    def __init__(self, d_model: int = 512, n_heads: int = 8, n_layers: int = 6, dropout: float = 0.1,
                 num_steps: int = 16, max_agents: int = 2):
        super().__init__()
        self.d_model = d_model
        self.num_steps = num_steps
        self.max_agents = max_agents
        self.token_embed = nn.Embedding(VOCAB_SIZE + 1, d_model)  # +1 = BOS
        self.step_embed = nn.Embedding(num_steps + 1, d_model)
        self.agent_embed = nn.Embedding(max_agents, d_model)
        self.blocks = nn.ModuleList([DecoderBlock(d_model, n_heads, dropout) for _ in range(n_layers)])
        self.norm_out = RMSNorm(d_model)
        self.head = nn.Linear(d_model, VOCAB_SIZE, bias=False)
        self.bos = VOCAB_SIZE

    def _embed(self, tokens: torch.Tensor, step_offset: int = 0) -> torch.Tensor:
        # tokens: (B, T, A) -> flattened (B, T*A, D) with agents interleaved per step
        B, T, A = tokens.shape
        steps = torch.arange(step_offset, step_offset + T, device=tokens.device)
        agents = torch.arange(A, device=tokens.device)
        h = self.token_embed(tokens) + self.step_embed(steps)[None, :, None] + self.agent_embed(agents)[None, None]
        return h.reshape(B, T * A, self.d_model)

    def _block_causal_bias(self, T: int, A: int, device, dtype) -> torch.Tensor:
        # agents at the same step may not see each other's current token (temporally causal, not token causal)
        step_ids = torch.arange(T, device=device).repeat_interleave(A)
        allowed = step_ids[None, :] <= step_ids[:, None]
        return torch.zeros(T * A, T * A, device=device, dtype=dtype).masked_fill(~allowed, float("-inf"))

    def forward(self, tokens: torch.Tensor, memory: torch.Tensor, memory_mask: torch.Tensor) -> torch.Tensor:
        """Teacher forcing. tokens: (B, T, A) target tokens; returns logits (B, T, A, V)."""
        B, T, A = tokens.shape
        inp = torch.cat([torch.full_like(tokens[:, :1], self.bos), tokens[:, :-1]], dim=1)
        x = self._embed(inp)
        bias = self._block_causal_bias(T, A, x.device, x.dtype)
        torch.cuda.nvtx.range_push("motionlm_decoder")
        for blk in self.blocks:
            x = blk(x, memory, memory_mask, attn_bias=bias)
        torch.cuda.nvtx.range_pop()
        logits = self.head(self.norm_out(x))
        return logits.view(B, T, A, VOCAB_SIZE)

    def loss(self, tokens, memory, memory_mask, token_mask) -> Tuple[torch.Tensor, Dict[str, float]]:
        logits = self(tokens, memory, memory_mask)
        ce = F.cross_entropy(logits.reshape(-1, VOCAB_SIZE), tokens.reshape(-1), reduction="none")
        ce = (ce * token_mask.reshape(-1).float()).sum() / token_mask.float().sum().clamp(min=1.0)
        acc = ((logits.argmax(-1) == tokens) & token_mask).float().sum() / token_mask.float().sum().clamp(min=1.0)
        return ce, {"ce": ce.item(), "acc": acc.item()}

    @torch.inference_mode()
    def rollout(self, memory: torch.Tensor, memory_mask: torch.Tensor, num_rollouts: int = 32,
                temperature: float = 1.0, top_k: Optional[int] = None,
                generator: Optional[torch.Generator] = None) -> torch.Tensor:
        """Samples joint futures. Returns tokens (B * num_rollouts, T, A)."""
        A = self.max_agents
        memory = memory.repeat_interleave(num_rollouts, dim=0)
        memory_mask = memory_mask.repeat_interleave(num_rollouts, dim=0)
        B = memory.shape[0]
        caches = [dict() for _ in self.blocks]
        cur = torch.full((B, 1, A), self.bos, dtype=torch.long, device=memory.device)
        out = []
        for t in range(self.num_steps):
            with torch.cuda.nvtx.range(f"decode_step_{t}"):
                x = self._embed(cur, step_offset=t)
                # inside a step every agent sees all cached steps, but not the other agents' current token
                bias = torch.zeros(A, (t + 1) * A, device=x.device, dtype=x.dtype)
                for blk, cache in zip(self.blocks, caches):
                    x = blk(x, memory, memory_mask, kv_cache=cache, attn_bias=bias)
                logits = self.head(self.norm_out(x)).float() / max(temperature, 1e-5)
                if top_k is not None:
                    v, _ = torch.topk(logits, top_k, dim=-1)
                    logits[logits < v[..., -1:]] = float("-inf")
                probs = F.softmax(logits, dim=-1).view(B * A, VOCAB_SIZE)
                nxt = torch.multinomial(probs, 1, generator=generator).view(B, 1, A)
            out.append(nxt)
            cur = nxt
        return torch.cat(out, dim=1)


def tokens_to_trajectories(tokens: torch.Tensor, start_pos: torch.Tensor, start_vel: torch.Tensor) -> torch.Tensor:
    """Verlet integration of action tokens. tokens (N, T, A); start_pos/vel (N, A, 2) -> (N, T, A, 2)."""
    accel = dequantize_tokens(tokens)
    pos, vel = start_pos.clone(), start_vel.clone()
    traj = []
    for t in range(tokens.shape[1]):
        vel = vel + accel[:, t]
        pos = pos + vel
        traj.append(pos)
    return torch.stack(traj, dim=1)


def aggregate_rollouts(trajs: torch.Tensor, num_modes: int = 6, iters: int = 10) -> Tuple[torch.Tensor, torch.Tensor]:
    """k-means style aggregation of rollouts into weighted modes. trajs (R, T, A, 2) for one scene."""
    R = trajs.shape[0]
    flat = trajs.reshape(R, -1)
    g = torch.Generator(device=flat.device)
    g.manual_seed(0)
    centers = flat[torch.randperm(R, generator=g, device=flat.device)[:num_modes]].clone()
    for _ in range(iters):
        d = torch.cdist(flat, centers)
        assign = d.argmin(dim=1)
        for m in range(num_modes):
            sel = assign == m
            if sel.any():
                centers[m] = flat[sel].mean(0)
    weights = torch.bincount(assign, minlength=num_modes).float() / R
    return centers.view(num_modes, *trajs.shape[1:]), weights
