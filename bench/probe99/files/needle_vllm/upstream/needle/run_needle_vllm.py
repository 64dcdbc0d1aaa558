"""Needle-in-a-haystack pressure test with a tensor-parallel vLLM engine.

    python needle/run_needle_vllm.py --model Qwen/Qwen2-72B-Instruct --tp 8 \
        --context-lengths 8000 32000 64000 128000 --depth-steps 11

Writes one JSON line per (context length, depth) cell and a heat-map PNG.
"""
import argparse
import glob
import json
import math
import os
import time
from datetime import datetime, timezone

import numpy as np
import torch
from transformers import AutoTokenizer

# vLLM picks its attention backend at import time; FlashAttention-2 is the
# only one that handles 128k prompts without blowing up the prefill workspace.
os.environ.setdefault("VLLM_ATTENTION_BACKEND", "FLASH_ATTN")
os.environ.setdefault("VLLM_WORKER_MULTIPROC_METHOD", "spawn")
os.environ["NCCL_CUMEM_ENABLE"] = "0"

from vllm import LLM, SamplingParams  # noqa: E402

NEEDLE = "\nThe best thing to do in San Francisco is eat a sandwich and sit in Dolores Park on a sunny day.\n"
QUESTION = "What is the best thing to do in San Francisco?"
RETRIEVAL_KEYWORDS = ("sandwich", "dolores park")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--tp", type=int, default=None, help="tensor parallel size (default: all visible GPUs)")
    p.add_argument("--haystack-dir", default="needle/PaulGrahamEssays")
    p.add_argument("--context-lengths", type=int, nargs="+", default=[4000, 16000, 32000, 64000, 128000])
    p.add_argument("--depth-steps", type=int, default=11)
    p.add_argument("--max-model-len", type=int, default=131072)
    p.add_argument("--gpu-memory-utilization", type=float, default=0.92)
    p.add_argument("--enforce-eager", action="store_true", help="disable CUDA graphs (debugging)")
    p.add_argument("--out", default="results/needle")
    return p.parse_args()


def read_haystack(tokenizer, haystack_dir: str, target_tokens: int) -> list:
    """Concatenate essays until we have at least `target_tokens` tokens."""
    ids = []
    files = sorted(glob.glob(os.path.join(haystack_dir, "*.txt")))
    if not files:
        raise FileNotFoundError(f"no .txt files in {haystack_dir}")
    while len(ids) < target_tokens:
        for path in files:
            with open(path, encoding="utf-8") as f:
                ids.extend(tokenizer.encode(f.read(), add_special_tokens=False))
            if len(ids) >= target_tokens:
                break
    return ids[:target_tokens]


def insert_needle(tokenizer, haystack_ids: list, depth_percent: float, context_len: int) -> str:
    needle_ids = tokenizer.encode(NEEDLE, add_special_tokens=False)
    budget = context_len - len(needle_ids) - 200  # leave room for the question + template
    hay = haystack_ids[:budget]
    if depth_percent >= 100:
        merged = hay + needle_ids
    else:
        pos = int(len(hay) * depth_percent / 100)
        # back up to a sentence boundary so the needle is not spliced mid-word
        period_ids = set(tokenizer.encode(".", add_special_tokens=False))
        while pos > 0 and hay[pos - 1] not in period_ids:
            pos -= 1
        merged = hay[:pos] + needle_ids + hay[pos:]
    return tokenizer.decode(merged)


def build_prompt(tokenizer, context: str) -> str:
    messages = [
        {"role": "system", "content": "You are a helpful AI bot that answers questions for a user. Keep your response short and direct."},
        {"role": "user", "content": f"{context}\n\n{QUESTION} Don't give information outside the document or repeat your findings."},
    ]
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def score(response: str) -> int:
    text = response.lower()
    hits = sum(k in text for k in RETRIEVAL_KEYWORDS)
    return {0: 1, 1: 5, 2: 10}[hits]


def plot(results: list, out_png: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lengths = sorted({r["context_length"] for r in results})
    depths = sorted({r["depth_percent"] for r in results})
    grid = np.zeros((len(depths), len(lengths)))
    for r in results:
        grid[depths.index(r["depth_percent"]), lengths.index(r["context_length"])] = r["score"]
    fig, ax = plt.subplots(figsize=(12, 6))
    im = ax.imshow(grid, cmap="RdYlGn", vmin=1, vmax=10, aspect="auto")
    ax.set_xticks(range(len(lengths)), [f"{l // 1000}k" for l in lengths])
    ax.set_yticks(range(len(depths)), [f"{d:.0f}%" for d in depths])
    ax.set_xlabel("context length")
    ax.set_ylabel("needle depth")
    fig.colorbar(im)
    fig.savefig(out_png, dpi=150, bbox_inches="tight")


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)

    tp = args.tp or torch.cuda.device_count()
    if tp < 1:
        raise SystemExit("no GPUs visible; set CUDA_VISIBLE_DEVICES")
    gpu_name = torch.cuda.get_device_name(0)
    print(f"[needle] {args.model} tp={tp} on {gpu_name}")

    tokenizer = AutoTokenizer.from_pretrained(args.model, trust_remote_code=True)
    llm = LLM(
        model=args.model,
        tensor_parallel_size=tp,
        max_model_len=args.max_model_len,
        gpu_memory_utilization=args.gpu_memory_utilization,
        enforce_eager=args.enforce_eager,
        enable_chunked_prefill=True,
        trust_remote_code=True,
        dtype="bfloat16",
    )
    sampling = SamplingParams(temperature=0.0, max_tokens=64)

    haystack = read_haystack(tokenizer, args.haystack_dir, max(args.context_lengths))
    depths = np.linspace(0, 100, args.depth_steps)

    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    out_jsonl = os.path.join(args.out, f"{os.path.basename(args.model)}-{stamp}.jsonl")
    results = []
    for context_len in args.context_lengths:
        prompts, cells = [], []
        for depth in depths:
            ctx = insert_needle(tokenizer, haystack, float(depth), context_len)
            prompts.append(build_prompt(tokenizer, ctx))
            cells.append((context_len, float(depth)))
        t0 = time.perf_counter()
        outputs = llm.generate(prompts, sampling)
        elapsed = time.perf_counter() - t0
        for (clen, depth), out in zip(cells, outputs):
            text = out.outputs[0].text
            rec = {
                "model": args.model,
                "context_length": clen,
                "depth_percent": depth,
                "response": text,
                "score": score(text),
                "seconds_per_prompt": elapsed / len(prompts),
                "device": gpu_name,
            }
            results.append(rec)
        print(f"[needle] {context_len:>7} tokens: mean score "
              f"{np.mean([r['score'] for r in results if r['context_length'] == context_len]):.2f} "
              f"({elapsed:.1f}s)")

    with open(out_jsonl, "w") as f:
        for r in results:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    plot(results, out_jsonl.replace(".jsonl", ".png"))
    print(f"[needle] wrote {out_jsonl}")


if __name__ == "__main__":
    main()
