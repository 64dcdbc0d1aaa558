"""Runs various QD algorithms on the Sphere function (torch / GPU version).

Port of pyribs' ``examples/sphere.py``. The archive, emitters and the
objective all live on the GPU, which makes it practical to run with
``--dim 1000`` and batch sizes in the thousands.

Usage:
    python sphere.py map_elites 20
    python sphere.py cma_mae 100 --itrs 10000 --device cuda:1
    python sphere.py cma_me_imp 20 --profile   # NVTX ranges for nsys
"""

import argparse
import json
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import tqdm  # noqa: E402

from ribs_torch.archives import CVTArchive, GridArchive  # noqa: E402
from ribs_torch.emitters import EvolutionStrategyEmitter, GaussianEmitter, IsoLineEmitter  # noqa: E402
from ribs_torch.schedulers import BanditScheduler, Scheduler  # noqa: E402
from ribs_torch.visualize import cvt_archive_heatmap, grid_archive_heatmap  # noqa: E402

CONFIG = {
    "map_elites": {"archive": "grid", "emitter": "gaussian", "batch_size": 37, "num_emitters": 15},
    "line_map_elites": {"archive": "grid", "emitter": "iso_line", "batch_size": 37, "num_emitters": 15},
    "cvt_map_elites": {"archive": "cvt", "emitter": "gaussian", "batch_size": 37, "num_emitters": 15},
    "cma_me_imp": {"archive": "grid", "emitter": "es", "ranker": "2imp", "batch_size": 36, "num_emitters": 15},
    "cma_mae": {"archive": "grid", "emitter": "es", "ranker": "imp", "batch_size": 36, "num_emitters": 15,
                "learning_rate": 0.01},
}


