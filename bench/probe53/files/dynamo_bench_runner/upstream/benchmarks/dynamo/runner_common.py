#!/usr/bin/env python3
"""Shared driver for the torch.compile model benchmarks (speedup / accuracy / compile-time).

A trimmed-down take on benchmarks/dynamo/common.py for our in-house model zoo:

    python benchmarks/dynamo/runner_common.py --performance --inductor --training --amp --only resnet50
    python benchmarks/dynamo/runner_common.py --accuracy --backend=aot_eager --float32
"""
import argparse
import collections
import contextlib
import csv
import functools
import gc
import logging
import os
import subprocess
import sys
import time

import numpy as np
import torch
import torch._dynamo
import torch._dynamo.utils
import torch._inductor.config
from torch._dynamo.testing import collect_results, reset_rng_state, same

from model_zoo import MODELS, load_model

log = logging.getLogger(__name__)

current_name = ""
current_device = ""
output_filename = None


def parse_args(args=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--devices", "--device", "-d", action="append", help="cpu or cuda")
    parser.add_argument("--only", help="run just one model")
    parser.add_argument("--batch-size", "--batch_size", type=int, help="batch size for benchmarking")
    parser.add_argument("--iterations", type=int, default=2, help="how many iterations to run")
    parser.add_argument("--repeat", "-n", type=int, default=30, help="number of timing runs")
    parser.add_argument("--backend", choices=torch._dynamo.list_backends(exclude_tags=None), help="compile backend")
    parser.add_argument("--inductor", action="store_true", help="shortcut for --backend=inductor")
    parser.add_argument("--cudagraphs", action="store_true", help="wrap inductor output in CUDA graphs")
    parser.add_argument("--disable-cudagraphs", action="store_true")
    parser.add_argument("--max-autotune", action="store_true")
    parser.add_argument("--dynamic-shapes", action="store_true")
    parser.add_argument("--training", action="store_true")
    parser.add_argument("--amp", action="store_true")
    parser.add_argument("--float32", action="store_true")
    parser.add_argument("--bfloat16", action="store_true")
    parser.add_argument("--performance", action="store_true")
    parser.add_argument("--accuracy", action="store_true")
    parser.add_argument("--deterministic", action="store_true")
    parser.add_argument("--nvtx", action="store_true", help="emit NVTX ranges around each timed iteration")
    parser.add_argument("--output", help="csv file for results")
    return parser.parse_args(args)


def synchronize():
    pass


def output_csv(filename, headers, row):
    if os.path.exists(filename):
        with open(filename) as fd:
            lines = list(csv.reader(fd)) or [[]]
            if headers and len(headers) > len(lines[0]):
                lines[0] = headers
            else:
                headers = lines[0]
    else:
        lines = [headers]
    lines.append([(f"{x:.6f}" if isinstance(x, float) else x) for x in row])
    with open(filename, "w") as fd:
        writer = csv.writer(fd, lineterminator="\n")
        for line in lines:
            writer.writerow(list(line) + ["0"] * (len(headers) - len(line)))


def environment_info():
    info = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda or "n/a",
        "arch_list": " ".join(torch.cuda.get_arch_list()),
    }
    try:
        smi = subprocess.check_output(
            ["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"], text=True
        )
        info["gpus"] = smi.strip().replace("\n", "; ")
    except (OSError, subprocess.CalledProcessError):
        info["gpus"] = "unknown"
    return info


def reset_memory():
    gc.collect()
    torch.cuda.empty_cache()
    # cuBLAS keeps per-stream workspaces alive across models; drop them so peak memory is per model
    torch._C._cuda_clearCublasWorkspaces()
    torch.cuda.reset_peak_memory_stats()


def timed(model, model_iter_fn, example_inputs, times=1, return_result=False, collect_outputs=False, nvtx=False):
    synchronize()
    reset_rng_state()
    t0 = time.perf_counter()
    for i in range(times):
        if nvtx:
            torch.cuda.nvtx.range_push(f"{current_name} iter {i}")
        result = model_iter_fn(model, example_inputs, collect_outputs=collect_outputs)
        if nvtx:
            torch.cuda.nvtx.range_pop()
        synchronize()
    t1 = time.perf_counter()
    return (t1 - t0, result) if return_result else t1 - t0


def forward_pass(mod, inputs, collect_outputs=True):
    with autocast():
        return mod(*inputs)


def forward_and_backward_pass(mod, inputs, collect_outputs=True):
    cloned_inputs = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
    mod.zero_grad(True)
    with autocast():
        pred = mod(*cloned_inputs)
        loss = pred.float().sum() if isinstance(pred, torch.Tensor) else sum(p.float().sum() for p in pred)
    loss.backward()
    if collect_outputs:
        return collect_results(mod, pred, loss, cloned_inputs)
    return None


