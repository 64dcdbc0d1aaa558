"""End-to-end decode latency: dense HF baseline vs. Quest sparse decode.

    python scripts/bench_textgen.py --context_len 32768 --decode_len 256 --token_budget 2048
    python scripts/bench_textgen.py --context_len 32768 --dense --cuda_graph    # baseline

Numbers in the paper were collected on a single RTX 4090 / A100 with CUDA 12.1.
Run under `nsys profile -t cuda,nvtx` to get the per-phase breakdown.
"""
import argparse
import contextlib
import time

import torch
from transformers import AutoTokenizer

from quest import LlamaForCausalLM


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", type=str, default="lmsys/longchat-7b-v1.5-32k")
    p.add_argument("--context_len", type=int, default=32768)
    p.add_argument("--decode_len", type=int, default=256)
    p.add_argument("--page_size", type=int, default=16)
    p.add_argument("--token_budget", type=int, default=2048)
    p.add_argument("--dense", action="store_true", help="run the dense baseline (no Quest)")
    p.add_argument("--cuda_graph", action="store_true", help="capture the dense decode step in a CUDA graph")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def make_inputs(tokenizer, context_len, device):
    text = "The quick brown fox jumps over the lazy dog. " * (context_len // 8)
    ids = tokenizer(text, return_tensors="pt").input_ids[:, :context_len]
    return ids.to(device)


@torch.inference_mode()
def bench_dense(model, input_ids, decode_len, use_graph, warmup):
    # Prefill with the FlashAttention SDPA backend so the baseline is not handicapped.
    with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):
        out = model(input_ids, use_cache=True)
    past = out.past_key_values
    next_tok = out.logits[:, -1:].argmax(dim=-1)

    if not use_graph:
        torch.cuda.synchronize()  # prefill must be done before timing
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        torch.cuda.nvtx.range_push("dense_decode")
        start.record()
        for _ in range(decode_len):
            out = model(next_tok, past_key_values=past, use_cache=True)
            past = out.past_key_values
            next_tok = out.logits[:, -1:].argmax(dim=-1)
        end.record()
        torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()  # wait for the timed decode loop
        return start.elapsed_time(end) / decode_len

    # --- CUDA graph path: static KV buffers are pre-allocated by the model's StaticCache ---
    static_tok = next_tok.clone()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(warmup):
            model(static_tok, past_key_values=past, use_cache=True)
    torch.cuda.current_stream().wait_stream(s)

    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_out = model(static_tok, past_key_values=past, use_cache=True)

    times = []
    for _ in range(decode_len):
        t0 = time.perf_counter()
        g.replay()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        static_tok.copy_(static_out.logits[:, -1:].argmax(dim=-1))
    return 1000.0 * sum(times) / len(times)


@torch.inference_mode()
def bench_quest(model, input_ids, decode_len, args):
    model.quest_init(
        page_size=args.page_size,
        max_seq_len=args.context_len + args.decode_len + 512,
        token_budget=args.token_budget,
    )
    # prefill (kernels write K/V and page metadata)
    logits = model(input_ids=input_ids).logits
    next_tok = logits[:, -1:].argmax(dim=-1)
    torch.cuda.synchronize()  # prefill kernels are async

    ev_start = torch.cuda.Event(enable_timing=True)
    ev_end = torch.cuda.Event(enable_timing=True)
    ev_start.record()
    for _ in range(decode_len):
        logits = model(input_ids=next_tok).logits
        next_tok = logits[:, -1:].argmax(dim=-1)
    ev_end.record()
    torch.cuda.synchronize()  # drain the decode loop
    model.quest_clear()
    return ev_start.elapsed_time(ev_end) / decode_len


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    torch.backends.cuda.matmul.allow_tf32 = True

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = LlamaForCausalLM.from_pretrained(
        args.model,
        device_map="cuda:0",
        torch_dtype=torch.float16,
    )
    model.eval()
    device = model.device
    input_ids = make_inputs(tokenizer, args.context_len, device)

    torch.cuda.reset_peak_memory_stats()
    if args.dense:
        ms = bench_dense(model, input_ids, args.decode_len, args.cuda_graph, args.warmup)
        tag = "dense+graph" if args.cuda_graph else "dense"
    else:
        ms = bench_quest(model, input_ids, args.decode_len, args)
        tag = f"quest(budget={args.token_budget})"

    peak = torch.cuda.max_memory_allocated(device) / 2 ** 30
    print(f"[{tag}] ctx={args.context_len} decode={args.decode_len}: {ms:.3f} ms/token, peak {peak:.2f} GiB")


if __name__ == "__main__":
    main()
