# Copyright (c) Meta Platforms, Inc. and affiliates.
# Licensed under the Apache License, Version 2.0

# pyre-strict

"""
Low-latency ranking/retrieval inference for HSTU models.

The runner keeps one model replica per device, pads requests into a small set of
static (batch, seq_len) buckets and captures one CUDA graph per bucket so that the
many tiny jagged kernels of an STU stack are launched as a single graph replay.
"""

import logging
import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import torch

from generative_recommenders.common import (
    HammerKernel,
    set_static_max_seq_lens,
    set_use_runtime_max_seq_len,
)
from generative_recommenders.modules.stu import STUStack

logger: logging.Logger = logging.getLogger(__name__)


@dataclass
class Bucket:
    batch_size: int
    max_seq_len: int


@dataclass
class _Captured:
    graph: "torch.cuda.CUDAGraph"
    static_x: torch.Tensor
    static_lengths: torch.Tensor
    static_offsets: torch.Tensor
    static_num_targets: torch.Tensor
    static_out: torch.Tensor


DEFAULT_BUCKETS: List[Bucket] = [
    Bucket(batch_size=1, max_seq_len=512),
    Bucket(batch_size=8, max_seq_len=512),
    Bucket(batch_size=32, max_seq_len=1024),
    Bucket(batch_size=64, max_seq_len=2048),
]


class HSTUInferenceRunner:
    def __init__(
        self,
        model: STUStack,
        embedding_dim: int,
        device_id: int = 0,
        buckets: Optional[List[Bucket]] = None,
        dtype: torch.dtype = torch.bfloat16,
        use_cuda_graph: bool = True,
        warmup_iters: int = 3,
    ) -> None:
        self._device = torch.device("cuda", device_id)
        torch.cuda.set_device(self._device)
        self._dtype = dtype
        self._embedding_dim = embedding_dim
        self._buckets = sorted(
            buckets or DEFAULT_BUCKETS, key=lambda b: (b.max_seq_len, b.batch_size)
        )
        self._use_graph = use_cuda_graph
        self._warmup_iters = warmup_iters

        # static shapes only: autotuned Triton configs are keyed on max_seq_len
        set_static_max_seq_lens([b.max_seq_len for b in self._buckets])
        set_use_runtime_max_seq_len(False)

        model.set_is_inference(True)
        model.set_hammer_kernel(HammerKernel.TRITON_CC)
        self._model = model.to(self._device, dtype=dtype).eval()
        self._pool = torch.cuda.graph_pool_handle() if use_cuda_graph else None
        self._captured: Dict[Tuple[int, int], _Captured] = {}

    # ------------------------------------------------------------------
    # capture
    # ------------------------------------------------------------------
    def _static_inputs(
        self, bucket: Bucket
    ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        total = bucket.batch_size * bucket.max_seq_len
        x = torch.zeros(
            (total, self._embedding_dim), dtype=self._dtype, device=self._device
        )
        lengths = torch.full(
            (bucket.batch_size,),
            bucket.max_seq_len,
            dtype=torch.int64,
            device=self._device,
        )
        offsets = torch.zeros(
            (bucket.batch_size + 1,), dtype=torch.int64, device=self._device
        )
        offsets[1:] = torch.cumsum(lengths, dim=0)
        num_targets = torch.ones(
            (bucket.batch_size,), dtype=torch.int64, device=self._device
        )
        return x, lengths, offsets, num_targets

    @torch.inference_mode()
    def _capture(self, bucket: Bucket) -> _Captured:
        x, lengths, offsets, num_targets = self._static_inputs(bucket)

        # warm up on a side stream (required before capture: autotuning,
        # allocator warm-up, lazy module init)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(self._warmup_iters):
                self._model(
                    x=x,
                    x_lengths=lengths,
                    x_offsets=offsets,
                    max_seq_len=bucket.max_seq_len,
                    num_targets=num_targets,
                )
        torch.cuda.current_stream().wait_stream(s)

        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, pool=self._pool):
            out = self._model(
                x=x,
                x_lengths=lengths,
                x_offsets=offsets,
                max_seq_len=bucket.max_seq_len,
                num_targets=num_targets,
            )
        return _Captured(
            graph=g,
            static_x=x,
            static_lengths=lengths,
            static_offsets=offsets,
            static_num_targets=num_targets,
            static_out=out,
        )

    def capture_all(self) -> None:
        if not self._use_graph:
            return
        t0 = time.perf_counter()
        for bucket in self._buckets:
            self._captured[(bucket.batch_size, bucket.max_seq_len)] = self._capture(
                bucket
            )
        torch.cuda.synchronize()
        logger.info(
            f"captured {len(self._captured)} graphs in {time.perf_counter() - t0:.1f}s"
        )

    # ------------------------------------------------------------------
    # serve
    # ------------------------------------------------------------------
    def _pick_bucket(self, batch_size: int, max_len: int) -> Bucket:
        for b in self._buckets:
            if b.batch_size >= batch_size and b.max_seq_len >= max_len:
                return b
        raise ValueError(f"no bucket for batch={batch_size} len={max_len}")

    @torch.inference_mode()
    def predict(
        self,
        seq_embeddings: torch.Tensor,
        seq_lengths: torch.Tensor,
        num_targets: torch.Tensor,
    ) -> torch.Tensor:
        """seq_embeddings: jagged [sum(L_i), D] on host or device."""
        B = seq_lengths.numel()
        max_len = int(seq_lengths.max())
        bucket = self._pick_bucket(B, max_len)
        seq_embeddings = seq_embeddings.to(self._device, self._dtype, non_blocking=True)
        seq_lengths = seq_lengths.to(self._device, non_blocking=True)
        num_targets = num_targets.to(self._device, non_blocking=True)

        if not self._use_graph:
            offsets = torch.zeros((B + 1,), dtype=torch.int64, device=self._device)
            offsets[1:] = torch.cumsum(seq_lengths, dim=0)
            return self._model(
                x=seq_embeddings,
                x_lengths=seq_lengths,
                x_offsets=offsets,
                max_seq_len=bucket.max_seq_len,
                num_targets=num_targets,
            )

        cap = self._captured[(bucket.batch_size, bucket.max_seq_len)]
        # scatter the request into the padded static buffers
        cap.static_x.zero_()
        cap.static_lengths.fill_(0)
        cap.static_lengths[:B] = seq_lengths
        cap.static_offsets[1:] = torch.cumsum(cap.static_lengths, dim=0)
        cap.static_num_targets.fill_(1)
        cap.static_num_targets[:B] = num_targets
        dst = torch.ops.fbgemm.asynchronous_complete_cumsum(seq_lengths)[:-1]
        row_ids = torch.repeat_interleave(
            torch.arange(B, device=self._device), seq_lengths
        )
        pos = torch.arange(seq_embeddings.shape[0], device=self._device) - dst[row_ids]
        cap.static_x[row_ids * bucket.max_seq_len + pos] = seq_embeddings
        cap.graph.replay()
        out = cap.static_out.view(bucket.batch_size, bucket.max_seq_len, -1)
        last = (seq_lengths - 1).clamp(min=0)
        return out[torch.arange(B, device=self._device), last].clone()

    def benchmark(self, bucket: Bucket, iters: int = 100) -> float:
        x, lengths, offsets, num_targets = self._static_inputs(bucket)
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            self.predict(x, lengths, num_targets)
        end.record()
        end.synchronize()
        ms = start.elapsed_time(end) / iters
        logger.info(
            f"bucket B={bucket.batch_size} N={bucket.max_seq_len}: {ms:.3f} ms/iter"
        )
        return ms
