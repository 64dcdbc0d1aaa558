"""
Evaluate a SentenceTransformer-compatible embedding model on the MTEB retrieval / reranking /
STS tasks and write a compact summary table.

    python scripts/run_mteb_retrieval.py --model intfloat/e5-base-v2 --query-prompt "query: " \
        --passage-prompt "passage: " --tasks retrieval --batch-size 256
"""
import argparse
import json
import logging
import os
import time

import mteb
import torch
from sentence_transformers import SentenceTransformer

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
logger = logging.getLogger("run_mteb")

TASK_GROUPS = {
    "retrieval": [
        "ArguAna", "ClimateFEVER", "CQADupstackTexRetrieval", "DBPedia", "FEVER", "FiQA2018",
        "HotpotQA", "MSMARCO", "NFCorpus", "NQ", "QuoraRetrieval", "SCIDOCS", "SciFact",
        "Touche2020", "TRECCOVID",
    ],
    "reranking": ["AskUbuntuDupQuestions", "MindSmallReranking", "SciDocsRR", "StackOverflowDupQuestions"],
    "sts": ["BIOSSES", "SICK-R", "STS12", "STS13", "STS14", "STS15", "STS16", "STS17", "STSBenchmark"],
}


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--revision", default=None)
    ap.add_argument("--tasks", default="retrieval", help="comma list of task groups or task names")
    ap.add_argument("--query-prompt", default="")
    ap.add_argument("--passage-prompt", default="")
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--max-seq-length", type=int, default=512)
    ap.add_argument("--fp16", action="store_true", help="cast the model to half precision on the GPU")
    ap.add_argument("--flash-attn", action="store_true", help="load the backbone with FlashAttention-2")
    ap.add_argument("--output-dir", default="results/mteb")
    return ap.parse_args()


def resolve_tasks(spec):
    names = []
    for item in spec.split(","):
        names.extend(TASK_GROUPS.get(item, [item]))
    return names


def main():
    args = parse_args()
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.benchmark = True

    model_kwargs = {}
    if args.fp16:
        model_kwargs["torch_dtype"] = torch.float16
    if args.flash_attn:
        model_kwargs["attn_implementation"] = "flash_attention_2"

    model = SentenceTransformer(
        args.model,
        revision=args.revision,
        device="cuda",
        trust_remote_code=True,
        model_kwargs=model_kwargs,
        prompts={"query": args.query_prompt, "passage": args.passage_prompt},
    )
    model.max_seq_length = args.max_seq_length
    logger.info("Loaded %s on %s (dtype=%s)", args.model, model.device, next(model.parameters()).dtype)

    tasks = mteb.get_tasks(tasks=resolve_tasks(args.tasks), languages=["eng"])
    evaluation = mteb.MTEB(tasks=tasks)

    out_dir = os.path.join(args.output_dir, args.model.replace("/", "__"))
    torch.cuda.reset_peak_memory_stats()
    t0 = time.time()
    results = evaluation.run(
        model,
        output_folder=out_dir,
        encode_kwargs={"batch_size": args.batch_size, "normalize_embeddings": True},
        overwrite_results=False,
    )
    elapsed = time.time() - t0

    summary = {
        "model": args.model,
        "elapsed_min": round(elapsed / 60, 1),
        "peak_mem_gb": round(torch.cuda.max_memory_allocated() / 1024**3, 2),
        "scores": {r.task_name: round(r.get_score() * 100, 2) for r in results},
    }
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)

    width = max(len(k) for k in summary["scores"]) + 2
    for name, score in sorted(summary["scores"].items()):
        print(f"{name:<{width}}{score:6.2f}")
    avg = sum(summary["scores"].values()) / max(1, len(summary["scores"]))
    print(f"{'AVERAGE':<{width}}{avg:6.2f}   ({summary['elapsed_min']} min, peak {summary['peak_mem_gb']} GB)")


if __name__ == "__main__":
    main()
