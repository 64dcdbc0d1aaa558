"""
Throughput / latency / peak-memory benchmark for SentenceTransformer.encode.

    python benchmark_encode_speed.py --model BAAI/bge-small-en-v1.5 --batch_sizes 16 64 256 --fp16

Reports sentences/s, mean batch latency (measured with CUDA events) and peak allocated memory.
"""
import argparse
import json
import random
import statistics
import string

import numpy as np
import torch

from sentence_transformers import SentenceTransformer


def random_sentences(n, min_words=8, max_words=64, seed=0):
    rng = random.Random(seed)
    words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9))) for _ in range(5000)]
    return [" ".join(rng.choices(words, k=rng.randint(min_words, max_words))) for _ in range(n)]


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="sentence-transformers/all-MiniLM-L6-v2")
    parser.add_argument("--num_sentences", type=int, default=20000)
    parser.add_argument("--batch_sizes", type=int, nargs="+", default=[32, 128, 512])
    parser.add_argument("--max_seq_length", type=int, default=256)
    parser.add_argument("--fp16", action="store_true", help="cast the model to half precision")
    parser.add_argument("--compile", action="store_true", help="torch.compile the transformer (inductor + CUDA graphs)")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--warmup_batches", type=int, default=5)
    parser.add_argument("--output", default=None, help="write results as json")
    return parser.parse_args()


@torch.no_grad()
def time_batches(model, sentences, batch_size, warmup_batches):
    """Encode batch by batch and time each forward with device events."""
    batches = [sentences[i : i + batch_size] for i in range(0, len(sentences), batch_size)]
    for batch in batches[:warmup_batches]:
        model.encode(batch, batch_size=batch_size, convert_to_tensor=True)
    torch.cuda.synchronize()  # drain warm-up work before timing

    latencies_ms = []
    for batch in batches:
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        model.encode(batch, batch_size=batch_size, convert_to_tensor=True)
        end.record()
        torch.cuda.synchronize()
        latencies_ms.append(start.elapsed_time(end))
    return latencies_ms


def main():
    args = parse_args()
    torch.manual_seed(0)

    model = SentenceTransformer(args.model, device=args.device)
    model.max_seq_length = args.max_seq_length
    if args.fp16:
        model.half()
    if args.compile:
        # dynamic=True: sequence length varies from batch to batch
        model[0].auto_model = torch.compile(model[0].auto_model, mode="reduce-overhead", dynamic=True)

    device_name = torch.cuda.get_device_name(0)
    total_mem_gib = torch.cuda.get_device_properties(0).total_memory / 2**30
    print(f"Device: {device_name} ({total_mem_gib:.1f} GiB), model: {args.model}, fp16={args.fp16}")

    sentences = random_sentences(args.num_sentences)
    results = []
    for batch_size in args.batch_sizes:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()

        latencies_ms = time_batches(model, sentences, batch_size, args.warmup_batches)
        total_s = sum(latencies_ms) / 1000.0
        peak_mib = torch.cuda.max_memory_allocated() / 2**20

        row = {
            "batch_size": batch_size,
            "sentences_per_s": len(sentences) / total_s,
            "mean_batch_ms": statistics.mean(latencies_ms),
            "p95_batch_ms": float(np.percentile(latencies_ms, 95)),
            "peak_mem_mib": peak_mib,
        }
        results.append(row)
        print(
            f"bs={batch_size:5d}  {row['sentences_per_s']:9.1f} sent/s  "
            f"mean {row['mean_batch_ms']:7.2f} ms  p95 {row['p95_batch_ms']:7.2f} ms  peak {peak_mib:8.1f} MiB"
        )

    if args.output:
        with open(args.output, "w") as f:
            json.dump({"model": args.model, "device": device_name, "fp16": args.fp16, "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
