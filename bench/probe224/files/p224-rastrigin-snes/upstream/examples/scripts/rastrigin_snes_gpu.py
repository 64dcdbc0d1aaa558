"""
Large-scale black-box optimisation of the Rastrigin function with SNES / CMA-ES / PGPE.

The whole population lives on the GPU: the problem is vectorised, so one
generation is a handful of kernels no matter how large the popsize is.

Example:

    python rastrigin_snes_gpu.py --algorithm snes --dim 10000 --popsize 2000 --device cuda:0
    python rastrigin_snes_gpu.py --algorithm cmaes --dim 100 --device cpu
"""

import argparse
import json
import math
import os
import time
from pathlib import Path

import torch

from evotorch import Problem
from evotorch.algorithms import CMAES, PGPE, SNES, XNES
from evotorch.decorators import vectorized
from evotorch.logging import PandasLogger, StdOutLogger


# ---------------------------------------------------------------------------
# benchmark functions (all vectorised: x has shape (popsize, dim))
# ---------------------------------------------------------------------------
@vectorized
def rastrigin(x: torch.Tensor) -> torch.Tensor:
    A = 10.0
    n = x.shape[-1]
    return A * n + torch.sum(x.pow(2.0) - A * torch.cos(2 * math.pi * x), dim=-1)


@vectorized
def sphere(x: torch.Tensor) -> torch.Tensor:
    return torch.sum(x.pow(2.0), dim=-1)


@vectorized
def rosenbrock(x: torch.Tensor) -> torch.Tensor:
    head = x[:, :-1]
    tail = x[:, 1:]
    return torch.sum(100.0 * (tail - head.pow(2.0)).pow(2.0) + (1.0 - head).pow(2.0), dim=-1)


@vectorized
def ackley(x: torch.Tensor) -> torch.Tensor:
    n = x.shape[-1]
    s1 = torch.sum(x.pow(2.0), dim=-1) / n
    s2 = torch.sum(torch.cos(2 * math.pi * x), dim=-1) / n
    return -20.0 * torch.exp(-0.2 * torch.sqrt(s1)) - torch.exp(s2) + 20.0 + math.e


FUNCTIONS = {
    "rastrigin": (rastrigin, (-5.12, 5.12)),
    "sphere": (sphere, (-5.0, 5.0)),
    "rosenbrock": (rosenbrock, (-2.048, 2.048)),
    "ackley": (ackley, (-32.768, 32.768)),
}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--function", choices=sorted(FUNCTIONS), default="rastrigin")
    p.add_argument("--algorithm", choices=["snes", "xnes", "cmaes", "pgpe"], default="snes")
    p.add_argument("--dim", type=int, default=1000)
    p.add_argument("--popsize", type=int, default=None)
    p.add_argument("--stdev-init", type=float, default=1.0)
    p.add_argument("--generations", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", type=str, default="cuda:0", help="device for the population (cuda:N or cpu)")
    p.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--out", type=str, default="runs/rastrigin")
    return p.parse_args()


def pick_device(requested: str) -> str:
    if requested.startswith("cuda") and not torch.cuda.is_available():
        print(f"[warn] {requested} requested but CUDA is not available, falling back to cpu")
        return "cpu"
    return requested


def make_searcher(name: str, problem: Problem, args):
    if name == "snes":
        return SNES(problem, stdev_init=args.stdev_init, popsize=args.popsize)
    if name == "xnes":
        return XNES(problem, stdev_init=args.stdev_init, popsize=args.popsize)
    if name == "cmaes":
        # CMA-ES keeps a dim x dim covariance; keep dim moderate on the GPU.
        return CMAES(problem, stdev_init=args.stdev_init, popsize=args.popsize, separable=args.dim > 2000)
    if name == "pgpe":
        return PGPE(
            problem,
            popsize=args.popsize or 200,
            center_learning_rate=0.01,
            stdev_learning_rate=0.1,
            stdev_init=args.stdev_init,
            optimizer="clipup",
            optimizer_config={"max_speed": 0.15},
            ranking_method="centered",
        )
    raise ValueError(name)


def main():
    args = parse_args()
    device = pick_device(args.device)
    dtype = torch.float32 if args.dtype == "float32" else torch.float64

    torch.cuda.manual_seed_all(args.seed)

    fn, bounds = FUNCTIONS[args.function]
    problem = Problem(
        "min",
        fn,
        solution_length=args.dim,
        initial_bounds=bounds,
        dtype=dtype,
        device=device,
        seed=args.seed,
    )

    searcher = make_searcher(args.algorithm, problem, args)
    stdout_logger = StdOutLogger(searcher, interval=args.log_every)
    pandas_logger = PandasLogger(searcher)

    out_dir = Path(args.out) / f"{args.function}_{args.algorithm}_d{args.dim}_s{args.seed}"
    out_dir.mkdir(parents=True, exist_ok=True)

    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
        print(f"Running on {torch.cuda.get_device_name(device)}")

    t0 = time.perf_counter()
    for gen in range(1, args.generations + 1):
        searcher.step()
        if gen % args.log_every == 0 and device.startswith("cuda"):
            torch.cuda.synchronize()
            peak = torch.cuda.max_memory_allocated() / 2**20
            print(f"  gen {gen:5d}  peak mem {peak:8.1f} MiB  elapsed {time.perf_counter() - t0:7.1f}s")
    elapsed = time.perf_counter() - t0

    best = searcher.status["best"]
    center = searcher.status.get("center")
    summary = {
        "function": args.function,
        "algorithm": args.algorithm,
        "dim": args.dim,
        "popsize": searcher.popsize,
        "generations": args.generations,
        "best_eval": float(best.evals[0]),
        "elapsed_s": elapsed,
        "device": device,
    }
    print(json.dumps(summary, indent=2))

    df = pandas_logger.to_dataframe()
    df.to_csv(out_dir / "progress.csv")
    torch.save(
        {
            "best": best.values.cpu(),
            "center": None if center is None else center.cpu(),
            "args": vars(args),
        },
        out_dir / "result.pt",
    )
    with open(out_dir / "summary.json", "w") as f:
        json.dump(summary, f, indent=2)


if __name__ == "__main__":
    main()
