"""Compare the SDPA backends (math / flash / memory-efficient) on the shapes our models use.

    python benchmarks/benchmark_sdpa_backends.py --dtype bf16 --seqlen 4096
    python benchmarks/benchmark_sdpa_backends.py --nested --profile

Adapted from the PyTorch SDPA tutorial; the numbers feed docs/attention_backends.md.
"""
import argparse
import math
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.benchmark as benchmark
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile, record_function

device = "cuda" if torch.cuda.is_available() else "cpu"

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}


def benchmark_torch_function_in_microseconds(f, *args, **kwargs):
    t0 = benchmark.Timer(
        stmt="f(*args, **kwargs)", globals={"args": args, "kwargs": kwargs, "f": f}
    )
    return t0.blocked_autorange().mean * 1e6


class CausalSelfAttention(nn.Module):
    def __init__(self, num_heads: int, embed_dimension: int, bias: bool = False, is_causal: bool = False, dropout: float = 0.0):
        super().__init__()
        assert embed_dimension % num_heads == 0
        # key, query, value projections for all heads, but in a batch
        self.c_attn = nn.Linear(embed_dimension, 3 * embed_dimension, bias=bias)
        # output projection
        self.c_proj = nn.Linear(embed_dimension, embed_dimension, bias=bias)
        # regularization
        self.dropout = dropout
        self.resid_dropout = nn.Dropout(dropout)
        self.num_heads = num_heads
        self.embed_dimension = embed_dimension
        # Perform causal masking
        self.is_causal = is_causal

    def forward(self, x):
        # calculate query, key, values for all heads in batch and move head forward to be the batch dim
        query_projected = self.c_attn(x)

        batch_size = query_projected.size(0)
        embed_dim = query_projected.size(2)
        head_dim = embed_dim // (self.num_heads * 3)

        query, key, value = query_projected.chunk(3, -1)
        query = query.view(batch_size, -1, self.num_heads, head_dim).transpose(1, 2)
        key = key.view(batch_size, -1, self.num_heads, head_dim).transpose(1, 2)
        value = value.view(batch_size, -1, self.num_heads, head_dim).transpose(1, 2)

        if self.training:
            dropout = self.dropout
            is_causal = self.is_causal
        else:
            dropout = 0.0
            is_causal = False

        y = F.scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=dropout, is_causal=is_causal)
        y = y.transpose(1, 2).view(batch_size, -1, self.num_heads * head_dim)

        y = self.resid_dropout(self.c_proj(y))
        return y


def generate_rand_batch(batch_size, max_sequence_len, embed_dimension, pad_percentage=None, dtype=torch.float16, device="cpu"):
    if not pad_percentage:
        return (
            torch.randn(batch_size, max_sequence_len, embed_dimension, dtype=dtype, device=device),
            None,
        )
    # Random sequence lengths
    seq_len_list = [int(max_sequence_len * (1 - random.gauss(pad_percentage, 0.01))) for _ in range(batch_size)]
    # Make random entry in the batch have max sequence length
    seq_len_list[random.randint(0, batch_size - 1)] = max_sequence_len
    return (
        torch.nested.nested_tensor(
            [torch.randn(seq_len, embed_dimension, dtype=dtype, device=device) for seq_len in seq_len_list]
        ),
        seq_len_list,
    )


