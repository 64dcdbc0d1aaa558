"""Correctness + speed check of ring_flash_attn_qkvpacked_func against single-GPU flash-attn.

    torchrun --nproc_per_node 8 test/test_ring_flash_attn_func.py
    torchrun --nproc_per_node 8 test/test_ring_flash_attn_func.py --bench --profile

Every rank builds the same full-length qkv (broadcast from rank 0), runs the reference
kernel on the whole sequence and the ring version on its own chunk, and prints the diffs.
"""
import argparse
import os
import random

import numpy as np
import torch
import torch.distributed as dist
from flash_attn import flash_attn_qkvpacked_func

from ring_flash_attn import ring_flash_attn_qkvpacked_func


def set_seed(rank, seed=42):
    seed = rank + seed
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def log(msg, a, rank0_only=False):
    world_size = dist.get_world_size()
    rank = dist.get_rank()
    if rank0_only:
        if rank == 0:
            print(
                f"{msg}: "
                f"max {a.abs().max().item():.3g}, "
                f"mean {a.abs().mean().item():.3g}",
                flush=True,
            )
        return

    for i in range(world_size):
        if i == rank:
            if rank == 0:
                print(f"{msg}:")
            print(
                f"[{rank}] "
                f"max {a.abs().max().item():.3g}, "
                f"mean {a.abs().mean().item():.3g}",
                flush=True,
            )
        dist.barrier()


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--seqlen", type=int, default=3816 * 8)
    p.add_argument("--nheads", type=int, default=5)
    p.add_argument("--headdim", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=1)
    p.add_argument("--causal", action="store_true", default=True)
    p.add_argument("--bench", action="store_true")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--iters", type=int, default=20)
    return p.parse_args()


def check(args, rank, world_size, device, dtype):
    batch_size, seqlen, nheads, d = args.batch_size, args.seqlen, args.nheads, args.headdim
    dropout_p = 0
    causal = args.causal
    deterministic = False

    assert seqlen % world_size == 0
    assert d % 8 == 0

    qkv = torch.randn(
        batch_size, seqlen, 3, nheads, d, device=device, dtype=dtype, requires_grad=True
    )
    dist.broadcast(qkv, src=0)

    dout = torch.randn(batch_size, seqlen, nheads, d, device=device, dtype=dtype)
    dist.broadcast(dout, src=0)

    local_qkv = qkv.chunk(world_size, dim=1)[rank].detach().clone()
    local_qkv.requires_grad = True
    local_dout = dout.chunk(world_size, dim=1)[rank].detach().clone()

    dist.barrier()
    if rank == 0:
        print("#" * 30)
        print("# forward:")
        print("#" * 30)

    out, lse, _ = flash_attn_qkvpacked_func(
        qkv,
        dropout_p=dropout_p,
        causal=causal,
        window_size=(-1, -1),
        alibi_slopes=None,
        deterministic=deterministic,
        return_attn_probs=True,
    )

    local_out = out.chunk(world_size, dim=1)[rank]
    local_lse = lse.chunk(world_size, dim=-1)[rank]

    ring_out, ring_lse, _ = ring_flash_attn_qkvpacked_func(
        local_qkv,
        dropout_p=dropout_p,
        causal=causal,
        window_size=(-1, -1),
        alibi_slopes=None,
        deterministic=deterministic,
        return_attn_probs=True,
    )

    log("out", out, rank0_only=True)
    log("lse", lse, rank0_only=True)
    log("out diff", local_out - ring_out)
    log("lse diff", local_lse - ring_lse)

    dist.barrier()
    if rank == 0:
        print("#" * 30)
        print("# backward:")
        print("#" * 30)

    out.backward(dout)
    dqkv = qkv.grad
    local_dqkv = dqkv.chunk(world_size, dim=1)[rank]

    ring_out.backward(local_dout)
    ring_dqkv = local_qkv.grad

    log("local_dqkv", local_dqkv)
    log("dq diff", local_dqkv[:, :, 0] - ring_dqkv[:, :, 0])
    log("dk diff", local_dqkv[:, :, 1] - ring_dqkv[:, :, 1])
    log("dv diff", local_dqkv[:, :, 2] - ring_dqkv[:, :, 2])


def bench(args, rank, world_size, device, dtype):
    seqlen_local = args.seqlen // world_size
    qkv = torch.randn(
        args.batch_size, seqlen_local, 3, args.nheads, args.headdim,
        device=device, dtype=dtype, requires_grad=True,
    )
    dout = torch.randn(
        args.batch_size, seqlen_local, args.nheads, args.headdim, device=device, dtype=dtype
    )

    def step():
        out = ring_flash_attn_qkvpacked_func(qkv, causal=args.causal)
        out.backward(dout)

    for _ in range(3):  # warmup, also triggers NCCL communicator setup
        step()

    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    if args.profile:
        with torch.profiler.profile(
            activities=[
                torch.profiler.ProfilerActivity.CPU,
                torch.profiler.ProfilerActivity.CUDA,
            ],
            record_shapes=True,
        ) as prof:
            for _ in range(args.iters):
                step()
        if rank == 0:
            prof.export_chrome_trace(f"ring_attn_trace_rank{rank}.json")
    else:
        for _ in range(args.iters):
            step()
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end) / args.iters
    # causal fwd+bwd flops of the full sequence, split across ranks
    flops = 4 * args.batch_size * args.seqlen**2 * args.nheads * args.headdim * 3.5
    if args.causal:
        flops /= 2
    if rank == 0:
        print(
            f"ring attn fwd+bwd: {ms:.2f} ms/iter, "
            f"{flops / world_size / (ms * 1e-3) / 1e12:.1f} TFLOPs/rank"
        )


if __name__ == "__main__":
    args = parse_args()
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    set_seed(rank)
    world_size = dist.get_world_size()
    dtype = torch.bfloat16
    device = torch.device(f"cuda:{rank}")
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    assert local_rank == rank, "this test assumes a single node"

    if args.bench:
        bench(args, rank, world_size, device, dtype)
    else:
        check(args, rank, world_size, device, dtype)
    dist.destroy_process_group()
