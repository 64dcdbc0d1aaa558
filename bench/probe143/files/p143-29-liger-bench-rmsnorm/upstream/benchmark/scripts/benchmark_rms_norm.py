import argparse
import json
import os
import time

import torch
import torch.nn as nn
import triton

from liger_kernel.ops.utils import infer_device
from liger_kernel.transformers.rms_norm import LigerRMSNorm

QUANTILES = [0.5, 0.2, 0.8]

device = infer_device()


class LlamaRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        """
        LlamaRMSNorm is equivalent to T5LayerNorm
        """
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


def _test_memory(func, _iter: int = 10, quantiles=QUANTILES):
    """Peak memory (MiB) of `func`, reported at the given quantiles over `_iter` runs."""
    total_mem = []
    for _ in range(_iter):
        torch.cuda.memory.reset_peak_memory_stats()
        func()
        # Convert to MB
        mem = torch.cuda.max_memory_allocated() / 2**20
        total_mem.append(mem)

    total_mem = torch.tensor(total_mem, dtype=torch.float)
    if quantiles is not None:
        quantiles_data = torch.quantile(total_mem, torch.tensor(quantiles, dtype=torch.float)).tolist()
        if len(quantiles_data) == 1:
            quantiles_data = quantiles_data[0]
        return quantiles_data
    return torch.mean(total_mem).item()


def bench_speed_rms_norm(provider: str, H: int, mode: str, dtype=torch.bfloat16, eps=1e-6, M=2048):
    x_shape = (M, H)

    triton_rms = LigerRMSNorm(hidden_size=H, eps=eps).to(device)
    llama_rms = LlamaRMSNorm(hidden_size=H, eps=eps).to(device)

    x = torch.randn(x_shape, dtype=dtype, device=device)
    dy = torch.randn_like(x)
    x.requires_grad_(True)

    # utility functions

    def y_fwd():
        if provider == "liger":
            return triton_rms(x)

        if provider == "huggingface":
            return llama_rms(x)

    if mode == "forward":
        ms_50, ms_20, ms_80 = triton.testing.do_bench(
            y_fwd,
            grad_to_none=[x],
            rep=500,
            quantiles=QUANTILES,
        )
    elif mode == "backward":
        y = y_fwd()
        ms_50, ms_20, ms_80 = triton.testing.do_bench(
            lambda: y.backward(dy, retain_graph=True),
            grad_to_none=[x],
            rep=500,
            quantiles=QUANTILES,
        )
    elif mode == "full":

        def full():
            y = y_fwd()
            y.backward(dy, retain_graph=True)

        ms_50, ms_20, ms_80 = triton.testing.do_bench(
            full,
            grad_to_none=[x],
            rep=500,
            quantiles=QUANTILES,
        )
    else:
        raise ValueError(f"unknown mode {mode}")

    return ms_20, ms_50, ms_80


def bench_memory_rms_norm(provider: str, H: int, dtype=torch.bfloat16, eps=1e-6, M=2048):
    x_shape = (M, H)

    triton_rms = LigerRMSNorm(hidden_size=H, eps=eps).to(device)
    llama_rms = LlamaRMSNorm(hidden_size=H, eps=eps).to(device)

    x = torch.randn(x_shape, dtype=dtype, device="cuda")
    dy = torch.randn_like(x)
    x.requires_grad_(True)

    def y_fwd():
        if provider == "liger":
            return triton_rms(x)
        if provider == "huggingface":
            return llama_rms(x)

    def full():
        y = y_fwd()
        y.backward(dy, retain_graph=True)

    mem_50, mem_20, mem_80 = _test_memory(full, quantiles=QUANTILES)
    return mem_20, mem_50, mem_80


def main():
    parser = argparse.ArgumentParser(description="Benchmark Liger RMSNorm against the HuggingFace implementation")
    parser.add_argument("--overwrite", action="store_true")
    parser.add_argument("--out", type=str, default="benchmark/data/all_benchmark_data.json")
    parser.add_argument("--hidden-sizes", type=int, nargs="+", default=[2**i for i in range(10, 16)])
    args = parser.parse_args()

    gpu_name = torch.cuda.get_device_name(0)
    results = []
    for H in args.hidden_sizes:
        for provider in ["liger", "huggingface"]:
            for mode in ["forward", "backward", "full"]:
                ms_20, ms_50, ms_80 = bench_speed_rms_norm(provider, H, mode)
                results.append(
                    dict(kernel="rms_norm", metric="speed", unit="ms", gpu=gpu_name, provider=provider,
                         mode=mode, H=H, y_20=ms_20, y_50=ms_50, y_80=ms_80)
                )
            mem_20, mem_50, mem_80 = bench_memory_rms_norm(provider, H)
            results.append(
                dict(kernel="rms_norm", metric="memory", unit="MB", gpu=gpu_name, provider=provider,
                     mode="full", H=H, y_20=mem_20, y_50=mem_50, y_80=mem_80)
            )
            print(f"H={H:6d} {provider:12s} fwd+bwd {results[-2]['y_50']:.3f} ms, peak {mem_50:.1f} MiB")

    existing = []
    if os.path.exists(args.out) and not args.overwrite:
        with open(args.out) as f:
            existing = json.load(f)
    with open(args.out, "w") as f:
        json.dump(existing + [dict(r, timestamp=time.strftime("%Y-%m-%d %H:%M:%S")) for r in results], f, indent=2)


if __name__ == "__main__":
    main()
