"""Multi-GPU MAP-Elites (PyTorch port of ``qdax.core.distributed_map_elites``).

QDax uses ``jax.pmap`` so that every device emits and scores its own batch of
offspring, then all offspring are gathered and inserted into a repertoire that
is replicated on every device. Here the same pattern is expressed with
``torch.distributed``: one process per GPU (launched by torchrun), offspring
exchanged with ``all_gather_into_tensor`` and the repertoire update executed
redundantly (and deterministically) on every rank.

    torchrun --nproc_per_node=4 -m qdax_torch.core.distributed_map_elites \
        --task arm --num-iterations 2000 --batch-size-per-device 4096
"""

from __future__ import annotations

import argparse
import datetime
import os
import time
from typing import Callable, Optional, Tuple

import torch
import torch.distributed as dist

from qdax_torch.core.containers.mapelites_repertoire import MapElitesRepertoire, compute_cvt_centroids
from qdax_torch.core.emitters.mutation_operators import isoline_variation
from qdax_torch.core.map_elites import MAPElites, default_qd_metrics
from qdax_torch.tasks.arm import arm_scoring_function, random_genotypes


def init_distributed(timeout_min: int = 30):
    """Initialises the default process group from torchrun's environment."""
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    if not torch.cuda.is_available():
        raise RuntimeError("distributed MAP-Elites needs one GPU per process")
    torch.cuda.set_device(local_rank)
    if world_size > 1 and not dist.is_initialized():
        dist.init_process_group(
            backend="nccl",
            timeout=datetime.timedelta(minutes=timeout_min),
            device_id=torch.device(f"cuda:{local_rank}"),
        )
    rank = dist.get_rank() if dist.is_initialized() else 0
    return rank, world_size, torch.device("cuda", local_rank)


def gather_batch(t: torch.Tensor) -> torch.Tensor:
    """Concatenates the per-rank batches along dim 0 (like pmap + all_gather)."""
    if not dist.is_initialized() or dist.get_world_size() == 1:
        return t
    out = torch.empty((dist.get_world_size() * t.shape[0],) + t.shape[1:], dtype=t.dtype, device=t.device)
    dist.all_gather_into_tensor(out, t.contiguous())
    return out


def broadcast_(t: torch.Tensor, src: int = 0) -> torch.Tensor:
    if dist.is_initialized():
        dist.broadcast(t, src=src)
    return t


class DistributedMAPElites(MAPElites):
    """MAP-Elites where emission and scoring are sharded over ranks."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.world_size = dist.get_world_size() if dist.is_initialized() else 1

    @torch.no_grad()
    def update(self, repertoire, emitter_state, generator):
        # each rank emits from the *same* repertoire with its *own* generator
        genotypes, extra_info = self._emitter.emit(repertoire, emitter_state, generator)
        fitnesses, descriptors, extra_scores = self._scoring_function(genotypes, generator)

        all_genotypes = gather_batch(genotypes)
        all_fitnesses = gather_batch(fitnesses)
        all_descriptors = gather_batch(descriptors)

        repertoire = repertoire.add(all_genotypes, all_descriptors, all_fitnesses, {})
        emitter_state = self._emitter.state_update(
            emitter_state=emitter_state,
            repertoire=repertoire,
            genotypes=all_genotypes,
            fitnesses=all_fitnesses,
            descriptors=all_descriptors,
            extra_scores={**extra_scores, **extra_info},
        )
        metrics = self._metrics_function(repertoire)
        return repertoire, emitter_state, metrics


def check_replicas_in_sync(repertoire: MapElitesRepertoire) -> bool:
    """Debug helper: all ranks must hold bit-identical repertoires."""
    if not dist.is_initialized():
        return True
    local = torch.stack([repertoire.fitnesses.nan_to_num(neginf=-1e30).sum(), repertoire.genotypes.sum()])
    ref = local.clone()
    broadcast_(ref, src=0)
    ok = torch.tensor([float(torch.allclose(local, ref))], device=local.device)
    if dist.get_backend() == "nccl":
        dist.all_reduce(ok, op=dist.ReduceOp.MIN)
    else:
        ok = ok.cpu()
        dist.all_reduce(ok, op=dist.ReduceOp.MIN)
    return bool(ok.item() == 1.0)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--task", default="arm", choices=["arm"])
    p.add_argument("--num-joints", type=int, default=100)
    p.add_argument("--num-centroids", type=int, default=10_000)
    p.add_argument("--batch-size-per-device", type=int, default=4096)
    p.add_argument("--num-iterations", type=int, default=2000)
    p.add_argument("--iso-sigma", type=float, default=0.005)
    p.add_argument("--line-sigma", type=float, default=0.05)
    p.add_argument("--log-period", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--check-sync", action="store_true")
    return p.parse_args()


class _IsoLineEmitter:
    """Minimal emitter: uniform parent selection + iso+line variation."""

    def __init__(self, batch_size: int, iso_sigma: float, line_sigma: float):
        self.batch_size = batch_size
        self.iso_sigma = iso_sigma
        self.line_sigma = line_sigma

    def init(self, **kwargs):
        return None

    def emit(self, repertoire, emitter_state, generator):
        x1 = repertoire.sample(generator, self.batch_size)
        x2 = repertoire.sample(generator, self.batch_size)
        return isoline_variation(x1, x2, self.iso_sigma, self.line_sigma, generator=generator, minval=0.0, maxval=1.0), {}

    def state_update(self, **kwargs):
        return None


def main():
    args = parse_args()
    rank, world_size, device = init_distributed()
    is_main = rank == 0

    # identical centroids on every rank (same seed), per-rank generator for emission
    shared_gen = torch.Generator(device=device).manual_seed(args.seed)
    centroids = compute_cvt_centroids(
        num_descriptors=2, num_init_cvt_samples=100_000, num_centroids=args.num_centroids,
        minval=0.0, maxval=1.0, generator=shared_gen,
    )
    init_x = random_genotypes(args.batch_size_per_device * world_size, args.num_joints, shared_gen, device=device)
    rank_gen = torch.Generator(device=device).manual_seed(args.seed + 1 + rank)

    emitter = _IsoLineEmitter(args.batch_size_per_device, args.iso_sigma, args.line_sigma)
    metrics_fn = lambda rep: default_qd_metrics(rep, qd_offset=1.0)  # noqa: E731
    algo = DistributedMAPElites(arm_scoring_function, emitter, metrics_fn)
    repertoire, emitter_state = algo.init(init_x, centroids, shared_gen)

    torch.cuda.synchronize()
    t0 = time.time()
    for it in range(1, args.num_iterations + 1):
        repertoire, emitter_state, metrics = algo.update(repertoire, emitter_state, rank_gen)
        if it % args.log_period == 0:
            torch.cuda.synchronize(device)
            if args.check_sync and not check_replicas_in_sync(repertoire):
                raise RuntimeError(f"repertoire replicas diverged at iteration {it}")
            if is_main:
                evals = it * args.batch_size_per_device * world_size
                print(
                    f"[{it:5d}] coverage {float(metrics['coverage']):6.2f}%  "
                    f"qd {float(metrics['qd_score']):10.2f}  max {float(metrics['max_fitness']):.4f}  "
                    f"{evals / (time.time() - t0):,.0f} evals/s"
                )
    if is_main:
        torch.save({"fitnesses": repertoire.fitnesses.cpu(), "genotypes": repertoire.genotypes.cpu(),
                    "centroids": centroids.cpu()}, "distributed_me_arm.pt")
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
