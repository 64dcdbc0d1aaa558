"""
Rephrase low-quality web documents into cleaner "Wikipedia-style" prose with an
instruction-tuned LLM (the WRAP / Nemotron-CC synthetic rephrasing recipe).

Every process handles one shard of the input jsonl files. A single node runs one vLLM
engine with tensor parallelism over all visible GPUs; run several nodes with different
--shard-id to scale out.

    CUDA_VISIBLE_DEVICES=0,1,2,3 python synthetic/rephrase_low_quality.py \
        --input-dir data/quality/low --output-dir data/synthetic/wiki_style --shard-id 0 --num-shards 16
"""

import argparse
import glob
import json
import os
import time

import torch
from transformers import AutoTokenizer
from vllm import LLM, SamplingParams

SYSTEM_PROMPT = (
    "You are an assistant that rewrites web text. Rewrite the following text in a clear, "
    "high-quality style similar to a Wikipedia article. Keep all facts, drop boilerplate, "
    "navigation text and advertisements. Do not add new information."
)

MAX_INPUT_TOKENS = 2048


def iter_docs(files):
    for path in files:
        with open(path) as f:
            for line in f:
                doc = json.loads(line)
                if doc.get("text"):
                    yield path, doc


def build_prompts(tokenizer, docs):
    prompts = []
    for doc in docs:
        ids = tokenizer(doc["text"], add_special_tokens=False)["input_ids"][:MAX_INPUT_TOKENS]
        text = tokenizer.decode(ids)
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": text},
        ]
        prompts.append(tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True))
    return prompts


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="mistralai/Mistral-Nemo-Instruct-2407")
    parser.add_argument("--input-dir", required=True)
    parser.add_argument("--output-dir", required=True)
    parser.add_argument("--shard-id", type=int, default=0)
    parser.add_argument("--num-shards", type=int, default=1)
    parser.add_argument("--batch-docs", type=int, default=4096)
    parser.add_argument("--max-new-tokens", type=int, default=1024)
    parser.add_argument("--temperature", type=float, default=0.5)
    parser.add_argument("--gpu-memory-utilization", type=float, default=0.92)
    args = parser.parse_args()

    os.environ.setdefault("VLLM_WORKER_MULTIPROC_METHOD", "spawn")
    os.environ.setdefault("NCCL_P2P_DISABLE", "0")
    os.environ["VLLM_ATTENTION_BACKEND"] = "FLASHINFER"

    files = sorted(glob.glob(os.path.join(args.input_dir, "*.jsonl")))
    files = files[args.shard_id :: args.num_shards]
    os.makedirs(args.output_dir, exist_ok=True)
    out_path = os.path.join(args.output_dir, f"shard_{args.shard_id:05d}.jsonl")

    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    tp_size = len(visible.split(",")) if visible else torch.cuda.device_count()
    print(f"shard {args.shard_id}: {len(files)} files, tensor_parallel_size={tp_size}", flush=True)

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    llm = LLM(
        model=args.model,
        tensor_parallel_size=tp_size,
        dtype="bfloat16",
        gpu_memory_utilization=args.gpu_memory_utilization,
        max_model_len=MAX_INPUT_TOKENS + args.max_new_tokens + 512,
        enable_prefix_caching=True,
        enforce_eager=False,
        seed=args.shard_id,
    )
    sampling = SamplingParams(temperature=args.temperature, top_p=0.9, max_tokens=args.max_new_tokens)

    n_done, t0 = 0, time.time()
    batch = []
    with open(out_path, "w") as fout:
        for path, doc in iter_docs(files):
            batch.append(doc)
            if len(batch) < args.batch_docs:
                continue
            n_done += flush(llm, tokenizer, sampling, batch, fout)
            batch = []
            elapsed = time.time() - t0
            print(f"{n_done} docs, {n_done / elapsed:.1f} docs/s, "
                  f"peak mem {torch.cuda.max_memory_reserved() / 2**30:.1f} GiB", flush=True)
        if batch:
            n_done += flush(llm, tokenizer, sampling, batch, fout)
    print(f"done: {n_done} docs in {time.time() - t0:.0f}s -> {out_path}")


def flush(llm, tokenizer, sampling, batch, fout):
    prompts = build_prompts(tokenizer, batch)
    outputs = llm.generate(prompts, sampling, use_tqdm=False)
    for doc, out in zip(batch, outputs):
        rec = {
            "id": doc.get("id"),
            "text": out.outputs[0].text.strip(),
            "source_text_len": len(doc["text"]),
            "rephrase_style": "wikipedia",
            "finish_reason": out.outputs[0].finish_reason,
        }
        fout.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return len(batch)


if __name__ == "__main__":
    main()
