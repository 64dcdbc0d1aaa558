"""Offline batch generation with vLLM for Qwen / Yi / DeepSeek chat checkpoints.

    python scripts/vllm_batch_infer.py --model Qwen/Qwen1.5-14B-Chat --input data/prompts.jsonl \
        --output out/gen.jsonl --gpus 0,1,2,3
"""
import argparse
import json
import os
import time

import torch
from tqdm import tqdm


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--input", required=True)
    p.add_argument("--output", required=True)
    p.add_argument("--gpus", default="0")
    p.add_argument("--max_model_len", type=int, default=8192)
    p.add_argument("--max_tokens", type=int, default=1024)
    p.add_argument("--temperature", type=float, default=0.7)
    p.add_argument("--top_p", type=float, default=0.8)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--quantization", default=None, choices=[None, "awq", "gptq", "fp8"])
    p.add_argument("--enforce_eager", action="store_true")
    return p.parse_args()


args = parse_args()
# must be set before vllm initialises the driver
os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus
os.environ["VLLM_WORKER_MULTIPROC_METHOD"] = "spawn"
os.environ.setdefault("NCCL_P2P_DISABLE", "1")  # consumer cards without NVLink hang on P2P

from transformers import AutoTokenizer  # noqa: E402
from vllm import LLM, SamplingParams  # noqa: E402


def pick_memory_utilization(reserve_gib=2.0):
    """Leave some head-room when other processes already hold memory on the card."""
    free, total = torch.cuda.mem_get_info()
    util = (free - reserve_gib * 2 ** 30) / total
    return max(0.5, min(0.92, util))


def load_prompts(path, tokenizer):
    prompts, metas = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            item = json.loads(line)
            messages = item.get("messages") or [{"role": "user", "content": item["prompt"]}]
            text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            prompts.append(text)
            metas.append(item)
    return prompts, metas


def summarize(path):
    """Length / finish-reason statistics of a finished run (printed at the end)."""
    lengths, reasons = [], {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            item = json.loads(line)
            lengths.append(len(item["response"]))
            reasons[item["finish_reason"]] = reasons.get(item["finish_reason"], 0) + 1
    if not lengths:
        return {}
    lengths.sort()
    return {
        "n": len(lengths),
        "mean_chars": sum(lengths) / len(lengths),
        "p50_chars": lengths[len(lengths) // 2],
        "p95_chars": lengths[int(len(lengths) * 0.95) - 1],
        "finish_reasons": reasons,
    }


def batched(xs, n):
    for i in range(0, len(xs), n):
        yield xs[i:i + n]


def main():
    tokenizer = AutoTokenizer.from_pretrained(args.model, trust_remote_code=True)
    prompts, metas = load_prompts(args.input, tokenizer)
    tp = torch.cuda.device_count()
    llm = LLM(
        model=args.model,
        tokenizer=args.model,
        tensor_parallel_size=tp,
        trust_remote_code=True,
        dtype="bfloat16",
        max_model_len=args.max_model_len,
        gpu_memory_utilization=pick_memory_utilization(),
        quantization=args.quantization,
        enforce_eager=args.enforce_eager,
        swap_space=8,
    )
    sampling_params = SamplingParams(temperature=args.temperature, top_p=args.top_p,
                                     max_tokens=args.max_tokens, repetition_penalty=1.05,
                                     stop_token_ids=[tokenizer.eos_token_id])

    os.makedirs(os.path.dirname(args.output) or ".", exist_ok=True)
    n_tokens, t0 = 0, time.time()
    with open(args.output, "w", encoding="utf-8") as fout:
        for chunk_prompts, chunk_metas in tqdm(zip(batched(prompts, args.batch), batched(metas, args.batch)),
                                               total=(len(prompts) + args.batch - 1) // args.batch):
            outputs = llm.generate(chunk_prompts, sampling_params, use_tqdm=False)
            for out, meta in zip(outputs, chunk_metas):
                gen = out.outputs[0]
                n_tokens += len(gen.token_ids)
                meta = dict(meta)
                meta["response"] = gen.text
                meta["finish_reason"] = gen.finish_reason
                fout.write(json.dumps(meta, ensure_ascii=False) + "\n")
    dt = time.time() - t0
    print(f"generated {n_tokens} tokens in {dt:.1f}s -> {n_tokens / dt:.1f} tok/s on {tp} GPU(s)")
    print(json.dumps(summarize(args.output), ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
