"""
Benchmark int8 weight-only / dynamic-quant linear layers under tensor parallelism.

Launch with:
    torchrun --standalone --nproc_per_node=8 benchmarks/benchmark_int8_tp.py --M 4096 --K 8192 --N 28672
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
from torch.distributed._tensor import DeviceMesh, Replicate, Shard, distribute_tensor
from torch.distributed.device_mesh import init_device_mesh

from torchao.kernel.intmm import int_scaled_matmul
from torchao.quantization.utils import quantize_activation_per_token_absmax

os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
os.environ.setdefault("TORCH_NCCL_AVOID_RECORD_STREAMS", "1")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--M", type=int, default=4096)
    p.add_argument("--K", type=int, default=8192)
    p.add_argument("--N", type=int, default=28672)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--dtype", type=str, default="bfloat16", choices=["bfloat16", "float16"])
    p.add_argument("--no-compile", action="store_true", help="skip torch.compile of the reference path")
    return p.parse_args()


def setup():
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", rank=int(os.environ["RANK"]), world_size=world_size)
    mesh = init_device_mesh("cuda", (world_size,), mesh_dim_names=("tp",))
    return local_rank, world_size, mesh


def quantize_weight_int8(w):
    # symmetric per-output-channel int8
    scale = w.abs().amax(dim=1, keepdim=True).clamp(min=1e-5) / 127.0
    w_int8 = torch.round(w / scale).clamp(-128, 127).to(torch.int8)
    return w_int8, scale.squeeze(1)


def timed(fn, iters, warmup):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()  # wait for the timed region
    return start.elapsed_time(end) / iters


def main():
    args = parse_args()
    local_rank, world_size, mesh = setup()
    dtype = getattr(torch, args.dtype)
    torch.manual_seed(0)

    # column-parallel linear: each rank owns N // world_size output features
    n_local = args.N // world_size
    x = torch.randn(args.M, args.K, dtype=dtype).cuda()
    w_full = torch.randn(args.N, args.K, dtype=dtype, device="cuda")
    w_dt = distribute_tensor(w_full, mesh, [Shard(0)])
    w_local = w_dt.to_local()
    assert w_local.shape[0] == n_local

    w_int8, w_scale = quantize_weight_int8(w_local)
    w_int8_t = w_int8.t().contiguous()

    def ref_linear():
        y_local = x @ w_local.t()
        out = [torch.empty_like(y_local) for _ in range(world_size)]
        dist.all_gather(out, y_local)
        return torch.cat(out, dim=-1)

    def int8_linear():
        x_int8, x_scale = quantize_activation_per_token_absmax(x)
        y_local = int_scaled_matmul(x_int8, w_int8_t, x_scale.reshape(-1, 1)) * w_scale
        out = [torch.empty_like(y_local) for _ in range(world_size)]
        dist.all_gather(out, y_local.to(dtype))
        return torch.cat(out, dim=-1)

    if not args.no_compile:
        ref_linear = torch.compile(ref_linear, mode="max-autotune-no-cudagraphs")

    t_ref = timed(ref_linear, args.iters, args.warmup)
    t_int8 = timed(int8_linear, args.iters, args.warmup)
    y_ref = ref_linear()
    y_q = int8_linear()
    rel_err = ((y_ref.float() - y_q.float()).norm() / y_ref.float().norm()).item()

    peak_gb = torch.cuda.max_memory_allocated() / 1e9
    if dist.get_rank() == 0:
        print(f"[{time.strftime('%H:%M:%S')}] world={world_size} M={args.M} K={args.K} N={args.N} dtype={args.dtype}")
        print(f"  bf16 ref  : {t_ref:8.3f} ms")
        print(f"  int8 W8A8 : {t_int8:8.3f} ms  (speedup {t_ref / t_int8:.2f}x, rel err {rel_err:.3e})")
        print(f"  peak mem  : {peak_gb:.2f} GB on {torch.cuda.get_device_name(local_rank)}")

    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
