"""
Convergence check: train a tiny Llama with and without the Liger kernels and compare the loss curves.

    python examples/mini_llama_convergence.py --steps 300 --liger
    torchrun --nproc_per_node 2 examples/mini_llama_convergence.py --steps 300 --liger --compile
"""
import argparse
import json
import os
import random
from dataclasses import asdict, dataclass

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler
from transformers import LlamaConfig, LlamaForCausalLM

from liger_kernel.transformers import apply_liger_kernel_to_llama

try:
    from apex.optimizers import FusedAdam
except ImportError:  # apex is optional, only used with --fused-adam
    FusedAdam = None


@dataclass
class MiniModelConfig:
    hidden_size: int = 1024
    intermediate_size: int = 2816
    num_hidden_layers: int = 4
    num_attention_heads: int = 8
    num_key_value_heads: int = 2
    vocab_size: int = 32000
    max_position_embeddings: int = 2048
    rms_norm_eps: float = 1e-5
    rope_theta: float = 10000.0


class RandomTokens(Dataset):
    """Deterministic synthetic data: the task is to learn a fixed random bigram table."""

    def __init__(self, vocab_size: int, seq_len: int, n_samples: int, seed: int = 0):
        g = torch.Generator().manual_seed(seed)
        self.table = torch.randint(0, vocab_size, (vocab_size,), generator=g)
        self.starts = torch.randint(0, vocab_size, (n_samples,), generator=g)
        self.seq_len = seq_len

    def __len__(self):
        return len(self.starts)

    def __getitem__(self, idx):
        tokens = [self.starts[idx].item()]
        for _ in range(self.seq_len - 1):
            tokens.append(self.table[tokens[-1]].item())
        ids = torch.tensor(tokens, dtype=torch.long)
        return {"input_ids": ids, "labels": ids.clone()}


def set_seed(seed: int):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def init_distributed():
    if "WORLD_SIZE" not in os.environ or int(os.environ["WORLD_SIZE"]) == 1:
        return 0, 1, torch.device("cuda", 0)
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    return dist.get_rank(), dist.get_world_size(), torch.device("cuda", local_rank)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--seq-len", type=int, default=512)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--liger", action="store_true", help="patch the model with Liger kernels")
    parser.add_argument("--compile", action="store_true", help="torch.compile the model (max-autotune)")
    parser.add_argument("--fused-adam", action="store_true", help="use apex FusedAdam")
    parser.add_argument("--dtype", choices=["bf16", "fp16", "fp32"], default="bf16")
    parser.add_argument("--out", type=str, default="convergence.json")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    rank, world_size, device = init_distributed()
    set_seed(args.seed)

    if args.liger:
        # swaps RMSNorm, RoPE, SwiGLU and the fused linear cross-entropy into transformers' Llama
        apply_liger_kernel_to_llama(rope=True, rms_norm=True, swiglu=True, fused_linear_cross_entropy=True)

    config = LlamaConfig(**asdict(MiniModelConfig()), attn_implementation="sdpa")
    model = LlamaForCausalLM(config).to(device)
    if world_size > 1:
        model = DDP(model, device_ids=[device.index])
    if args.compile:
        model = torch.compile(model, mode="max-autotune")

    if args.fused_adam:
        assert FusedAdam is not None, "--fused-adam requires NVIDIA apex built with --cuda_ext"
        optimizer = FusedAdam(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1)
    else:
        optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1)

    amp_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]
    scaler = torch.cuda.amp.GradScaler(enabled=args.dtype == "fp16")

    dataset = RandomTokens(config.vocab_size, args.seq_len, n_samples=args.steps * args.batch_size * world_size)
    sampler = DistributedSampler(dataset, shuffle=False) if world_size > 1 else None
    loader = DataLoader(
        dataset,
        batch_size=args.batch_size,
        sampler=sampler,
        num_workers=2,
        pin_memory=True,
        pin_memory_device="cuda",
    )

    losses = []
    model.train()
    for step, batch in enumerate(loader):
        if step >= args.steps:
            break
        batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
        with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=args.dtype != "fp32"):
            out = model(**batch)
        scaler.scale(out.loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)

        loss = out.loss.detach()
        if world_size > 1:
            dist.all_reduce(loss, op=dist.ReduceOp.AVG)
        losses.append(loss.item())
        if rank == 0 and step % 20 == 0:
            print(f"step {step:4d} loss {losses[-1]:.4f} "
                  f"mem {torch.cuda.max_memory_reserved(device) / 2**30:.2f} GiB")

    if rank == 0:
        with open(args.out, "w") as f:
            json.dump({"args": vars(args), "losses": losses}, f, indent=2)
        print(f"final loss {np.mean(losses[-20:]):.4f} (mean of last 20 steps), written to {args.out}")

    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
