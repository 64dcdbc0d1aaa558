#!/usr/bin/env python
"""Throughput / memory benchmark for diffusion-based crystal generation.

Measures structures per second and peak device memory of the
predictor-corrector sampler for a range of batch sizes, optionally with the
PyTorch profiler attached to a few batches. Results go to a JSON file that the
`benchmarks/plot_throughput.ipynb` notebook reads.

    python benchmarks/profile_sampling.py --checkpoint checkpoints/mattergen_base \
        --batch-sizes 16 64 256 --num-batches 4 --trace-dir traces/
"""
from __future__ import annotations

import argparse
import json
import platform
import time
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule, tensorboard_trace_handler

from mattergen.common.utils.eval_utils import MatterGenCheckpointInfo
from mattergen.generator import CrystalGenerator


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoint", required=True, help="model directory (config.yaml + checkpoints/)")
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[16, 64, 256])
    p.add_argument("--num-batches", type=int, default=4)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--gpu", type=int, default=0)
    p.add_argument("--amp", action="store_true")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--trace-dir", type=Path, default=None,
                   help="if set, record a profiler trace of the largest batch size")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/sampling.json"))
    return p.parse_args()


def device_info(device: torch.device) -> dict:
    props = torch.cuda.get_device_properties(device)
    return {
        "name": torch.cuda.get_device_name(device),
        "total_memory_gb": round(props.total_memory / 2**30, 1),
        "multi_processor_count": props.multi_processor_count,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "host": platform.node(),
    }


def build_sampler(args, batch_size: int):
    gen = CrystalGenerator(
        checkpoint_info=MatterGenCheckpointInfo.from_hf_hub(args.checkpoint)
        if not Path(args.checkpoint).exists()
        else MatterGenCheckpointInfo(Path(args.checkpoint).resolve()),
        batch_size=batch_size,
        num_batches=args.num_batches,
        record_trajectories=False,
        sampling_config_overrides=[
            f"sampler_partial.use_amp={str(args.amp).lower()}",
            f"sampler_partial.compile_score_model={str(args.compile).lower()}",
        ],
    )
    gen.prepare()
    sampling_config = gen.load_sampling_config(batch_size=batch_size, num_batches=args.num_batches)
    loader = gen.get_condition_loader(sampling_config)
    sampler = __import__("hydra").utils.instantiate(sampling_config.sampler_partial)(pl_module=gen.model)
    return sampler, loader


def run_batches(sampler, loader, n_batches: int, prof=None) -> int:
    n_structures = 0
    for i, (conditioning_data, mask) in enumerate(loader):
        if i >= n_batches:
            break
        torch.cuda.nvtx.range_push(f"sample_batch_{i}")
        with record_function("pc_sampler.sample") if prof is not None else nullcontext():
            _, mean = sampler.sample(conditioning_data, mask)
        torch.cuda.nvtx.range_pop()
        n_structures += int(mean.get_batch_size())
        if prof is not None:
            prof.step()
    return n_structures


def main():
    args = parse_args()
    device = torch.device(f"cuda:{args.gpu}")
    torch.cuda.set_device(device)
    torch.backends.cudnn.benchmark = True

    major, minor = torch.cuda.get_device_capability(device)
    if major >= 8:
        # Ampere and newer: TF32 tensor cores for fp32 matmuls
        torch.backends.cuda.matmul.allow_tf32 = True

    info = device_info(device)
    print(f"Benchmarking on {info['name']} ({info['total_memory_gb']} GiB), sm_{major}{minor}")

    results = []
    for bs in args.batch_sizes:
        sampler, loader = build_sampler(args, bs)

        # warm-up (kernel autotuning, allocator growth, torch.compile)
        run_batches(sampler, loader, args.warmup)

        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        t_wall = time.perf_counter()
        start.record()
        n = run_batches(sampler, loader, args.num_batches)
        end.record()
        end.synchronize()
        elapsed_s = start.elapsed_time(end) / 1e3
        wall_s = time.perf_counter() - t_wall
        peak_gb = torch.cuda.max_memory_allocated(device) / 2**30

        row = {
            "batch_size": bs,
            "structures": n,
            "device_s": elapsed_s,
            "wall_s": wall_s,
            "structures_per_s": n / elapsed_s,
            "peak_mem_gb": peak_gb,
            "amp": args.amp,
            "compile": args.compile,
        }
        results.append(row)
        print(f"bs={bs:4d}  {row['structures_per_s']:8.2f} struct/s  peak {peak_gb:5.1f} GiB")

        del sampler, loader
        torch.cuda.empty_cache()

    if args.trace_dir is not None:
        bs = max(args.batch_sizes)
        sampler, loader = build_sampler(args, bs)
        args.trace_dir.mkdir(parents=True, exist_ok=True)
        activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
        with profile(
            activities=activities,
            schedule=schedule(wait=0, warmup=1, active=2, repeat=1),
            on_trace_ready=tensorboard_trace_handler(str(args.trace_dir)),
            record_shapes=True,
            profile_memory=True,
            with_stack=False,
        ) as prof:
            run_batches(sampler, loader, 3, prof=prof)
        print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=25))

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"device": info, "results": results}, indent=2))
    best = max(results, key=lambda r: r["structures_per_s"])
    print(f"best: bs={best['batch_size']} -> {best['structures_per_s']:.2f} struct/s")


if __name__ == "__main__":
    main()
