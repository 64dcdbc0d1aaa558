"""Eager vs torch.compile latency / throughput benchmark for the model zoo.

    python benchmarks/compile_bench.py --model vit_b16 --batch 64 --dtype bf16 --mode max-autotune

Timing uses CUDA events around N iterations after warm-up; peak memory is read from the caching
allocator. Results are appended to a JSONL file so runs on different GPUs can be compared.
"""
import argparse
import contextlib
import gc
import json
import os
import platform
import statistics
import time
from typing import Callable, Dict, List

import torch
import torch._dynamo
import torch._inductor.config as inductor_config
import torch.nn as nn

from zoo import build_model, example_inputs

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def configure_inductor(args):
    # Autotune GEMMs against Triton templates and CUTLASS, and let Inductor use CUDA graphs.
    inductor_config.max_autotune = args.mode == "max-autotune"
    inductor_config.max_autotune_gemm_backends = "ATEN,TRITON,CUTLASS"
    inductor_config.cuda.cutlass_dir = os.environ.get("CUTLASS_DIR", "/opt/cutlass")
    inductor_config.coordinate_descent_tuning = True
    inductor_config.triton.cudagraphs = args.cudagraphs
    inductor_config.triton.unique_kernel_names = True
    inductor_config.fx_graph_cache = True
    inductor_config.epilogue_fusion = True
    torch._dynamo.config.cache_size_limit = 64
    torch._dynamo.config.suppress_errors = False


def device_info() -> Dict[str, str]:
    props = torch.cuda.get_device_properties(0)
    return {
        "device": torch.cuda.get_device_name(0),
        "sm": f"{props.major}.{props.minor}",
        "num_sms": props.multi_processor_count,
        "mem_gb": round(props.total_memory / 2 ** 30, 1),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": str(torch.backends.cudnn.version()),
        "host": platform.node(),
    }


def time_fn(fn: Callable, inputs, warmup: int, iters: int) -> List[float]:
    for _ in range(warmup):
        fn(*inputs)
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*inputs)
        end.record()
        torch.cuda.synchronize()  # wait for the end event
        times.append(start.elapsed_time(end))
    return times


def measure(model: nn.Module, inputs, args, label: str) -> Dict[str, float]:
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()

    if args.train:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)

        def step(*xs):
            with torch.autocast("cuda", dtype=DTYPES[args.dtype], enabled=args.dtype != "fp32"):
                out = model(*xs)
                loss = out.float().pow(2).mean()
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        fn = step
    else:
        @torch.inference_mode()
        def fwd(*xs):
            with torch.autocast("cuda", dtype=DTYPES[args.dtype], enabled=args.dtype != "fp32"):  # inference
                return model(*xs)
        fn = fwd

    t_compile = time.perf_counter()
    fn(*inputs)
    torch.cuda.synchronize()  # first call includes compilation
    first_call_s = time.perf_counter() - t_compile

    times = time_fn(fn, inputs, args.warmup, args.iters)
    peak = torch.cuda.max_memory_allocated() / 2 ** 30
    med = statistics.median(times)
    res = {
        "label": label,
        "median_ms": med,
        "p90_ms": sorted(times)[int(0.9 * len(times)) - 1],
        "throughput": args.batch / (med / 1e3),
        "first_call_s": first_call_s,
        "peak_mem_gb": peak,
    }
    print(f"{label:>24}: {med:8.3f} ms  {res['throughput']:10.1f} samples/s  peak {peak:5.2f} GB  "
          f"first call {first_call_s:6.1f}s")
    return res


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="vit_b16")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--dtype", default="bf16", choices=list(DTYPES))
    p.add_argument("--mode", default="max-autotune",
                   choices=["default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"])
    p.add_argument("--cudagraphs", action="store_true")
    p.add_argument("--dynamic", action="store_true")
    p.add_argument("--train", action="store_true")
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--iters", type=int, default=100)
    p.add_argument("--mem-fraction", type=float, default=None,
                   help="cap the caching allocator to emulate a smaller card")
    p.add_argument("--out", default="bench_results.jsonl")
    args = p.parse_args()

    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True
    torch.set_float32_matmul_precision("high")

    device = torch.device("cuda", torch.cuda.current_device())
    if args.mem_fraction is not None:
        torch.cuda.set_per_process_memory_fraction(args.mem_fraction, device)
    model = build_model(args.model).to(device)
    if not args.train:
        model.eval()
    inputs = [x.to(device) for x in example_inputs(args.model, args.batch)]

    results = {"args": vars(args), "env": device_info(), "runs": []}
    results["runs"].append(measure(model, inputs, args, "eager"))

    configure_inductor(args)
    torch._dynamo.reset()
    compiled = torch.compile(model, mode=args.mode, dynamic=args.dynamic, fullgraph=False)
    results["runs"].append(measure(compiled, inputs, args, f"compile[{args.mode}]"))

    eager_ms = results["runs"][0]["median_ms"]
    comp_ms = results["runs"][1]["median_ms"]
    print(f"speedup: {eager_ms / comp_ms:.2f}x")
    with open(args.out, "a") as f:
        f.write(json.dumps(results) + "\n")


if __name__ == "__main__":
    main()
