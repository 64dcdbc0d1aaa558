#!/usr/bin/env python3
# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.

# pyre-strict

"""
Forward / backward throughput of SplitTableBatchedEmbeddingBagsCodegen.

    python tbe_training_benchmark.py device --batch-size 512 --num-tables 32 \
        --num-embeddings 1000000 --embedding-dim 128 --bag-size 20 --managed device
"""

import logging
import statistics
from typing import Callable, List, Optional, Tuple

import click
import numpy as np
import torch

import fbgemm_gpu  # noqa: F401
from fbgemm_gpu.split_embedding_configs import EmbOptimType as OptimType, SparseType
from fbgemm_gpu.split_table_batched_embeddings_ops_common import (
    BoundsCheckMode,
    CacheAlgorithm,
    EmbeddingLocation,
    PoolingMode,
)
from fbgemm_gpu.split_table_batched_embeddings_ops_training import (
    ComputeDevice,
    SplitTableBatchedEmbeddingBagsCodegen,
)

logging.basicConfig(level=logging.DEBUG)


def get_device() -> torch.device:
    return torch.device("cuda", torch.cuda.current_device())


def generate_requests(
    iters: int,
    B: int,
    T: int,
    L: int,
    E: int,
    alpha: float = 1.0,
    weighted: bool = False,
    use_cpu: bool = False,
) -> List[Tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]]:
    rng = np.random.default_rng(0)
    requests = []
    for _ in range(iters):
        if alpha <= 1.0:
            ids = rng.integers(0, E, size=(T, B * L))
        else:
            ids = (rng.zipf(alpha, size=(T, B * L)) - 1) % E
        indices = torch.as_tensor(ids, dtype=torch.int64).reshape(-1)
        offsets = torch.arange(0, T * B * L + 1, L, dtype=torch.int64)
        weights = torch.rand(indices.numel(), dtype=torch.float) if weighted else None
        if not use_cpu:
            indices = indices.cuda()
            offsets = offsets.cuda()
            weights = weights.cuda() if weights is not None else None
        requests.append((indices, offsets, weights))
    return requests


def benchmark_requests(
    requests: List[Tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]],
    func: Callable[[torch.Tensor, torch.Tensor, Optional[torch.Tensor]], torch.Tensor],
    flush_gpu_cache_size_mb: int = 0,
    bwd_only: bool = False,
    grad: Optional[torch.Tensor] = None,
    num_warmups: int = 2,
) -> float:
    for indices, offsets, weights in requests[:num_warmups]:
        out = func(indices, offsets, weights)
        if grad is not None:
            out.backward(grad)
    torch.cuda.synchronize()  # drain warm-up work

    times: List[float] = []
    for indices, offsets, weights in requests:
        if flush_gpu_cache_size_mb:
            _ = torch.rand(
                flush_gpu_cache_size_mb * 1024 * 1024 // 4,
                dtype=torch.float,
                device="cuda",
            )
            torch.cuda.synchronize()  # make sure the flush finished
        start_event = torch.cuda.Event(enable_timing=True)
        end_event = torch.cuda.Event(enable_timing=True)
        if bwd_only:
            out = func(indices, offsets, weights)
            start_event.record()
            out.backward(grad)
        else:
            start_event.record()
            out = func(indices, offsets, weights)
            if grad is not None:
                out.backward(grad)
        end_event.record()
        torch.cuda.synchronize()
        times.append(start_event.elapsed_time(end_event) * 1.0e-3)
    return statistics.median(times)


@click.group()
def cli() -> None:
    pass


