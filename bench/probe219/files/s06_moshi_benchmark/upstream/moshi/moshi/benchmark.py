# Copyright (c) Kyutai, all rights reserved.
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.
"""Measure the per-frame latency of the full-duplex loop (mimi encode -> LM step -> mimi decode).

A frame is 80ms of audio at 12.5Hz, so anything above ~80ms per step means the model
cannot keep up in real time on this GPU.

    python -m moshi.benchmark --steps 500 --profile
"""

import argparse
import statistics
import time
from contextlib import nullcontext

import numpy as np
import torch
from torch.profiler import profile, ProfilerActivity, schedule, tensorboard_trace_handler

from .client_utils import log
from .models import loaders, LMGen
from .utils.compile import no_cuda_graph


def percentile(values, q):
    return float(np.percentile(np.asarray(values), q))


class StepTimer:
    """Times GPU work with CUDA events so we don't measure the async launch only."""

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self.times_ms: list[float] = []
        self._start = None
        self._end = None

    def __enter__(self):
        if self.enabled:
            self._start = torch.cuda.Event(enable_timing=True)
            self._end = torch.cuda.Event(enable_timing=True)
            self._start.record()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self._end.record()
            self._end.synchronize()
            self.times_ms.append(self._start.elapsed_time(self._end))
        return False

    def summary(self, name: str) -> str:
        if not self.times_ms:
            return f"{name}: no samples"
        vals = self.times_ms
        return (f"{name}: mean {statistics.mean(vals):.2f}ms, p50 {percentile(vals, 50):.2f}ms, "
                f"p90 {percentile(vals, 90):.2f}ms, p99 {percentile(vals, 99):.2f}ms, max {max(vals):.2f}ms")


def build_profiler(args):
    if not args.profile:
        return nullcontext()
    return profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=schedule(wait=5, warmup=5, active=20, repeat=1),
        on_trace_ready=tensorboard_trace_handler(args.profile_dir),
        record_shapes=True,
        profile_memory=True,
        with_stack=False,
    )


def run(args):
    device = torch.device(args.device)
    checkpoint_info = loaders.CheckpointInfo.from_hf_repo(args.hf_repo, args.moshi_weight, args.mimi_weight)
    mimi = checkpoint_info.get_mimi(device=device)
    lm = checkpoint_info.get_moshi(device=device, dtype=torch.bfloat16)
    lm_gen = LMGen(lm, temp=0.8, temp_text=0.7, **checkpoint_info.lm_gen_config)

    frame_size = int(mimi.sample_rate / mimi.frame_rate)
    batch_size = args.batch_size
    mimi.streaming_forever(batch_size)
    lm_gen.streaming_forever(batch_size)

    torch.cuda.reset_peak_memory_stats()
    log("info", f"weights: {torch.cuda.memory_allocated() / 2**30:.2f}GiB")

    # Random input is fine, we only care about the timings.
    rng = np.random.default_rng(1234)
    pcm = rng.standard_normal((batch_size, 1, frame_size * (args.steps + args.warmup))).astype(np.float32) * 0.05
    pcm = torch.from_numpy(pcm).to(device)

    encode_timer = StepTimer()
    lm_timer = StepTimer()
    decode_timer = StepTimer()
    wall = []

    ctx = no_cuda_graph() if args.no_cuda_graph else nullcontext()
    with ctx, build_profiler(args) as prof:
        for idx in range(args.steps + args.warmup):
            measure = idx >= args.warmup
            encode_timer.enabled = lm_timer.enabled = decode_timer.enabled = measure
            chunk = pcm[:, :, idx * frame_size: (idx + 1) * frame_size]
            t0 = time.perf_counter()
            torch.cuda.nvtx.range_push(f"step_{idx}")
            with encode_timer:
                codes = mimi.encode(chunk)
            with lm_timer:
                tokens = lm_gen.step(codes)
            if tokens is not None:
                with decode_timer:
                    out = mimi.decode(tokens[:, 1:])
                _ = out.cpu()
            torch.cuda.nvtx.range_pop()
            if measure:
                wall.append(1000 * (time.perf_counter() - t0))
            if prof is not None and hasattr(prof, "step"):
                prof.step()

    log("info", encode_timer.summary("mimi.encode"))
    log("info", lm_timer.summary("lm_gen.step"))
    log("info", decode_timer.summary("mimi.decode"))
    log("info", f"wall per frame: mean {statistics.mean(wall):.2f}ms, p99 {percentile(wall, 99):.2f}ms "
                f"(budget {1000 / mimi.frame_rate:.0f}ms)")
    peak = torch.cuda.max_memory_allocated() / 2**30
    log("info", f"peak memory: {peak:.2f}GiB on {torch.cuda.get_device_name(device)}")
    realtime = statistics.mean(wall) < 1000 / mimi.frame_rate
    log("info", "real-time: " + ("yes" if realtime else "NO"))
    return {
        "encode_ms": statistics.mean(encode_timer.times_ms),
        "lm_ms": statistics.mean(lm_timer.times_ms),
        "decode_ms": statistics.mean(decode_timer.times_ms) if decode_timer.times_ms else None,
        "wall_ms": statistics.mean(wall),
        "peak_gib": peak,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hf-repo", type=str, default=loaders.DEFAULT_REPO)
    parser.add_argument("--moshi-weight", type=str)
    parser.add_argument("--mimi-weight", type=str)
    parser.add_argument("--device", type=str, default="cuda:0")
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--no-cuda-graph", action="store_true")
    parser.add_argument("--profile", action="store_true", help="Dump a kineto trace for tensorboard.")
    parser.add_argument("--profile-dir", type=str, default="./log/moshi_bench")
    args = parser.parse_args()

    torch.set_float32_matmul_precision("high")
    if not torch.cuda.is_available():
        raise SystemExit("this benchmark needs a CUDA GPU")

    with torch.inference_mode():
        res = run(args)
    print(res)


if __name__ == "__main__":
    main()