autocast = contextlib.nullcontext


def speedup_experiment(args, model_iter_fn, model, example_inputs, compiled):
    timings = np.zeros((args.repeat, 2), np.float64)
    for rep in range(args.repeat):
        inputs = [x.clone() if isinstance(x, torch.Tensor) else x for x in example_inputs]
        timings[rep, 0] = timed(model, model_iter_fn, inputs, nvtx=args.nvtx)
        timings[rep, 1] = timed(compiled, model_iter_fn, inputs, nvtx=args.nvtx)
    median = np.median(timings, axis=0)
    speedup = median[0] / median[1]
    peak_mem = torch.cuda.max_memory_allocated() / 10**9
    return speedup, peak_mem, median


def configure_backend(args):
    if args.inductor:
        args.backend = "inductor"
    if args.backend == "inductor":
        torch._inductor.config.triton.cudagraphs = args.cudagraphs and not args.disable_cudagraphs
        torch._inductor.config.max_autotune = args.max_autotune
        torch._inductor.config.fallback_random = args.accuracy
    if args.dynamic_shapes:
        torch._dynamo.config.assume_static_by_default = False
    if args.deterministic:
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
        torch.use_deterministic_algorithms(True)
        torch.backends.cudnn.deterministic = True


def compile_model(args, model):
    if args.backend == "ts":
        scripted = torch.jit.script(model)
        return torch.jit.freeze(scripted.eval())
    if args.backend == "cudagraphs":
        return torch.compile(model, backend="cudagraphs")
    return torch.compile(model, backend=args.backend, dynamic=args.dynamic_shapes or None)


def run_one(args, name, device):
    global current_name, current_device, autocast
    current_name, current_device = name, device
    model, example_inputs = load_model(name, device, args.batch_size, training=args.training)

    if args.bfloat16:
        model = model.to(torch.bfloat16)
        example_inputs = [x.to(torch.bfloat16) if torch.is_floating_point(x) else x for x in example_inputs]
    if args.amp and example_inputs[0].device.type == "cuda":
        autocast = functools.partial(torch.cuda.amp.autocast, dtype=torch.float16)
    else:
        autocast = contextlib.nullcontext

    model_iter_fn = forward_and_backward_pass if args.training else forward_pass
    model.train(args.training)

    reset_memory()
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    t0 = time.perf_counter()
    compiled = compile_model(args, model)
    # first call triggers compilation
    timed(compiled, model_iter_fn, example_inputs, times=args.iterations)
    compile_s = time.perf_counter() - t0
    graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"]

    row = [device, name, args.batch_size]
    if args.accuracy:
        correct = model_iter_fn(model, example_inputs)
        new = model_iter_fn(compiled, example_inputs)
        status = "pass" if same(correct, new, tol=1e-2 if args.amp else 1e-4) else "fail_accuracy"
        row += [status, compile_s, graphs]
        print(f"{device:4} {name:34} {status}")
    else:
        speedup, peak_mem, median = speedup_experiment(args, model_iter_fn, model, example_inputs, compiled)
        row += [speedup, compile_s, peak_mem, graphs]
        print(f"{device:4} {name:34} {speedup:.3f}x  compile {compile_s:.1f}s  mem {peak_mem:.2f}GB  graphs {graphs}")
    return row


def main():
    args = parse_args()
    logging.basicConfig(level=logging.WARNING)
    args.devices = args.devices or ["cuda"]
    if "cuda" in args.devices:
        torch.backends.cuda.matmul.allow_tf32 = not args.float32
        torch.backends.cudnn.allow_tf32 = not args.float32
        torch.cuda.set_per_process_memory_fraction(0.95)
    configure_backend(args)

    global synchronize
    if "cuda" in args.devices:
        synchronize = torch.cuda.synchronize

    info = environment_info()
    print(" | ".join(f"{k}={v}" for k, v in info.items()))

    names = [args.only] if args.only else sorted(MODELS)
    headers = ["dev", "name", "batch_size"] + (
        ["accuracy", "compile_s", "graphs"] if args.accuracy else ["speedup", "compile_s", "peak_mem_gb", "graphs"]
    )
    for device in args.devices:
        for name in names:
            try:
                row = run_one(args, name, device)
            except Exception as e:  # noqa: BLE001
                log.exception("%s failed", name)
                row = [device, name, args.batch_size, f"fail: {type(e).__name__}"]
            if args.output:
                output_csv(args.output, headers, row)


if __name__ == "__main__":
    main()