@cli.command()
@click.option("--alpha", default=1.0)
@click.option("--bag-size", default=20)
@click.option("--batch-size", default=512)
@click.option("--embedding-dim", default=128)
@click.option("--weights-precision", type=SparseType, default=SparseType.FP32)
@click.option("--stoc", is_flag=True, default=False)
@click.option("--iters", default=100)
@click.option("--warmup-runs", default=2)
@click.option("--managed", default="device", type=click.Choice(["device", "managed", "managed_caching"]))
@click.option("--mixed", is_flag=True, default=False)
@click.option("--num-embeddings", default=int(1e5))
@click.option("--num-tables", default=32)
@click.option("--reuse", default=0.0)
@click.option("--row-wise/--no-row-wise", default=True)
@click.option("--weighted", is_flag=True, default=False)
@click.option("--pooling", type=str, default="sum")
@click.option("--bounds-check-mode", type=int, default=BoundsCheckMode.NONE.value)
@click.option("--flush-gpu-cache-size-mb", default=0)
@click.option("--output-dtype", type=SparseType, default=SparseType.FP32)
@click.option("--cache-load-factor", default=0.2)
def device(
    alpha: float,
    bag_size: int,
    batch_size: int,
    embedding_dim: int,
    weights_precision: SparseType,
    stoc: bool,
    iters: int,
    warmup_runs: int,
    managed: str,
    mixed: bool,
    num_embeddings: int,
    num_tables: int,
    reuse: float,
    row_wise: bool,
    weighted: bool,
    pooling: str,
    bounds_check_mode: int,
    flush_gpu_cache_size_mb: int,
    output_dtype: SparseType,
    cache_load_factor: float,
) -> None:
    np.random.seed(42)
    torch.manual_seed(42)
    B = batch_size
    D = embedding_dim
    L = bag_size
    E = num_embeddings
    T = num_tables
    if mixed:
        Ds = [
            round_up(np.random.randint(low=int(0.5 * D), high=int(1.5 * D)), 4)
            for _ in range(T)
        ]
        D = np.average(Ds)
    else:
        Ds = [D] * T
    optimizer = OptimType.EXACT_ROWWISE_ADAGRAD if row_wise else OptimType.EXACT_ADAGRAD

    if managed == "device":
        managed_option = (
            EmbeddingLocation.DEVICE
            if torch.cuda.is_available()
            else EmbeddingLocation.HOST
        )
    elif managed == "managed":
        managed_option = EmbeddingLocation.MANAGED
    else:
        managed_option = EmbeddingLocation.MANAGED_CACHING

    if pooling is None or pooling == "sum":
        pooling_mode = PoolingMode.SUM
        do_pooling = True
    elif pooling == "mean":
        pooling_mode = PoolingMode.MEAN
        do_pooling = True
    else:  # "none"
        pooling_mode = PoolingMode.NONE
        do_pooling = False

    emb = SplitTableBatchedEmbeddingBagsCodegen(
        [(E, d, managed_option, ComputeDevice.CUDA) for d in Ds],
        optimizer=optimizer,
        learning_rate=0.1,
        eps=0.1,
        weights_precision=weights_precision,
        stochastic_rounding=stoc,
        output_dtype=output_dtype,
        pooling_mode=pooling_mode,
        bounds_check_mode=BoundsCheckMode(bounds_check_mode),
        cache_load_factor=cache_load_factor,
        cache_algorithm=CacheAlgorithm.LRU,
    ).to(get_device())

    nparams = sum(d * E for d in Ds)
    param_size_multiplier = weights_precision.bit_rate() / 8.0
    output_size_multiplier = output_dtype.bit_rate() / 8.0
    if do_pooling:
        read_write_bytes = (
            output_size_multiplier * B * sum(Ds)
            + param_size_multiplier * B * sum(Ds) * L
        )
    else:
        read_write_bytes = (
            output_size_multiplier * B * sum(Ds) * L
            + param_size_multiplier * B * sum(Ds) * L
        )

    logging.info(
        f"Embedding parameters: {nparams / 1.0e9: .2f} GParam, "
        f"{nparams * param_size_multiplier / 1.0e9: .2f} GB"
    )
    logging.info(
        f"Accessed weights per batch: {B * sum(Ds) * L * param_size_multiplier / 1.0e9: .2f} GB"
    )
    logging.info(f"Running on {torch.cuda.get_device_name()}, managed={managed}")

    requests = generate_requests(
        iters, B, T, L, E, alpha=alpha, weighted=weighted, use_cpu=not torch.cuda.is_available()
    )

    # forward
    time_per_iter = benchmark_requests(
        requests,
        lambda indices, offsets, per_sample_weights: emb.forward(
            indices.long(),
            offsets.long(),
            per_sample_weights,
        ),
        flush_gpu_cache_size_mb=flush_gpu_cache_size_mb,
        num_warmups=warmup_runs,
    )
    logging.info(
        f"Forward, B: {B}, E: {E}, T: {T}, D: {D}, L: {L}, W: {weighted}, "
        f"BW: {read_write_bytes / time_per_iter / 1.0e9: .2f} GB/s, "
        f"T: {time_per_iter * 1.0e6:.0f}us"
    )

    # forward + backward (fused optimizer step happens inside backward)
    if do_pooling:
        grad_output = torch.randn(B, sum(Ds)).to(get_device())
    else:
        grad_output = torch.randn(B * T * L, D).to(get_device())
    time_per_iter = benchmark_requests(
        requests,
        lambda indices, offsets, per_sample_weights: emb(
            indices.long(),
            offsets.long(),
            per_sample_weights,
        ),
        flush_gpu_cache_size_mb=flush_gpu_cache_size_mb,
        grad=grad_output,
        num_warmups=warmup_runs,
    )
    logging.info(
        f"Fwd + Bwd, B: {B}, E: {E}, T: {T}, D: {D}, L: {L}, "
        f"BW: {3 * read_write_bytes / time_per_iter / 1.0e9: .2f} GB/s, "
        f"T: {time_per_iter * 1.0e6:.0f}us"
    )
    logging.info(
        f"peak device memory: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB"
    )


def round_up(a: int, b: int) -> int:
    return int((a + b - 1) // b) * b


if __name__ == "__main__":
    cli()
