"""Autoregressive codec-token decoder (VALL-E style) with a static KV cache and CUDA-graph captured steps.

The first quantizer's tokens are produced one frame at a time; each step is a fixed-shape call so it
is captured once per batch size into a CUDA graph and replayed.
"""
import math
from typing import Dict, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


class StaticKVCache(nn.Module):
    def __init__(self, n_layers, batch, n_heads, max_len, head_dim, dtype=torch.float16, device="cuda"):
        super().__init__()
        shape = (n_layers, batch, n_heads, max_len, head_dim)
        self.register_buffer("k", torch.zeros(shape, dtype=dtype, device=device), persistent=False)
        self.register_buffer("v", torch.zeros(shape, dtype=dtype, device=device), persistent=False)

    def update(self, layer: int, pos: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
        self.k[layer].index_copy_(2, pos, k)
        self.v[layer].index_copy_(2, pos, v)
        return self.k[layer], self.v[layer]


class DecoderLayer(nn.Module):
    def __init__(self, d_model, n_heads, ff_mult=4, dropout=0.0):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.norm1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, ff_mult * d_model), nn.GELU(), nn.Linear(ff_mult * d_model, d_model))

    def forward(self, x, layer_idx, cache: StaticKVCache, pos, mask):
        B, T, C = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(B, T, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        k_all, v_all = cache.update(layer_idx, pos, k, v)
        y = F.scaled_dot_product_attention(q, k_all, v_all, attn_mask=mask)
        x = x + self.out(y.transpose(1, 2).reshape(B, T, C))
        return x + self.ff(self.norm2(x))


class ARDecoder(nn.Module):
    def __init__(self, n_tokens=1024, d_model=1024, n_heads=16, n_layers=12, max_len=2048):
        super().__init__()
        self.tok = nn.Embedding(n_tokens + 2, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        self.layers = nn.ModuleList(DecoderLayer(d_model, n_heads) for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, n_tokens + 1)
        self.max_len = max_len
        self.eos = n_tokens

    def step(self, tokens, pos, cache, mask):
        x = self.tok(tokens) + self.pos(pos)[None]
        for i, layer in enumerate(self.layers):
            x = layer(x, i, cache, pos, mask)
        return self.head(self.norm(x[:, -1]))


class GraphedStepRunner:
    """Captures ARDecoder.step for one batch size and replays it."""

    def __init__(self, model: ARDecoder, batch: int, dtype=torch.float16):
        self.model = model
        first = model.layers[0]
        self.cache = StaticKVCache(len(model.layers), batch, first.n_heads, model.max_len, first.head_dim, dtype=dtype)
        self.static_tokens = torch.zeros(batch, 1, dtype=torch.long, device="cuda")
        self.static_pos = torch.zeros(1, dtype=torch.long, device="cuda")
        self.static_mask = torch.zeros(1, 1, 1, model.max_len, dtype=torch.bool, device="cuda")
        self.graph = None
        self.static_logits = None

    @torch.inference_mode()
    def capture(self, warmup=3):
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(warmup):
                self.model.step(self.static_tokens, self.static_pos, self.cache, self.static_mask)
        torch.cuda.current_stream().wait_stream(s)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.static_logits = self.model.step(self.static_tokens, self.static_pos, self.cache, self.static_mask)

    def __call__(self, tokens, pos):
        self.static_tokens.copy_(tokens)
        self.static_pos.fill_(pos)
        self.static_mask.zero_()
        self.static_mask[..., : pos + 1] = True
        self.graph.replay()
        return self.static_logits


def top_k_sample(logits, k=50, temperature=1.0, generator: Optional[torch.Generator] = None):
    logits = logits / max(temperature, 1e-5)
    v, _ = torch.topk(logits, k)
    logits[logits < v[:, [-1]]] = -float("inf")
    probs = F.softmax(logits.float(), dim=-1)
    return torch.multinomial(probs, 1, generator=generator)


@torch.inference_mode()
def generate(model: ARDecoder, prompt: torch.Tensor, max_new: int = 1500, top_k: int = 50,
             temperature: float = 1.0, use_graph: bool = True, seed: int = 0) -> torch.Tensor:
    model = model.half().cuda().eval()
    B, T = prompt.shape
    g = torch.Generator(device="cuda").manual_seed(seed)
    runner = GraphedStepRunner(model, B)
    # prefill token by token (keeps the cache layout identical to the graphed steps)
    for t in range(T):
        runner.static_mask[..., : t + 1] = True
        logits = model.step(prompt[:, t:t + 1].cuda(), torch.tensor([t], device="cuda"), runner.cache,
                            runner.static_mask)
    if use_graph:
        runner.capture()
    out = [prompt.cuda()]
    nxt = top_k_sample(logits, top_k, temperature, g)
    finished = torch.zeros(B, dtype=torch.bool, device=nxt.device)
    for i in range(max_new):
        pos = T + i
        if pos >= model.max_len:
            break
        out.append(nxt)
        finished |= nxt.squeeze(1) == model.eos
        if bool(finished.all()):
            break
        logits = runner(nxt, pos) if use_graph else model.step(nxt, torch.tensor([pos], device=nxt.device),
                                                               runner.cache, runner.static_mask)
        nxt = top_k_sample(logits.clone(), top_k, temperature, g)
    torch.cuda.synchronize()
    return torch.cat(out, dim=1)
