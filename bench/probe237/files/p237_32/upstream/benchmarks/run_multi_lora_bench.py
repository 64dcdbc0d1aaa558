"""Offline multi-LoRA throughput/latency benchmark for the PEFT baseline.

Replays a synthetic trace (Poisson arrivals, Zipf adapter popularity) against
``MultiLoraEngine`` in-process and reports tokens/s, adapter switches and
per-request latency.  With ``distributed.tensor_parallel > 1`` every rank runs
the same trace on its own shard of requests (data parallel) and rank 0
aggregates the numbers.

    torchrun --nproc_per_node 2 benchmarks/run_multi_lora_bench.py --config configs/multi_lora_serving.yaml
"""
import argparse
import contextlib
import json
import os
import random
import sys
import time
from datetime import timedelta
from typing import List

import numpy as np
import torch
import torch.distributed as dist
import yaml
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
from peft_multi_adapter_server import GenerateRequest, MultiLoraEngine, ServerConfig  # noqa: E402

PROMPT_POOL = [
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. "
    "How many clips did Natalia sell altogether in April and May?",
    "CREATE TABLE head (age INTEGER); How many heads of the departments are older than 56?",
    "Give me a short description of the video game Portal 2 in a neutral tone.",
    "Explain the difference between a virus and a bacterium to a ten year old.",
    "Write a haiku about GPUs serving thousands of LoRA adapters.",
]


def zipf_adapters(names: List[str], n: int, alpha: float, rng: random.Random) -> List[str]:
    weights = np.array([1.0 / (i + 1) ** alpha for i in range(len(names))])
    weights /= weights.sum()
    return [names[i] for i in rng.choices(range(len(names)), weights=weights, k=n)]


def init_dist(cfg: dict):
    if "RANK" not in os.environ:
        return 0, 1
    dcfg = cfg.get("distributed", {})
    dist.init_process_group(
        backend=dcfg.get("backend", "nccl"),
        init_method=dcfg.get("init_method", "env://"),
        timeout=timedelta(seconds=dcfg.get("timeout_s", 600)),
    )
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if dist.get_backend() == "nccl":
        torch.cuda.set_device(local_rank)
    return dist.get_rank(), dist.get_world_size()


def make_profiler(pcfg: dict, rank: int):
    if not pcfg.get("enabled", False):
        return contextlib.nullcontext(None)
    acts = [ProfilerActivity.CPU]
    if "cuda" in pcfg.get("torch_profiler_activities", []):
        acts.append(ProfilerActivity.CUDA)
    return profile(
        activities=acts,
        schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
        on_trace_ready=tensorboard_trace_handler(os.path.join(pcfg.get("trace_dir", "/tmp"), f"rank{rank}")),
        record_shapes=True,
        with_stack=False,
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--num-requests", type=int, default=256)
    parser.add_argument("--rate", type=float, default=4.0, help="requests/s (Poisson)")
    parser.add_argument("--zipf-alpha", type=float, default=1.0)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="bench_results.jsonl")
    args = parser.parse_args()

    with open(args.config) as f:
        raw_cfg = yaml.safe_load(f)
    rank, world = init_dist(raw_cfg)
    cfg = ServerConfig.from_yaml(args.config)
    if world > 1:
        cfg.device = f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}"

    engine = MultiLoraEngine(cfg)
    names = sorted(engine.adapter_names)
    rng = random.Random(args.seed + rank)
    adapters = zipf_adapters(names, args.num_requests, args.zipf_alpha, rng)[rank::world]
    reqs = [GenerateRequest(prompt=rng.choice(PROMPT_POOL), adapter=a, max_new_tokens=128) for a in adapters]
    # adapter-grouped batches, like the server's batcher does
    reqs.sort(key=lambda r: r.adapter)

    # warmup (also triggers lazy kernel compilation)
    engine.generate_batch(reqs[0].adapter, reqs[:1])
    torch.cuda.synchronize()  # finish warmup before resetting stats
    torch.cuda.reset_peak_memory_stats()

    pcfg = raw_cfg.get("profiling", {})
    use_nvtx = pcfg.get("enabled", False) and pcfg.get("nvtx", False)
    latencies, n_tokens = [], 0
    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    wall0 = time.perf_counter()
    start_evt.record()
    with make_profiler(pcfg, rank) as prof:
        for i in range(0, len(reqs), args.batch):
            batch = reqs[i:i + args.batch]
            t0 = time.perf_counter()
            nvtx_ctx = torch.cuda.nvtx.range(f"batch{i // args.batch}:{batch[0].adapter}") if use_nvtx else contextlib.nullcontext()
            with nvtx_ctx:
                texts = engine.generate_batch(batch[0].adapter, batch)
            latencies.extend([(time.perf_counter() - t0) * 1e3] * len(batch))
            n_tokens += sum(len(engine.tokenizer(t)["input_ids"]) for t in texts)
            if prof is not None:
                prof.step()
    end_evt.record()
    torch.cuda.synchronize()
    gpu_ms = start_evt.elapsed_time(end_evt)
    wall = time.perf_counter() - wall0

    local = torch.tensor([n_tokens, len(reqs), wall], dtype=torch.float64, device="cuda")
    if world > 1:
        dist.all_reduce(local, op=dist.ReduceOp.SUM)

    if rank == 0:
        result = {
            "config": os.path.basename(args.config),
            "world_size": world,
            "gpu": torch.cuda.get_device_name(),
            "visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES", "all"),
            "requests": int(local[1]),
            "tokens": int(local[0]),
            "tokens_per_s": float(local[0]) / (float(local[2]) / world),
            "gpu_time_ms": gpu_ms,
            "p50_ms": float(np.percentile(latencies, 50)),
            "p99_ms": float(np.percentile(latencies, 99)),
            "peak_reserved_gb": torch.cuda.max_memory_reserved() / 2**30,
            "adapter_switches": engine.stats()["adapter_switches"],
        }
        print(json.dumps(result, indent=2))
        with open(args.out, "a") as f:
            f.write(json.dumps(result) + "\n")
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
