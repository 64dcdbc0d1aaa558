#!/usr/bin/env python
# coding=utf-8
"""
Tensor-parallel generation with the `tp_plan` support of `from_pretrained`.

    torchrun --nproc-per-node 4 run_tp_generate.py --model meta-llama/Meta-Llama-3-8B-Instruct

Each rank holds 1/N of every attention and MLP projection (the model's `base_model_tp_plan`); the embedding and the
LM head are replicated. The script measures prefill latency, decode throughput and peak memory per rank.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
from transformers import AutoModelForCausalLM, AutoTokenizer

PROMPT = (
    "Write a short story about a lighthouse keeper who discovers that the light has been sending messages "
    "to ships that no longer exist."
)


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", type=str, default="meta-llama/Meta-Llama-3-8B-Instruct")
    parser.add_argument("--dtype", type=str, default="bfloat16", choices=["bfloat16", "float16", "float32"])
    parser.add_argument("--attn-impl", type=str, default="flash_attention_2",
                        help="attention backend passed to from_pretrained (flash_attention_2, sdpa, eager)")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--iters", type=int, default=5)
    parser.add_argument("--compile", action="store_true", help="torch.compile the forward with static cache")
    return parser.parse_args()


def rank0_print(*args):
    if int(os.environ.get("RANK", 0)) == 0:
        print(*args, flush=True)


def main():
    args = parse_args()
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = int(os.environ["WORLD_SIZE"])

    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", rank=rank, world_size=world_size)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.manual_seed(1234)

    dtype = getattr(torch, args.dtype)
    model = AutoModelForCausalLM.from_pretrained(
        args.model,
        tp_plan="auto",
        torch_dtype=dtype,
        attn_implementation=args.attn_impl,
    )
    model.eval()
    rank0_print(f"Loaded {args.model} with tp_size={world_size}, plan={model.config.base_model_tp_plan}")

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"

    prompts = [PROMPT] * args.batch_size
    inputs = tokenizer(prompts, return_tensors="pt", padding=True).to(model.device)
    gen_kwargs = dict(max_new_tokens=args.max_new_tokens, do_sample=False, pad_token_id=tokenizer.pad_token_id)

    if args.compile:
        model.generation_config.cache_implementation = "static"
        model.forward = torch.compile(model.forward, mode="reduce-overhead", fullgraph=True)

    # Prefill latency: a single forward over the prompt.
    with torch.inference_mode():
        for _ in range(args.warmup):
            model(**inputs)
        torch.cuda.synchronize()
        prefill_start = torch.cuda.Event(enable_timing=True)
        prefill_end = torch.cuda.Event(enable_timing=True)
        prefill_start.record()
        for _ in range(args.iters):
            model(**inputs)
        prefill_end.record()
        torch.cuda.synchronize()  # wait for the prefill events
    prefill_ms = prefill_start.elapsed_time(prefill_end) / args.iters
    rank0_print(f"prefill: {prefill_ms:.1f} ms for {inputs['input_ids'].numel()} tokens")

    # Decode throughput.
    torch.cuda.reset_peak_memory_stats()
    with torch.inference_mode():
        for _ in range(args.warmup):
            model.generate(**inputs, **gen_kwargs)
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(args.iters):
            outputs = model.generate(**inputs, **gen_kwargs)
        torch.cuda.synchronize()  # all decode kernels done
        elapsed = time.perf_counter() - t0

    new_tokens = (outputs.shape[1] - inputs["input_ids"].shape[1]) * outputs.shape[0] * args.iters
    peak_gib = torch.cuda.max_memory_allocated() / 2**30
    stats = torch.tensor([elapsed, peak_gib], device="cuda")
    dist.all_reduce(stats, op=dist.ReduceOp.MAX)
    rank0_print(f"decode: {new_tokens / stats[0].item():.1f} tokens/s, max peak memory per rank {stats[1].item():.2f} GiB")
    rank0_print(tokenizer.decode(outputs[0][inputs["input_ids"].shape[1]:], skip_special_tokens=True))

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
