#!/usr/bin/env python3
# Copyright (c) Meta Platforms, Inc. and affiliates.
#
# Licensed under the Apache License, Version 2.0 (the "License");

"""
Micro-benchmark of one layer (nn.Linear, nn.Conv2d, nn.LSTM / DPLSTM, nn.Embedding,
nn.LayerNorm, nn.GroupNorm, nn.MultiheadAttention / DPMultiheadAttention) with and
without GradSampleModule. Reports the mean runtime of forward+backward and the peak
accelerator memory per configuration, as a JSON line per run.
"""

import argparse
import json
import logging
import time
from typing import Any, Dict, Tuple

import torch
import torch.nn as nn
from opacus.grad_sample import GradSampleModule
from opacus.grad_sample.gsm_exp_weights import GradSampleModuleExpandedWeights
from opacus.layers import DPLSTM, DPMultiheadAttention

logger = logging.getLogger(__name__)

LAYER_FACTORIES = {
    "linear": lambda cfg: nn.Linear(cfg["in_features"], cfg["out_features"]),
    "conv": lambda cfg: nn.Conv2d(cfg["in_channels"], cfg["out_channels"], cfg["kernel_size"]),
    "layernorm": lambda cfg: nn.LayerNorm(cfg["D"]),
    "groupnorm": lambda cfg: nn.GroupNorm(cfg["G"], cfg["C"]),
    "embedding": lambda cfg: nn.Embedding(cfg["num_embeddings"], cfg["embedding_dim"]),
    "lstm": lambda cfg: nn.LSTM(cfg["input_size"], cfg["hidden_size"], batch_first=True),
    "dplstm": lambda cfg: DPLSTM(cfg["input_size"], cfg["hidden_size"], batch_first=True),
    "mha": lambda cfg: nn.MultiheadAttention(cfg["embed_dim"], cfg["num_heads"], batch_first=True),
    "dpmha": lambda cfg: DPMultiheadAttention(cfg["embed_dim"], cfg["num_heads"], batch_first=True),
}

WRAPPERS = {
    "baseline": lambda m: m,
    "hooks": lambda m: GradSampleModule(m),
    "ew": lambda m: GradSampleModuleExpandedWeights(m),
    "functorch": lambda m: GradSampleModule(m, force_functorch=True),
}


def make_inputs(layer_name: str, cfg: Dict[str, Any], batch_size: int, device: torch.device) -> Tuple:
    if layer_name == "linear":
        return (torch.randn(batch_size, cfg["in_features"], device=device),)
    if layer_name == "conv":
        return (torch.randn(batch_size, cfg["in_channels"], cfg["H"], cfg["W"], device=device),)
    if layer_name == "layernorm":
        return (torch.randn(batch_size, cfg["T"], cfg["D"], device=device),)
    if layer_name == "groupnorm":
        return (torch.randn(batch_size, cfg["C"], cfg["H"], cfg["W"], device=device),)
    if layer_name == "embedding":
        return (torch.randint(0, cfg["num_embeddings"], (batch_size, cfg["T"]), device=device),)
    if layer_name in ("lstm", "dplstm"):
        return (torch.randn(batch_size, cfg["T"], cfg["input_size"], device=device),)
    if layer_name in ("mha", "dpmha"):
        x = torch.randn(batch_size, cfg["T"], cfg["embed_dim"], device=device)
        return (x, x, x)
    raise ValueError(layer_name)


def reset_peak_memory_stats(device: torch.device) -> Tuple[int, int]:
    """Clears the caching allocator and resets the peak counters."""
    prev_max_memory = torch.cuda.max_memory_allocated(device)
    prev_allocated_memory = torch.cuda.memory_allocated(device)
    torch.cuda.reset_peak_memory_stats(device)
    torch.cuda.empty_cache()
    return prev_max_memory, prev_allocated_memory


