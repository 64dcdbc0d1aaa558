#!/usr/bin/env python3
"""Forward/backward micro-benchmark of MoE layer implementations.

Compares a dense FFN of the same active size, the megablocks dMoE (sparse and
grouped), and the Tutel MoE layer when it is installed:

    python benchmarks/bench_moe_layer.py --tokens 16384 --hidden 4096 --experts 8 --top-k 2
"""
import argparse
import json
import statistics
import sys
from contextlib import nullcontext

import pynvml
import torch
import torch.nn as nn
import torch.nn.functional as F

from megablocks.layers.arguments import Arguments
from megablocks.layers.dmoe import dMoE

try:
    from tutel import moe as tutel_moe
except ImportError:  # optional comparison
    tutel_moe = None


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tokens", type=int, default=16384)
    p.add_argument("--hidden", type=int, default=4096)
    p.add_argument("--ffn-hidden", type=int, default=14336)
    p.add_argument("--experts", type=int, default=8)
    p.add_argument("--top-k", type=int, default=2)
    p.add_argument("--impl", nargs="+", default=["dense", "dmoe-sparse", "dmoe-grouped", "tutel"])
    p.add_argument("--dtype", choices=["bf16", "fp16", "fp32"], default="bf16")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--device", default="cuda")
    p.add_argument("--json", default=None, help="write results to this file")
    return p.parse_args()


class DenseFFN(nn.Module):
    """Dense SwiGLU FFN with the same number of active parameters per token."""

    def __init__(self, hidden, ffn_hidden, top_k):
        super().__init__()
        self.w13 = nn.Linear(hidden, 2 * ffn_hidden * top_k, bias=False)
        self.w2 = nn.Linear(ffn_hidden * top_k, hidden, bias=False)

    def forward(self, x):
        a, b = self.w13(x).chunk(2, dim=-1)
        return self.w2(F.silu(a) * b)


def build(impl, args, device, dtype):
    if impl == "dense":
        return DenseFFN(args.hidden, args.ffn_hidden, args.top_k).to(device=device, dtype=dtype)
    if impl.startswith("dmoe"):
        mb_args = Arguments(
            hidden_size=args.hidden,
            ffn_hidden_size=args.ffn_hidden,
            moe_num_experts=args.experts,
            moe_top_k=args.top_k,
            mlp_type="glu",
            mlp_impl=impl.split("-")[1],
            bf16=dtype == torch.bfloat16,
            fp16=dtype == torch.float16,
            device=device,
            return_bias=False,
        )
        return dMoE(mb_args)
    if impl == "tutel":
        if tutel_moe is None:
            return None
        return tutel_moe.moe_layer(
            gate_type={"type": "top", "k": args.top_k},
            model_dim=args.hidden,
            experts={"type": "ffn", "count_per_node": args.experts, "hidden_size_per_expert": args.ffn_hidden,
                     "activation_fn": F.silu},
        ).to(device=device, dtype=dtype)
    raise ValueError(impl)


def gpu_power_watts(index):
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    return pynvml.nvmlDeviceGetPowerUsage(handle) / 1000.0


def time_layer(name, layer, x, args, amp_ctx):
    times = []
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    torch.cuda.reset_peak_memory_stats()
    for it in range(args.warmup + args.iters):
        x.grad = None
        with torch.cuda.nvtx.range(f"{name}/iter{it}"):
            start.record()
            with amp_ctx:
                out = layer(x)
                if isinstance(out, tuple):
                    out = out[0]
            out.float().pow(2).mean().backward()
            end.record()
        torch.cuda.synchronize()
        if it >= args.warmup:
            times.append(start.elapsed_time(end))
    return {
        "impl": name,
        "ms_median": statistics.median(times),
        "ms_min": min(times),
        "peak_mem_gib": torch.cuda.max_memory_allocated() / 2**30,
    }


def main():
    args = parse_args()
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    pynvml.nvmlInit()

    device = torch.device(args.device)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]
    # Layers are built in the target dtype; autocast only covers the fp32 reference run.
    amp_ctx = torch.autocast("cuda", dtype=torch.bfloat16) if args.dtype == "fp32" else nullcontext()

    torch.manual_seed(0)
    x = torch.randn(args.tokens, 1, args.hidden, device=device, dtype=dtype, requires_grad=True)

    print(f"device: {torch.cuda.get_device_name()}  tokens={args.tokens} hidden={args.hidden} "
          f"ffn={args.ffn_hidden} experts={args.experts} top_k={args.top_k} dtype={args.dtype}")

    results = []
    for impl in args.impl:
        layer = build(impl, args, device, dtype)
        if layer is None:
            print(f"{impl:>14}: skipped (not installed)")
            continue
        r = time_layer(impl, layer, x, args, amp_ctx)
        r["power_w"] = gpu_power_watts(device.index or 0)
        results.append(r)
        print(f"{impl:>14}: {r['ms_median']:8.2f} ms (min {r['ms_min']:.2f})  peak {r['peak_mem_gib']:.2f} GiB  {r['power_w']:.0f} W")
        del layer
        torch.cuda.empty_cache()

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "results": results}, f, indent=2)
    pynvml.nvmlShutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
