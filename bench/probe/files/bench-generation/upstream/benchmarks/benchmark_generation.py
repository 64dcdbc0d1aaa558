#!/usr/bin/env python
"""Latency / throughput / memory benchmark for greedy decoding with a KV cache.

Example:
    CUDA_VISIBLE_DEVICES=0 python benchmarks/benchmark_generation.py --model gpt2-medium --batch 8
"""
import argparse
import json
import math
import os
import statistics
import time
from contextlib import contextmanager

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")
os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")

import torch
import torch.nn as nn
from transformers import AutoModelForCausalLM, AutoTokenizer


def alibi_bias(num_heads: int, seq_len: int, device, dtype=torch.float32) -> torch.Tensor:
    closest = 2 ** math.floor(math.log2(num_heads))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest) - 3))), dtype=torch.float64)
    powers = torch.arange(1, 1 + closest, dtype=torch.float64)
    slopes = torch.pow(base, powers)
    if closest != num_heads:
        extra = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest) - 3))), dtype=torch.float64)
        slopes = torch.cat([slopes, torch.pow(extra, torch.arange(1, 1 + 2 * (num_heads - closest), 2, dtype=torch.float64))])
    positions = torch.arange(seq_len, dtype=torch.float64)
    bias = slopes[:, None] * positions[None, :]
    return bias.to(device=device, dtype=dtype)


def attention_scores(query: torch.Tensor, key: torch.Tensor, alibi: torch.Tensor, inv_norm_factor: float) -> torch.Tensor:
    # BLOOM-style fused alibi + QK^T: (b*h, q, d) x (b*h, d, k) -> (b*h, q, k)
    return alibi.baddbmm(batch1=query, batch2=key.transpose(-1, -2), beta=1.0, alpha=inv_norm_factor)


@contextmanager
def nvtx_range(msg: str, enabled: bool):
    if enabled:
        torch.cuda.nvtx.range_push(msg)
    try:
        yield
    finally:
        if enabled:
            torch.cuda.nvtx.range_pop()


class CudaTimer:
    def __init__(self):
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)

    def __enter__(self):
        self.start.record()
        return self

    def __exit__(self, *exc):
        self.end.record()
        torch.cuda.synchronize()
        self.elapsed_ms = self.start.elapsed_time(self.end)


@torch.inference_mode()
def greedy_generate(model, input_ids, max_new_tokens: int, profile: bool):
    past = None
    tokens = input_ids
    step_times = []
    for step in range(max_new_tokens):
        with nvtx_range(f"decode_step_{step}", profile), CudaTimer() as t:
            out = model(input_ids=tokens if past is None else tokens[:, -1:], past_key_values=past, use_cache=True)
            past = out.past_key_values
            next_tok = out.logits[:, -1, :].argmax(dim=-1, keepdim=True)
            tokens = torch.cat([tokens, next_tok], dim=-1)
        step_times.append(t.elapsed_ms)
    return tokens, step_times


def perplexity(model, input_ids) -> float:
    with torch.inference_mode():
        logits = model(input_ids=input_ids).logits.double()
        logprobs = torch.log_softmax(logits[:, :-1], dim=-1)
        nll = -logprobs.gather(-1, input_ids[:, 1:, None]).squeeze(-1)
        return math.exp(nll.mean().item())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="gpt2-medium")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--prompt-len", type=int, default=128)
    parser.add_argument("--new-tokens", type=int, default=128)
    parser.add_argument("--dtype", choices=["fp16", "bf16", "fp32"], default="fp16")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--out", default="bench_results.json")
    args = parser.parse_args()

    n_dev = torch.cuda.device_count()
    if n_dev == 0:
        raise SystemExit("no CUDA device visible")
    dev_name = torch.cuda.get_device_name(0)
    device = torch.device("cuda:0")

    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[args.dtype]
    if dtype == torch.bfloat16 and torch.cuda.get_device_capability(device) < (8, 0):
        print("bf16 needs compute capability >= 8.0; falling back to fp16")
        dtype = torch.float16

    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = True

    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=dtype).to(device).eval()

    input_ids = torch.randint(0, tok.vocab_size, (args.batch, args.prompt_len), device=device)

    # warmup
    greedy_generate(model, input_ids, 8, profile=False)
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats(device)

    t0 = time.perf_counter()
    tokens, step_times = greedy_generate(model, input_ids, args.new_tokens, profile=args.profile)
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0

    peak_mem_gb = torch.cuda.max_memory_allocated(device) / 2 ** 30
    free, total = torch.cuda.mem_get_info(device)

    heads = getattr(model.config, "n_head", 16)
    alibi = alibi_bias(heads, args.prompt_len, device=device, dtype=dtype)
    q = torch.randn(args.batch * heads, args.prompt_len, 64, device=device, dtype=dtype)
    scores = attention_scores(q, q, alibi.unsqueeze(1).expand(-1, args.prompt_len, -1).repeat(args.batch, 1, 1), 0.125)

    results = {
        "device": dev_name,
        "n_devices": n_dev,
        "dtype": args.dtype,
        "batch": args.batch,
        "tokens_per_s": args.batch * args.new_tokens / wall,
        "p50_step_ms": statistics.median(step_times),
        "p90_step_ms": sorted(step_times)[int(0.9 * len(step_times))],
        "peak_mem_gb": peak_mem_gb,
        "free_mem_gb": free / 2 ** 30,
        "total_mem_gb": total / 2 ** 30,
        "ppl": perplexity(model, tokens),
        "scores_finite": bool(torch.isfinite(scores).all()),
    }
    print(json.dumps(results, indent=2))
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
