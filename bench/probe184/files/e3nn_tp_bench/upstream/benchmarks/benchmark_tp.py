"""Benchmark e3nn tensor products: eager vs. TorchScript (fx codegen) vs. torch.compile.

    python benchmarks/benchmark_tp.py --irreps-in1 "32x0e + 32x1o + 32x2e" \
        --irreps-in2 "0e + 1o + 2e" --irreps-out "32x0e + 32x1o + 32x2e" \
        --batch 10000 --backward --compile max-autotune
"""
import argparse
import itertools
import logging
import time

import torch
from torch.utils.benchmark import Timer

import e3nn
from e3nn import o3
from e3nn.util.jit import compile as e3nn_compile

logging.basicConfig(level=logging.INFO)

# https://pytorch.org/docs/master/notes/cuda.html#tensorfloat-32-tf32-on-ampere-devices
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jit", type=lambda x: x.lower() in ("1", "true", "yes"), default=True)
    parser.add_argument("--compile", type=str, default=None, choices=[None, "default", "reduce-overhead", "max-autotune"])
    parser.add_argument("--irreps", type=str, default="8x0e + 8x1e + 8x2e + 8x3e")
    parser.add_argument("--irreps-in1", type=str, default=None)
    parser.add_argument("--irreps-in2", type=str, default=None)
    parser.add_argument("--irreps-out", type=str, default=None)
    parser.add_argument("--cuda", type=lambda x: x.lower() in ("1", "true", "yes"), default=True)
    parser.add_argument("--backward", action="store_true")
    parser.add_argument("--opt-ein", type=lambda x: x.lower() in ("1", "true", "yes"), default=True)
    parser.add_argument("--specialized-code", type=lambda x: x.lower() in ("1", "true", "yes"), default=True)
    parser.add_argument("--elementwise", action="store_true")
    parser.add_argument("-n", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--sweep", action="store_true", help="also sweep batch sizes (GPU only)")
    parser.add_argument("--dtype", type=str, default="float32", choices=["float32", "float64"])
    return parser.parse_args()


def main():
    args = parse()

    device = "cuda" if (torch.cuda.is_available() and args.cuda) else "cpu"
    args.cuda = device == "cuda"
    dtype = {"float32": torch.float32, "float64": torch.float64}[args.dtype]
    torch.set_default_dtype(dtype)

    print("======= Benchmark with settings: ======")
    for key, val in vars(args).items():
        print(f"{key:>18} : {val}")
    print("=" * 40)

    e3nn.set_optimization_defaults(
        specialized_code=args.specialized_code,
        optimize_einsums=args.opt_ein,
        jit_script_fx=args.jit and args.compile is None,
    )

    irreps_in1 = o3.Irreps(args.irreps_in1 if args.irreps_in1 else args.irreps)
    irreps_in2 = o3.Irreps(args.irreps_in2 if args.irreps_in2 else args.irreps)
    irreps_out = o3.Irreps(args.irreps_out if args.irreps_out else args.irreps)

    if args.elementwise:
        tp = o3.ElementwiseTensorProduct(irreps_in1, irreps_in2)
        if args.backward:
            print("Elementwise TP has no weights, cannot backward. Setting --backward False.")
            args.backward = False
    else:
        tp = o3.FullyConnectedTensorProduct(irreps_in1, irreps_in2, irreps_out)
    tp = tp.to(device=device)
    assert len(tp.instructions) > 0, "Bad irreps, no instructions"
    print(f"Tensor product: {tp}")
    print("Instructions:")
    for ins in tp.instructions:
        print(f"  {ins}")

    # from https://pytorch.org/docs/master/_modules/torch/utils/benchmark/utils/timer.html#Timer.timeit
    warmup = max(int(args.n // 100), 1)

    inputs = iter(
        [
            (irreps_in1.randn(args.batch, -1).to(device=device), irreps_in2.randn(args.batch, -1).to(device=device))
            for _ in range(args.n + warmup)
        ]
    )

    if args.compile is not None:
        logging.info(f"torch.compile(mode={args.compile})")
        tp = torch.compile(tp, mode=args.compile, fullgraph=True)

    # compile
    if args.jit and args.compile is None:
        tp = e3nn_compile(tp)
        logging.info("using TorchScript (fx codegen) path")

    print("starting...")

    # tanh() forces it to realize the grad as a full size matrix rather than expanded (stride 0) ones
    t = Timer(
        stmt=("tp.zero_grad()\n" "out = tp(*next(inputs))\n" + ("out.tanh().sum().backward()\n" if args.backward else "")),
        globals={"tp": tp, "inputs": inputs},
    )

    perloop = t.timeit(args.n)

    print()
    print(perloop)

    if args.cuda:
        torch.cuda.synchronize()
        print(f"max memory allocated: {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB")

    # throughput sweep over batch sizes on GPU
    if args.cuda and args.sweep:
        sync = torch.cuda.synchronize
        for batch in (128, 1024, 8192, 65536):
            x1 = irreps_in1.randn(batch, -1, device="cuda")
            x2 = irreps_in2.randn(batch, -1, device="cuda")
            for _ in range(5):
                tp(x1, x2)
            sync()
            t0 = time.perf_counter()
            for _ in range(20):
                tp(x1, x2)
            sync()
            dt = (time.perf_counter() - t0) / 20
            print(f"batch {batch:>6}: {dt * 1e3:.3f} ms  ({batch / dt / 1e6:.2f} M pairs/s)")

if __name__ == "__main__":
    main()
