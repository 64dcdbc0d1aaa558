#!/usr/bin/env python3
r"""Wall-time and memory benchmark for acquisition-function optimization.

Fits a SingleTaskGP / KroneckerMultiTaskGP on synthetic data and times ``optimize_acqf`` for
qLogNEI, qUCB and qKG for a grid of (n, d, q) settings.  Results are written as one JSON line per
configuration so the nightly job can diff them against the previous run.

    python scripts/benchmark_acqf_optimization.py --gpu 0 --n 128 512 2048 --q 1 4 --out bench.jsonl
"""
import argparse
import gc
import itertools
import json
import platform
import sys
import time
from contextlib import contextmanager

import torch

import botorch
import gpytorch
from botorch.acquisition import qKnowledgeGradient, qUpperConfidenceBound
from botorch.acquisition.logei import qLogNoisyExpectedImprovement
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.models.transforms import Normalize, Standardize
from botorch.optim import optimize_acqf
from botorch.sampling import SobolQMCNormalSampler
from botorch.test_functions import Hartmann, Levy
from gpytorch.mlls import ExactMarginalLogLikelihood

ACQFS = ("qLogNEI", "qUCB", "qKG")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gpu", type=int, default=None, help="CUDA device index; CPU if omitted")
    p.add_argument("--n", type=int, nargs="+", default=[128, 512])
    p.add_argument("--d", type=int, nargs="+", default=[6])
    p.add_argument("--q", type=int, nargs="+", default=[1, 4])
    p.add_argument("--acqf", nargs="+", default=list(ACQFS), choices=ACQFS)
    p.add_argument("--num-restarts", type=int, default=10)
    p.add_argument("--raw-samples", type=int, default=512)
    p.add_argument("--mc-samples", type=int, default=256)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--float32", action="store_true", help="use single precision (default: double)")
    p.add_argument("--out", default=None)
    return p.parse_args(argv)


def setup_device(args):
    if args.gpu is None:
        return torch.device("cpu")
    torch.cuda.set_device(args.gpu)
    device = torch.device(f"cuda:{args.gpu}")
    print(f"Benchmarking on {torch.cuda.get_device_name(args.gpu)}")
    return device


@contextmanager
def timed(device, result, key):
    """Time a block; on GPU, synchronize so that async kernels are included."""
    on_gpu = device.type == "cuda"
    if on_gpu:
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
    start = time.perf_counter()
    yield
    if on_gpu:
        torch.cuda.synchronize(device)  # wait for the timed work
        result[key + "_peak_mem_mb"] = torch.cuda.max_memory_allocated(device) / 2 ** 20
    result[key + "_s"] = time.perf_counter() - start


def make_problem(n, d, tkwargs, seed):
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    fn = Hartmann(dim=d, negate=True) if d == 6 else Levy(dim=d, negate=True)
    fn = fn.to(**tkwargs)
    bounds = fn.bounds
    X = bounds[0] + (bounds[1] - bounds[0]) * torch.rand(n, d, **tkwargs)
    Y = fn(X).unsqueeze(-1) + 0.05 * torch.randn(n, 1, **tkwargs)
    return fn, X, Y, bounds


def build_acqf(name, model, X, Y, q, mc_samples, bounds):
    sampler = SobolQMCNormalSampler(sample_shape=torch.Size([mc_samples]))
    if name == "qLogNEI":
        return qLogNoisyExpectedImprovement(model=model, X_baseline=X, sampler=sampler, prune_baseline=True)
    if name == "qUCB":
        return qUpperConfidenceBound(model=model, beta=0.2, sampler=sampler)
    if name == "qKG":
        return qKnowledgeGradient(model=model, num_fantasies=64 if q == 1 else 32)
    raise ValueError(name)


def run_one(args, device, dtype, n, d, q, acqf_name, seed):
    tkwargs = {"device": device, "dtype": dtype}
    fn, X, Y, bounds = make_problem(n, d, tkwargs, seed)
    result = {"n": n, "d": d, "q": q, "acqf": acqf_name, "seed": seed, "device": str(device),
              "dtype": str(dtype).replace("torch.", "")}

    model = SingleTaskGP(X, Y, input_transform=Normalize(d=d, bounds=bounds),
                         outcome_transform=Standardize(m=1))
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    with timed(device, result, "fit"):
        fit_gpytorch_mll(mll)

    acqf = build_acqf(acqf_name, model, X, Y, q, args.mc_samples, bounds)
    with timed(device, result, "optimize"), gpytorch.settings.fast_pred_var():
        candidates, value = optimize_acqf(
            acq_function=acqf,
            bounds=bounds,
            q=q,
            num_restarts=args.num_restarts,
            raw_samples=args.raw_samples,
            options={"batch_limit": 5, "maxiter": 200},
        )
    result["acqf_value"] = value.item()
    result["best_f"] = fn(candidates).max().item()

    del model, mll, acqf
    gc.collect()
    if device.type == "cuda":  # release cached blocks between configurations
        torch.cuda.empty_cache()
    return result


def environment_info(device):
    info = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "botorch": botorch.__version__,
        "gpytorch": gpytorch.__version__,
        "cuda": torch.version.cuda,
    }
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        info["gpu"] = props.name
        info["gpu_mem_gb"] = round(props.total_memory / 2 ** 30, 1)
        info["sm_count"] = props.multi_processor_count
    return info


def main(argv=None):
    args = parse_args(argv)
    device = setup_device(args)
    dtype = torch.float32 if args.float32 else torch.float64
    out = open(args.out, "a") if args.out else sys.stdout
    print(json.dumps({"env": environment_info(device)}), file=out)

    for n, d, q, acqf_name in itertools.product(args.n, args.d, args.q, args.acqf):
        for seed in range(args.repeats):
            try:
                res = run_one(args, device, dtype, n, d, q, acqf_name, seed)
            except torch.cuda.OutOfMemoryError:
                res = {"n": n, "d": d, "q": q, "acqf": acqf_name, "seed": seed, "error": "oom"}
                torch.cuda.empty_cache()  # start the next config from a clean allocator
            print(json.dumps(res), file=out, flush=True)

    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
