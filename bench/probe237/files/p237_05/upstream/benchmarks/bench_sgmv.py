"""Micro-benchmark: SGMV vs. BGMV vs. a per-adapter loop (torch.bmm).

Reports latency percentiles and achieved TFLOP/s for several popularity
distributions of adapters inside one batch ("distinct", "uniform", "skewed",
"identical").  Results are written as JSON lines for plotting.

    python benchmarks/bench_sgmv.py --batch-setup 1-64 --h1 4096 --h2 16 --out sgmv.jsonl
"""
import argparse
import dataclasses
import gzip
import itertools
import json
import pathlib
import time
from datetime import datetime

import numpy as np
import torch
from tqdm import tqdm

import punica.ops


@dataclasses.dataclass
class BenchResult:
    setup: str
    batch_size: int
    num_problems: int
    h1: int
    h2: int
    dtype: str
    latency_p50_us: float
    latency_p90_us: float
    tflops: float


def get_lora_lens(bs: int, popularity: str) -> list[int]:
    if popularity == "identical":
        return [bs]
    if popularity == "distinct":
        return [1] * bs
    if popularity == "uniform":
        n = int(np.ceil(np.sqrt(bs)))
        lens = np.array([bs // n] * n)
        while True:
            diff = bs - lens.sum()
            if diff == 0:
                break
            lens[: abs(diff)] += np.sign(diff)
        return lens.tolist()
    if popularity.startswith("bmm"):
        n = int(popularity.removeprefix("bmm"))
        return [bs // n] * n
    if popularity == "skewed":
        # Zipf-like: a few hot adapters dominate
        weights = 1.0 / np.arange(1, bs + 1) ** 1.5
        weights /= weights.sum()
        lens = np.maximum(np.round(weights * bs), 1).astype(int)
        lens = lens[lens > 0]
        lens[0] += bs - lens.sum()
        return [int(x) for x in lens if x > 0]
    raise KeyError(popularity)


def bench_fn(fn, warmup: int = 20, repeat: int = 100) -> np.ndarray:
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()  # drain warmup launches

    start_events = [torch.cuda.Event(enable_timing=True) for _ in range(repeat)]
    end_events = [torch.cuda.Event(enable_timing=True) for _ in range(repeat)]
    # flush L2 between runs so we do not measure cache hits
    cache = torch.empty(int(256e6 // 4), dtype=torch.int, device="cuda")
    for i in range(repeat):
        cache.zero_()
        start_events[i].record()
        fn()
        end_events[i].record()
    torch.cuda.synchronize()
    latencies = [s.elapsed_time(e) * 1e3 for s, e in zip(start_events, end_events)]
    return np.array(latencies)


def make_weights(num_problems, num_layers, h1, h2, dtype, device):
    ws = [
        torch.randn((num_layers, h1, h2), dtype=dtype, device=device) / np.sqrt(h1)
        for _ in range(num_problems)
    ]
    w_ptr = torch.tensor([w.data_ptr() for w in ws], dtype=torch.int64, device=device)
    return ws, w_ptr


def run_one(setup, bs, h1, h2, dtype, num_layers, device):
    lens = get_lora_lens(bs, setup)
    num_problems = len(lens)
    ws, w_ptr = make_weights(num_problems, num_layers, h1, h2, dtype, device)
    s = torch.cumsum(torch.tensor([0] + lens, device=device), dim=0, dtype=torch.int32)
    x = torch.randn((bs, h1), dtype=dtype, device=device)
    y = torch.zeros((bs, h2), dtype=dtype, device=device)

    def sgmv():
        punica.ops.sgmv(y, x, w_ptr, s, layer_idx=0)

    lat = bench_fn(sgmv)
    flops = 2 * bs * h1 * h2
    return BenchResult(
        setup=setup,
        batch_size=bs,
        num_problems=num_problems,
        h1=h1,
        h2=h2,
        dtype=str(dtype).removeprefix("torch."),
        latency_p50_us=float(np.percentile(lat, 50)),
        latency_p90_us=float(np.percentile(lat, 90)),
        tflops=flops / float(np.percentile(lat, 50)) / 1e6,
    )


def run_loop_baseline(setup, bs, h1, h2, dtype, num_layers, device):
    """Reference: one torch.mm per adapter segment (what PEFT effectively does)."""
    lens = get_lora_lens(bs, setup)
    ws = [torch.randn((h1, h2), dtype=dtype, device=device) for _ in lens]
    x = torch.randn((bs, h1), dtype=dtype, device=device)
    y = torch.zeros((bs, h2), dtype=dtype, device=device)
    bounds = list(itertools.accumulate([0] + lens))

    def loop():
        for i, w in enumerate(ws):
            y[bounds[i] : bounds[i + 1]] += x[bounds[i] : bounds[i + 1]] @ w

    lat = bench_fn(loop)
    return float(np.percentile(lat, 50))


def parse_batch_setup(spec: str) -> list[int]:
    lo, hi = (int(v) for v in spec.split("-"))
    out, b = [], lo
    while b <= hi:
        out.append(b)
        b *= 2
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-setup", default="1-64")
    parser.add_argument("--h1", type=int, default=4096)
    parser.add_argument("--h2", type=int, default=16)
    parser.add_argument("--num-layers", type=int, default=1)
    parser.add_argument("--dtype", choices=["float16", "bfloat16"], default="float16")
    parser.add_argument("--setups", default="distinct,uniform,skewed,identical")
    parser.add_argument("--gpu", type=int, default=0, help="CUDA device ordinal")
    parser.add_argument("--with-baseline", action="store_true")
    parser.add_argument("--out", type=pathlib.Path, default=None)
    args = parser.parse_args()

    torch.manual_seed(0xABCDABCD987)
    torch.cuda.set_device(args.gpu)
    device = torch.device(f"cuda:{args.gpu}")
    dtype = getattr(torch, args.dtype)
    gpu_name = torch.cuda.get_device_name(device)
    print(f"Benchmarking on {gpu_name} ({torch.cuda.get_device_properties(device).total_memory / 2**30:.1f} GiB)")

    results = []
    pbar = tqdm(list(itertools.product(args.setups.split(","), parse_batch_setup(args.batch_setup))))
    for setup, bs in pbar:
        pbar.set_postfix(setup=setup, bs=bs)
        torch.cuda.empty_cache()
        res = run_one(setup, bs, args.h1, args.h2, dtype, args.num_layers, device)
        row = dataclasses.asdict(res)
        row["gpu"] = gpu_name
        if args.with_baseline:
            row["loop_p50_us"] = run_loop_baseline(setup, bs, args.h1, args.h2, dtype, args.num_layers, device)
        results.append(row)
        tqdm.write(
            f"{setup:>9} bs={bs:<4} n={res.num_problems:<3} "
            f"p50={res.latency_p50_us:8.2f}us  {res.tflops:6.2f} TFLOP/s"
        )

    if args.out is not None:
        opener = gzip.open if args.out.suffix == ".gz" else open
        with opener(args.out, "at") as f:
            meta = {"ts": datetime.now().isoformat(), "time": time.time(), "torch": torch.__version__,
                    "cuda": torch.version.cuda}
            for row in results:
                f.write(json.dumps({**meta, **row}) + "\n")


if __name__ == "__main__":
    main()
