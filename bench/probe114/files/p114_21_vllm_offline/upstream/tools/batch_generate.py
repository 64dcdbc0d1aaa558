#!/usr/bin/env python
"""Offline batch generation with vLLM -- used to pre-compute answers / summaries for the
document store (e.g. one summary per chunk, or synthetic questions for embedder fine-tuning).

    python tools/batch_generate.py --model Qwen/Qwen2-7B-Instruct --input data/chunks.jsonl \
        --output data/summaries.jsonl --task summary --gpus 0,1
"""
import argparse
import gc
import json
import os
import sys
import time


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--output", required=True)
    ap.add_argument("--task", choices=["summary", "questions"], default="summary")
    ap.add_argument("--gpus", default=None, help="comma separated GPU ids, e.g. 0,1 (default: all)")
    ap.add_argument("--tp", type=int, default=0, help="tensor parallel size (0 = number of visible GPUs)")
    ap.add_argument("--gpu-memory-utilization", type=float, default=0.90)
    ap.add_argument("--max-model-len", type=int, default=8192)
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--temperature", type=float, default=0.3)
    ap.add_argument("--quantization", default=None, choices=[None, "awq", "gptq", "fp8"])
    ap.add_argument("--batch", type=int, default=512, help="prompts handed to vLLM per call")
    ap.add_argument("--enforce-eager", action="store_true", help="disable CUDA graphs (saves memory)")
    ap.add_argument("--limit", type=int, default=0, help="only process the first N pending rows (0 = all)")
    ap.add_argument("--min-chars", type=int, default=200, help="skip chunks shorter than this")
    return ap.parse_args()


ARGS = parse_args()

# Must be set before torch / vllm are imported, otherwise they are ignored.
if ARGS.gpus:
    os.environ["CUDA_VISIBLE_DEVICES"] = ARGS.gpus
os.environ.setdefault("VLLM_ATTENTION_BACKEND", "FLASH_ATTN")
os.environ.setdefault("VLLM_WORKER_MULTIPROC_METHOD", "spawn")
os.environ.setdefault("NCCL_P2P_DISABLE", "1")  # consumer boards without NVLink hang otherwise

import torch  # noqa: E402
from vllm import LLM, SamplingParams  # noqa: E402
from vllm.distributed.parallel_state import destroy_distributed_environment, destroy_model_parallel  # noqa: E402

PROMPTS = {
    "summary": (
        "Summarise the following passage in 2-3 sentences. Keep names, numbers and dates.\n\n"
        "Passage:\n{text}\n\nSummary:"
    ),
    "questions": (
        "Write three questions that can be answered using only the passage below. "
        "One question per line, no numbering.\n\nPassage:\n{text}\n\nQuestions:"
    ),
}


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def already_done(path):
    if not os.path.exists(path):
        return set()
    return {r["id"] for r in read_jsonl(path)}


def build_llm():
    tp = ARGS.tp or torch.cuda.device_count()
    if tp < 1:
        sys.exit("no GPUs visible to vLLM")
    print(f"vLLM: tp={tp}, gpu_memory_utilization={ARGS.gpu_memory_utilization}", file=sys.stderr)
    return LLM(
        model=ARGS.model,
        tensor_parallel_size=tp,
        gpu_memory_utilization=ARGS.gpu_memory_utilization,
        max_model_len=ARGS.max_model_len,
        quantization=ARGS.quantization,
        dtype="half" if ARGS.quantization in ("awq", "gptq") else "auto",
        enforce_eager=ARGS.enforce_eager,
        trust_remote_code=True,
        swap_space=8,
        seed=0,
    )


def to_chat(llm, text):
    tok = llm.get_tokenizer()
    msgs = [{"role": "user", "content": PROMPTS[ARGS.task].format(text=text)}]
    return tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)


def shutdown(llm):
    destroy_model_parallel()
    destroy_distributed_environment()
    del llm.llm_engine.model_executor
    del llm
    gc.collect()
    torch.cuda.empty_cache()
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


def main():
    done = already_done(ARGS.output)
    rows, skipped = [], 0
    for r in read_jsonl(ARGS.input):
        if r["id"] in done:
            continue
        if len(r.get("text", "")) < ARGS.min_chars:
            skipped += 1
            continue
        rows.append(r)
    if ARGS.limit:
        rows = rows[:ARGS.limit]
    print(f"{len(rows)} rows to process ({len(done)} already done, {skipped} too short)", file=sys.stderr)
    if not rows:
        return

    llm = build_llm()
    params = SamplingParams(temperature=ARGS.temperature, top_p=0.95, max_tokens=ARGS.max_tokens)

    t0 = time.time()
    n_tokens = 0
    with open(ARGS.output, "a", encoding="utf-8") as out:
        for start in range(0, len(rows), ARGS.batch):
            batch = rows[start:start + ARGS.batch]
            prompts = [to_chat(llm, r["text"]) for r in batch]
            results = llm.generate(prompts, params, use_tqdm=True)
            for r, res in zip(batch, results):
                completion = res.outputs[0]
                n_tokens += len(completion.token_ids)
                out.write(json.dumps({"id": r["id"], ARGS.task: completion.text.strip()}, ensure_ascii=False) + "\n")
            out.flush()
            elapsed = time.time() - t0
            print(
                f"{start + len(batch)}/{len(rows)} rows, {n_tokens / elapsed:.0f} tok/s, "
                f"peak mem {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB",
                file=sys.stderr,
            )

    elapsed = time.time() - t0
    print(
        f"done: {len(rows)} rows, {n_tokens} tokens in {elapsed / 60:.1f} min "
        f"({n_tokens / max(elapsed, 1e-6):.0f} tok/s, {len(rows) / max(elapsed, 1e-6):.2f} rows/s)",
        file=sys.stderr,
    )
    write_stats(ARGS.output + ".stats.json", rows=len(rows), tokens=n_tokens, seconds=elapsed)
    shutdown(llm)


def write_stats(path, **stats):
    stats["model"] = ARGS.model
    stats["task"] = ARGS.task
    stats["tp"] = ARGS.tp
    with open(path, "w", encoding="utf-8") as f:
        json.dump(stats, f, indent=2)


if __name__ == "__main__":
    main()
