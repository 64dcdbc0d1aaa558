"""
Benchmark autoregressive MIDI-token generation (tokens/s, latency per token, peak memory).

    python tools/benchmark_generation.py --model runs/remi_bpe_lakh/checkpoint-100000 \
        --batch-sizes 1 4 16 --new-tokens 512 --dtype bf16 --profile

Results are appended to benchmarks/generation.csv so runs on different GPUs can be compared.
"""
import argparse
import csv
import os
import platform
import time
from contextlib import nullcontext

import torch
from transformers import AutoModelForCausalLM

try:
    import pynvml
    pynvml.nvmlInit()
    _NVML = True
except Exception:  # no driver / no nvml in the container
    _NVML = False


def gpu_utilization(index=0):
    if not _NVML:
        return float("nan")
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    return float(pynvml.nvmlDeviceGetUtilizationRates(handle).gpu)


def pick_dtype(name):
    if name == "bf16":
        major, minor = torch.cuda.get_device_capability()
        if major < 8:
            print(f"sm_{major}{minor} has no bf16 tensor cores, falling back to fp16")
            return torch.float16
        return torch.bfloat16
    return {"fp16": torch.float16, "fp32": torch.float32}[name]


@torch.inference_mode()
def run_once(model, batch_size, prompt_len, new_tokens, vocab_size, device):
    prompt = torch.randint(4, vocab_size, (batch_size, prompt_len), device=device)
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)

    torch.cuda.synchronize()
    start.record()
    out = model.generate(prompt, max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                         do_sample=True, top_k=20, pad_token_id=0)
    end.record()
    torch.cuda.synchronize(device)

    ms = start.elapsed_time(end)
    n_generated = (out.shape[1] - prompt_len) * batch_size
    return ms, n_generated


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 4, 16])
    p.add_argument("--prompt-len", type=int, default=256)
    p.add_argument("--new-tokens", type=int, default=512)
    p.add_argument("--dtype", choices=["fp32", "fp16", "bf16"], default="fp16")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--profile", action="store_true", help="write a chrome trace for the first batch size")
    p.add_argument("--out", default="benchmarks/generation.csv")
    args = p.parse_args()

    device = torch.device("cuda")
    dtype = pick_dtype(args.dtype)
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=dtype, attn_implementation="sdpa")
    model.to(device).eval()
    vocab_size = model.config.vocab_size

    # make sure SDPA picks the flash kernel rather than the math fallback
    sdp_ctx = torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True)

    gpu_name = torch.cuda.get_device_name(device)
    rows = []
    for bs in args.batch_sizes:
        # warm-up (kernel selection, allocator growth)
        with sdp_ctx:
            run_once(model, bs, args.prompt_len, 16, vocab_size, device)
        torch.cuda.reset_peak_memory_stats(device)

        times = []
        for r in range(args.repeats):
            torch.cuda.nvtx.range_push(f"generate_bs{bs}_r{r}")
            with sdp_ctx:
                ms, n = run_once(model, bs, args.prompt_len, args.new_tokens, vocab_size, device)
            torch.cuda.nvtx.range_pop()
            times.append(ms)

        ms = sorted(times)[len(times) // 2]
        peak = torch.cuda.max_memory_allocated(device) / 2**20
        row = dict(
            gpu=gpu_name, host=platform.node(), model=os.path.basename(args.model.rstrip("/")),
            dtype=args.dtype, batch_size=bs, prompt_len=args.prompt_len, new_tokens=args.new_tokens,
            ms=round(ms, 1), tok_per_s=round(n / (ms / 1000), 1),
            ms_per_token=round(ms / args.new_tokens, 2), peak_mib=round(peak), util=gpu_utilization(),
        )
        rows.append(row)
        print(row)

    if args.profile:
        from torch.profiler import profile, ProfilerActivity, schedule, tensorboard_trace_handler
        trace_dir = os.path.join(os.path.dirname(args.out) or ".", "traces")
        with profile(
            activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
            schedule=schedule(wait=0, warmup=1, active=2),
            on_trace_ready=tensorboard_trace_handler(trace_dir),
            record_shapes=True,
            with_stack=False,
        ) as prof:
            for _ in range(3):
                with sdp_ctx:
                    run_once(model, args.batch_sizes[0], args.prompt_len, 64, vocab_size, device)
                prof.step()
        print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=15))

    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    new_file = not os.path.exists(args.out)
    with open(args.out, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        if new_file:
            w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
