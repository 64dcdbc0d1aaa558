# Copyright (c) Meta Platforms, Inc. and affiliates.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# pyre-unsafe

"""Micro-benchmark for HSTU jagged attention: TRITON vs CUDA vs PYTORCH.

    python3 benchmarks/bench_hstu_attention.py --batch-size 512 --heads 4 \
        --attn-dim 128 --max-seq-len 1024 --sparsity 0.5 --dtype bf16

Prints a table of forward / forward+backward latency (ms) and achieved TFLOPs
for every available implementation, plus a max-abs-diff against PYTORCH.
"""

import argparse
import csv
import logging
import math
import os
import sys
from typing import Callable, Dict, List, Tuple

import torch

# @manual=//triton:triton
import triton

from generative_recommenders.common import (
    generate_sparse_seq_len,
    HammerKernel,
    set_dev_mode,
)
from generative_recommenders.ops.hstu_attention import HAS_HSTU_CUDA, hstu_mha

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
logger = logging.getLogger("bench_hstu_attention")

DTYPES: Dict[str, torch.dtype] = {
    "fp32": torch.float32,
    "fp16": torch.float16,
    "bf16": torch.bfloat16,
}


def _parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--attn-dim", type=int, default=128)
    p.add_argument("--hidden-dim", type=int, default=128)
    p.add_argument("--max-seq-len", type=int, default=1024)
    p.add_argument("--sparsity", type=float, default=0.5)
    p.add_argument("--dtype", choices=list(DTYPES), default="bf16")
    p.add_argument("--kernels", default="TRITON,CUDA,PYTORCH")
    p.add_argument("--warmup", type=int, default=25, help="ms of warmup")
    p.add_argument("--rep", type=int, default=100, help="ms of measurement")
    p.add_argument("--backward", action="store_true")
    p.add_argument("--csv", default="")
    p.add_argument("--device", type=int, default=0)
    p.add_argument("--nvtx", action="store_true", help="emit NVTX ranges for nsys")
    return p.parse_args()


def _make_inputs(
    args: argparse.Namespace, device: torch.device
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    dtype = DTYPES[args.dtype]
    lengths = generate_sparse_seq_len(
        size=args.batch_size,
        max_seq_len=args.max_seq_len,
        sparsity=args.sparsity,
        device=device,
    )
    seq_offsets = torch.zeros(
        (args.batch_size + 1,), dtype=torch.int64, device=device
    )
    seq_offsets[1:] = torch.cumsum(lengths, dim=0)
    L = int(seq_offsets[-1].item())
    q = torch.randn(
        (L, args.heads, args.attn_dim), dtype=dtype, device=device
    ).requires_grad_(args.backward)
    k = torch.randn(
        (L, args.heads, args.attn_dim), dtype=dtype, device=device
    ).requires_grad_(args.backward)
    v = torch.randn(
        (L, args.heads, args.hidden_dim), dtype=dtype, device=device
    ).requires_grad_(args.backward)
    return q, k, v, seq_offsets


def _flops(args: argparse.Namespace, seq_offsets: torch.Tensor) -> float:
    lengths = (seq_offsets[1:] - seq_offsets[:-1]).double()
    # causal: ~half of N^2 for both QK^T and AV
    per_seq = lengths * lengths * args.heads * (args.attn_dim + args.hidden_dim)
    flops = float(per_seq.sum().item())
    return flops * (3.5 if args.backward else 1.0)


def _time_fn(fn: Callable[[], None], warmup: int, rep: int) -> float:
    """Median latency in ms, measured with CUDA events."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times: List[float] = []
    n_iter = max(5, rep // 5)
    for _ in range(n_iter):
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def main() -> int:
    args = _parse_args()
    torch.cuda.set_device(args.device)
    device = torch.device("cuda", args.device)
    torch.manual_seed(1001)
    set_dev_mode(False)

    major, minor = torch.cuda.get_device_capability(device)
    logger.info(
        f"device: {torch.cuda.get_device_name(device)} (sm_{major}{minor}), "
        f"torch {torch.__version__}, cuda {torch.version.cuda}, triton {triton.__version__}"
    )
    if major < 8 and args.dtype == "bf16":
        logger.warning("bf16 is emulated below sm_80; numbers will be meaningless")

    q, k, v, seq_offsets = _make_inputs(args, device)
    alpha = 1.0 / math.sqrt(args.attn_dim)
    flops = _flops(args, seq_offsets)
    do = torch.randn_like(v) if args.backward else None

    kernels = [HammerKernel[k.strip()] for k in args.kernels.split(",") if k.strip()]
    if HammerKernel.CUDA in kernels and not HAS_HSTU_CUDA:
        logger.warning("hstu_attn CUDA extension not built; skipping CUDA kernel")
        kernels.remove(HammerKernel.CUDA)

    ref_out = hstu_mha(
        max_seq_len=args.max_seq_len,
        alpha=alpha,
        q=q,
        k=k,
        v=v,
        seq_offsets=seq_offsets,
        causal=True,
        kernel=HammerKernel.PYTORCH,
    ).detach()

    rows = []
    for kernel in kernels:

        def _run(kernel: HammerKernel = kernel) -> None:
            out = hstu_mha(
                max_seq_len=args.max_seq_len,
                alpha=alpha,
                q=q,
                k=k,
                v=v,
                seq_offsets=seq_offsets,
                causal=True,
                kernel=kernel,
            )
            if args.backward:
                out.backward(do, retain_graph=False)

        if args.nvtx:
            torch.cuda.nvtx.range_push(f"hstu_mha_{kernel.value}")
        if kernel == HammerKernel.TRITON:
            # triton's do_bench flushes L2 between reps, matching the other runs
            ms = triton.testing.do_bench(_run, warmup=args.warmup, rep=args.rep)
        else:
            ms = _time_fn(_run, args.warmup, args.rep)
        if args.nvtx:
            torch.cuda.nvtx.range_pop()

        with torch.no_grad():
            out = hstu_mha(
                max_seq_len=args.max_seq_len,
                alpha=alpha,
                q=q,
                k=k,
                v=v,
                seq_offsets=seq_offsets,
                causal=True,
                kernel=kernel,
            )
            max_diff = (out.float() - ref_out.float()).abs().max().item()
        tflops = flops / ms / 1e9
        rows.append(
            {
                "kernel": kernel.value,
                "ms": f"{ms:.3f}",
                "tflops": f"{tflops:.1f}",
                "max_abs_diff": f"{max_diff:.2e}",
            }
        )
        logger.info(
            f"{kernel.value:>8}: {ms:8.3f} ms  {tflops:6.1f} TFLOP/s  max|diff|={max_diff:.2e}"
        )

    peak_mb = torch.cuda.max_memory_allocated(device) / 2**20
    logger.info(f"peak memory: {peak_mb:.0f} MiB")

    if args.csv:
        write_header = not os.path.exists(args.csv)
        with open(args.csv, "a", newline="") as f:
            w = csv.DictWriter(
                f, fieldnames=["kernel", "ms", "tflops", "max_abs_diff"]
            )
            if write_header:
                w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
