"""
Run (a subset of) MTEB on a sentence-transformers checkpoint.

    python scripts/run_mteb.py --model BAAI/bge-base-en-v1.5 --task_types Retrieval STS --fp16
    python scripts/run_mteb.py --model intfloat/e5-mistral-7b-instruct --bf16 --flash_sdp --batch_size 16
"""
import argparse
import contextlib
import json
import logging
import os
import time

import torch
from mteb import MTEB

from sentence_transformers import SentenceTransformer

logging.basicConfig(level=logging.INFO)
logger = logging.getLogger("run_mteb")

TASK_LIST_RETRIEVAL = [
    "ArguAna",
    "ClimateFEVER",
    "CQADupstackTexRetrieval",
    "FiQA2018",
    "NFCorpus",
    "SciFact",
    "SCIDOCS",
    "TRECCOVID",
    "Touche2020",
]


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--output_dir", default="results")
    parser.add_argument("--task_types", nargs="*", default=None, help="e.g. Retrieval STS Clustering")
    parser.add_argument("--tasks", nargs="*", default=None)
    parser.add_argument("--languages", nargs="*", default=["en"])
    parser.add_argument("--batch_size", type=int, default=None, help="defaults to 128 on GPU, 16 on CPU")
    parser.add_argument("--max_seq_length", type=int, default=512)
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--bf16", action="store_true")
    parser.add_argument("--flash_sdp", action="store_true", help="force the FlashAttention SDPA backend")
    parser.add_argument("--query_prompt", default=None)
    return parser.parse_args()


def main():
    args = parse_args()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    batch_size = args.batch_size or (128 if device == "cuda" else 16)

    model = SentenceTransformer(args.model, device=device, trust_remote_code=True)
    model.max_seq_length = args.max_seq_length
    if args.bf16:
        model = model.to(torch.bfloat16)
    elif args.fp16:
        model.half()
    if args.query_prompt:
        model.prompts = {"query": args.query_prompt}

    if args.tasks:
        evaluation = MTEB(tasks=args.tasks, task_langs=args.languages)
    elif args.task_types:
        evaluation = MTEB(task_types=args.task_types, task_langs=args.languages)
    else:
        evaluation = MTEB(tasks=TASK_LIST_RETRIEVAL, task_langs=args.languages)

    sdp_ctx = (
        torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False)
        if args.flash_sdp
        else contextlib.nullcontext()
    )

    output_folder = os.path.join(args.output_dir, args.model.replace("/", "__"))
    start = time.time()
    with sdp_ctx:
        results = evaluation.run(
            model,
            output_folder=output_folder,
            eval_splits=["test"],
            encode_kwargs={"batch_size": batch_size},
            overwrite_results=False,
        )
    elapsed = time.time() - start

    summary = {
        "model": args.model,
        "device": torch.cuda.get_device_name(0) if device == "cuda" else "cpu",
        "batch_size": batch_size,
        "dtype": "bf16" if args.bf16 else ("fp16" if args.fp16 else "fp32"),
        "elapsed_min": round(elapsed / 60, 1),
        "peak_mem_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2) if device == "cuda" else None,
        "num_tasks": len(results),
    }
    logger.info(json.dumps(summary, indent=2))
    with open(os.path.join(output_folder, "run_summary.json"), "w") as f:
        json.dump(summary, f, indent=2)


if __name__ == "__main__":
    main()
