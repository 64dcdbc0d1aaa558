#!/usr/bin/env python
"""Run a distributed Optuna HPO study for KGE models on FB15k-237 with PyKEEN.

One worker process is started per GPU. All workers share one Optuna study stored in
an SQLite / PostgreSQL database, so the number of GPUs can change between restarts.

Example::

    python scripts/run_hpo_fb15k237.py --model RotatE --n-trials 100 --gpus 0,1,2,3 \
        --storage sqlite:///hpo/rotate.db
"""

import argparse
import json
import logging
import os
import pathlib
import random
import sys
import time

import numpy as np
import torch
import torch.multiprocessing as mp

HERE = pathlib.Path(__file__).resolve().parent
RESULTS = HERE.parent.joinpath("results", "hpo")

logger = logging.getLogger("run_hpo")


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="RotatE")
    parser.add_argument("--dataset", default="FB15k237")
    parser.add_argument("--loss", default="NSSALoss")
    parser.add_argument("--n-trials", type=int, default=50)
    parser.add_argument("--timeout", type=float, default=None, help="Timeout per worker in hours")
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--storage", default=None, help="Optuna storage URL")
    parser.add_argument("--study-name", default=None)
    parser.add_argument(
        "--gpus",
        default=None,
        help="Comma-separated GPU ids, e.g. 0,1,2,3. Defaults to all visible GPUs.",
    )
    parser.add_argument("--device", default="cuda", help="Device for a single-process run")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--eval-batch-size", type=int, default=None)
    return parser.parse_args(argv)


def _build_hpo_kwargs(args, storage, study_name):
    return dict(
        dataset=args.dataset,
        model=args.model,
        loss=args.loss,
        training_loop="sLCWA",
        negative_sampler="basic",
        negative_sampler_kwargs_ranges=dict(
            num_negs_per_pos=dict(type=int, low=16, high=256, log=True),
        ),
        model_kwargs_ranges=dict(
            embedding_dim=dict(type=int, low=128, high=1024, step=128),
        ),
        optimizer="Adam",
        optimizer_kwargs_ranges=dict(lr=dict(type=float, low=1e-4, high=1e-2, log=True)),
        training_kwargs=dict(num_epochs=args.epochs, use_tqdm_batch=False),
        training_kwargs_ranges=dict(batch_size=dict(type=int, low=9, high=12, scale="power_two")),
        stopper="early",
        stopper_kwargs=dict(frequency=25, patience=4, relative_delta=0.002),
        evaluation_kwargs=dict(batch_size=args.eval_batch_size),
        n_trials=args.n_trials,
        timeout=None if args.timeout is None else args.timeout * 3600,
        storage=storage,
        study_name=study_name,
        load_if_exists=True,
        metric="both.realistic.inverse_harmonic_mean_rank",
        direction="maximize",
    )


def _worker(rank: int, gpu_ids, args, storage, study_name):
    gpu_id = gpu_ids[rank]
    # pin this worker to one GPU before CUDA is initialised in this process
    os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu_id)

    from pykeen.hpo import hpo_pipeline

    logging.basicConfig(
        level=logging.INFO,
        format=f"%(asctime)s [gpu{gpu_id}] %(levelname)s %(name)s: %(message)s",
    )
    seed_everything(args.seed + rank)
    kwargs = _build_hpo_kwargs(args, storage, study_name)
    kwargs["n_trials"] = max(1, args.n_trials // len(gpu_ids))
    result = hpo_pipeline(device="cuda:0", **kwargs)
    out = RESULTS.joinpath(study_name, f"worker_{rank}")
    out.mkdir(parents=True, exist_ok=True)
    result.save_to_directory(out)
    logger.info("worker %d on GPU %s done", rank, gpu_id)


def _resolve_gpu_ids(spec):
    if spec:
        return [int(x) for x in spec.split(",") if x.strip()]
    return list(range(torch.cuda.device_count()))


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    study_name = args.study_name or f"{args.model.lower()}_{args.dataset.lower()}_{int(time.time())}"
    storage = args.storage or f"sqlite:///{RESULTS.joinpath(study_name + '.db')}"
    RESULTS.mkdir(parents=True, exist_ok=True)

    gpu_ids = _resolve_gpu_ids(args.gpus)
    if len(gpu_ids) <= 1:
        # single process: no need to fork, run on the requested device
        from pykeen.hpo import hpo_pipeline

        seed_everything(args.seed)
        result = hpo_pipeline(device=args.device, **_build_hpo_kwargs(args, storage, study_name))
        result.save_to_directory(RESULTS.joinpath(study_name))
        return 0

    logger.info("Starting %d HPO workers on GPUs %s", len(gpu_ids), gpu_ids)
    # create the study once so that the workers do not race on the schema
    import optuna

    optuna.create_study(storage=storage, study_name=study_name, direction="maximize", load_if_exists=True)
    with open(RESULTS.joinpath(study_name + ".json"), "w") as file:
        json.dump(vars(args), file, indent=2)

    mp.set_start_method("spawn", force=True)
    mp.spawn(_worker, args=(gpu_ids, args, storage, study_name), nprocs=len(gpu_ids), join=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
