#!/usr/bin/env python
"""Profile prefill + decode of a Hugging Face causal LM with torch.profiler.

Writes a TensorBoard trace (open with `tensorboard --logdir <logdir>` and the PyTorch profiler plugin),
a memory timeline, flame-graph stacks and a top-k kernel table.

    python scripts/profile_generate.py --model meta-llama/Llama-2-7b-hf --batch-size 4 --new-tokens 64
"""
import argparse
import json
import os
import time

import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule, tensorboard_trace_handler
from transformers import AutoModelForCausalLM, AutoTokenizer

PROMPT = "The history of the transistor begins with"


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="meta-llama/Llama-2-7b-hf")
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--prompt-len", type=int, default=512)
    p.add_argument("--new-tokens", type=int, default=64)
    p.add_argument("--logdir", default="./profiles")
    p.add_argument("--wait", type=int, default=1)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--active", type=int, default=3)
    p.add_argument("--with-stack", action="store_true")
    p.add_argument("--compile", action="store_true")
    return p.parse_args()


def build_inputs(tokenizer, batch_size, prompt_len, device):
    ids = tokenizer(PROMPT, return_tensors="pt").input_ids[0]
    reps = (prompt_len + len(ids) - 1) // len(ids)
    ids = ids.repeat(reps)[:prompt_len]
    input_ids = ids.unsqueeze(0).expand(batch_size, -1).contiguous().to(device)
    attention_mask = torch.ones_like(input_ids)
    return {"input_ids": input_ids, "attention_mask": attention_mask}


def main():
    args = parse_args()
    os.makedirs(args.logdir, exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(
        args.model,
        torch_dtype=torch.bfloat16,
        device_map="cuda",
        attn_implementation="flash_attention_2",
    )
    model.eval()
    if args.compile:
        model.forward = torch.compile(model.forward, mode="max-autotune")
    inputs = build_inputs(tokenizer, args.batch_size, args.prompt_len, model.device)

    steps = args.wait + args.warmup + args.active
    step_times = []
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=schedule(wait=args.wait, warmup=args.warmup, active=args.active, repeat=1),
        on_trace_ready=tensorboard_trace_handler(args.logdir),
        record_shapes=True,
        profile_memory=True,
        with_stack=args.with_stack,
        with_flops=True,
        experimental_config=torch._C._profiler._ExperimentalConfig(verbose=True),
    ) as prof:
        for step in range(steps):
            t0 = time.perf_counter()
            with torch.inference_mode():
                with record_function("prefill"):
                    out = model(**inputs, use_cache=True)
                past = out.past_key_values
                next_tok = out.logits[:, -1:].argmax(-1)
                with record_function("decode"):
                    for _ in range(args.new_tokens - 1):
                        out = model(input_ids=next_tok, past_key_values=past, use_cache=True)
                        past = out.past_key_values
                        next_tok = out.logits[:, -1:].argmax(-1)
            torch.cuda.synchronize()
            step_times.append(time.perf_counter() - t0)
            prof.step()

    print(prof.key_averages(group_by_input_shape=True).table(sort_by="cuda_time_total", row_limit=20))
    if args.with_stack:
        prof.export_stacks(os.path.join(args.logdir, "stacks.txt"), "self_cuda_time_total")
    prof.export_memory_timeline(os.path.join(args.logdir, "memory.html"), device="cuda:0")

    active = step_times[args.wait + args.warmup:]
    toks = args.batch_size * args.new_tokens
    summary = {
        "model": args.model,
        "batch_size": args.batch_size,
        "prompt_len": args.prompt_len,
        "new_tokens": args.new_tokens,
        "mean_step_s": sum(active) / len(active),
        "tokens_per_s": toks / (sum(active) / len(active)),
        "peak_mem_gb": torch.cuda.max_memory_allocated() / 1e9,
    }
    print(json.dumps(summary, indent=2))
    with open(os.path.join(args.logdir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)


if __name__ == "__main__":
    main()
