"""Evaluate fine-tuned checkpoints with lm-evaluation-harness on the vLLM backend.

    python eval/run_eval_vllm.py --ckpts out/ckpt-500 out/ckpt-1000 --tasks gsm8k,mmlu,ifeval

Each checkpoint gets a fresh vLLM engine; GPU memory is released between checkpoints so that a
single process can sweep many checkpoints.
"""
import argparse
import contextlib
import gc
import json
import os
import subprocess
import time

import torch

os.environ.setdefault("VLLM_WORKER_MULTIPROC_METHOD", "spawn")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import lm_eval  # noqa: E402
from lm_eval.models.vllm_causallms import VLLM  # noqa: E402
from vllm.distributed.parallel_state import destroy_distributed_environment, destroy_model_parallel  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--ckpts", nargs="+", required=True)
    p.add_argument("--tasks", default="gsm8k,mmlu")
    p.add_argument("--num_fewshot", type=int, default=None)
    p.add_argument("--batch_size", default="auto")
    p.add_argument("--tp", type=int, default=None, help="tensor parallel size (default: all visible GPUs)")
    p.add_argument("--gpu_memory_utilization", type=float, default=0.85)
    p.add_argument("--max_model_len", type=int, default=4096)
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--output", default="eval_results.jsonl")
    p.add_argument("--limit", type=float, default=None)
    return p.parse_args()


def visible_gpus() -> int:
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env:
        return len([d for d in env.split(",") if d.strip()])
    out = subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
                         capture_output=True, text=True, check=True).stdout
    return len(out.strip().splitlines())


def cleanup_engine(lm) -> None:
    destroy_model_parallel()
    destroy_distributed_environment()
    del lm
    with contextlib.suppress(AssertionError):
        torch.distributed.destroy_process_group()
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.synchronize()


def evaluate_checkpoint(ckpt: str, args) -> dict:
    tp = args.tp or visible_gpus()
    lm = VLLM(
        pretrained=ckpt,
        tensor_parallel_size=tp,
        dtype=args.dtype,
        gpu_memory_utilization=args.gpu_memory_utilization,
        max_model_len=args.max_model_len,
        batch_size=args.batch_size,
        enforce_eager=False,
        device="cuda",
        seed=1234,
    )
    t0 = time.time()
    results = lm_eval.simple_evaluate(
        model=lm,
        tasks=args.tasks.split(","),
        num_fewshot=args.num_fewshot,
        limit=args.limit,
        log_samples=False,
    )
    elapsed = time.time() - t0
    cleanup_engine(lm)
    summary = {"ckpt": ckpt, "elapsed_s": round(elapsed, 1)}
    for task, metrics in results["results"].items():
        for name, value in metrics.items():
            if isinstance(value, (int, float)) and not name.endswith("_stderr,none"):
                summary[f"{task}/{name}"] = value
    return summary


def main():
    args = parse_args()
    print(f"torch {torch.__version__}, cuda {torch.version.cuda}, {torch.cuda.device_count()} GPUs visible")
    with open(args.output, "a") as f:
        for ckpt in args.ckpts:
            summary = evaluate_checkpoint(ckpt, args)
            print(json.dumps(summary, indent=1))
            f.write(json.dumps(summary) + "\n")
            f.flush()


if __name__ == "__main__":
    main()
