"""Pre-train a small Switch/Mixtral-style MoE language model with torchrun.

Dense parameters are replicated with DDP; expert weights are sharded over an
expert-parallel group (tokens move with all_to_all_single) and their
gradients are averaged over the matching expert-data-parallel group by hand.

    torchrun --nproc_per_node 8 train_moe.py --ep-size 4 --num-experts 16 --top-k 2
"""
import argparse
import math
import os
import time
from functools import partial

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler

from moe.layer import MoEBlock, moe_aux_loss
from moe.model import MoETransformerLM


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/tokens.bin")
    p.add_argument("--seq-len", type=int, default=2048)
    p.add_argument("--micro-batch", type=int, default=4)
    p.add_argument("--grad-accum", type=int, default=8)
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--num-experts", type=int, default=16)
    p.add_argument("--top-k", type=int, default=2)
    p.add_argument("--ep-size", type=int, default=4)
    p.add_argument("--capacity-factor", type=float, default=1.25)
    p.add_argument("--aux-loss-coef", type=float, default=1e-2)
    p.add_argument("--z-loss-coef", type=float, default=1e-3)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--min-lr", type=float, default=3e-5)
    p.add_argument("--warmup", type=int, default=2000)
    p.add_argument("--max-steps", type=int, default=100_000)
    p.add_argument("--precision", choices=["bf16", "fp16", "fp32"], default="bf16")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--log-every", type=int, default=10)
    p.add_argument("--save-every", type=int, default=2000)
    p.add_argument("--out", default="checkpoints/moe")
    return p.parse_args()


class TokenDataset(Dataset):
    def __init__(self, path, seq_len):
        self.data = np.memmap(path, dtype=np.uint16, mode="r")
        self.seq_len = seq_len

    def __len__(self):
        return (len(self.data) - 1) // self.seq_len

    def __getitem__(self, i):
        chunk = torch.from_numpy(self.data[i * self.seq_len:(i + 1) * self.seq_len + 1].astype(np.int64))
        return {"input_ids": chunk[:-1], "labels": chunk[1:]}


def setup_distributed():
    os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    return dist.get_rank(), dist.get_world_size(), local_rank


def build_expert_groups(world_size, rank, ep_size):
    """ranks [0..ep) form EP group 0, [ep..2ep) group 1, ...; rank r and r+ep share experts."""
    assert world_size % ep_size == 0
    ep_group = edp_group = None
    for start in range(0, world_size, ep_size):
        ranks = list(range(start, start + ep_size))
        g = dist.new_group(ranks)
        if rank in ranks:
            ep_group = g
    for offset in range(ep_size):
        ranks = list(range(offset, world_size, ep_size))
        g = dist.new_group(ranks)
        if rank in ranks:
            edp_group = g
    return ep_group, edp_group


def lr_at(step, args):
    if step < args.warmup:
        return args.lr * step / args.warmup
    progress = min(1.0, (step - args.warmup) / max(1, args.max_steps - args.warmup))
    return args.min_lr + 0.5 * (args.lr - args.min_lr) * (1 + math.cos(math.pi * progress))


def allreduce_expert_grads(model, edp_group):
    world = dist.get_world_size(edp_group)
    if world == 1:
        return
    for p in model.parameters():
        if getattr(p, "is_expert", False) and p.grad is not None:
            p.grad.div_(world)
            dist.all_reduce(p.grad, group=edp_group)


