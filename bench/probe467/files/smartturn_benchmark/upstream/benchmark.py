"""
Latency benchmark for the smart-turn endpointing model.

Usage:
    python benchmark.py --model pipecat-ai/smart-turn-v2 --device cuda --batch-sizes 1 4 16 --fp16
"""
import argparse
import statistics
import time

import numpy as np
import torch
from transformers import Wav2Vec2Processor

from model import Wav2Vec2ForEndpointing


def parse_args():
    parser = argparse.ArgumentParser(description="Benchmark smart-turn inference latency")
    parser.add_argument("--model", type=str, default="pipecat-ai/smart-turn-v2")
    parser.add_argument("--device", type=str, default="cuda", choices=["cuda", "cpu", "mps"])
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--seconds", type=float, default=8.0, help="audio length per sample")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--iters", type=int, default=100)
    parser.add_argument("--fp16", action="store_true", help="run the model in half precision")
    parser.add_argument("--compile", action="store_true", help="wrap the model with torch.compile")
    return parser.parse_args()


def make_inputs(processor, batch_size, seconds, device):
    audio = [np.random.randn(int(16000 * seconds)).astype(np.float32) * 0.05 for _ in range(batch_size)]
    inputs = processor(
        audio,
        sampling_rate=16000,
        padding="max_length",
        truncation=True,
        max_length=16000 * 16,
        return_attention_mask=True,
        return_tensors="pt",
    )
    if device == "cuda":
        return {k: v.cuda(non_blocking=True) for k, v in inputs.items()}
    return {k: v.to(device) for k, v in inputs.items()}


def time_gpu(model, inputs, warmup, iters):
    """Time with CUDA events so that host-side overhead is not included."""
    for _ in range(warmup):
        model(**inputs)
    torch.cuda.synchronize()

    timings = []
    for _ in range(iters):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        model(**inputs)
        end.record()
        end.synchronize()
        timings.append(start.elapsed_time(end))
    return timings


def time_cpu(model, inputs, warmup, iters):
    for _ in range(warmup):
        model(**inputs)
    timings = []
    for _ in range(iters):
        t0 = time.perf_counter()
        model(**inputs)
        timings.append((time.perf_counter() - t0) * 1000.0)
    return timings


def main():
    args = parse_args()
    device = args.device
    if device == "cuda" and not torch.cuda.is_available():
        print("CUDA not available, falling back to CPU")
        device = "cpu"
    on_gpu = device == "cuda"

    torch.backends.cudnn.benchmark = True

    processor = Wav2Vec2Processor.from_pretrained(args.model)
    model = Wav2Vec2ForEndpointing.from_pretrained(args.model).eval().to(device)
    if args.fp16:
        model = model.half()
    if args.compile:
        model = torch.compile(model, mode="reduce-overhead")

    if on_gpu:
        print(f"GPU: {torch.cuda.get_device_name()}")
        torch.cuda.reset_peak_memory_stats()

    results = {}
    with torch.inference_mode():
        for bs in args.batch_sizes:
            inputs = make_inputs(processor, bs, args.seconds, device)
            if args.fp16:
                inputs["input_values"] = inputs["input_values"].half()
            if on_gpu:
                timings = time_gpu(model, inputs, args.warmup, args.iters)
            else:
                timings = time_cpu(model, inputs, args.warmup, args.iters)
            results[bs] = timings
            print(f"batch={bs:3d}  mean={statistics.mean(timings):7.2f} ms  "
                  f"p50={statistics.median(timings):7.2f} ms  "
                  f"p95={np.percentile(timings, 95):7.2f} ms  "
                  f"per-sample={statistics.mean(timings) / bs:6.2f} ms")

    if on_gpu:
        print(f"Peak memory: {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
