# Copyright (c) 2022-2024, NVIDIA CORPORATION & AFFILIATES. All rights reserved.
#
# See LICENSE for license information.

"""Small GPT pretraining example using Transformer Engine layers with FP8.

Run on a single node with 8 GPUs:

    torchrun --nproc_per_node=8 train_gpt_fp8.py --fp8 --batch-size 8 --seq-length 2048

FP8 execution requires an Ada (sm_89) or Hopper (sm_90) GPU. On older GPUs the
script falls back to BF16 automatically.
"""

import argparse
import math
import os
import time
from contextlib import nullcontext

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

import transformer_engine.pytorch as te
from transformer_engine.common.recipe import DelayedScaling, Format


def parse_args():
    parser = argparse.ArgumentParser(description="GPT + Transformer Engine FP8 example")
    parser.add_argument("--num-layers", type=int, default=12)
    parser.add_argument("--hidden-size", type=int, default=1024)
    parser.add_argument("--num-attention-heads", type=int, default=16)
    parser.add_argument("--ffn-hidden-size", type=int, default=4096)
    parser.add_argument("--vocab-size", type=int, default=50304)
    parser.add_argument("--seq-length", type=int, default=2048)
    parser.add_argument("--batch-size", type=int, default=8, help="micro batch size per GPU")
    parser.add_argument("--grad-accum", type=int, default=1)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--min-lr", type=float, default=3e-5)
    parser.add_argument("--warmup-steps", type=int, default=200)
    parser.add_argument("--train-steps", type=int, default=2000)
    parser.add_argument("--weight-decay", type=float, default=0.1)
    parser.add_argument("--clip-grad", type=float, default=1.0)
    parser.add_argument("--fp8", action="store_true", help="enable FP8 GEMMs via fp8_autocast")
    parser.add_argument("--fp8-format", choices=["e4m3", "hybrid"], default="hybrid")
    parser.add_argument("--amax-history-len", type=int, default=1024)
    parser.add_argument("--amax-compute-algo", choices=["max", "most_recent"], default="max")
    parser.add_argument("--fp8-margin", type=int, default=0)
    parser.add_argument("--log-interval", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--num-workers", type=int, default=2)
    parser.add_argument("--save", type=str, default=None)
    return parser.parse_args()


class RandomTokenDataset(Dataset):
    """Synthetic tokens so the example runs without downloading a corpus."""

    def __init__(self, vocab_size, seq_length, num_samples=100_000, seed=0):
        self.vocab_size = vocab_size
        self.seq_length = seq_length
        self.num_samples = num_samples
        self.seed = seed

    def __len__(self):
        return self.num_samples

    def __getitem__(self, idx):
        g = torch.Generator().manual_seed(self.seed + idx)
        tokens = torch.randint(0, self.vocab_size, (self.seq_length + 1,), generator=g)
        return tokens[:-1], tokens[1:]


class GPT(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.embed = nn.Embedding(args.vocab_size, args.hidden_size)
        self.pos_embed = nn.Embedding(args.seq_length, args.hidden_size)
        self.layers = nn.ModuleList(
            [
                te.TransformerLayer(
                    args.hidden_size,
                    args.ffn_hidden_size,
                    args.num_attention_heads,
                    layernorm_epsilon=1e-5,
                    hidden_dropout=0.0,
                    attention_dropout=0.0,
                    layer_number=i + 1,
                    self_attn_mask_type="causal",
                    fuse_qkv_params=True,
                    params_dtype=torch.bfloat16,
                    attn_input_format="bshd",
                )
                for i in range(args.num_layers)
            ]
        )
        self.final_norm = te.LayerNorm(args.hidden_size, eps=1e-5, params_dtype=torch.bfloat16)
        self.lm_head = te.Linear(args.hidden_size, args.vocab_size, bias=False, params_dtype=torch.bfloat16)

    def forward(self, input_ids):
        b, s = input_ids.shape
        pos = torch.arange(s, device=input_ids.device).unsqueeze(0)
        hidden = self.embed(input_ids) + self.pos_embed(pos)
        hidden = hidden.to(torch.bfloat16)
        for layer in self.layers:
            hidden = layer(hidden, attention_mask=None)
        hidden = self.final_norm(hidden)
        return self.lm_head(hidden)


def fp8_supported():
    """Return (ok, reason). FP8 needs compute capability 8.9 or newer."""
    if not torch.cuda.is_available():
        return False, "CUDA is not available"
    major, minor = torch.cuda.get_device_capability()
    if (major, minor) < (8, 9):
        return False, f"device compute capability {major}.{minor} < 8.9"
    return True, ""


def get_lr(step, args):
    if step < args.warmup_steps:
        return args.lr * (step + 1) / args.warmup_steps
    progress = (step - args.warmup_steps) / max(1, args.train_steps - args.warmup_steps)
    coeff = 0.5 * (1.0 + math.cos(math.pi * min(progress, 1.0)))
    return args.min_lr + coeff * (args.lr - args.min_lr)


def configure_optimizer(model, args):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        if p.ndim < 2 or "norm" in name or "bias" in name:
            no_decay.append(p)
        else:
            decay.append(p)
    groups = [
        {"params": decay, "weight_decay": args.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, 0.95), eps=1e-8, fused=True)


def main():
    args = parse_args()

    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    rank = int(os.environ.get("RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))

    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    if world_size > 1:
        dist.init_process_group(backend="nccl", init_method="env://")

    torch.manual_seed(args.seed + rank)
    torch.cuda.manual_seed(args.seed + rank)

    use_fp8 = args.fp8
    if use_fp8:
        ok, reason = fp8_supported()
        if not ok:
            if rank == 0:
                print(f"[warn] FP8 disabled: {reason}")
            use_fp8 = False

    fp8_format = Format.HYBRID if args.fp8_format == "hybrid" else Format.E4M3
    fp8_recipe = DelayedScaling(
        fp8_format=fp8_format,
        amax_history_len=args.amax_history_len,
        amax_compute_algo=args.amax_compute_algo,
        margin=args.fp8_margin,
    )

    model = GPT(args).cuda()
    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank, bucket_cap_mb=100)

    optimizer = configure_optimizer(model, args)

    dataset = RandomTokenDataset(args.vocab_size, args.seq_length, seed=args.seed)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank) if world_size > 1 else None
    loader = DataLoader(
        dataset,
        batch_size=args.batch_size,
        sampler=sampler,
        shuffle=sampler is None,
        num_workers=args.num_workers,
        pin_memory=True,
        drop_last=True,
    )

    fp8_group = dist.group.WORLD if world_size > 1 else None
    step = 0
    tokens_seen = 0
    model.train()
    t0 = time.time()
    data_iter = iter(loader)
    while step < args.train_steps:
        lr = get_lr(step, args)
        for group in optimizer.param_groups:
            group["lr"] = lr

        optimizer.zero_grad(set_to_none=True)
        loss_accum = 0.0
        for micro in range(args.grad_accum):
            try:
                inputs, labels = next(data_iter)
            except StopIteration:
                if sampler is not None:
                    sampler.set_epoch(step)
                data_iter = iter(loader)
                inputs, labels = next(data_iter)
            inputs = inputs.to(device, non_blocking=True)
            labels = labels.to(device, non_blocking=True)

            sync_ctx = model.no_sync() if (world_size > 1 and micro < args.grad_accum - 1) else nullcontext()
            with sync_ctx:
                with te.fp8_autocast(enabled=use_fp8, fp8_recipe=fp8_recipe, fp8_group=fp8_group):
                    logits = model(inputs)
                loss = F.cross_entropy(logits.float().view(-1, logits.size(-1)), labels.view(-1))
                loss = loss / args.grad_accum
                loss.backward()
            loss_accum += loss.item()
            tokens_seen += inputs.numel() * world_size

        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad)
        optimizer.step()
        step += 1

        if step % args.log_interval == 0:
            torch.cuda.synchronize()
            dt = time.time() - t0
            mem = torch.cuda.max_memory_allocated() / 2**30
            if rank == 0:
                print(
                    f"step {step:6d} | loss {loss_accum:.4f} | lr {lr:.2e} | "
                    f"{tokens_seen / dt:,.0f} tok/s | peak mem {mem:.1f} GiB | fp8={use_fp8}"
                )
            tokens_seen = 0
            t0 = time.time()

    if args.save and rank == 0:
        state = model.module.state_dict() if isinstance(model, DDP) else model.state_dict()
        torch.save({"model": state, "args": vars(args)}, args.save)
        print(f"saved checkpoint to {args.save}")

    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
