# -*- coding: utf-8 -*-
"""Pre-train a linear-attention LM (GLA / DeltaNet / RetNet / Mamba2 from `fla`) with FSDP2 on torchrun.

torchrun --nproc_per_node 8 -m flame.train --model configs/gla_340M.json --data /data/fineweb-edu \
    --seq-len 4096 --batch-size 8 --steps 20000 --lr 3e-4 --compile
"""
import argparse
import gc
import json
import math
import os
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

import fla  # noqa: F401  registers the fla model classes with transformers
from fla.modules import FusedLinearCrossEntropyLoss
from transformers import AutoConfig, AutoModelForCausalLM

from flame.data import build_dataloader
from flame.logging import init_logger, logger

# A100/H100 bf16 dense peak, used for the MFU estimate
PEAK_FLOPS = {"H100": 989e12, "H800": 989e12, "A100": 312e12, "A800": 312e12, "L40S": 362e12, "RTX 4090": 165e12}


def get_peak_flops(device_name: str) -> float:
    for key, flops in PEAK_FLOPS.items():
        if key in device_name:
            return flops
    logger.warning(f"Peak flops undefined for: {device_name}, fallback to A100")
    return PEAK_FLOPS["A100"]


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", type=str, required=True, help="path to a fla model config json")
    p.add_argument("--tokenizer", type=str, default="fla-hub/transformer-1.3B-100B")
    p.add_argument("--data", type=str, required=True)
    p.add_argument("--seq-len", type=int, default=2048)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--grad-accum", type=int, default=1)
    p.add_argument("--steps", type=int, default=10000)
    p.add_argument("--warmup", type=int, default=1000)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--min-lr-ratio", type=float, default=0.1)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--max-norm", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--varlen", action="store_true", help="pack documents and pass cu_seqlens to the kernels")
    p.add_argument("--log-every", type=int, default=10)
    p.add_argument("--ckpt-every", type=int, default=2000)
    p.add_argument("--ckpt-dir", type=str, default="exp/ckpt")
    p.add_argument("--mem-snapshot", action="store_true", help="dump an allocator snapshot after 10 steps")
    return p.parse_args()


def cosine_lr(step, args):
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    progress = (step - args.warmup) / max(1, args.steps - args.warmup)
    ratio = args.min_lr_ratio + (1 - args.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress))
    return args.lr * ratio


def barrier():
    if dist.get_backend() == "nccl":
        dist.barrier(device_ids=[torch.cuda.current_device()])
    else:
        dist.barrier()


def main():
    args = parse_args()
    init_logger()

    os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")
    dist.init_process_group(backend="nccl", timeout=timedelta(minutes=30))
    rank, world_size = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    mesh = init_device_mesh("cuda", (world_size,), mesh_dim_names=("dp",))

    torch.manual_seed(args.seed)
    torch.cuda.manual_seed(args.seed)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    device_name = torch.cuda.get_device_name(device)
    device_mem_gib = torch.cuda.get_device_properties(device).total_memory / 1024 ** 3
    peak_flops = get_peak_flops(device_name)
    logger.info(f"{device_name} with {device_mem_gib:.2f}GiB memory, peak {peak_flops:.3e} FLOPS")

    # ---------------------------------------------------------------- model
    config = AutoConfig.from_pretrained(args.model)
    config.fuse_cross_entropy = True
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    n_params = sum(p.numel() for p in model.parameters())
    n_embed = model.get_input_embeddings().weight.numel()
    flops_per_token = 6 * (n_params - n_embed) + 12 * config.num_hidden_layers * config.hidden_size * args.seq_len
    logger.info(f"Model: {config.model_type}, {n_params / 1e6:.1f}M params")

    mp_policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for block in model.model.layers:
        fully_shard(block, mesh=mesh, mp_policy=mp_policy)
    fully_shard(model, mesh=mesh, mp_policy=mp_policy)
    model.to_empty(device=device)
    with torch.no_grad():
        model.post_init()
    model.train()
    if args.compile:
        for block in model.model.layers:
            block.compile(fullgraph=False)

    loss_fn = FusedLinearCrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95),
                                  weight_decay=args.weight_decay, fused=True)

    loader = build_dataloader(args.data, args.tokenizer, seq_len=args.seq_len, batch_size=args.batch_size,
                              rank=rank, world_size=world_size, varlen=args.varlen,
                              num_workers=4, pin_memory=True)

    # ---------------------------------------------------------------- resume
    step = 0
    state = {"model": model, "optimizer": optimizer}
    latest = os.path.join(args.ckpt_dir, "latest")
    if os.path.exists(latest):
        with open(latest) as f:
            step = int(f.read().strip())
        dcp.load(state, checkpoint_id=os.path.join(args.ckpt_dir, f"step-{step}"))
        logger.info(f"Resumed from step {step}")

    if args.mem_snapshot:
        torch.cuda.memory._record_memory_history(max_entries=100000)

    gc.disable()
    gc.collect(1)
    torch.cuda.reset_peak_memory_stats()
    data_iter = iter(loader)
    t_last, ntokens_since_last = time.perf_counter(), 0

    while step < args.steps:
        step += 1
        lr = cosine_lr(step, args)
        for group in optimizer.param_groups:
            group["lr"] = lr

        total_loss = 0.0
        for micro in range(args.grad_accum):
            batch = next(data_iter)
            input_ids = batch["input_ids"].to(device, non_blocking=True)
            labels = batch["labels"].to(device, non_blocking=True)
            cu_seqlens = batch["cu_seqlens"].to(device, non_blocking=True) if "cu_seqlens" in batch else None
            ntokens_since_last += input_ids.numel()

            hidden = model.model(input_ids=input_ids, cu_seqlens=cu_seqlens).last_hidden_state
            loss = loss_fn(hidden, labels, model.lm_head.weight, model.lm_head.bias) / args.grad_accum
            loss.backward()
            total_loss += loss.detach()

        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_norm, foreach=True)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

        if step % 50 == 0:
            gc.collect(1)

        if args.mem_snapshot and step == 10:
            snapshot_path = os.path.join(args.ckpt_dir, f"memory_snapshot_rank{rank}.pickle")
            torch.cuda.memory._dump_snapshot(snapshot_path)
            torch.cuda.memory._record_memory_history(enabled=None)

        if step % args.log_every == 0:
            dist.all_reduce(total_loss, op=dist.ReduceOp.AVG)
            time_delta = time.perf_counter() - t_last
            tps = ntokens_since_last / time_delta
            mfu = 100 * flops_per_token * tps / peak_flops
            max_reserved_gib = torch.cuda.max_memory_reserved(device) / 1024 ** 3
            if rank == 0:
                logger.info(
                    f"step {step:6d} | loss {total_loss.item():.4f} | gnorm {grad_norm.item():.3f} | lr {lr:.2e} | "
                    f"tps {tps:,.0f} | mfu {mfu:.2f}% | mem {max_reserved_gib:.2f}GiB "
                    f"({100 * max_reserved_gib / device_mem_gib:.1f}%)"
                )
            t_last, ntokens_since_last = time.perf_counter(), 0

        if step % args.ckpt_every == 0 or step == args.steps:
            dcp.save(state, checkpoint_id=os.path.join(args.ckpt_dir, f"step-{step}"))
            barrier()
            if rank == 0:
                with open(latest, "w") as f:
                    f.write(str(step))
            logger.info(f"Saved checkpoint at step {step}")

    barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
