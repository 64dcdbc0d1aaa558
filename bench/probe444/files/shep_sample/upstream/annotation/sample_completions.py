"""
Math-Shepherd automatic process annotation, stage 1: completion sampling.

For every solution produced by the generator we cut it into steps (separated by the step tag
"ки") and, for every step prefix, let a "completer" model roll out N full solutions. Whether the
rollouts reach the gold answer is what later turns into the hard / soft step label
(see annotation/assign_labels.py).

One vLLM engine is started per GPU; the prefixes are sharded across GPUs with a
multiprocessing pool. Each worker pins itself to a single device through CUDA_VISIBLE_DEVICES
*before* vLLM is imported, otherwise every engine would grab GPU 0.
"""
import argparse
import json
import math
import multiprocessing as mp
import os
import time

import torch
from tqdm import tqdm

from utils.gpu_utils import visible_device_list, wait_for_gpus
from utils.logging_utils import get_logger

STEP_TAG = "ки"
logger = get_logger(__name__)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--completer", type=str, default="peiyi9979/mistral-7b-sft")
    p.add_argument("--input", type=str, required=True, help="jsonl with question / solution / gold")
    p.add_argument("--output", type=str, required=True)
    p.add_argument("--num_completions", type=int, default=8)
    p.add_argument("--temperature", type=float, default=0.7)
    p.add_argument("--top_p", type=float, default=1.0)
    p.add_argument("--max_tokens", type=int, default=1024)
    p.add_argument("--num_gpus", type=int, default=-1, help="-1: all visible GPUs")
    p.add_argument("--gpu_memory_utilization", type=float, default=0.9)
    p.add_argument("--wait_for_free_gpus", action="store_true")
    p.add_argument("--seed", type=int, default=1234)
    return p.parse_args()


def split_steps(solution):
    steps = [s.strip() for s in solution.split(STEP_TAG)]
    return [s for s in steps if s]


def build_prefix_tasks(records):
    tasks = []
    for rid, rec in enumerate(records):
        steps = split_steps(rec["solution"])
        for k in range(1, len(steps) + 1):
            prefix = " ".join(f"{s} {STEP_TAG}" for s in steps[:k])
            tasks.append(
                {
                    "rid": rid,
                    "step": k - 1,
                    "num_steps": len(steps),
                    "prompt": rec["question"] + " " + prefix.replace(f" {STEP_TAG}", "\n"),
                    "gold": rec["gold"],
                }
            )
    return tasks


def _worker(gpu_id, shard, args, out_queue):
    # must happen before vllm / torch touch the driver
    os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu_id)
    from vllm import LLM, SamplingParams

    llm = LLM(
        model=args.completer,
        tensor_parallel_size=1,
        gpu_memory_utilization=args.gpu_memory_utilization,
        seed=args.seed + gpu_id,
        swap_space=8,
    )
    params = SamplingParams(
        n=args.num_completions,
        temperature=args.temperature,
        top_p=args.top_p,
        max_tokens=args.max_tokens,
        stop=["</s>", "\n\nQuestion:"],
    )
    chunk = 256
    for i in range(0, len(shard), chunk):
        batch = shard[i : i + chunk]
        outputs = llm.generate([t["prompt"] for t in batch], params, use_tqdm=False)
        for task, out in zip(batch, outputs):
            task = dict(task)
            task["completions"] = [o.text for o in out.outputs]
            out_queue.put(task)
    out_queue.put(None)


def main():
    args = parse_args()
    with open(args.input) as f:
        records = [json.loads(line) for line in f]
    tasks = build_prefix_tasks(records)
    logger.info(f"{len(records)} solutions -> {len(tasks)} step prefixes")

    num_gpus = args.num_gpus if args.num_gpus > 0 else torch.cuda.device_count()
    if args.wait_for_free_gpus:
        gpus = wait_for_gpus(num_gpus)
    else:
        gpus = visible_device_list()[:num_gpus]
    logger.info(f"sampling {args.num_completions} completions per prefix on GPUs {gpus}")

    per = math.ceil(len(tasks) / len(gpus))
    shards = [tasks[i * per : (i + 1) * per] for i in range(len(gpus))]

    ctx = mp.get_context("spawn")
    queue = ctx.Queue(maxsize=4096)
    procs = []
    for gpu_id, shard in zip(gpus, shards):
        p = ctx.Process(target=_worker, args=(gpu_id, shard, args, queue))
        p.start()
        procs.append(p)

    finished, written = 0, 0
    t0 = time.time()
    pbar = tqdm(total=len(tasks), desc="prefixes")
    with open(args.output, "w") as fout:
        while finished < len(procs):
            item = queue.get()
            if item is None:
                finished += 1
                continue
            fout.write(json.dumps(item, ensure_ascii=False) + "\n")
            written += 1
            pbar.update(1)
    pbar.close()
    for p in procs:
        p.join()
    logger.info(f"wrote {written} prefixes in {(time.time() - t0) / 60:.1f} min")


if __name__ == "__main__":
    main()
