#!/usr/bin/env python
"""Merge one or more LoRA adapters into their base model and save a standalone checkpoint.

Examples:
    python scripts/merge_lora.py --base meta-llama/Meta-Llama-3-8B --adapter out/checkpoint-1000 --out merged/
    python scripts/merge_lora.py --base Qwen/Qwen2-7B --adapter a1 a2 --weights 0.7 0.3 --out merged/ --device cpu

Merging on the GPU is ~10x faster than on the CPU; use --device cpu when the model does not fit.
"""
import argparse
import gc
import json
import os
import shutil
import time

import torch
from peft import PeftModel
from transformers import AutoModelForCausalLM, AutoTokenizer


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="base model name or path")
    parser.add_argument("--adapter", nargs="+", required=True, help="one or more LoRA adapter dirs")
    parser.add_argument("--weights", nargs="*", type=float, default=None, help="weights for combining adapters")
    parser.add_argument("--combination", default="linear", choices=["linear", "cat", "ties", "dare_linear"])
    parser.add_argument("--out", required=True)
    parser.add_argument("--dtype", default="bfloat16", choices=["float16", "bfloat16", "float32"])
    parser.add_argument("--device", default="cuda", help="cuda, cuda:1, cpu ...")
    parser.add_argument("--max_shard_size", default="5GB")
    parser.add_argument("--push_to_hub", default=None)
    parser.add_argument("--verify", action="store_true", help="compare logits of merged vs unmerged model")
    return parser.parse_args()


def gpu_mem() -> str:
    if not torch.cuda.is_available():
        return "n/a"
    return f"{torch.cuda.memory_allocated() / 2**30:.1f} GiB"


@torch.no_grad()
def verify(unmerged, merged, tokenizer, device):
    text = "The quick brown fox jumps over the lazy dog. " * 8
    batch = tokenizer(text, return_tensors="pt").to(device)
    a = unmerged(**batch).logits.float()
    b = merged(**batch).logits.float()
    diff = (a - b).abs().max().item()
    print(f"max |logit diff| merged vs unmerged: {diff:.4e}")
    return diff


def main():
    args = parse_args()
    dtype = getattr(torch, args.dtype)
    device = torch.device(args.device)
    t0 = time.time()

    print(f"loading base {args.base} ({args.dtype}) on {device}")
    base = AutoModelForCausalLM.from_pretrained(args.base, torch_dtype=dtype, low_cpu_mem_usage=True)
    base.to(device)
    tokenizer = AutoTokenizer.from_pretrained(args.adapter[0] if os.path.exists(
        os.path.join(args.adapter[0], "tokenizer_config.json")) else args.base)

    model = PeftModel.from_pretrained(base, args.adapter[0], adapter_name="a0")
    for i, path in enumerate(args.adapter[1:], start=1):
        model.load_adapter(path, adapter_name=f"a{i}")
    if len(args.adapter) > 1:
        weights = args.weights or [1.0 / len(args.adapter)] * len(args.adapter)
        names = [f"a{i}" for i in range(len(args.adapter))]
        model.add_weighted_adapter(names, weights, "merged", combination_type=args.combination, density=0.5)
        model.set_adapter("merged")
    print(f"adapters loaded, memory {gpu_mem()}")

    reference = None
    if args.verify:
        batch_device = device
        reference = verify(model, model, tokenizer, batch_device)

    merged = model.merge_and_unload(progressbar=True, safe_merge=True)
    if args.verify:
        verify(model, merged, tokenizer, device)
    del model
    gc.collect()
    torch.cuda.empty_cache()

    merged = merged.to("cpu")
    os.makedirs(args.out, exist_ok=True)
    merged.save_pretrained(args.out, max_shard_size=args.max_shard_size, safe_serialization=True)
    tokenizer.save_pretrained(args.out)
    for fname in ("README.md", "generation_config.json"):
        src = os.path.join(args.adapter[0], fname)
        if os.path.exists(src):
            shutil.copy(src, os.path.join(args.out, fname))
    with open(os.path.join(args.out, "merge_info.json"), "w") as f:
        json.dump({"base": args.base, "adapters": args.adapter, "weights": args.weights,
                   "combination": args.combination, "dtype": args.dtype}, f, indent=2)
    print(f"saved merged model to {args.out} in {time.time() - t0:.0f}s (peak {gpu_mem()})")

    if args.push_to_hub:
        merged.push_to_hub(args.push_to_hub, private=True)
        tokenizer.push_to_hub(args.push_to_hub, private=True)


if __name__ == "__main__":
    main()
