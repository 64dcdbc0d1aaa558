"""Throughput benchmark of the tabular data paths feeding a small MLP.

Compares (samples/s, including one forward/backward of a 3-layer MLP):
  * torch   : torch.utils.data.DataLoader over a TensorDataset (pin_memory, workers)
  * gpu     : src.data.gpu_dataloader.GPUTensorLoader (whole dataset resident on the GPU)
  * prefetch: DataLoader wrapped in CUDAPrefetcher (side-stream H2D copies)

GPU time is measured with CUDA events; NVTX ranges make the phases visible in Nsight Systems:

    nsys profile -t cuda,nvtx -o bench python benchmarks/bench_dataloader.py --rows 5000000
    python benchmarks/bench_dataloader.py --profile  # torch.profiler trace for TensorBoard
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
from torch.utils.data import DataLoader, TensorDataset

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from src.data.gpu_dataloader import CUDAPrefetcher, GPUTensorLoader  # noqa: E402

torch.backends.cudnn.benchmark = True


def synthetic_frame(rows: int, cols: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.standard_normal((rows, cols), dtype=np.float32), columns=[f"f_{i}" for i in range(cols)])
    df["target"] = (rng.random(rows) < 0.2).astype(np.float32)
    return df


def make_model(n_in: int, device) -> nn.Module:
    return nn.Sequential(
        nn.Linear(n_in, 1024), nn.ReLU(), nn.Linear(1024, 512), nn.ReLU(), nn.Linear(512, 1)
    ).to(device)


def run_epoch(name, loader, model, opt, device, max_batches=None):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    n = 0
    torch.cuda.nvtx.range_push(f"epoch:{name}")
    wall0 = time.perf_counter()
    start.record()
    for b, (x, y) in enumerate(loader):
        if x.device != device:
            x = x.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
        loss = F.binary_cross_entropy_with_logits(model(x).squeeze(-1), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        n += x.shape[0]
        if max_batches and b + 1 >= max_batches:
            break
    end.record()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    gpu_ms = start.elapsed_time(end)
    wall = time.perf_counter() - wall0
    return {"loader": name, "samples": n, "gpu_ms": gpu_ms, "wall_s": wall, "samples_per_s": n / wall}


def bench(args):
    device = torch.device(f"cuda:{args.device}")
    torch.cuda.set_device(device)
    df = synthetic_frame(args.rows, args.cols)
    feats = [c for c in df.columns if c.startswith("f_")]
    results = []

    # 1) plain DataLoader
    ds = TensorDataset(torch.from_numpy(df[feats].values), torch.from_numpy(df["target"].values))
    dl = DataLoader(ds, batch_size=args.batch_size, shuffle=True, num_workers=args.workers, pin_memory=True,
                    drop_last=True, persistent_workers=args.workers > 0)
    model = make_model(len(feats), device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    run_epoch("warmup", dl, model, opt, device, max_batches=20)
    results.append(run_epoch("torch", dl, model, opt, device))

    # 2) resident on the GPU
    gl = GPUTensorLoader.from_pandas(df, feats, "target", device=device, batch_size=args.batch_size, shuffle=True,
                                     drop_last=True)
    results.append(run_epoch("gpu", gl, model, opt, device))

    # 3) side-stream prefetch
    pf = CUDAPrefetcher(dl, device=device)
    results.append(run_epoch("prefetch", pf, model, opt, device))

    for r in results:
        r["max_mem_gb"] = torch.cuda.max_memory_allocated(device) / 2 ** 30
    return results


def profile_gpu_loader(args):
    device = torch.device("cuda", args.device)
    df = synthetic_frame(min(args.rows, 1_000_000), args.cols)
    feats = [c for c in df.columns if c.startswith("f_")]
    gl = GPUTensorLoader.from_pandas(df, feats, "target", device=device, batch_size=args.batch_size, shuffle=True)
    model = make_model(len(feats), device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=schedule(wait=2, warmup=2, active=6, repeat=1),
        on_trace_ready=tensorboard_trace_handler(args.trace_dir),
        record_shapes=True,
        profile_memory=True,
    ) as prof:
        for step, (x, y) in enumerate(gl):
            loss = F.binary_cross_entropy_with_logits(model(x).squeeze(-1), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            prof.step()
            if step >= 12:
                break
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=15))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--cols", type=int, default=200)
    ap.add_argument("--batch-size", type=int, default=4096)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--trace-dir", default="./tb_traces")
    ap.add_argument("--out", default="benchmarks/results.json")
    args = ap.parse_args()

    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(args.device)}")
    if args.profile:
        profile_gpu_loader(args)
        return
    results = bench(args)
    print(pd.DataFrame(results).to_string(index=False))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