def sphere(solution_batch: torch.Tensor):
    """Sphere function evaluation and measures for a batch of solutions."""
    dim = solution_batch.shape[1]
    target_shift = 5.12 * 0.4
    best_obj = 0.0
    worst_obj = (-5.12 - target_shift) ** 2 * dim
    raw_obj = torch.sum(torch.square(solution_batch - target_shift), dim=1)
    objective_batch = (raw_obj - worst_obj) / (best_obj - worst_obj) * 100

    clipped = solution_batch.clone()
    clip_mask = (clipped < -5.12) | (clipped > 5.12)
    clipped[clip_mask] = 5.12 / clipped[clip_mask]
    measures_batch = torch.cat(
        (
            torch.sum(clipped[:, : dim // 2], dim=1, keepdim=True),
            torch.sum(clipped[:, dim // 2 :], dim=1, keepdim=True),
        ),
        dim=1,
    )
    return objective_batch, measures_batch


def create_scheduler(config, algorithm, solution_dim, device, seed=None):
    max_bound = solution_dim / 2 * 5.12
    bounds = [(-max_bound, max_bound), (-max_bound, max_bound)]
    lr = config.get("learning_rate", 1.0)
    threshold_min = -np.inf if lr == 1.0 else 0.0

    if config["archive"] == "grid":
        archive = GridArchive(solution_dim=solution_dim, dims=(100, 100), ranges=bounds,
                              learning_rate=lr, threshold_min=threshold_min, seed=seed, device=device)
    else:
        archive = CVTArchive(solution_dim=solution_dim, cells=10_000, ranges=bounds, samples=100_000,
                             seed=seed, device=device)
    result_archive = None
    if lr != 1.0:
        result_archive = GridArchive(solution_dim=solution_dim, dims=(100, 100), ranges=bounds,
                                     seed=seed, device=device)

    x0 = torch.zeros(solution_dim, device=device)
    emitters = []
    for i in range(config["num_emitters"]):
        s = None if seed is None else seed + i
        if config["emitter"] == "gaussian":
            emitters.append(GaussianEmitter(archive, x0=x0, sigma=0.5, batch_size=config["batch_size"], seed=s))
        elif config["emitter"] == "iso_line":
            emitters.append(IsoLineEmitter(archive, x0=x0, iso_sigma=0.1, line_sigma=0.2,
                                           batch_size=config["batch_size"], seed=s))
        else:
            emitters.append(EvolutionStrategyEmitter(archive, x0=x0, sigma0=0.5, ranker=config["ranker"],
                                                     batch_size=config["batch_size"], seed=s,
                                                     profile=ARGS.profile))
    print(f"Created {algorithm} with {len(emitters)} emitters on {device}")
    return Scheduler(archive, emitters, result_archive=result_archive)


def save_heatmap(archive, path):
    fig, ax = plt.subplots(figsize=(8, 6))
    if isinstance(archive, GridArchive):
        grid_archive_heatmap(archive, vmin=0, vmax=100, ax=ax)
    else:
        cvt_archive_heatmap(archive, vmin=0, vmax=100, ax=ax)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("algorithm", choices=sorted(CONFIG))
    p.add_argument("dim", type=int, nargs="?", default=20)
    p.add_argument("--itrs", type=int, default=4500)
    p.add_argument("--outdir", default="sphere_output")
    p.add_argument("--log-freq", type=int, default=250)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--device", default="cuda")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--save-every", type=int, default=0, help="checkpoint every N iterations (0 = never)")
    return p.parse_args()


ARGS = None


def main():
    global ARGS
    ARGS = parse_args()
    if ARGS.seed is not None:
        torch.manual_seed(ARGS.seed)
        torch.cuda.manual_seed_all(ARGS.seed)

    device = torch.device(ARGS.device)
    props = torch.cuda.get_device_properties(device)
    print(f"{props.name}: {props.total_memory / 2**30:.1f} GiB, {props.multi_processor_count} SMs")

    outdir = Path(ARGS.outdir) / f"{ARGS.algorithm}_{ARGS.dim}"
    outdir.mkdir(parents=True, exist_ok=True)
    scheduler = create_scheduler(CONFIG[ARGS.algorithm], ARGS.algorithm, ARGS.dim, device, ARGS.seed)
    result_archive = scheduler.result_archive
    metrics = {"QD Score": {"x": [0], "y": [0.0]}, "Archive Coverage": {"x": [0], "y": [0.0]}}

    non_logging_time = 0.0
    for itr in tqdm.trange(1, ARGS.itrs + 1):
        itr_start = time.time()
        if ARGS.profile:
            torch.cuda.nvtx.range_push(f"itr{itr}")
        sols = scheduler.ask()
        objs, meas = sphere(sols)
        scheduler.tell(objs, meas)
        if ARGS.profile:
            torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        non_logging_time += time.time() - itr_start

        if ARGS.save_every and itr % ARGS.save_every == 0:
            ckpt = {
                "itr": itr,
                "archive": scheduler.archive.state_dict(),
                "emitters": [e.state_dict() for e in scheduler.emitters if hasattr(e, "state_dict")],
                "rng": torch.get_rng_state(),
            }
            torch.save(ckpt, outdir / f"checkpoint_{itr:06d}.pt")

        if itr % ARGS.log_freq == 0 or itr == ARGS.itrs:
            stats = result_archive.stats()
            metrics["QD Score"]["x"].append(itr)
            metrics["QD Score"]["y"].append(stats.qd_score)
            metrics["Archive Coverage"]["x"].append(itr)
            metrics["Archive Coverage"]["y"].append(stats.coverage)
            tqdm.tqdm.write(f"Iteration {itr} | Archive Coverage: {stats.coverage * 100:.3f}% "
                            f"QD Score: {stats.qd_score:.3f} | {non_logging_time:.1f}s")

    save_heatmap(result_archive, outdir / "heatmap.png")
    result_archive.as_pandas().to_csv(outdir / "archive.csv")
    with open(outdir / "metrics.json", "w") as f:
        json.dump(metrics, f, indent=2)
    print(f"Peak GPU memory: {torch.cuda.max_memory_allocated(device) / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
