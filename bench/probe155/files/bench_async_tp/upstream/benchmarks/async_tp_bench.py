"""Micro-benchmark: sequence-parallel TP feed-forward with and without async TP.

Async TP lets Inductor decompose the all-gather -> matmul and matmul -> reduce-scatter
pairs into micro-pipelined ops backed by symmetric memory, so communication overlaps the
GEMMs. Best results need NVLink/NVSwitch (H100 SXM or newer).

    torchrun --standalone --nproc_per_node 8 benchmarks/async_tp_bench.py --dim 8192 --seq 8192
"""
import argparse
import json
import os

import torch
import torch._inductor.config as inductor_config
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed._symmetric_memory import enable_symm_mem_for_group
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Shard
from torch.distributed.tensor.parallel import (
    ColwiseParallel,
    parallelize_module,
    RowwiseParallel,
)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dim", type=int, default=4096)
    p.add_argument("--hidden", type=int, default=14336)
    p.add_argument("--seq", type=int, default=4096)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--compile-mode", default="max-autotune-no-cudagraphs")
    p.add_argument("--out", default=None, help="optional json file for the results (rank 0)")
    return p.parse_args()


class FFN(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


def setup():
    # keep memory from async collectives bounded and surface hangs as errors
    os.environ.setdefault("TORCH_NCCL_AVOID_RECORD_STREAMS", "1")
    os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    world_size = dist.get_world_size()
    mesh = init_device_mesh("cuda", (world_size,), mesh_dim_names=("tp",))
    return mesh


def build(mesh, args, async_tp: bool):
    model = FFN(args.dim, args.hidden).to(device="cuda", dtype=torch.bfloat16)
    parallelize_module(
        model,
        mesh,
        {
            "w1": ColwiseParallel(input_layouts=Shard(1)),
            "w3": ColwiseParallel(input_layouts=Shard(1)),
            "w2": RowwiseParallel(output_layouts=Shard(1)),
        },
    )
    if async_tp:
        inductor_config._micro_pipeline_tp = True
        enable_symm_mem_for_group(mesh.get_group().group_name)
    else:
        inductor_config._micro_pipeline_tp = False
    torch._dynamo.reset()
    return torch.compile(model, mode=args.compile_mode)


def bench(fn, inp, iters: int, warmup: int) -> float:
    for _ in range(warmup):
        fn(inp).sum().backward()
    torch.cuda.synchronize()

    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn(inp).sum().backward()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / iters


def main():
    args = parse_args()

    # TF32 for any fp32 matmuls that sneak in (loss, norms)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    inductor_config.coordinate_descent_tuning = True
    inductor_config.triton.unique_kernel_names = True

    mesh = setup()
    rank, world = dist.get_rank(), dist.get_world_size()
    if rank == 0:
        print(f"GPU: {torch.cuda.get_device_name()} x{world}, capability {torch.cuda.get_device_capability()}")
        if torch.cuda.get_device_capability() < (9, 0):
            print("warning: async TP is tuned for SM90+ with NVSwitch; expect little overlap")

    torch.manual_seed(1234)
    inp = torch.randn(
        args.batch, args.seq // world, args.dim, device="cuda", dtype=torch.bfloat16, requires_grad=True
    )

    results = {}
    for async_tp in (False, True):
        model = build(mesh, args, async_tp)
        ms = bench(model, inp, args.iters, args.warmup)
        tag = "async_tp" if async_tp else "sync_tp"
        results[tag] = ms
        if rank == 0:
            print(f"{tag:>9}: {ms:8.3f} ms/iter")

    peak = torch.cuda.max_memory_allocated() / 2**30
    results["peak_mem_gib"] = peak
    if rank == 0:
        speedup = results["sync_tp"] / results["async_tp"]
        print(f"speedup: {speedup:.3f}x, peak memory {peak:.2f} GiB")
        if args.out:
            with open(args.out, "w") as f:
                json.dump(results, f, indent=2)

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
