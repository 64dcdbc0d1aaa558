"""Asynchronous Bayesian hyperparameter search for the climate downscaling UNet.

Two execution back-ends are supported:

  * ray     - one Ray cluster per allocation (head started by the job script), one GPU per trial
  * mpicomm - one MPI rank per GPU (mpiexec/srun), rank 0 runs the optimizer

    srun -n 32 python -m hpo.search --method mpicomm --max-evals 512
    python -m hpo.search --method ray --ray-address auto
"""
import argparse
import json
import logging
import os
import pathlib
import socket
import time

import numpy as np
import pandas as pd
import torch

from deephyper.evaluator import Evaluator
from deephyper.evaluator.callback import TqdmCallback, SearchEarlyStopping
from deephyper.hpo import CBO, HpProblem

from hpo.run_function import run

logger = logging.getLogger("hpo.search")


def build_problem() -> HpProblem:
    problem = HpProblem()
    problem.add_hyperparameter((1e-5, 1e-2, "log-uniform"), "lr", default_value=3e-4)
    problem.add_hyperparameter((8, 64), "batch_size", default_value=16)
    problem.add_hyperparameter([32, 48, 64, 96], "base_channels", default_value=64)
    problem.add_hyperparameter((2, 5), "depth", default_value=4)
    problem.add_hyperparameter((0.0, 0.3), "dropout", default_value=0.1)
    problem.add_hyperparameter(["l1", "l2", "huber"], "loss", default_value="l1")
    problem.add_hyperparameter(["adamw", "sgd"], "optimizer", default_value="adamw")
    problem.add_hyperparameter((1e-6, 1e-2, "log-uniform"), "weight_decay", default_value=1e-4)
    problem.add_hyperparameter([True, False], "amp", default_value=True)
    return problem


def get_evaluator(method: str, ray_address: str = None):
    callbacks = [TqdmCallback(), SearchEarlyStopping(patience=40)]

    if method == "ray":
        import ray

        if not ray.is_initialized():
            if ray_address:
                ray.init(address=ray_address)
            else:
                # single node: let ray see every GPU of this host
                ray.init(num_cpus=os.cpu_count(), num_gpus=torch.cuda.device_count())

        resources = ray.cluster_resources()
        num_gpus = int(resources.get("GPU", 0))
        logger.info(f"ray cluster: {resources}")
        method_kwargs = {
            "address": ray_address,
            "num_cpus_per_task": 4,
            "num_gpus_per_task": 1,
            "callbacks": callbacks,
        }
        evaluator = Evaluator.create(run, method="ray", method_kwargs=method_kwargs)
        logger.info(f"created ray evaluator with {evaluator.num_workers} workers "
                    f"({num_gpus} GPUs in the cluster)")
        return evaluator

    if method == "mpicomm":
        # every rank > 0 becomes a worker; the evaluator is None on workers
        method_kwargs = {"callbacks": callbacks}
        return Evaluator.create(run, method="mpicomm", method_kwargs=method_kwargs)

    if method == "process":
        n = max(1, torch.cuda.device_count())
        return Evaluator.create(run, method="process",
                                method_kwargs={"num_workers": n, "callbacks": callbacks})

    raise ValueError(f"unknown method {method}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--method", default="mpicomm", choices=["ray", "mpicomm", "process"])
    parser.add_argument("--ray-address", default=None)
    parser.add_argument("--max-evals", type=int, default=256)
    parser.add_argument("--timeout", type=int, default=6 * 3600)
    parser.add_argument("--log-dir", default="hpo_logs")
    parser.add_argument("--surrogate", default="ET", choices=["RF", "ET", "GP"])
    parser.add_argument("--acq-func", default="UCB")
    parser.add_argument("--kappa", type=float, default=1.96)
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()

    logging.basicConfig(level=logging.INFO,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")

    log_dir = pathlib.Path(args.log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    problem = build_problem()

    if args.method == "mpicomm":
        with get_evaluator("mpicomm") as evaluator:
            if evaluator is not None:
                logger.info(f"rank 0 on {socket.gethostname()} drives {evaluator.num_workers} workers")
                search = CBO(problem, evaluator, log_dir=str(log_dir),
                             surrogate_model=args.surrogate, acq_func=args.acq_func,
                             kappa=args.kappa, random_state=args.seed, verbose=1)
                results = search.search(max_evals=args.max_evals, timeout=args.timeout)
                summarize(results, log_dir)
        return

    evaluator = get_evaluator(args.method, args.ray_address)
    search = CBO(problem, evaluator, log_dir=str(log_dir), surrogate_model=args.surrogate,
                 acq_func=args.acq_func, kappa=args.kappa, random_state=args.seed, verbose=1)
    t0 = time.time()
    results = search.search(max_evals=args.max_evals, timeout=args.timeout)
    logger.info(f"search finished in {time.time() - t0:.0f}s")
    summarize(results, log_dir)


def summarize(results: pd.DataFrame, log_dir: pathlib.Path):
    results = results.sort_values("objective", ascending=False)
    results.to_csv(log_dir / "results_sorted.csv", index=False)
    best = results.iloc[0]
    cfg = {k[2:]: v for k, v in best.items() if k.startswith("p:")}
    for k, v in cfg.items():
        if isinstance(v, np.generic):
            cfg[k] = v.item()
    with open(log_dir / "best_config.json", "w") as f:
        json.dump({"objective": float(best["objective"]), "config": cfg}, f, indent=2)
    logger.info(f"best objective {best['objective']:.5f} with {cfg}")


if __name__ == "__main__":
    main()
