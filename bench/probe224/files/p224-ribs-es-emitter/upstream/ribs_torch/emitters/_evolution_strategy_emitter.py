"""Provides the EvolutionStrategyEmitter (torch port).

Batched CMA-ME / CMA-MAE emitter. All tensors follow the archive's device, so
this file does not need to know whether it runs on a GPU or on the CPU.
"""

import contextlib

import numpy as np
import torch

from ribs_torch._utils import check_shape, validate_batch
from ribs_torch.emitters._emitter_base import EmitterBase
from ribs_torch.emitters.opt import _get_es
from ribs_torch.emitters.rankers import _get_ranker


class EvolutionStrategyEmitter(EmitterBase):
    """Adapts a distribution of solutions with an ES.

    Args:
        archive (ribs_torch.archives.ArchiveBase): Archive of solutions.
        x0 (array-like): Initial solution.
        sigma0 (float): Initial step size / standard deviation.
        ranker (str or Ranker): "imp" (improvement), "2imp", "rd", "obj", ...
        es (str): Name of the ES, e.g. "cma_es", "sep_cma_es", "lm_ma_es".
        es_kwargs (dict): Extra keyword arguments for the ES.
        selection_rule (str): "mu" or "filter".
        restart_rule (str or int): "no_improvement", "basic" or an int.
        batch_size (int): Number of solutions per ask().
        bounds: Bounds of the solution space.
        seed (int): Seed for the ES and ranker.
        profile (bool): Emit NVTX ranges around ask/tell for Nsight Systems.
    """

    def __init__(
        self,
        archive,
        *,
        x0,
        sigma0,
        ranker="2imp",
        es="cma_es",
        es_kwargs=None,
        selection_rule="filter",
        restart_rule="no_improvement",
        bounds=None,
        batch_size=None,
        seed=None,
        profile=False,
    ):
        EmitterBase.__init__(self, archive, solution_dim=archive.solution_dim, bounds=bounds)

        self._device = archive.device
        self._x0 = torch.as_tensor(x0, dtype=archive.dtype, device=self._device)
        check_shape(self._x0, "x0", archive.solution_dim, "archive.solution_dim")
        self._sigma0 = sigma0
        self._profile = profile

        if selection_rule not in ["mu", "filter"]:
            raise ValueError(f"Invalid selection_rule {selection_rule}")
        self._selection_rule = selection_rule

        self._restart_rule = restart_rule
        self._restarts = 0
        self._itrs = 0
        self._last_num_improved = None

        self._rng = np.random.default_rng(seed)
        opt_seed = None if seed is None else int(self._rng.integers(0, 2**31))

        self._opt = _get_es(
            es,
            sigma0=sigma0,
            batch_size=batch_size,
            solution_dim=self._solution_dim,
            seed=opt_seed,
            dtype=archive.dtype,
            lower_bounds=self.lower_bounds,
            upper_bounds=self.upper_bounds,
            device=self._device,
            **(es_kwargs if es_kwargs is not None else {}),
        )
        self._opt.reset(self._x0)

        self._ranker = _get_ranker(ranker, seed=seed)
        self._ranker.reset(self, archive)
        self._batch_size = self._opt.batch_size

    # ------------------------------------------------------------------
    @property
    def x0(self):
        return self._x0

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def restarts(self):
        return self._restarts

    @property
    def itrs(self):
        return self._itrs

    def _range(self, name):
        if self._profile:
            return torch.cuda.nvtx.range(name)
        return contextlib.nullcontext()

    # ------------------------------------------------------------------
    def ask(self):
        """Samples new solutions from the ES distribution."""
        with self._range("es_emitter.ask"):
            return self._opt.ask()

    def _check_restart(self, num_parents):
        if isinstance(self._restart_rule, (int, np.integer)):
            return self._itrs % self._restart_rule == 0
        if self._restart_rule == "no_improvement":
            return num_parents == 0
        if self._restart_rule == "basic":
            return False
        raise ValueError(f"Invalid restart_rule {self._restart_rule}")

    def tell(self, solution, objective, measures, add_info, **fields):
        """Updates the ES with the results of inserting the solutions."""
        with self._range("es_emitter.tell"):
            data, add_info = validate_batch(
                self.archive,
                {"solution": solution, "objective": objective, "measures": measures, **fields},
                add_info,
            )
            self._itrs += 1

            indices, ranking_values = self._ranker.rank(self, self.archive, data, add_info)
            num_parents = (
                int((add_info["status"] > 0).sum().item())
                if self._selection_rule == "filter"
                else self._batch_size // 2
            )
            self._last_num_improved = num_parents

            self._opt.tell(indices, ranking_values, num_parents)

            if self._opt.check_stop(ranking_values) or self._check_restart(num_parents):
                new_x0 = self.archive.sample_elites(1)["solution"][0]
                self._opt.reset(new_x0.to(self._device))
                self._ranker.reset(self, self.archive)
                self._restarts += 1

    def state_dict(self):
        """Host copy of the emitter state for checkpointing."""
        return {
            "mean": self._opt.mean.detach().cpu(),
            "sigma": float(self._opt.sigma),
            "restarts": self._restarts,
            "itrs": self._itrs,
        }
