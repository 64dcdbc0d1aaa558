"""Correctness + speed check of USP (Ulysses x Ring) against single-GPU flash attention.

    torchrun --nproc_per_node 8 test/test_hybrid_attn.py --ring_degree 2 --ulysses_degree 4
"""
import argparse
import time

import torch
import torch.distributed as dist
from flash_attn import flash_attn_func

from yunchang import (
    AttnType,
    EXTRACT_FUNC_DICT,
    LongContextAttention,
    set_seq_parallel_pg,
)


def parse_args():
    parser = argparse.ArgumentParser(description="Test hybrid attention with configurable sequence parallel degree")
    parser.add_argument("--sp_ulysses_degree", "--ulysses_degree", type=int, default=None)
    parser.add_argument("--sp_ring_degree", "--ring_degree", type=int, default=None)
    parser.add_argument("--ring_impl_type", type=str, default="basic",
                        choices=["basic", "zigzag", "strip"])
    parser.add_argument("--attn_impl", type=str, default="fa", choices=["fa", "fa3", "torch", "sage_auto"])
    parser.add_argument("--use_bwd", action="store_true", help="also check gradients")
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--seqlen", type=int, default=3816)
    parser.add_argument("--iters", type=int, default=10)
    return parser.parse_args()


def log(msg, a, rank0_only=False):
    world_size = dist.get_world_size()
    rank = dist.get_rank()
    if rank0_only:
        if rank == 0:
            print(
                f"{msg}: "
                f"max {a.abs().max().item()}, "
                f"mean {a.abs().mean().item()}",
                flush=True,
            )
        return

    for i in range(world_size):
        if i == rank:
            if rank == 0:
                print(f"{msg}:")
            print(
                f"[{rank}] "
                f"max {a.abs().max().item()}, "
                f"mean {a.abs().mean().item()}",
                flush=True,
            )
        dist.barrier()


if __name__ == "__main__":
    args = parse_args()

    torch.random.manual_seed(0)

    dist.init_process_group("nccl")

    rank = dist.get_rank()
    world_size = dist.get_world_size()

    # Inference config
    batch_size = 2
    seqlen = args.seqlen
    nheads = 32
    d = 128
    dropout_p = 0
    causal = args.causal
    deterministic = False
    dtype = torch.bfloat16

    assert seqlen % world_size == 0
    assert d % 8 == 0

    ring_impl_type = args.ring_impl_type
    sp_ulysses_degree = args.sp_ulysses_degree or (world_size // (args.sp_ring_degree or 1))
    sp_ring_degree = args.sp_ring_degree or (world_size // sp_ulysses_degree)
    assert sp_ulysses_degree * sp_ring_degree == world_size, (
        f"ulysses {sp_ulysses_degree} x ring {sp_ring_degree} != world size {world_size}"
    )

    device = torch.device(f"cuda:{rank}")
    torch.cuda.set_device(device)

    # Prepare inputs
    q = torch.randn(batch_size, seqlen, nheads, d, device=device, dtype=dtype, requires_grad=True)
    k = torch.randn(batch_size, seqlen, nheads, d, device=device, dtype=dtype, requires_grad=True)
    v = torch.randn(batch_size, seqlen, nheads, d, device=device, dtype=dtype, requires_grad=True)
    dout = torch.randn(batch_size, seqlen, nheads, d, device=device, dtype=dtype)

    dist.broadcast(q, src=0)
    dist.broadcast(k, src=0)
    dist.broadcast(v, src=0)
    dist.broadcast(dout, src=0)

    # prepare process group for hybrid sequence parallelism
    use_ulysses_low = True
    set_seq_parallel_pg(sp_ulysses_degree, sp_ring_degree, rank, world_size, use_ulysses_low)

    local_q = EXTRACT_FUNC_DICT[ring_impl_type](
        q, rank, world_size=world_size, rd=sp_ring_degree, ud=sp_ulysses_degree
    ).detach().clone()
    local_k = EXTRACT_FUNC_DICT[ring_impl_type](
        k, rank, world_size=world_size, rd=sp_ring_degree, ud=sp_ulysses_degree
    ).detach().clone()
    local_v = EXTRACT_FUNC_DICT[ring_impl_type](
        v, rank, world_size=world_size, rd=sp_ring_degree, ud=sp_ulysses_degree
    ).detach().clone()
    local_q.requires_grad = True
    local_k.requires_grad = True
    local_v.requires_grad = True

    attn_type = AttnType.from_string(args.attn_impl)
    usp_attn = LongContextAttention(ring_impl_type=ring_impl_type, attn_type=attn_type)

    if rank == 0:
        print("#" * 30)
        print("# ds-ulysses forward:")
        print("#" * 30)

    local_out = usp_attn(
        local_q,
        local_k,
        local_v,
        dropout_p=dropout_p,
        causal=causal,
        window_size=(-1, -1),
        softcap=0.0,
        alibi_slopes=None,
        deterministic=deterministic,
        return_attn_probs=True,
    )

    if args.use_bwd:
        if rank == 0:
            print("#" * 30)
            print("# ds-ulysses backward:")
            print("#" * 30)
        local_out.backward(dout)

    dist.barrier()

    if rank == 0:
        print("#" * 30)
        print("# local forward:")
        print("#" * 30)
    # reference, a single-device flash attention over the full sequence
    out_ref, _, _ = flash_attn_func(
        q,
        k,
        v,
        dropout_p=dropout_p,
        causal=causal,
        window_size=(-1, -1),
        softcap=0.0,
        alibi_slopes=None,
        deterministic=deterministic,
        return_attn_probs=True,
    )
    if args.use_bwd:
        out_ref.backward(dout)

    dist.barrier()

    # check correctness
    local_out_ref = EXTRACT_FUNC_DICT[ring_impl_type](
        out_ref, rank, world_size=world_size, rd=sp_ring_degree, ud=sp_ulysses_degree
    )
    log("out", local_out, rank0_only=True)
    log("out diff", local_out_ref - local_out)

    if args.use_bwd:
        local_dq_ref = EXTRACT_FUNC_DICT[ring_impl_type](
            q.grad, rank, world_size=world_size, rd=sp_ring_degree, ud=sp_ulysses_degree
        )
        log("dq diff", local_dq_ref - local_q.grad)

    # timing
    with torch.no_grad():
        for _ in range(3):
            usp_attn(local_q, local_k, local_v, causal=causal)
        torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        for _ in range(args.iters):
            usp_attn(local_q, local_k, local_v, causal=causal)
        torch.cuda.synchronize()
        elapsed = (time.perf_counter() - t0) / args.iters
    if rank == 0:
        mem = torch.cuda.max_memory_allocated() / 2**30
        print(f"USP {sp_ulysses_degree}x{sp_ring_degree} {ring_impl_type}: {elapsed * 1e3:.2f} ms/iter, peak {mem:.2f} GiB")

    dist.destroy_process_group()
