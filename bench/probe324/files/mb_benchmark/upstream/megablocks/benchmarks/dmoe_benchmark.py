# Copyright 2024 Databricks
# SPDX-License-Identifier: Apache-2.0

"""Forward/backward latency of a single dMoE layer vs. a dense MLP.

    python -m megablocks.benchmarks.dmoe_benchmark --num-experts 64 --top-k 2 --bf16

Numbers in the README were collected on a single A100-SXM4-80GB with
CUDA 12.1 and torch 2.4.
"""

import argparse
import os

import numpy as np
import torch

from megablocks.layers import dmoe, mlp, testing
from megablocks.layers.arguments import Arguments

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--batch-size', type=int, default=8)
    parser.add_argument('--seq-len', type=int, default=2048)
    parser.add_argument('--hidden-size', type=int, default=2048)
    parser.add_argument('--ffn-hidden-size', type=int, default=8192)
    parser.add_argument('--num-experts', type=int, default=64)
    parser.add_argument('--top-k', type=int, default=2)
    parser.add_argument('--mlp-impl', type=str, default='sparse', choices=['sparse', 'grouped'])
    parser.add_argument('--memory-optimized', action='store_true')
    parser.add_argument('--bf16', action='store_true')
    parser.add_argument('--iterations', type=int, default=100)
    parser.add_argument('--warmup', type=int, default=10)
    parser.add_argument('--with-step', action='store_true', help='include the optimizer step in the timing')
    parser.add_argument('--profile', action='store_true')
    parser.add_argument('--trace-dir', type=str, default='./traces')
    return parser.parse_args()


def log_benchmark(name, arguments, time, std):
    print('=' * 60)
    print(f'{name} Benchmark')
    print('Benchmark Parameters:')
    for (key, value) in arguments.items():
        print(f'{key} = {value}')
    print('Results:')
    print('mean time = {:.3f}ms, std time = {:.3f}ms'.format(time, std))
    print('=' * 60)


def benchmark_function(fn, iterations=100, warmup=10):
    # Warmup iterations.
    for _ in range(warmup):
        fn()

    times = []
    for i in range(iterations):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)

        start.record()
        fn()
        end.record()

        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return np.mean(times), np.std(times)


def make_args(opts, dtype):
    return Arguments(
        hidden_size=opts.hidden_size,
        ffn_hidden_size=opts.ffn_hidden_size,
        moe_num_experts=opts.num_experts,
        moe_top_k=opts.top_k,
        mlp_impl=opts.mlp_impl,
        memory_optimized_mlp=opts.memory_optimized,
        init_method=lambda x: torch.nn.init.normal_(x, std=0.02),
        fp16=dtype == torch.float16,
        bf16=dtype == torch.bfloat16,
        device=torch.cuda.current_device(),
    )


def benchmark_dmoe(opts, dtype):
    args = make_args(opts, dtype)
    layer = dmoe.dMoE(args)
    x = torch.randn(opts.seq_len, opts.batch_size, opts.hidden_size, dtype=dtype).cuda().requires_grad_(True)

    def fwd_bwd():
        with torch.cuda.nvtx.range('dmoe_fwd'):
            out, _ = layer(x)
        with torch.cuda.nvtx.range('dmoe_bwd'):
            out.sum().backward()

    return benchmark_function(fwd_bwd, opts.iterations, opts.warmup)


def benchmark_dmoe_step(opts, dtype):
    """fwd + bwd + optimizer step, the way llm-foundry drives the layer."""
    from apex.optimizers import FusedAdam

    args = make_args(opts, dtype)
    layer = dmoe.dMoE(args)
    opt = FusedAdam(layer.parameters(), lr=1e-4, weight_decay=0.0, adam_w_mode=True)
    x = torch.randn(opts.seq_len, opts.batch_size, opts.hidden_size, dtype=dtype, device=layer.mlp.w1.device)

    def step():
        out, _ = layer(x)
        out.float().sum().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return benchmark_function(step, opts.iterations, opts.warmup)


def benchmark_dense(opts, dtype):
    dense = torch.nn.Sequential(
        torch.nn.Linear(opts.hidden_size, opts.ffn_hidden_size * opts.top_k, bias=False),
        torch.nn.GELU(approximate='tanh'),
        torch.nn.Linear(opts.ffn_hidden_size * opts.top_k, opts.hidden_size, bias=False),
    ).to(device='cuda', dtype=dtype)
    x = torch.randn(opts.seq_len * opts.batch_size, opts.hidden_size, dtype=dtype, device='cuda', requires_grad=True)

    opt = torch.optim.AdamW(dense.parameters(), lr=1e-4, fused=True) if opts.with_step else None

    def fwd_bwd():
        dense(x).sum().backward()
        if opt is not None:
            opt.step()
            opt.zero_grad(set_to_none=True)

    return benchmark_function(fwd_bwd, opts.iterations, opts.warmup)


def main():
    opts = parse_args()
    if opts.bf16 and not torch.cuda.is_bf16_supported():
        raise SystemExit('--bf16 requested but this GPU does not support bfloat16')
    dtype = torch.bfloat16 if opts.bf16 else torch.float16

    torch.manual_seed(1234)
    torch.cuda.reset_peak_memory_stats()

    arguments = {
        'batch_size': opts.batch_size,
        'seq_len': opts.seq_len,
        'hidden_size': opts.hidden_size,
        'ffn_hidden_size': opts.ffn_hidden_size,
        'num_experts': opts.num_experts,
        'top_k': opts.top_k,
        'mlp_impl': opts.mlp_impl,
        'dtype': str(dtype),
        'device': torch.cuda.get_device_name(),
    }

    if opts.profile:
        os.makedirs(opts.trace_dir, exist_ok=True)
        with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
            schedule=torch.profiler.schedule(wait=1, warmup=2, active=3),
            on_trace_ready=torch.profiler.tensorboard_trace_handler(opts.trace_dir),
        ) as prof:
            args = make_args(opts, dtype)
            layer = dmoe.dMoE(args)
            x = torch.randn(opts.seq_len, opts.batch_size, opts.hidden_size, dtype=dtype, device='cuda')
            for _ in range(6):
                out, _ = layer(x)
                out.sum().backward()
                prof.step()
        return

    if opts.with_step:
        mean_t, std_t = benchmark_dmoe_step(opts, dtype)
    else:
        mean_t, std_t = benchmark_dmoe(opts, dtype)
    log_benchmark('dMoE (%s)' % opts.mlp_impl, arguments, mean_t, std_t)

    mean_t, std_t = benchmark_dense(opts, dtype)
    log_benchmark('Dense MLP (top_k x ffn)', arguments, mean_t, std_t)

    peak = torch.cuda.max_memory_allocated() / (1024 ** 3)
    print(f'peak memory allocated: {peak:.2f} GiB')


if __name__ == '__main__':
    main()
