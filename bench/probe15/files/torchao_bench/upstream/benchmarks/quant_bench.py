"""Benchmark torchao quantization recipes on a Llama-style MLP + attention block.

  python benchmarks/quant_bench.py --recipe int8wo --compile
  python benchmarks/quant_bench.py --recipe float8dq      # needs sm_89+ (Ada/Hopper)
"""
import argparse
import itertools

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch._inductor.config as inductor_config
from torchao.quantization import (
    quantize_,
    int8_weight_only,
    int8_dynamic_activation_int8_weight,
    int4_weight_only,
    float8_dynamic_activation_float8_weight,
)
from torchao.float8 import convert_to_float8_training, Float8LinearConfig
from torchao.utils import benchmark_model, unwrap_tensor_subclass

inductor_config.coordinate_descent_tuning = True
inductor_config.triton.unique_kernel_names = True
inductor_config.fx_graph_cache = True
inductor_config.force_fuse_int_mm_with_mul = True


class Block(nn.Module):
    def __init__(self, dim=4096, hidden=11008, n_heads=32):
        super().__init__()
        self.n_heads = n_heads
        self.wqkv = nn.Linear(dim, 3 * dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.norm1 = nn.RMSNorm(dim)
        self.norm2 = nn.RMSNorm(dim)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.wqkv(self.norm1(x)).split(d, dim=-1)
        q, k, v = (t.view(b, s, self.n_heads, -1).transpose(1, 2) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.wo(a.transpose(1, 2).reshape(b, s, d))
        h = self.norm2(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


def apply_recipe(model, recipe):
    if recipe == "none":
        return model
    if recipe == "int8wo":
        quantize_(model, int8_weight_only())
    elif recipe == "int8dq":
        quantize_(model, int8_dynamic_activation_int8_weight())
    elif recipe == "int4wo":
        quantize_(model, int4_weight_only(group_size=128))
    elif recipe == "float8dq":
        major, minor = torch.cuda.get_device_capability()
        if (major, minor) < (8, 9):
            raise SystemExit("float8 needs compute capability >= 8.9")
        quantize_(model, float8_dynamic_activation_float8_weight())
    elif recipe == "float8train":
        convert_to_float8_training(model, config=Float8LinearConfig(enable_fsdp_float8_all_gather=False))
    else:
        raise ValueError(recipe)
    return model


@torch.no_grad()
def run(recipe, batch, seq, compile_mode, n_iter):
    torch.manual_seed(0)
    model = Block().to(device="cuda", dtype=torch.bfloat16).eval()
    x = torch.randn(batch, seq, 4096, device="cuda", dtype=torch.bfloat16)
    ref = model(x)
    model = apply_recipe(model, recipe)
    unwrap_tensor_subclass(model)
    if compile_mode:
        model = torch.compile(model, mode=compile_mode, fullgraph=True)
    out = model(x)
    sqnr = 20 * torch.log10(ref.norm() / (ref - out).norm()).item()
    ms = benchmark_model(model, n_iter, (x,), device_type="cuda")
    torch.cuda.reset_peak_memory_stats()
    model(x)
    mem = torch.cuda.max_memory_allocated() / 1e9
    return ms, sqnr, mem


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--recipe", nargs="+", default=["none", "int8wo", "int8dq", "int4wo"])
    p.add_argument("--batch", type=int, nargs="+", default=[1, 8])
    p.add_argument("--seq", type=int, nargs="+", default=[1, 512])
    p.add_argument("--compile", action="store_true")
    p.add_argument("--mode", default="max-autotune", help="torch.compile mode (max-autotune uses CUDA graphs + triton autotuning)")
    p.add_argument("--iters", type=int, default=50)
    args = p.parse_args()

    print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}")
    print(f"{'recipe':<12}{'batch':>6}{'seq':>6}{'ms':>10}{'sqnr':>8}{'GB':>8}")
    for recipe, b, s in itertools.product(args.recipe, args.batch, args.seq):
        ms, sqnr, mem = run(recipe, b, s, args.mode if args.compile else None, args.iters)
        print(f"{recipe:<12}{b:>6}{s:>6}{ms:>10.3f}{sqnr:>8.1f}{mem:>8.2f}")
        torch._dynamo.reset()


if __name__ == "__main__":
    main()
