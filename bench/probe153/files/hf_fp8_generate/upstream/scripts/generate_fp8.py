#!/usr/bin/env python
"""Benchmark generation of a HF causal LM with torchao float8 / int8 weight quantization.

Example (H100):
    python scripts/generate_fp8.py --model meta-llama/Llama-3.1-8B-Instruct --quant fp8-row --compile
"""
import argparse
import json
import os
import time
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from torchao.quantization import (
    PerRow,
    PerTensor,
    float8_dynamic_activation_float8_weight,
    int8_weight_only,
    quantize_,
)

DEFAULT_PROMPT = "Write a short story about a robot learning to paint."


def get_device(requested: str = "auto") -> str:
    if requested != "auto":
        return requested
    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def check_quant_support(quant: str, device: str) -> None:
    if quant.startswith("fp8"):
        if device != "cuda":
            raise ValueError(f"--quant {quant} needs an NVIDIA GPU, got device={device}")
        if torch.cuda.get_device_capability() < (8, 9):
            name = torch.cuda.get_device_name()
            raise ValueError(f"{name} has no FP8 tensor cores (need sm_89+); use --quant int8wo")


def apply_quant(model, quant: str):
    if quant == "none":
        return model
    if quant == "fp8-row":
        quantize_(model, float8_dynamic_activation_float8_weight(granularity=PerRow()))
    elif quant == "fp8-tensor":
        quantize_(model, float8_dynamic_activation_float8_weight(granularity=PerTensor()))
    elif quant == "int8wo":
        quantize_(model, int8_weight_only())
    else:
        raise ValueError(f"unknown quant mode {quant}")
    return model


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="meta-llama/Llama-3.1-8B-Instruct")
    p.add_argument("--quant", choices=["none", "fp8-row", "fp8-tensor", "int8wo"], default="fp8-row")
    p.add_argument("--device", default="auto")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--max-new-tokens", type=int, default=256)
    p.add_argument("--batch-size", type=int, default=1)
    p.add_argument("--num-runs", type=int, default=5)
    p.add_argument("--prompt", default=DEFAULT_PROMPT)
    p.add_argument("--output", type=Path, default=None, help="write a JSON summary here")
    return p.parse_args()


@torch.inference_mode()
def benchmark(model, tokenizer, prompt, batch_size, max_new_tokens, num_runs, device):
    inputs = tokenizer([prompt] * batch_size, return_tensors="pt", padding=True).to(device)
    # warmup: two runs so that static-cache graphs are captured
    for _ in range(2):
        model.generate(**inputs, max_new_tokens=16, do_sample=False)
    torch.cuda.synchronize()

    latencies = []
    for _ in range(num_runs):
        t0 = time.perf_counter()
        out = model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False)
        torch.cuda.synchronize()  # generate() returns before the last kernels finish
        latencies.append(time.perf_counter() - t0)
    new_tokens = out.shape[1] - inputs["input_ids"].shape[1]
    text = tokenizer.decode(out[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True)
    mean = sum(latencies) / len(latencies)
    return {
        "mean_latency_s": mean,
        "tokens_per_s": batch_size * new_tokens / mean,
        "new_tokens": int(new_tokens),
        "sample": text[:200],
    }


def main():
    args = parse_args()
    device = get_device(args.device)
    check_quant_support(args.quant, device)

    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cuda.enable_flash_sdp(True)
    torch._inductor.config.force_fuse_int_mm_with_mul = True
    torch._inductor.config.use_mixed_mm = True

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"

    model = AutoModelForCausalLM.from_pretrained(
        args.model,
        torch_dtype=torch.bfloat16,
        device_map="cuda",
        attn_implementation="flash_attention_2",
    )
    model.eval()
    model = apply_quant(model, args.quant)

    if args.compile:
        model.generation_config.cache_implementation = "static"
        model.forward = torch.compile(model.forward, mode="max-autotune", fullgraph=True)

    torch.cuda.reset_peak_memory_stats()
    stats = benchmark(model, tokenizer, args.prompt, args.batch_size, args.max_new_tokens, args.num_runs, device)
    stats["peak_memory_gib"] = torch.cuda.max_memory_allocated() / 2**30
    stats["gpu"] = torch.cuda.get_device_name()
    stats["quant"] = args.quant
    stats["compile"] = args.compile
    print(json.dumps(stats, indent=2))

    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(stats, indent=2))
        print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
