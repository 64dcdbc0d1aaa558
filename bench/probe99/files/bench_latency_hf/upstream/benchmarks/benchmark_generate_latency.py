"""Measure prefill / decode latency and peak memory of HF `generate()`.

Reported alongside accuracy numbers so that leaderboard entries carry a cost
column.  Example:

    CUDA_VISIBLE_DEVICES=0 python benchmarks/benchmark_generate_latency.py \
        --model meta-llama/Llama-2-7b-chat-hf --batch-sizes 1 8 32 --input-len 1024 --output-len 128
"""
import argparse
import json
import statistics
import time
from contextlib import nullcontext

import pynvml
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True)
    p.add_argument("--dtype", default="bfloat16", choices=["float16", "bfloat16"])
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 8])
    p.add_argument("--input-len", type=int, default=512)
    p.add_argument("--output-len", type=int, default=128)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--iters", type=int, default=5)
    p.add_argument("--compile", action="store_true", help="torch.compile the forward (CUDA graphs)")
    p.add_argument("--flash-sdp-only", action="store_true", help="force the flash SDPA kernel")
    p.add_argument("--nvtx", action="store_true", help="emit NVTX ranges for nsys")
    p.add_argument("--out", default=None)
    return p.parse_args()


def gpu_info(index: int = 0) -> dict:
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    info = {
        "name": pynvml.nvmlDeviceGetName(handle),
        "driver": pynvml.nvmlSystemGetDriverVersion(),
    }
    pynvml.nvmlShutdown()
    return info


def timed(fn, nvtx_name=None, use_nvtx=False):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    if use_nvtx:
        torch.cuda.nvtx.range_push(nvtx_name)
    start.record()
    out = fn()
    end.record()
    torch.cuda.synchronize()
    if use_nvtx:
        torch.cuda.nvtx.range_pop()
    return out, start.elapsed_time(end)  # ms


def main():
    args = parse_args()
    torch.manual_seed(0)
    device = "cuda"
    dtype = getattr(torch, args.dtype)

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=dtype, attn_implementation="sdpa").to(device).eval()
    if args.compile:
        model.forward = torch.compile(model.forward, mode="reduce-overhead", fullgraph=True)

    sdp_ctx = (
        torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False)
        if args.flash_sdp_only
        else nullcontext()
    )

    hw = gpu_info(torch.cuda.current_device())
    print(f"[bench] {args.model} on {hw['name']} (driver {hw['driver']})")

    rows = []
    for bs in args.batch_sizes:
        input_ids = torch.randint(100, tokenizer.vocab_size - 1, (bs, args.input_len), device=device)
        attn = torch.ones_like(input_ids)

        def prefill():
            with torch.no_grad():
                return model(input_ids=input_ids, attention_mask=attn, use_cache=True)

        def full():
            with torch.no_grad():
                return model.generate(
                    input_ids=input_ids,
                    attention_mask=attn,
                    max_new_tokens=args.output_len,
                    min_new_tokens=args.output_len,
                    do_sample=False,
                    pad_token_id=tokenizer.eos_token_id,
                )

        with sdp_ctx:
            for _ in range(args.warmup):
                full()
            torch.cuda.reset_peak_memory_stats()
            prefill_ms, total_ms = [], []
            for i in range(args.iters):
                _, p_ms = timed(prefill, f"prefill_bs{bs}_{i}", args.nvtx)
                _, t_ms = timed(full, f"generate_bs{bs}_{i}", args.nvtx)
                prefill_ms.append(p_ms)
                total_ms.append(t_ms)
        peak_gib = torch.cuda.max_memory_allocated() / 2**30

        p = statistics.median(prefill_ms)
        t = statistics.median(total_ms)
        decode_ms_per_tok = (t - p) / args.output_len
        row = {
            "batch_size": bs,
            "input_len": args.input_len,
            "output_len": args.output_len,
            "prefill_ms": round(p, 2),
            "decode_ms_per_token": round(decode_ms_per_tok, 3),
            "tokens_per_s": round(bs * args.output_len / ((t - p) / 1000), 1),
            "peak_mem_gib": round(peak_gib, 2),
            "device": hw["name"],
        }
        rows.append(row)
        print(json.dumps(row))
        del input_ids, attn
        torch.cuda.empty_cache()

    if args.out:
        with open(args.out, "w") as f:
            json.dump({"model": args.model, "hardware": hw, "results": rows, "timestamp": time.time()}, f, indent=2)


if __name__ == "__main__":
    main()
