"""Ulysses-style sequence parallelism for a spatial-temporal DiT (Open-Sora style).

Tokens are sharded along the sequence dim; before attention an all-to-all swaps the shard to the
head dim so every rank sees the full sequence for H/P heads, then a second all-to-all swaps back.
"""
import os
from typing import Optional

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

try:
    import xformers.ops as xops
    HAS_XFORMERS = True
except ImportError:
    xops = None
    HAS_XFORMERS = False

_SP_GROUP = None
_SP_STREAM = None


def set_sequence_parallel_group(group):
    global _SP_GROUP
    _SP_GROUP = group


def get_sequence_parallel_group():
    return _SP_GROUP


def init_sequence_parallel(sp_size: int):
    """Split the world into groups of `sp_size` consecutive ranks."""
    global _SP_STREAM
    world = dist.get_world_size()
    rank = dist.get_rank()
    assert world % sp_size == 0, f"world size {world} not divisible by sp size {sp_size}"
    for i in range(world // sp_size):
        ranks = list(range(i * sp_size, (i + 1) * sp_size))
        group = dist.new_group(ranks, backend="nccl")
        if rank in ranks:
            set_sequence_parallel_group(group)
    _SP_STREAM = torch.cuda.Stream(priority=-1)
    return _SP_GROUP


def _all_to_all(x: torch.Tensor, group, scatter_dim: int, gather_dim: int):
    world = dist.get_world_size(group)
    if world == 1:
        return x
    inputs = [t.contiguous() for t in torch.tensor_split(x, world, scatter_dim)]
    outputs = [torch.empty_like(inputs[0]) for _ in range(world)]
    dist.all_to_all(outputs, inputs, group=group)
    return torch.cat(outputs, dim=gather_dim).contiguous()


class _AllToAll(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, group, scatter_dim, gather_dim):
        ctx.group, ctx.scatter_dim, ctx.gather_dim = group, scatter_dim, gather_dim
        return _all_to_all(x, group, scatter_dim, gather_dim)

    @staticmethod
    def backward(ctx, grad):
        return _all_to_all(grad, ctx.group, ctx.gather_dim, ctx.scatter_dim), None, None, None


def all_to_all(x, group, scatter_dim, gather_dim):
    return _AllToAll.apply(x, group, scatter_dim, gather_dim)


def split_forward_gather_backward(x, group, dim, grad_scale="down"):
    world = dist.get_world_size(group)
    if world == 1:
        return x
    rank = dist.get_rank(group)
    return x.chunk(world, dim=dim)[rank].contiguous()


class SeqParallelAttention(nn.Module):
    def __init__(self, dim: int, num_heads: int = 8, qkv_bias: bool = False, qk_norm: bool = False,
                 enable_flash_attn: bool = True, enable_xformers: bool = False):
        super().__init__()
        assert dim % num_heads == 0
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.q_norm = nn.LayerNorm(self.head_dim) if qk_norm else nn.Identity()
        self.k_norm = nn.LayerNorm(self.head_dim) if qk_norm else nn.Identity()
        self.proj = nn.Linear(dim, dim)
        self.enable_flash_attn = enable_flash_attn
        self.enable_xformers = enable_xformers and HAS_XFORMERS

    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        group = get_sequence_parallel_group()
        B, N, C = x.shape  # N is the local sequence shard
        qkv = self.qkv(x).view(B, N, 3, self.num_heads, self.head_dim)
        # (B, N/P, 3, H, D) -> (B, N, 3, H/P, D)
        qkv = all_to_all(qkv, group, scatter_dim=3, gather_dim=1)
        q, k, v = qkv.unbind(2)
        q, k = self.q_norm(q), self.k_norm(k)
        if self.enable_flash_attn:
            from flash_attn import flash_attn_func
            out = flash_attn_func(q, k, v, softmax_scale=self.scale)
        elif self.enable_xformers:
            bias = None if mask is None else xops.BlockDiagonalMask.from_seqlens(mask.tolist())
            out = xops.memory_efficient_attention(q, k, v, attn_bias=bias)
        else:
            q, k, v = (t.transpose(1, 2) for t in (q, k, v))
            out = F.scaled_dot_product_attention(q, k, v, scale=self.scale).transpose(1, 2)
        # (B, N, H/P, D) -> (B, N/P, H, D)
        out = all_to_all(out, group, scatter_dim=1, gather_dim=2)
        return self.proj(out.reshape(B, N, C))


def prefetch_next_shard(batch: dict, device: torch.device):
    """Copy the next micro-batch to the device on a side stream while the current one computes."""
    with torch.cuda.stream(_SP_STREAM):
        out = {k: v.to(device, non_blocking=True) if torch.is_tensor(v) else v for k, v in batch.items()}
    torch.cuda.current_stream().wait_stream(_SP_STREAM)
    for v in out.values():
        if torch.is_tensor(v):
            v.record_stream(torch.cuda.current_stream())
    return out


def setup_from_env(sp_size: Optional[int] = None):
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local_rank)
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl")
    sp_size = sp_size or int(os.environ.get("SP_SIZE", dist.get_world_size()))
    init_sequence_parallel(sp_size)
    return torch.device("cuda", local_rank)