def bench_kernels(args, dtype):
    query = torch.rand(args.batch, args.heads, args.seqlen, args.headdim, device=device, dtype=dtype)
    key = torch.rand(args.batch, args.heads, args.seqlen, args.headdim, device=device, dtype=dtype)
    value = torch.rand(args.batch, args.heads, args.seqlen, args.headdim, device=device, dtype=dtype)

    print(
        f"The default implementation runs in "
        f"{benchmark_torch_function_in_microseconds(F.scaled_dot_product_attention, query, key, value):.3f} microseconds"
    )

    with sdpa_kernel(SDPBackend.MATH):
        math_time = benchmark_torch_function_in_microseconds(F.scaled_dot_product_attention, query, key, value)
        print(f"The math implementation runs in {math_time:.3f} microseconds")

    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        try:
            flash_time = benchmark_torch_function_in_microseconds(F.scaled_dot_product_attention, query, key, value)
            print(f"The flash attention implementation runs in {flash_time:.3f} microseconds")
        except RuntimeError:
            print("FlashAttention is not supported. See warnings for reasons.")

    with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
        try:
            efficient_time = benchmark_torch_function_in_microseconds(F.scaled_dot_product_attention, query, key, value)
            print(f"The memory efficient implementation runs in {efficient_time:.3f} microseconds")
        except RuntimeError:
            print("EfficientAttention is not supported. See warnings for reasons.")

    # tflops of the causal kernel for docs/attention_backends.md
    flops = 4 * args.batch * args.heads * args.seqlen**2 * args.headdim
    print(f"math: {flops / (math_time * 1e-6) / 1e12:.1f} TFLOP/s")


def bench_module(args, dtype):
    model = CausalSelfAttention(
        num_heads=args.heads, embed_dimension=args.heads * args.headdim, bias=False, is_causal=True, dropout=0.1
    ).to(dtype).to(device).eval()

    x = torch.rand(args.batch, args.seqlen, args.heads * args.headdim, device=device, dtype=dtype)
    eager_us = benchmark_torch_function_in_microseconds(model, x)
    print(f"The non compiled module runs in  {eager_us:.3f} microseconds")

    compiled_model = torch.compile(model)
    # Let's compile it
    compiled_model(x)
    compiled_us = benchmark_torch_function_in_microseconds(compiled_model, x)
    print(f"The compiled module runs in  {compiled_us:.3f} microseconds")

    if args.profile:
        activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
        with profile(activities=activities, record_shapes=False) as prof:
            with record_function(" Non-Compilied Causal Attention"):
                for _ in range(25):
                    model(x)
        print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=10))
        prof.export_chrome_trace("non_compiled_causal_attention_trace.json")


def bench_nested(args, dtype):
    model = CausalSelfAttention(
        num_heads=args.heads, embed_dimension=args.heads * args.headdim, bias=False, is_causal=False
    ).to(dtype).to(device).eval()
    random.seed(0)
    x, _ = generate_rand_batch(32, 512, args.heads * args.headdim, pad_percentage=0.5, dtype=dtype, device=device)

    # Currently the fused implementations don't support ``NestedTensor`` for training
    with sdpa_kernel(backends=[SDPBackend.FLASH_ATTENTION]):
        try:
            print(f"Random NT runs in {benchmark_torch_function_in_microseconds(model, x):.3f} microseconds")
            padded = torch.nested.to_padded_tensor(x, 0.0)
            print(f"Random Dense runs in {benchmark_torch_function_in_microseconds(model, padded):.3f} microseconds")
        except RuntimeError:
            print("FlashAttention is not supported. See warnings for reasons.")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--seqlen", type=int, default=1024)
    p.add_argument("--headdim", type=int, default=64)
    p.add_argument("--dtype", choices=DTYPES, default="fp16")
    p.add_argument("--nested", action="store_true")
    p.add_argument("--profile", action="store_true")
    args = p.parse_args()
    dtype = DTYPES[args.dtype]

    if device == "cuda":
        print(f"device: {torch.cuda.get_device_name()}  capability: {torch.cuda.get_device_capability()}")
        print(
            f"flash_sdp_enabled={torch.backends.cuda.flash_sdp_enabled()} "
            f"mem_efficient_sdp_enabled={torch.backends.cuda.mem_efficient_sdp_enabled()}"
        )
    else:
        print("CUDA not available, benchmarking on CPU (numbers are not representative)")

    bench_kernels(args, dtype)
    bench_module(args, dtype)
    if args.nested:
        bench_nested(args, dtype)
    print(f"sm_scale used by default: {1 / math.sqrt(args.headdim):.4f}")


if __name__ == "__main__":
    main()
