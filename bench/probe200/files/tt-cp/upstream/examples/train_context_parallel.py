"""Minimal long-context pretraining loop with PyTorch-native context parallelism.

2-D device mesh (dp, cp): FSDP2 shards parameters over ``dp`` and
``torch.distributed.tensor.experimental.context_parallel`` shards the sequence
over ``cp``. Ring attention is done by CP's SDPA handler, so the model just calls
``F.scaled_dot_product_attention`` -- no flash-attn dependency.

    torchrun --nproc_per_node=8 examples/train_context_parallel.py --cp 4 --seq-len 131072
"""
import argparse
import math
import os
import time
from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.distributed.tensor.experimental import context_parallel
from torch.distributed.tensor.experimental._attention import set_rotate_method
from torch.nn.attention import SDPBackend, sdpa_kernel


@dataclass
class ModelArgs:
    dim: int = 2048
    n_layers: int = 16
    n_heads: int = 16
    vocab_size: int = 32000
    max_seq_len: int = 131072
    rope_theta: float = 500000.0
    norm_eps: float = 1e-5


def precompute_rope(head_dim, max_seq_len, theta):
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2).float() / head_dim))
    t = torch.arange(max_seq_len, dtype=torch.float32)
    freqs = torch.outer(t, inv_freq)
    return freqs.cos(), freqs.sin()


def apply_rope(x, cos, sin):
    # x: (B, H, S, D); cos/sin: (S, D/2) -- sharded along S by context_parallel
    x1, x2 = x[..., 0::2], x[..., 1::2]
    cos = cos[None, None, : x.shape[2]]
    sin = sin[None, None, : x.shape[2]]
    out = torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
    return out.flatten(-2).type_as(x)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        x_fp32 = x.float()
        x_fp32 = x_fp32 * torch.rsqrt(x_fp32.pow(2).mean(-1, keepdim=True) + self.eps)
        return (x_fp32 * self.weight).type_as(x)

    def reset_parameters(self):
        nn.init.ones_(self.weight)


class Attention(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.n_heads = args.n_heads
        self.head_dim = args.dim // args.n_heads
        self.wqkv = nn.Linear(args.dim, 3 * args.dim, bias=False)
        self.wo = nn.Linear(args.dim, args.dim, bias=False)

    def forward(self, x, cos, sin):
        bsz, seqlen, _ = x.shape
        q, k, v = self.wqkv(x).split(x.shape[-1], dim=-1)
        q = q.view(bsz, seqlen, self.n_heads, self.head_dim).transpose(1, 2)
        k = k.view(bsz, seqlen, self.n_heads, self.head_dim).transpose(1, 2)
        v = v.view(bsz, seqlen, self.n_heads, self.head_dim).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(out.transpose(1, 2).reshape(bsz, seqlen, -1))


class FeedForward(nn.Module):
    def __init__(self, dim):
        super().__init__()
        hidden = int(8 * dim / 3)
        hidden = 256 * ((hidden + 255) // 256)
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.attention_norm = RMSNorm(args.dim, args.norm_eps)
        self.attention = Attention(args)
        self.ffn_norm = RMSNorm(args.dim, args.norm_eps)
        self.feed_forward = FeedForward(args.dim)

    def forward(self, x, cos, sin):
        x = x + self.attention(self.attention_norm(x), cos, sin)
        return x + self.feed_forward(self.ffn_norm(x))


class Transformer(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.args = args
        self.tok_embeddings = nn.Embedding(args.vocab_size, args.dim)
        self.layers = nn.ModuleList([Block(args) for _ in range(args.n_layers)])
        self.norm = RMSNorm(args.dim, args.norm_eps)
        self.output = nn.Linear(args.dim, args.vocab_size, bias=False)
        cos, sin = precompute_rope(args.dim // args.n_heads, args.max_seq_len, args.rope_theta)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)

    def init_weights(self):
        cos, sin = precompute_rope(self.args.dim // self.args.n_heads, self.args.max_seq_len, self.args.rope_theta)
        self.rope_cos.copy_(cos)
        self.rope_sin.copy_(sin)
        std = 0.02
        for name, p in self.named_parameters():
            if p.dim() >= 2:
                nn.init.trunc_normal_(p, mean=0.0, std=std)
        for m in self.modules():
            if isinstance(m, RMSNorm):
                m.reset_parameters()

    def forward(self, tokens):
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h, self.rope_cos, self.rope_sin)
        return self.output(self.norm(h))


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--cp", type=int, default=4, help="context parallel degree")
    p.add_argument("--seq-len", type=int, default=131072)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--rotate", choices=["allgather", "alltoall"], default="alltoall")
    p.add_argument("--log-every", type=int, default=10)
    return p.parse_args()


def main():
    args = parse_args()
    dist.init_process_group(backend="cuda:nccl,cpu:gloo")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    rank, world_size = dist.get_rank(), dist.get_world_size()
    assert world_size % args.cp == 0
    dp = world_size // args.cp
    mesh = init_device_mesh("cuda", (dp, args.cp), mesh_dim_names=("dp", "cp"))

    torch.manual_seed(0)
    cfg = ModelArgs(max_seq_len=args.seq_len)
    with torch.device("meta"):
        model = Transformer(cfg)

    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for block in model.layers:
        fully_shard(block, mesh=mesh["dp"], mp_policy=mp)
    fully_shard(model, mesh=mesh["dp"], mp_policy=mp)
    model.to_empty(device="cuda")
    model.init_weights()

    optim = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1, fused=True)

    set_rotate_method(args.rotate)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    n_params = sum(p.numel() for p in model.parameters())
    if rank == 0:
        print(f"params: {n_params / 1e9:.2f}B  mesh: dp={dp} cp={args.cp}  seq_len={args.seq_len}")

    torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    for step in range(1, args.steps + 1):
        tokens = torch.randint(0, cfg.vocab_size, (args.batch, args.seq_len + 1), device="cuda")
        inputs, labels = tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()

        with context_parallel(
            mesh["cp"],
            buffers=[inputs, labels, model.rope_cos, model.rope_sin],
            buffer_seq_dims=[1, 1, 0, 0],
            no_restore_buffers={inputs, labels},
        ):
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
                logits = model(inputs)
                loss = F.cross_entropy(logits.flatten(0, 1).float(), labels.flatten(0, 1))
            loss.backward()

        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optim.step()
        optim.zero_grad(set_to_none=True)

        if step % args.log_every == 0:
            torch.cuda.synchronize()
            dt = (time.perf_counter() - t0) / args.log_every
            tok_s = args.batch * args.seq_len * dp / dt
            mem = torch.cuda.max_memory_allocated() / 1024**3
            if rank == 0:
                print(
                    f"step {step:5d} | loss {loss.item():.4f} | gnorm {grad_norm.full_tensor().item():.2f} "
                    f"| {tok_s:,.0f} tok/s | {dt * 1000:.0f} ms/step | max mem {mem:.1f} GiB"
                )
            t0 = time.perf_counter()

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
