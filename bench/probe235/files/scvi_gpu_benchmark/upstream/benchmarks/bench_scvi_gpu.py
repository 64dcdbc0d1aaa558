#!/usr/bin/env python
"""Benchmark scVI training throughput and memory on one GPU.

For each (n_cells, batch_size) combination we train scVI for a few epochs on a
subsample of the reference atlas and record wall time per epoch, peak allocated
memory, mean GPU utilisation / power (via NVML) and a short torch.profiler trace
of one training step.

    python benchmarks/bench_scvi_gpu.py --adata data/hlca_core_raw.h5ad \
        --n-cells 50000 200000 --batch-sizes 128 512 2048 --epochs 5 --out bench/
"""
import argparse
import contextlib
import itertools
import json
import os
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import List

import anndata as ad
import numpy as np
import pandas as pd
import pynvml
import scvi
import torch
from lightning.pytorch.callbacks import Callback
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler


@dataclass
class Result:
    n_cells: int
    batch_size: int
    epochs: int
    sec_per_epoch: float
    peak_mem_gb: float
    mean_util_pct: float
    mean_power_w: float
    extra: dict = field(default_factory=dict)


class NvmlSampler:
    """Polls GPU utilisation and power draw in a background thread."""

    def __init__(self, index: int = 0, period: float = 0.2):
        pynvml.nvmlInit()
        self.handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        self.period = period
        self.util, self.power = [], []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.util.append(pynvml.nvmlDeviceGetUtilizationRates(self.handle).gpu)
            self.power.append(pynvml.nvmlDeviceGetPowerUsage(self.handle) / 1000.0)
            time.sleep(self.period)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def summary(self):
        return float(np.mean(self.util or [0])), float(np.mean(self.power or [0]))


class EpochTimer(Callback):
    """Times epochs with CUDA events so that async kernels are included."""

    def __init__(self):
        self.times = []

    def on_train_epoch_start(self, trainer, pl_module):
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)
        self.start.record()
        torch.cuda.nvtx.range_push(f"epoch{trainer.current_epoch}")

    def on_train_epoch_end(self, trainer, pl_module):
        self.end.record()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        self.times.append(self.start.elapsed_time(self.end) / 1000.0)


def profile_one_step(model, out_dir: str, batch_size: int):
    """Short torch.profiler trace of a few forward/backward steps."""
    module = model.module.to("cuda")
    dl = model._make_data_loader(model.adata, batch_size=batch_size, shuffle=True)
    opt = torch.optim.Adam(module.parameters(), lr=1e-3)
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
        on_trace_ready=tensorboard_trace_handler(out_dir),
        record_shapes=True,
        profile_memory=True,
    ) as prof:
        for i, tensors in enumerate(dl):
            tensors = {k: v.cuda(non_blocking=True) for k, v in tensors.items()}
            _, _, losses = module(tensors)
            opt.zero_grad()
            losses.loss.backward()
            opt.step()
            prof.step()
            if i >= 5:
                break
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=15))


def run_one(adata_full, n_cells, batch_size, epochs, gpu_index, trace_dir=None) -> Result:
    rng = np.random.default_rng(0)
    idx = rng.choice(adata_full.n_obs, size=min(n_cells, adata_full.n_obs), replace=False)
    adata = adata_full[np.sort(idx)].copy()
    scvi.model.SCVI.setup_anndata(adata, layer="counts", batch_key="dataset")
    model = scvi.model.SCVI(adata, n_latent=30, n_layers=2, gene_likelihood="nb")

    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats(gpu_index)
    timer = EpochTimer()
    with NvmlSampler(gpu_index) as sampler:
        model.train(
            max_epochs=epochs,
            batch_size=batch_size,
            accelerator="cuda",
            devices=[gpu_index],
            callbacks=[timer],
            enable_progress_bar=False,
            check_val_every_n_epoch=None,
            train_size=1.0,
        )
    util, power = sampler.summary()
    peak = torch.cuda.max_memory_allocated(gpu_index) / 1024**3

    if trace_dir is not None:
        profile_one_step(model, os.path.join(trace_dir, f"n{n_cells}_bs{batch_size}"), batch_size)

    # skip the first epoch (cudnn autotune / allocator warm-up)
    t = timer.times[1:] if len(timer.times) > 1 else timer.times
    return Result(n_cells, batch_size, epochs, float(np.mean(t)), peak, util, power)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--adata", required=True)
    ap.add_argument("--n-cells", type=int, nargs="+", default=[50000])
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[128, 512, 2048])
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--gpu", type=int, default=0)
    ap.add_argument("--trace", action="store_true")
    ap.add_argument("--out", default="bench")
    args = ap.parse_args()

    os.makedirs(args.out, exist_ok=True)
    torch.backends.cudnn.benchmark = True
    torch.set_float32_matmul_precision("high")
    scvi.settings.dl_num_workers = 4
    scvi.settings.dl_pin_memory_gpu_training = True

    env = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "gpu": torch.cuda.get_device_name(args.gpu),
        "driver": pynvml.nvmlSystemGetDriverVersion() if pynvml.nvmlInit() is None else "?",
        "scvi": scvi.__version__,
    }
    print(json.dumps(env, indent=2))

    adata_full = ad.read_h5ad(args.adata)
    if "counts" not in adata_full.layers:
        adata_full.layers["counts"] = adata_full.X

    results: List[Result] = []
    for n_cells, bs in itertools.product(args.n_cells, args.batch_sizes):
        res = run_one(adata_full, n_cells, bs, args.epochs, args.gpu, trace_dir=args.out if args.trace else None)
        print(res)
        results.append(res)

    df = pd.DataFrame([asdict(r) for r in results])
    df.to_csv(os.path.join(args.out, "scvi_gpu_benchmark.csv"), index=False)
    with open(os.path.join(args.out, "env.json"), "w") as fh:
        json.dump(env, fh, indent=2)


if __name__ == "__main__":
    main()
