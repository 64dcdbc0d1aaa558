#!/usr/bin/env python3
"""
Cross-silo secure aggregation with distributed DP noise, simulated on one
multi-GPU node: every rank is a silo, the NCCL all-reduce plays the role of the
(honest-but-curious) aggregator that only ever sees masked sums.

  torchrun --nproc_per_node 8 -m secagg.secure_sum --rounds 20 --sigma 0.8 --clip 1.0

Per round each silo
  1. clips its model delta to L2 <= clip,
  2. adds its share N(0, sigma^2 clip^2 / n) of the Gaussian noise (distributed DP),
  3. quantises to Z_{2^32}, adds pairwise masks, and all-reduces the masked ints.
The noisy float sum is also all-reduced in float64 for the unmasked "debug" path
that validates the secure path against the plain sum.
"""

import argparse
import logging
import math
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn

from secagg.ops.prg_expand import MODULUS, MaskPrecomputer, mask_update, unmask_sum

logger = logging.getLogger("secure_sum")


def setup():
    dist.init_process_group(backend="nccl", init_method="env://")
    rank = dist.get_rank()
    local_rank = int(os.environ.get("LOCAL_RANK", rank % torch.cuda.device_count()))
    torch.cuda.set_device(local_rank)
    return rank, dist.get_world_size(), torch.device("cuda", local_rank)


def pairwise_seeds(rank: int, world: int, round_idx: int):
    """Toy key agreement: seeds derived from a shared round secret (real code: DH + secret sharing)."""
    base = torch.tensor([time.time_ns() & 0x7FFFFFFFFFFFFFFF if rank == 0 else 0], dtype=torch.int64, device="cuda")
    dist.broadcast(base, src=0)
    b = int(base.item())
    return {p: hash((b, round_idx, min(rank, p), max(rank, p))) & ((1 << 63) - 1) for p in range(world) if p != rank}


def clip_delta(delta: torch.Tensor, clip: float) -> torch.Tensor:
    norm = delta.norm(2)
    return delta * torch.clamp(clip / (norm + 1e-12), max=1.0)


def distributed_noise(shape, sigma: float, clip: float, n: int, gen: torch.Generator, device) -> torch.Tensor:
    std = sigma * clip / math.sqrt(n)
    return torch.normal(0.0, std, size=shape, generator=gen, device=device)


def secure_round(model: nn.Module, local_delta: torch.Tensor, args, rank, world, round_idx, gen, pre: MaskPrecomputer):
    delta = clip_delta(local_delta, args.clip)
    noisy = delta + distributed_noise(delta.shape, args.sigma, args.clip, world, gen, delta.device)

    # ---- secure path: masked int64 sum (masks cancel) -------------------------------
    masked = mask_update(noisy, args.clip + 6 * args.sigma * args.clip, rank, {}, precomputed=pre.result())
    dist.all_reduce(masked, op=dist.ReduceOp.SUM)
    secure_sum = unmask_sum(masked, world, args.clip + 6 * args.sigma * args.clip)

    # ---- debug path: plain float64 sum, to check the quantisation error ---------------
    if args.debug_plain_sum:
        plain = noisy.to(torch.float64)
        dist.all_reduce(plain, op=dist.ReduceOp.SUM)
        err = (secure_sum.to(plain.device).double() - plain).abs().max().item()
        if rank == 0:
            logger.info("round %d: max |secure - plain| = %.3e", round_idx, err)

    # ---- per-silo diagnostics: every silo's clipped norm ------------------------------
    norms = [torch.zeros(1, device=delta.device) for _ in range(world)]
    dist.all_gather(norms, delta.norm(2).reshape(1))
    if rank == 0:
        logger.info("round %d: silo norms %s", round_idx, [round(n.item(), 3) for n in norms])

    with torch.no_grad():
        offset = 0
        for p in model.parameters():
            k = p.numel()
            p.add_(secure_sum[offset : offset + k].view_as(p).to(p.device) / world)
            offset += k
    return secure_sum


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--sigma", type=float, default=0.8)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--dim", type=int, default=1 << 20)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--debug_plain_sum", action="store_true")
    args = ap.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s [%(levelname)s] %(message)s")
    rank, world, device = setup()

    model = nn.Linear(args.dim // 1024, 1024, bias=False).to(device)
    numel = sum(p.numel() for p in model.parameters())

    gen = torch.Generator(device="cuda")
    gen.manual_seed(args.seed * 1000 + rank)
    pre = MaskPrecomputer(rank, device)

    for r in range(args.rounds):
        seeds = pairwise_seeds(rank, world, r)
        pre.launch(seeds, numel)
        local_delta = torch.randn(numel, device=device) * 0.01  # stand-in for local training
        t0 = time.time()
        secure_round(model, local_delta, args, rank, world, r, gen, pre)
        torch.cuda.synchronize()
        if rank == 0:
            logger.info("round %d done in %.3fs", r, time.time() - t0)

    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