class LayerBench:
    def __init__(self, layer_name: str, wrapper: str, cfg: Dict[str, Any], batch_size: int, device: torch.device):
        self.layer_name = layer_name
        self.wrapper = wrapper
        self.cfg = cfg
        self.batch_size = batch_size
        self.device = device
        self.module = WRAPPERS[wrapper](LAYER_FACTORIES[layer_name](cfg)).to(device)
        self.inputs = make_inputs(layer_name, cfg, batch_size, device)
        self.criterion = nn.MSELoss(reduction="mean")

    def forward_backward(self):
        out = self.module(*self.inputs)
        if isinstance(out, tuple):
            out = out[0]
        loss = self.criterion(out.float(), torch.zeros_like(out, dtype=torch.float32))
        loss.backward()
        for p in self.module.parameters():
            p.grad = None
            if hasattr(p, "grad_sample"):
                p.grad_sample = None

    def run(self, num_repeats: int, num_warmups: int) -> Dict[str, Any]:
        for _ in range(num_warmups):
            self.forward_backward()

        torch.cuda.synchronize()  # drain the warm-up work
        reset_peak_memory_stats(self.device)

        start_event = torch.cuda.Event(enable_timing=True)
        end_event = torch.cuda.Event(enable_timing=True)
        runtimes = []
        for _ in range(num_repeats):
            start_event.record()
            self.forward_backward()
            end_event.record()
            torch.cuda.synchronize()
            runtimes.append(start_event.elapsed_time(end_event))

        peak = torch.cuda.max_memory_allocated(self.device)
        return {
            "layer": self.layer_name,
            "gsm_mode": self.wrapper,
            "batch_size": self.batch_size,
            "runtime_ms": sum(runtimes) / len(runtimes),
            "peak_memory_bytes": peak,
            "config": self.cfg,
        }


def cpu_fallback_run(bench: LayerBench, num_repeats: int) -> Dict[str, Any]:
    """Wall-clock timing for CPU runs (no events, no allocator stats)."""
    start = time.perf_counter()
    for _ in range(num_repeats):
        bench.forward_backward()
    elapsed = (time.perf_counter() - start) * 1000 / num_repeats
    return {"layer": bench.layer_name, "gsm_mode": bench.wrapper, "batch_size": bench.batch_size, "runtime_ms": elapsed, "config": bench.cfg}


def main(args) -> None:
    with open(args.config) as f:
        config = json.load(f)

    device = torch.device("cuda:0" if not args.cpu else "cpu")
    torch.backends.cudnn.benchmark = not args.deterministic
    torch.backends.cudnn.deterministic = args.deterministic

    logger.info(f"Benchmarking on {torch.cuda.get_device_name(0)}")
    results = []
    for layer_name in args.layers:
        for wrapper in args.gsm_modes:
            for batch_size in args.batch_sizes:
                bench = LayerBench(layer_name, wrapper, config[layer_name], batch_size, device)
                if device.type == "cpu":
                    res = cpu_fallback_run(bench, args.num_repeats)
                else:
                    res = bench.run(args.num_repeats, args.num_warmups)
                results.append(res)
                print(json.dumps(res))
                del bench
                torch.cuda.empty_cache()  # release this config's blocks

    if args.output:
        with open(args.output, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", nargs="+", default=list(LAYER_FACTORIES))
    parser.add_argument("--gsm_modes", nargs="+", default=["baseline", "hooks", "ew", "functorch"])
    parser.add_argument("--batch_sizes", nargs="+", type=int, default=[16, 32, 64, 128, 256])
    parser.add_argument("--num_repeats", type=int, default=20)
    parser.add_argument("--num_warmups", type=int, default=5)
    parser.add_argument("--config", type=str, default="config.json")
    parser.add_argument("--cpu", action="store_true", help="run on CPU instead of the first GPU")
    parser.add_argument("--deterministic", action="store_true")
    parser.add_argument("--output", type=str, default=None)
    args = parser.parse_args()
    main(args)
