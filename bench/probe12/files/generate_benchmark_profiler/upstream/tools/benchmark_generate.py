"""Measure prefill / decode latency, throughput and memory of a chat model with HF generate().

    python tools/benchmark_generate.py --model internlm/internlm2-chat-7b --batch 1 4 16 --prompt-len 1024
    nsys profile -t cuda,nvtx -o gen python tools/benchmark_generate.py --model ... --nvtx
"""
import argparse
import json
import os
import time

import torch
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
from transformers import AutoModelForCausalLM, AutoTokenizer

os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--batch", type=int, nargs="+", default=[1, 4, 16])
    p.add_argument("--prompt-len", type=int, default=1024)
    p.add_argument("--gen-len", type=int, default=256)
    p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16"])
    p.add_argument("--attn", default="flash_attention_2", choices=["eager", "sdpa", "flash_attention_2"])
    p.add_argument("--nvtx", action="store_true")
    p.add_argument("--profile-dir", default=None)
    p.add_argument("--out", default="bench_generate.json")
    return p.parse_args()


def gib(x):
    return x / 2 ** 30


def timed(fn, use_nvtx=False, tag=""):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    if use_nvtx:
        torch.cuda.nvtx.range_push(tag)
    start.record()
    out = fn()
    end.record()
    end.synchronize()
    if use_nvtx:
        torch.cuda.nvtx.range_pop()
    return out, start.elapsed_time(end) / 1000.0


@torch.inference_mode()
def run_one(model, tok, bs, args):
    prompt_ids = torch.randint(100, tok.vocab_size - 100, (bs, args.prompt_len), device=model.device)
    attn = torch.ones_like(prompt_ids)
    torch.cuda.reset_peak_memory_stats()

    # prefill only
    _, t_prefill = timed(lambda: model(input_ids=prompt_ids, attention_mask=attn, use_cache=True),
                         args.nvtx, f"prefill_bs{bs}")
    # full generate
    out, t_total = timed(lambda: model.generate(input_ids=prompt_ids, attention_mask=attn, do_sample=False,
                                                max_new_tokens=args.gen_len, min_new_tokens=args.gen_len,
                                                pad_token_id=tok.eos_token_id),
                         args.nvtx, f"generate_bs{bs}")
    n_new = out.shape[1] - prompt_ids.shape[1]
    t_decode = max(t_total - t_prefill, 1e-6)
    return {
        "batch": bs,
        "prefill_s": round(t_prefill, 4),
        "decode_tok_per_s": round(bs * n_new / t_decode, 1),
        "ms_per_token": round(1000 * t_decode / n_new, 2),
        "peak_alloc_gib": round(gib(torch.cuda.max_memory_allocated()), 2),
    }


def main():
    args = parse_args()
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    tok = AutoTokenizer.from_pretrained(args.model, trust_remote_code=True)
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=dtype, trust_remote_code=True,
                                                 attn_implementation=args.attn).to("cuda:0").eval()
    free, total = torch.cuda.mem_get_info()
    print(f"{torch.cuda.get_device_name()} | free {gib(free):.1f} / {gib(total):.1f} GiB after load")

    # warmup
    run_one(model, tok, 1, argparse.Namespace(**{**vars(args), "gen_len": 8, "nvtx": False}))

    results = []
    if args.profile_dir:
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                       schedule=schedule(wait=0, warmup=1, active=1, repeat=1),
                       on_trace_ready=tensorboard_trace_handler(args.profile_dir),
                       record_shapes=True, profile_memory=True, with_stack=False)
        prof.start()
    for bs in args.batch:
        try:
            r = run_one(model, tok, bs, args)
        except torch.cuda.OutOfMemoryError:
            print(f"bs={bs}: OOM")
            torch.cuda.empty_cache()
            break
        print(json.dumps(r))
        results.append(r)
        if args.profile_dir:
            prof.step()
    if args.profile_dir:
        prof.stop()

    with open(args.out, "w") as f:
        json.dump({"model": args.model, "device": torch.cuda.get_device_name(), "dtype": args.dtype,
                   "attn": args.attn, "prompt_len": args.prompt_len, "gen_len": args.gen_len,
                   "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
