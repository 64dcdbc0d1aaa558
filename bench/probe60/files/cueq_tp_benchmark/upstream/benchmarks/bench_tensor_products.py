"""Benchmark the MACE interaction tensor products: e3nn vs cuequivariance vs OpenEquivariance.

Usage:
    python benchmarks/bench_tensor_products.py --channels 128 --lmax 3 --edges 200000 --dtype float32
"""

import argparse
import json
import statistics
import time
from typing import Callable, Dict, List

import torch
from e3nn import o3

import cuequivariance as cue
import cuequivariance_torch as cuet

try:
    import openequivariance as oeq

    HAS_OEQ = True
except ImportError:
    HAS_OEQ = False


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--channels", type=int, default=128)
    parser.add_argument("--lmax", type=int, default=3)
    parser.add_argument("--edges", type=int, default=200_000)
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--iters", type=int, default=50)
    parser.add_argument("--backward", action="store_true", help="also time the backward pass (force training)")
    parser.add_argument("--tf32", action="store_true")
    parser.add_argument("--out", type=str, default="tp_bench.json")
    return parser.parse_args()


def irreps_for(channels: int, lmax: int):
    node = o3.Irreps(f"{channels}x0e")
    edge = o3.Irreps.spherical_harmonics(lmax)
    target = o3.Irreps("+".join(f"{channels}x{l}{'e' if l % 2 == 0 else 'o'}" for l in range(lmax + 1)))
    return node, edge, target


def describe_device(device: torch.device) -> Dict[str, str]:
    props = torch.cuda.get_device_properties(device)
    return {
        "name": props.name,
        "capability": f"sm_{props.major}{props.minor}",
        "sms": str(props.multi_processor_count),
        "memory_gib": f"{props.total_memory / 1024**3:.1f}",
    }


def timed(fn: Callable[[], torch.Tensor], warmup: int, iters: int, backward: bool) -> List[float]:
    for _ in range(warmup):
        out = fn()
        if backward:
            out.sum().backward()
    torch.cuda.synchronize()

    times = []
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    for _ in range(iters):
        start.record()
        out = fn()
        if backward:
            out.sum().backward()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return times


def build_e3nn(node, edge, target, dtype, device):
    instructions = []
    irreps_mid = []
    for i, (mul, ir_in) in enumerate(node):
        for j, (_, ir_edge) in enumerate(edge):
            for ir_out in ir_in * ir_edge:
                if ir_out in target:
                    k = len(irreps_mid)
                    irreps_mid.append((mul, ir_out))
                    instructions.append((i, j, k, "uvu", True))
    tp = o3.TensorProduct(
        node,
        edge,
        o3.Irreps(irreps_mid),
        instructions,
        shared_weights=False,
        internal_weights=False,
    )
    return tp.to(device=device, dtype=dtype)


def build_cueq(node, edge, target, dtype, device):
    tp = cuet.ChannelWiseTensorProduct(
        cue.Irreps("O3", str(node)),
        cue.Irreps("O3", str(edge)),
        filter_irreps_out=cue.Irreps("O3", str(target)),
        layout=cue.mul_ir,
        shared_weights=False,
        internal_weights=False,
        dtype=dtype,
        math_dtype=dtype,
        use_fallback=False,
    )
    return tp.to(device)


def build_oeq(node, edge, target, dtype, device):
    problem = oeq.TPProblem(
        str(node),
        str(edge),
        str(target),
        instructions=None,
        shared_weights=False,
        internal_weights=False,
        irrep_dtype=dtype,
        weight_dtype=dtype,
    )
    return oeq.TensorProductConv(problem, deterministic=False)


def main():
    args = parse_args()
    device = torch.device("cuda:0")
    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    torch.backends.cudnn.allow_tf32 = args.tf32
    dtype = getattr(torch, args.dtype)
    torch.manual_seed(0)

    node, edge, target = irreps_for(args.channels, args.lmax)
    x = torch.randn(args.edges, node.dim, device=device, dtype=dtype, requires_grad=args.backward)
    sh = torch.randn(args.edges, edge.dim, device=device, dtype=dtype, requires_grad=args.backward)
    results: Dict[str, Dict] = {"device": describe_device(device), "args": vars(args)}

    backends = {"e3nn": build_e3nn, "cueq": build_cueq}
    if HAS_OEQ:
        backends["oeq"] = build_oeq

    for name, builder in backends.items():
        tp = builder(node, edge, target, dtype, device)
        weights = torch.randn(args.edges, tp.weight_numel, device=device, dtype=dtype, requires_grad=args.backward)
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
        torch.cuda.nvtx.range_push(f"tp/{name}")
        t0 = time.perf_counter()
        times = timed(lambda: tp(x, sh, weights), args.warmup, args.iters, args.backward)
        wall = time.perf_counter() - t0
        torch.cuda.nvtx.range_pop()
        peak = torch.cuda.max_memory_allocated(device) / 2**20
        results[name] = {
            "median_ms": statistics.median(times),
            "p90_ms": sorted(times)[int(0.9 * len(times)) - 1],
            "wall_s": wall,
            "peak_mib": peak,
        }
        print(f"{name:>6}: {statistics.median(times):8.3f} ms  (peak {peak:8.1f} MiB)")
        del tp, weights

    if "cueq" in results and "e3nn" in results:
        speedup = results["e3nn"]["median_ms"] / results["cueq"]["median_ms"]
        print(f"cuequivariance speed-up over e3nn: {speedup:.2f}x")

    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
