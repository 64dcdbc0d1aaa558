"""Prefill / decode throughput and peak-memory benchmark for causal LMs loaded through transformers.

    python benchmarks/bench_llm_throughput.py --model meta-llama/Llama-3.1-8B --batch-sizes 1 8 32 \
        --prompt-len 512 --gen-len 256 --dtype bf16 --out results/llama8b.jsonl
"""
import argparse
import json
import os
import platform
import subprocess
import time

import torch
from transformers import AutoConfig, AutoModelForCausalLM

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 4, 16])
    ap.add_argument("--prompt-len", type=int, default=512)
    ap.add_argument("--gen-len", type=int, default=128)
    ap.add_argument("--dtype", choices=list(DTYPES), default="bf16")
    ap.add_argument("--attn", default="flash_attention_2", choices=["eager", "sdpa", "flash_attention_2"])
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--static-cache", action="store_true")
    ap.add_argument("--out", default=None)
    return ap.parse_args()


def gpu_info():
    try:
        smi = subprocess.check_output(
            ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.sm", "--format=csv,noheader"],
            text=True,
        ).strip().splitlines()[0]
    except (FileNotFoundError, subprocess.CalledProcessError):
        smi = "n/a"
    return {
        "device_name": torch.cuda.get_device_name(0),
        "capability": ".".join(map(str, torch.cuda.get_device_capability(0))),
        "cuda": torch.version.cuda,
        "torch": torch.__version__,
        "nvidia_smi": smi,
        "host": platform.node(),
    }


def timed(fn, warmup, iters):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()  # drain warm-up work
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(iters):
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


@torch.inference_mode()
def bench_one(model, vocab, bs, args):
    input_ids = torch.randint(100, vocab - 100, (bs, args.prompt_len), device="cuda")
    attn = torch.ones_like(input_ids)

    def prefill():
        model(input_ids=input_ids, attention_mask=attn, use_cache=True)

    gen_kwargs = dict(max_new_tokens=args.gen_len, min_new_tokens=args.gen_len, do_sample=False,
                      pad_token_id=0)
    if args.static_cache:
        gen_kwargs["cache_implementation"] = "static"

    def full():
        model.generate(input_ids=input_ids, attention_mask=attn, **gen_kwargs)

    torch.cuda.empty_cache()  # start every batch size from a clean pool
    torch.cuda.reset_peak_memory_stats()
    prefill_ms = timed(prefill, args.warmup, args.iters)
    total_ms = timed(full, 1, max(1, args.iters // 2))
    peak_gb = torch.cuda.max_memory_allocated() / 1024 ** 3
    decode_ms = max(total_ms - prefill_ms, 1e-6)
    return {
        "batch_size": bs,
        "prefill_ms": round(prefill_ms, 2),
        "prefill_tok_s": round(bs * args.prompt_len / (prefill_ms / 1000), 1),
        "decode_ms_per_token": round(decode_ms / args.gen_len, 3),
        "decode_tok_s": round(bs * args.gen_len / (decode_ms / 1000), 1),
        "peak_mem_gb": round(peak_gb, 2),
        "reserved_gb": round(torch.cuda.max_memory_reserved() / 1024 ** 3, 2),
    }


def main():
    args = parse_args()
    torch.manual_seed(0)
    torch.cuda.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = True

    cfg = AutoConfig.from_pretrained(args.model)
    t0 = time.time()
    model = AutoModelForCausalLM.from_pretrained(
        args.model, torch_dtype=DTYPES[args.dtype], attn_implementation=args.attn,
    ).cuda().eval()
    load_s = time.time() - t0
    weights_gb = torch.cuda.memory_allocated() / 1024 ** 3
    info = gpu_info()
    print(f"[{info['device_name']}] loaded {args.model} in {load_s:.1f}s, weights {weights_gb:.2f} GiB")

    rows = []
    for bs in args.batch_sizes:
        try:
            row = bench_one(model, cfg.vocab_size, bs, args)
        except torch.cuda.OutOfMemoryError:
            print(f"bs={bs}: OOM")
            torch.cuda.empty_cache()
            break
        row.update({"model": args.model, "dtype": args.dtype, "attn": args.attn,
                    "prompt_len": args.prompt_len, "gen_len": args.gen_len, **info})
        rows.append(row)
        print(f"bs={bs:>3}  prefill {row['prefill_tok_s']:>10.1f} tok/s  decode {row['decode_tok_s']:>9.1f} tok/s"
              f"  peak {row['peak_mem_gb']:.2f} GiB")

    if args.out:
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        with open(args.out, "a") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
