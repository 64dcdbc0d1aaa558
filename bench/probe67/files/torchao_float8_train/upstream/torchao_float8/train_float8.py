"""Minimal float8 training recipe with torchao + FSDP2, in the style of the torchao float8 README / torchtitan.

torchrun --nproc_per_node 8 train_float8.py --model_name meta-llama/Meta-Llama-3-8B --recipe rowwise
"""
import argparse
import os
import time
from functools import partial

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed._composable.fsdp import fully_shard, MixedPrecisionPolicy
from torch.distributed.device_mesh import init_device_mesh

from torchao.float8 import convert_to_float8_training, Float8LinearConfig
from torchao.float8.fsdp_utils import precompute_float8_dynamic_scale_for_fsdp
from transformers import AutoConfig, AutoModelForCausalLM


def is_sm89_or_later():
    # float8 matmul (torch._scaled_mm) requires Ada Lovelace / Hopper or newer
    return torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 9)


def module_filter_fn(mod: nn.Module, fqn: str):
    # don't convert the output module
    if fqn == "lm_head":
        return False
    # don't convert linear modules with weight dimensions not divisible by 16
    if isinstance(mod, nn.Linear):
        if mod.in_features % 16 != 0 or mod.out_features % 16 != 0:
            return False
    return True


def build_model(args, device):
    config = AutoConfig.from_pretrained(args.model_name)
    config.num_hidden_layers = args.n_layers or config.num_hidden_layers
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config, torch_dtype=torch.float32)
    if args.float8:
        if not is_sm89_or_later():
            raise RuntimeError("float8 training needs an SM89+ GPU (H100/L40S/4090)")
        fp8_config = Float8LinearConfig.from_recipe_name(args.recipe)
        convert_to_float8_training(model, config=fp8_config, module_filter_fn=module_filter_fn)
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for layer in model.model.layers:
        fully_shard(layer, mp_policy=mp)
    fully_shard(model, mp_policy=mp)
    model.to_empty(device=device)
    model.init_weights() if hasattr(model, "init_weights") else None
    return model


def get_batch(vocab_size, batch_size, seq_len, device):
    x = torch.randint(0, vocab_size, (batch_size, seq_len + 1), device=device)
    return x[:, :-1].contiguous(), x[:, 1:].contiguous()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name", default="meta-llama/Meta-Llama-3-8B")
    parser.add_argument("--n_layers", type=int, default=None)
    parser.add_argument("--float8", action="store_true")
    parser.add_argument("--recipe", default="tensorwise", choices=["tensorwise", "rowwise", "rowwise_with_gw_hp"])
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--batch_size", type=int, default=1)
    parser.add_argument("--seq_len", type=int, default=8192)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--lr", type=float, default=3e-4)
    args = parser.parse_args()

    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = dist.get_world_size()
    torch.cuda.set_device(local_rank)
    device = torch.device(f"cuda:{local_rank}")
    mesh = init_device_mesh("cuda", (world_size,))

    torch.manual_seed(0)
    model = build_model(args, device)
    if args.compile:
        model = torch.compile(model)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, fused=True)
    vocab = model.config.vocab_size

    torch.cuda.reset_peak_memory_stats()
    for step in range(args.steps):
        t0 = time.perf_counter()
        inputs, labels = get_batch(vocab, args.batch_size, args.seq_len, device)
        logits = model(inputs).logits
        loss = nn.functional.cross_entropy(logits.flatten(0, 1).float(), labels.flatten())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if args.float8 and args.recipe == "tensorwise":
            # sync float8 amaxes and scales across FSDP shards in one all-reduce
            precompute_float8_dynamic_scale_for_fsdp(model)
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        if rank == 0 and step % 10 == 0:
            tok_s = args.batch_size * args.seq_len * world_size / dt
            mem = torch.cuda.max_memory_allocated() / 2**30
            print(f"step {step:4d} loss {loss.item():.4f} {tok_s:,.0f} tok/s peak mem {mem:.1f} GiB")

    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
