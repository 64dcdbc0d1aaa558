# Copyright (c) 2023, Dan Fu and Hermann Kumbong.
"""Hyena mixer that uses FlashFFTConv for the long convolution and FlashDepthWiseConv1d for the
short filter. Drop-in replacement for the safari HyenaOperator when running DNA pretraining
at 16k-1M bp.

FlashFFTConv needs bf16/fp16 inputs of shape (B, H, L) and an fp32 kernel of shape (H, L).
A single FlashFFTConv object is created in the LM and shared by every layer (it holds the
precomputed twiddle factors / Monarch matrices for one FFT size).

    python examples/hyena/hyena_flashfft.py --seqlen 32768 --d_model 256 --benchmark
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange

from flashfftconv import FlashFFTConv, FlashDepthWiseConv1d


def fftconv_ref(u, k, D):
    seqlen = u.shape[-1]
    fft_size = 2 * seqlen
    k_f = torch.fft.rfft(k, n=fft_size) / fft_size
    u_f = torch.fft.rfft(u.to(dtype=k.dtype), n=fft_size)
    y = torch.fft.irfft(u_f * k_f, n=fft_size, norm="forward")[..., :seqlen]
    out = y + u * D.unsqueeze(-1)
    return out.to(dtype=u.dtype)


class Sin(nn.Module):
    def __init__(self, dim, w=10, train_freq=True):
        super().__init__()
        self.freq = nn.Parameter(w * torch.ones(1, dim)) if train_freq else w * torch.ones(1, dim)

    def forward(self, x):
        return torch.sin(self.freq * x)


class PositionalEmbedding(nn.Module):
    def __init__(self, emb_dim, seq_len):
        super().__init__()
        self.seq_len = seq_len
        t = torch.linspace(0, 1, self.seq_len)[None, :, None]
        bands = (emb_dim - 1) // 2
        t_rescaled = torch.linspace(0, seq_len - 1, seq_len)[None, :, None]
        w = 2 * math.pi * t_rescaled / seq_len
        f = torch.linspace(1e-4, bands - 1, bands)[None, None]
        z = torch.exp(-1j * f * w)
        z = torch.cat([t, z.real, z.imag], dim=-1)
        self.register_buffer("z", z)
        self.register_buffer("t", t)

    def forward(self, L):
        return self.z[:, :L], self.t[:, :L]


class ImplicitFilter(nn.Module):
    def __init__(self, d_model, seq_len, emb_dim=5, order=64, w=10, fast_decay_pct=0.3,
                 slow_decay_pct=1.5, target=1e-2, shift=0.0):
        super().__init__()
        self.pos_emb = PositionalEmbedding(emb_dim, seq_len)
        act = Sin(order, w=w)
        self.mlp = nn.Sequential(
            nn.Linear(emb_dim, order), act,
            nn.Linear(order, order), act,
            nn.Linear(order, d_model, bias=False),
        )
        max_decay = math.log(target) / fast_decay_pct
        min_decay = math.log(target) / slow_decay_pct
        self.register_buffer("deltas", torch.linspace(min_decay, max_decay, d_model)[None, None])
        self.shift = shift
        self.bias = nn.Parameter(torch.randn(d_model))

    def forward(self, L):
        z, t = self.pos_emb(L)
        h = self.mlp(z)
        h = h * (torch.exp(-t * self.deltas.abs()) + self.shift)
        return rearrange(h, "1 l d -> d l").contiguous()


class HyenaFlashFFT(nn.Module):
    """Order-2 Hyena with FlashFFTConv. `flashfftconv` is passed in by the parent LM."""

    def __init__(self, d_model, l_max, flashfftconv=None, short_filter_order=3, dropout=0.0,
                 use_flash_depthwise=True):
        super().__init__()
        self.d_model = d_model
        self.l_max = l_max
        self.in_proj = nn.Linear(d_model, 3 * d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)
        if use_flash_depthwise:
            self.short_filter = FlashDepthWiseConv1d(
                channels=3 * d_model,
                kernel_size=short_filter_order,
                padding=short_filter_order - 1,
                weights=torch.randn(3 * d_model, 1, short_filter_order),
                bias=torch.randn(3 * d_model),
                dtype=torch.bfloat16,
            )
        else:
            self.short_filter = nn.Conv1d(3 * d_model, 3 * d_model, short_filter_order,
                                          groups=3 * d_model, padding=short_filter_order - 1)
        self.use_flash_depthwise = use_flash_depthwise
        self.filter = ImplicitFilter(d_model, l_max)
        self.flashfftconv = flashfftconv

    def forward(self, u):
        L = u.size(1)
        u = self.in_proj(u)
        u = rearrange(u, "b l d -> b d l")
        if self.use_flash_depthwise:
            uc = self.short_filter(u.to(torch.bfloat16).contiguous())[..., :L]
        else:
            uc = self.short_filter(u)[..., :L]
        x1, x2, v = uc.split(self.d_model, dim=1)
        k = self.filter(L)

        v = self.dropout(v * x1)
        if self.flashfftconv is not None:
            y = self.flashfftconv(v.to(torch.bfloat16).contiguous(), k.float())
            y = y + v * self.filter.bias[None, :, None]
        else:
            y = fftconv_ref(v, k, self.filter.bias)
        y = y * x2
        y = rearrange(y, "b d l -> b l d")
        return self.out_proj(y.to(u.dtype))


class HyenaBlock(nn.Module):
    def __init__(self, d_model, l_max, flashfftconv, **kwargs):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.mixer = HyenaFlashFFT(d_model, l_max, flashfftconv=flashfftconv, **kwargs)
        self.norm2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * d_model, d_model))

    def forward(self, x):
        x = x + self.mixer(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return x


class HyenaDNALM(nn.Module):
    def __init__(self, vocab_size=12, d_model=256, n_layer=8, l_max=32768, use_flashfftconv=True,
                 **block_kwargs):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        # one FlashFFTConv object per FFT size, shared by all layers (fft size = 2 * seqlen)
        self.flashfftconv = FlashFFTConv(2 * l_max, dtype=torch.bfloat16) if use_flashfftconv else None
        self.layers = nn.ModuleList(
            [HyenaBlock(d_model, l_max, self.flashfftconv, **block_kwargs) for _ in range(n_layer)]
        )
        self.norm_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.lm_head.weight = self.embed.weight

    def forward(self, input_ids):
        x = self.embed(input_ids)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm_f(x))


def benchmark(args):
    device = torch.device("cuda")
    model = HyenaDNALM(d_model=args.d_model, n_layer=args.n_layer, l_max=args.seqlen,
                       use_flashfftconv=not args.no_flashfftconv,
                       use_flash_depthwise=not args.no_flashfftconv).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=6e-4, fused=True)
    ids = torch.randint(0, 12, (args.batch_size, args.seqlen), device=device)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(ids)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)).float(), ids.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    for _ in range(3):
        step()
    torch.cuda.synchronize()  # warmup
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(args.iters):
        loss = step()
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end) / args.iters
    toks = args.batch_size * args.seqlen / (ms / 1000)
    print(f"seqlen={args.seqlen} loss={loss.item():.3f} {ms:.1f} ms/step {toks / 1e6:.2f} Mtok/s "
          f"mem={torch.cuda.max_memory_allocated() / 2**30:.1f} GiB")


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--seqlen", type=int, default=32768)
    p.add_argument("--d_model", type=int, default=256)
    p.add_argument("--n_layer", type=int, default=8)
    p.add_argument("--batch_size", type=int, default=4)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--no_flashfftconv", action="store_true")
    p.add_argument("--benchmark", action="store_true")
    args = p.parse_args()
    if args.benchmark:
        benchmark(args)
