"""
Throughput / latency benchmark for embedding models (sentences per second at several batch sizes
and sequence lengths), with optional torch.profiler traces.

    python benchmarks/bench_encode.py --model BAAI/bge-base-en-v1.5 --dtype fp16 \
        --batch-sizes 1,8,32,128 --seq-lens 64,256,512 --profile
"""
import argparse
import json
import os
import statistics

import torch
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
from transformers import AutoModel

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--dtype", choices=list(DTYPES), default="fp16")
    ap.add_argument("--batch-sizes", default="1,8,32,128")
    ap.add_argument("--seq-lens", default="64,256,512")
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--sdpa-backend", choices=["flash", "mem_efficient", "math", "auto"], default="auto")
    ap.add_argument("--profile", action="store_true", help="write a TensorBoard trace for the largest shape")
    ap.add_argument("--out", default="bench_results.json")
    return ap.parse_args()


def sdpa_context(backend):
    if backend == "auto":
        return torch.backends.cuda.sdp_kernel()
    return torch.backends.cuda.sdp_kernel(
        enable_flash=backend == "flash",
        enable_mem_efficient=backend == "mem_efficient",
        enable_math=backend == "math",
    )


@torch.inference_mode()
def time_shape(model, batch_size, seq_len, iters, warmup, vocab_size):
    input_ids = torch.randint(1000, vocab_size - 1, (batch_size, seq_len), device="cuda")
    attention_mask = torch.ones_like(input_ids)

    for _ in range(warmup):
        model(input_ids=input_ids, attention_mask=attention_mask)
    torch.cuda.synchronize()

    times = []
    for i in range(iters):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        torch.cuda.nvtx.range_push(f"bs{batch_size}_len{seq_len}_it{i}")
        start.record()
        model(input_ids=input_ids, attention_mask=attention_mask)
        end.record()
        torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()  # wait for the end event
        times.append(start.elapsed_time(end))
    return times


def run_profile(model, batch_size, seq_len, vocab_size, logdir):
    input_ids = torch.randint(1000, vocab_size - 1, (batch_size, seq_len)).cuda()
    attention_mask = torch.ones_like(input_ids)
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=schedule(wait=1, warmup=2, active=5, repeat=1),
        on_trace_ready=tensorboard_trace_handler(logdir),
        record_shapes=True,
        profile_memory=True,
        with_stack=False,
    ) as prof:
        for _ in range(8):
            with torch.inference_mode():
                model(input_ids=input_ids, attention_mask=attention_mask)
            prof.step()
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=25))


def main():
    args = parse_args()
    torch.backends.cudnn.benchmark = True

    dtype = DTYPES[args.dtype]
    model = AutoModel.from_pretrained(args.model, torch_dtype=dtype, attn_implementation="sdpa").cuda().eval()
    vocab_size = model.config.vocab_size

    device_name = torch.cuda.get_device_name(0)
    print(f"model={args.model} dtype={args.dtype} device={device_name}")

    results = []
    with sdpa_context(args.sdpa_backend):
        for seq_len in map(int, args.seq_lens.split(",")):
            for bs in map(int, args.batch_sizes.split(",")):
                torch.cuda.reset_peak_memory_stats()
                times = time_shape(model, bs, seq_len, args.iters, args.warmup, vocab_size)
                med = statistics.median(times)
                row = {
                    "batch_size": bs,
                    "seq_len": seq_len,
                    "median_ms": round(med, 3),
                    "p90_ms": round(sorted(times)[int(0.9 * len(times)) - 1], 3),
                    "sent_per_s": round(bs / (med / 1000), 1),
                    "peak_mem_mb": round(torch.cuda.max_memory_allocated() / 2**20, 1),
                }
                results.append(row)
                print(json.dumps(row))

        if args.profile:
            bs = max(map(int, args.batch_sizes.split(",")))
            sl = max(map(int, args.seq_lens.split(",")))
            run_profile(model, bs, sl, vocab_size, os.path.join("traces", args.model.replace("/", "_")))

    with open(args.out, "w") as f:
        json.dump({"model": args.model, "dtype": args.dtype, "device": device_name, "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
