"""FP8 transformer MLP / attention-projection layers.

Prefers NVIDIA Transformer Engine (delayed scaling); on GPUs where TE is not installed but the
hardware has FP8 tensor cores (sm_89 / sm_90) it falls back to a per-tensor scaled torch._scaled_mm path.
"""
import os
from contextlib import nullcontext
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

import transformer_engine.pytorch as te
from transformer_engine.common.recipe import DelayedScaling, Format

E4M3_MAX = torch.finfo(torch.float8_e4m3fn).max
FP8_ENABLED = os.environ.get("USE_FP8", "1") == "1"


def fp8_supported() -> bool:
    if not torch.cuda.is_available():
        return False
    major, minor = torch.cuda.get_device_capability()
    return (major, minor) >= (8, 9)


def make_recipe(amax_history_len: int = 1024, margin: int = 0) -> DelayedScaling:
    return DelayedScaling(fp8_format=Format.HYBRID, amax_history_len=amax_history_len,
                          amax_compute_algo="max", margin=margin)


def fp8_context(enabled: bool = FP8_ENABLED, recipe: Optional[DelayedScaling] = None):
    if enabled and fp8_supported():
        return te.fp8_autocast(enabled=True, fp8_recipe=recipe or make_recipe())
    return nullcontext()


def _to_fp8(x: torch.Tensor):
    amax = x.abs().amax().clamp(min=1e-12).float()
    scale = E4M3_MAX / amax
    x_fp8 = (x.float() * scale).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn)
    return x_fp8, scale.reciprocal()


class ScaledMMLinear(nn.Linear):
    """nn.Linear computing in FP8 via torch._scaled_mm (per-tensor dynamic scales)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not (self.training or fp8_supported()) or x.shape[-1] % 16 != 0:
            return F.linear(x, self.weight, self.bias)
        shape = x.shape
        x2 = x.reshape(-1, shape[-1])
        x_fp8, x_inv = _to_fp8(x2)
        w_fp8, w_inv = _to_fp8(self.weight)
        out = torch._scaled_mm(x_fp8, w_fp8.t(), scale_a=x_inv, scale_b=w_inv,
                               bias=self.bias.to(torch.bfloat16) if self.bias is not None else None,
                               out_dtype=torch.bfloat16)
        return out.reshape(*shape[:-1], -1)


def make_linear(in_f: int, out_f: int, bias: bool = True, use_te: bool = True) -> nn.Module:
    if use_te:
        return te.Linear(in_f, out_f, bias=bias, params_dtype=torch.bfloat16)
    return ScaledMMLinear(in_f, out_f, bias=bias, dtype=torch.bfloat16)


class FP8MLP(nn.Module):
    def __init__(self, hidden: int, ffn: int, use_te: bool = True):
        super().__init__()
        self.use_te = use_te
        if use_te:
            self.ln_mlp = te.LayerNormMLP(hidden, ffn, activation="swiglu", normalization="RMSNorm",
                                          params_dtype=torch.bfloat16)
        else:
            self.norm = nn.RMSNorm(hidden, dtype=torch.bfloat16)
            self.gate_up = make_linear(hidden, 2 * ffn, bias=False, use_te=False)
            self.down = make_linear(ffn, hidden, bias=False, use_te=False)

    def forward(self, x):
        if self.use_te:
            return self.ln_mlp(x)
        gate, up = self.gate_up(self.norm(x)).chunk(2, dim=-1)
        return self.down(F.silu(gate) * up)


class FP8AttentionProj(nn.Module):
    def __init__(self, hidden: int, heads: int, use_te: bool = True):
        super().__init__()
        self.heads = heads
        self.use_te = use_te
        if use_te:
            self.qkv = te.LayerNormLinear(hidden, 3 * hidden, bias=False, normalization="RMSNorm",
                                          params_dtype=torch.bfloat16)
            self.attn = te.DotProductAttention(heads, hidden // heads, attn_mask_type="causal")
        else:
            self.norm = nn.RMSNorm(hidden, dtype=torch.bfloat16)
            self.qkv = make_linear(hidden, 3 * hidden, bias=False, use_te=False)
        self.out = make_linear(hidden, hidden, bias=False, use_te=use_te)

    def forward(self, x):
        B, S, H = x.shape
        if self.use_te:
            q, k, v = self.qkv(x).view(S, B, 3, self.heads, H // self.heads).unbind(2)
            return self.out(self.attn(q, k, v))
        q, k, v = self.qkv(self.norm(x)).view(B, S, 3, self.heads, H // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(B, S, H))


class FP8Block(nn.Module):
    def __init__(self, hidden=4096, heads=32, ffn=11008, use_te=True):
        super().__init__()
        self.attn = FP8AttentionProj(hidden, heads, use_te)
        self.mlp = FP8MLP(hidden, ffn, use_te)

    def forward(self, x):
        x = x + self.attn(x)
        return x + self.mlp(x)


def train_step(model: nn.Module, batch: torch.Tensor, optimizer, recipe=None):
    model.train()
    with fp8_context(recipe=recipe):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(batch.cuda(non_blocking=True))
            loss = out.float().pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.detach()


def benchmark(hidden=4096, tokens=8192, steps=20, use_te=True):
    model = FP8Block(hidden, hidden // 128, int(hidden * 2.6875), use_te).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    x = torch.randn(1, tokens, hidden, dtype=torch.bfloat16, device="cuda")
    for _ in range(3):
        train_step(model, x, opt)
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(steps):
        train_step(model, x, opt)
    end.record()
    torch.cuda.synchronize()  # wait for the timed steps
    print(f"{'TE' if use_te else 'scaled_mm'}: {start.elapsed_time(end) / steps:.2f} ms/step")
