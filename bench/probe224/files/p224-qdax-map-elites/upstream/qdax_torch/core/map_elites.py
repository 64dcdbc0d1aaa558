"""Core components of the MAP-Elites algorithm (PyTorch port of QDax).

QDax expresses MAP-Elites as pure functions over a repertoire pytree and
relies on ``jax.jit``. Here the repertoire is a small dataclass of tensors and
the per-iteration update is wrapped with ``torch.compile``; on GPUs the
"reduce-overhead" mode captures the whole update in a CUDA graph, which
removes most of the launch overhead for small populations.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import Callable, Optional, Tuple

import torch

from qdax_torch.core.containers.mapelites_repertoire import MapElitesRepertoire, compute_cvt_centroids
from qdax_torch.core.emitters.emitter import Emitter, EmitterState
from qdax_torch.types import Centroid, Descriptor, ExtraScores, Fitness, Genotype, Metrics

logger = logging.getLogger(__name__)

ScoringFn = Callable[[Genotype, torch.Generator], Tuple[Fitness, Descriptor, ExtraScores]]
MetricsFn = Callable[[MapElitesRepertoire], Metrics]


def default_qd_metrics(repertoire: MapElitesRepertoire, qd_offset: float) -> Metrics:
    """Coverage, max fitness and QD score of a repertoire."""
    grid_empty = repertoire.fitnesses == -torch.inf
    qd_score = torch.sum(torch.where(grid_empty, torch.zeros_like(repertoire.fitnesses),
                                     repertoire.fitnesses + qd_offset))
    coverage = 100 * torch.mean((~grid_empty).float())
    max_fitness = torch.max(repertoire.fitnesses)
    return {"qd_score": qd_score, "max_fitness": max_fitness, "coverage": coverage}


@dataclass
class CompileConfig:
    enabled: bool = True
    mode: str = "reduce-overhead"
    fullgraph: bool = False
    dynamic: bool = False


class MAPElites:
    """Core elements of the MAP-Elites algorithm.

    Args:
        scoring_function: a function that takes a batch of genotypes and
            returns fitnesses, descriptors and extra scores.
        emitter: an emitter used to suggest offspring given a repertoire.
        metrics_function: a function that computes metrics of the repertoire.
        compile_config: how to compile the update step.
    """

    def __init__(
        self,
        scoring_function: ScoringFn,
        emitter: Emitter,
        metrics_function: MetricsFn,
        compile_config: Optional[CompileConfig] = None,
    ) -> None:
        self._scoring_function = scoring_function
        self._emitter = emitter
        self._metrics_function = metrics_function
        self._compile_config = compile_config or CompileConfig()
        self._update_fn = self._build_update_fn()

    def _build_update_fn(self):
        cfg = self._compile_config
        if not cfg.enabled:
            return self._update
        if not torch.cuda.is_available():
            logger.info("torch.compile disabled: reduce-overhead mode needs CUDA graphs")
            return self._update
        return torch.compile(self._update, mode=cfg.mode, fullgraph=cfg.fullgraph, dynamic=cfg.dynamic)

    @torch.no_grad()
    def init(
        self,
        genotypes: Genotype,
        centroids: Centroid,
        generator: torch.Generator,
    ) -> Tuple[MapElitesRepertoire, Optional[EmitterState]]:
        """Initialises a repertoire with an initial population of genotypes."""
        fitnesses, descriptors, extra_scores = self._scoring_function(genotypes, generator)
        repertoire = MapElitesRepertoire.init(
            genotypes=genotypes,
            fitnesses=fitnesses,
            descriptors=descriptors,
            centroids=centroids,
            extra_scores=extra_scores,
        )
        emitter_state = self._emitter.init(
            generator=generator,
            repertoire=repertoire,
            genotypes=genotypes,
            fitnesses=fitnesses,
            descriptors=descriptors,
            extra_scores=extra_scores,
        )
        return repertoire, emitter_state

    def _update(
        self,
        repertoire: MapElitesRepertoire,
        emitter_state: Optional[EmitterState],
        generator: torch.Generator,
    ):
        genotypes, extra_info = self._emitter.emit(repertoire, emitter_state, generator)
        fitnesses, descriptors, extra_scores = self._scoring_function(genotypes, generator)
        repertoire = repertoire.add(genotypes, descriptors, fitnesses, extra_scores)
        emitter_state = self._emitter.state_update(
            emitter_state=emitter_state,
            repertoire=repertoire,
            genotypes=genotypes,
            fitnesses=fitnesses,
            descriptors=descriptors,
            extra_scores={**extra_scores, **extra_info},
        )
        metrics = self._metrics_function(repertoire)
        return repertoire, emitter_state, metrics

    @torch.no_grad()
    def update(self, repertoire, emitter_state, generator):
        """Performs one iteration of MAP-Elites."""
        return self._update_fn(repertoire, emitter_state, generator)

    def scan_update(self, repertoire, emitter_state, generator, num_iterations: int, log_period: int = 10):
        """Runs several iterations (QDax ``jax.lax.scan`` equivalent), collecting metrics."""
        all_metrics = []
        for i in range(num_iterations):
            repertoire, emitter_state, metrics = self.update(repertoire, emitter_state, generator)
            if (i + 1) % log_period == 0:
                all_metrics.append({k: float(v) for k, v in metrics.items()})
        return repertoire, emitter_state, all_metrics


def run_map_elites(
    scoring_fn: ScoringFn,
    emitter: Emitter,
    init_genotypes: Genotype,
    num_centroids: int,
    descriptor_dim: int,
    min_descriptor: float,
    max_descriptor: float,
    num_iterations: int,
    qd_offset: float = 0.0,
    seed: int = 0,
    device: str | torch.device = "cuda",
):
    """Convenience driver used by the example notebooks."""
    device = torch.device(device)
    generator = torch.Generator(device=device).manual_seed(seed)
    centroids = compute_cvt_centroids(
        num_descriptors=descriptor_dim,
        num_init_cvt_samples=50_000,
        num_centroids=num_centroids,
        minval=min_descriptor,
        maxval=max_descriptor,
        generator=generator,
    )
    metrics_fn = functools.partial(default_qd_metrics, qd_offset=qd_offset)
    algo = MAPElites(scoring_fn, emitter, metrics_fn)
    repertoire, emitter_state = algo.init(init_genotypes.to(device), centroids, generator)
    repertoire, emitter_state, metrics = algo.scan_update(repertoire, emitter_state, generator, num_iterations)
    return repertoire, metrics
