"""Minimal float8 training loop with torchao.

Compares a bf16 MLP against the same MLP converted with ``convert_to_float8_training``
(tensorwise dynamic scaling by default, rowwise with ``--recipe rowwise``).

    python train_toy_float8.py --recipe tensorwise --compile
"""
import argparse
import time

import torch
import torch.nn as nn

from torchao.float8 import Float8LinearConfig, convert_to_float8_training
from torchao.utils import TORCH_VERSION_AT_LEAST_2_5

if not TORCH_VERSION_AT_LEAST_2_5:
    raise AssertionError("torchao.float8 requires PyTorch version 2.5 or greater")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--recipe", choices=["tensorwise", "rowwise", "rowwise_with_gw_hp"], default="tensorwise")
    p.add_argument("--compile", action="store_true", help="torch.compile the model (recommended for float8)")
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--batch", type=int, default=4096)
    p.add_argument("--dim", type=int, default=2048)
    p.add_argument("--hidden", type=int, default=8192)
    p.add_argument("--emulate", action="store_true", help="emulate float8 matmuls (for pre-sm89 GPUs)")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def build_model(dim, hidden):
    return nn.Sequential(
        nn.Linear(dim, hidden, bias=False),
        nn.GELU(),
        nn.Linear(hidden, hidden, bias=False),
        nn.GELU(),
        nn.Linear(hidden, dim, bias=False),
    )


def module_filter_fn(mod: torch.nn.Module, fqn: str):
    # don't convert the last module
    if fqn == "4":
        return False
    # don't convert linear modules with weight dimensions not divisible by 16
    if isinstance(mod, torch.nn.Linear):
        if mod.in_features % 16 != 0 or mod.out_features % 16 != 0:
            return False
    return True


def fp8_capable() -> bool:
    major, minor = torch.cuda.get_device_capability()
    return (major, minor) >= (8, 9)


def run(model, x, target, steps, label):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    # warmup (also triggers compilation)
    for _ in range(3):
        optimizer.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(model(x).float(), target)
        loss.backward()
        optimizer.step()
    torch.cuda.synchronize()

    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(steps):
        optimizer.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(model(x).float(), target)
        loss.backward()
        optimizer.step()
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end) / steps
    print(f"[{label}] loss={loss.item():.5f}  {ms:.2f} ms/step  "
          f"peak mem {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")
    torch.cuda.reset_peak_memory_stats()
    return ms


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    device = "cuda"
    print(f"device: {torch.cuda.get_device_name()}")

    x = torch.randn(args.batch, args.dim, device=device, dtype=torch.bfloat16)
    target = torch.randn(args.batch, args.dim, device=device, dtype=torch.float32)

    # bf16 baseline
    ref = build_model(args.dim, args.hidden).bfloat16().cuda()
    if args.compile:
        ref = torch.compile(ref)
    t_ref = run(ref, x, target, args.steps, "bf16")

    # float8
    if not fp8_capable() and not args.emulate:
        print("float8 requires compute capability >= 8.9 (H100/L40S/4090); pass --emulate to test numerics")
        return

    m = build_model(args.dim, args.hidden).bfloat16().cuda()
    if args.recipe == "tensorwise":
        config = Float8LinearConfig(emulate=args.emulate)
    else:
        config = Float8LinearConfig.from_recipe_name(args.recipe)
    convert_to_float8_training(m, config=config, module_filter_fn=module_filter_fn)
    print(m)
    if args.compile:
        m = torch.compile(m)
    t_fp8 = run(m, x, target, args.steps, f"float8/{args.recipe}")
    print(f"speedup: {t_ref / t_fp8:.2f}x")


if __name__ == "__main__":
    main()
