"""Tensor-parallel text generation with DeepSpeed-Inference (kernel injection + CUDA graphs).

    deepspeed --num_gpus 4 inference/ds_generate.py --model bigscience/bloom-7b1 --dtype fp16 --cuda-graph
"""
import argparse
import json
import os
import time

import deepspeed
import torch
from deepspeed.accelerator import get_accelerator
from transformers import AutoModelForCausalLM, AutoTokenizer

local_rank = int(os.getenv("LOCAL_RANK", "0"))
world_size = int(os.getenv("WORLD_SIZE", "1"))

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--dtype", choices=list(DTYPES), default="fp16")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--max-new-tokens", type=int, default=128)
    p.add_argument("--kernel-inject", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--cuda-graph", action="store_true", help="capture the decode step (batch size must stay fixed)")
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--prompts", default="", help="jsonl file with {'prompt': ...} lines")
    p.add_argument("--out", default="")
    return p.parse_args()


def print_rank0(*msg):
    if local_rank == 0:
        print(*msg, flush=True)


def load_prompts(path, batch_size):
    if not path:
        base = [
            "DeepSpeed is a machine learning framework",
            "He is working on",
            "He has a",
            "He got all",
            "Everyone is happy and I can",
            "The new movie that got Oscar this year",
            "In the far far distance from our galaxy,",
            "Peace is the only way",
        ]
    else:
        with open(path) as f:
            base = [json.loads(line)["prompt"] for line in f if line.strip()]
    while len(base) < batch_size:
        base = base + base
    return base[:batch_size]


def main():
    args = parse_args()
    dtype = DTYPES[args.dtype]

    deepspeed.init_distributed("nccl")
    torch.cuda.set_device(local_rank)

    tokenizer = AutoTokenizer.from_pretrained(args.model, padding_side="left")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token

    t0 = time.time()
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=dtype, low_cpu_mem_usage=True)
    model.eval()

    ds_engine = deepspeed.init_inference(
        model,
        tensor_parallel={"tp_size": world_size},
        dtype=dtype,
        replace_with_kernel_inject=args.kernel_inject,
        enable_cuda_graph=args.cuda_graph,
        max_out_tokens=2048,
    )
    model = ds_engine.module
    print_rank0(f"*** model ready in {time.time() - t0:.1f}s (tp={world_size}, kernel_inject={args.kernel_inject})")

    prompts = load_prompts(args.prompts, args.batch_size)
    device = torch.device(get_accelerator().device_name(local_rank))
    inputs = tokenizer(prompts, return_tensors="pt", padding=True).to(device)
    gen_kwargs = dict(max_new_tokens=args.max_new_tokens, do_sample=False, min_new_tokens=args.max_new_tokens)

    # warmup (also records the CUDA graph when enabled)
    with torch.no_grad():
        model.generate(**inputs, **gen_kwargs)
    get_accelerator().synchronize()

    latencies = []
    for _ in range(args.trials):
        torch.cuda.synchronize()
        t = time.perf_counter()
        with torch.no_grad():
            outputs = model.generate(**inputs, **gen_kwargs)
        torch.cuda.synchronize()  # generation done
        latencies.append(time.perf_counter() - t)

    new_tokens = args.max_new_tokens * args.batch_size
    lat = sorted(latencies)[len(latencies) // 2]
    print_rank0(f"median latency {lat:.3f}s  throughput {new_tokens / lat:.1f} tok/s  "
                f"per-token {1e3 * lat / args.max_new_tokens:.2f} ms")
    print_rank0(f"peak memory {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB on rank 0")

    if args.out and local_rank == 0:
        texts = tokenizer.batch_decode(outputs, skip_special_tokens=True)
        with open(args.out, "w") as f:
            for p_, t_ in zip(prompts, texts):
                f.write(json.dumps({"prompt": p_, "output": t_}) + "\n")


if __name__ == "__main__":
    main()