def main():
    args = get_args()
    rank, world_size, local_rank = setup_distributed()
    device = torch.device(f"cuda:{local_rank}")
    torch.manual_seed(args.seed + rank)
    torch.cuda.manual_seed(args.seed + rank)

    ep_group, edp_group = build_expert_groups(world_size, rank, args.ep_size)

    if args.precision == "bf16" and not torch.cuda.is_bf16_supported():
        if rank == 0:
            print("bf16 not supported on this GPU, falling back to fp16")
        args.precision = "fp16"
    amp_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.precision]

    model = MoETransformerLM(
        n_layers=args.layers, d_model=args.hidden, n_heads=args.heads, seq_len=args.seq_len,
        moe_block=partial(MoEBlock, num_experts=args.num_experts, top_k=args.top_k, capacity_factor=args.capacity_factor,
                          ep_group=ep_group),
    ).to(device)

    # Expert weights differ across the EP group, so DDP must not all-reduce them.
    expert_names = [n for n, p in model.named_parameters() if getattr(p, "is_expert", False)]
    model._ddp_params_and_buffers_to_ignore = expert_names
    model = DDP(model, device_ids=[local_rank], broadcast_buffers=False, gradient_as_bucket_view=True)

    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                                  lr=args.lr, betas=(0.9, 0.95), eps=1e-8, fused=True)
    scaler = torch.cuda.amp.GradScaler(enabled=args.precision == "fp16")

    ds = TokenDataset(args.data, args.seq_len)
    sampler = DistributedSampler(ds, num_replicas=world_size, rank=rank, shuffle=True, seed=args.seed)
    loader = DataLoader(ds, batch_size=args.micro_batch, sampler=sampler, num_workers=4, pin_memory=True, drop_last=True)

    step, epoch = 0, 0
    model.train()
    t0 = time.time()
    data_iter = iter(loader)
    while step < args.max_steps:
        for g in optimizer.param_groups:
            g["lr"] = lr_at(step, args)

        loss_acc = aux_acc = 0.0
        for micro in range(args.grad_accum):
            try:
                batch = next(data_iter)
            except StopIteration:
                epoch += 1
                sampler.set_epoch(epoch)
                data_iter = iter(loader)
                batch = next(data_iter)
            batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}

            sync = micro == args.grad_accum - 1
            ctx = model.no_sync() if not sync else torch.enable_grad()
            with ctx:
                with torch.cuda.amp.autocast(dtype=amp_dtype, enabled=args.precision != "fp32"):
                    logits = model(batch["input_ids"])
                    lm_loss = F.cross_entropy(logits.float().view(-1, logits.size(-1)), batch["labels"].view(-1))
                    aux, z = moe_aux_loss(model.module)
                    loss = (lm_loss + args.aux_loss_coef * aux + args.z_loss_coef * z) / args.grad_accum
                scaler.scale(loss).backward()
            loss_acc += lm_loss.item() / args.grad_accum
            aux_acc += aux.item() / args.grad_accum

        allreduce_expert_grads(model.module, edp_group)
        scaler.unscale_(optimizer)
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        step += 1

        if step % args.log_every == 0 and rank == 0:
            dt = (time.time() - t0) / args.log_every
            tok_s = args.micro_batch * args.grad_accum * args.seq_len * world_size / dt
            mem = torch.cuda.max_memory_reserved() / 2**30
            print(f"step {step:6d} | loss {loss_acc:.4f} | aux {aux_acc:.4f} | gnorm {grad_norm:.2f} | "
                  f"lr {lr_at(step, args):.2e} | {tok_s / 1e3:.1f}k tok/s | mem {mem:.1f} GiB", flush=True)
            t0 = time.time()

        if step % args.save_every == 0:
            # every rank saves its own expert shard; dense weights only from rank 0
            os.makedirs(args.out, exist_ok=True)
            expert_state = {n: p.detach().cpu() for n, p in model.module.named_parameters() if getattr(p, "is_expert", False)}
            torch.save(expert_state, os.path.join(args.out, f"experts_step{step}_rank{rank}.pt"))
            if rank == 0:
                dense_state = {n: p.detach().cpu() for n, p in model.module.named_parameters() if not getattr(p, "is_expert", False)}
                torch.save({"dense": dense_state, "optimizer": optimizer.state_dict(), "step": step, "args": vars(args)},
                           os.path.join(args.out, f"dense_step{step}.pt"))
            torch.cuda.empty_cache()
            dist.barrier()

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
