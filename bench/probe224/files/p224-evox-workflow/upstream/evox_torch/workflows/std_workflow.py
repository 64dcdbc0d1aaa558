"""Standard workflow: ask -> evaluate -> tell, with optional monitoring.

Modelled on EvoX's ``evox.workflows.StdWorkflow`` (PyTorch backend). The
workflow itself is device-agnostic: it follows ``torch.get_default_device()``,
so users typically call ``torch.set_default_device("cuda")`` once at the top
of their script and everything (population, fitness, algorithm state) lives
on the GPU.
"""

from __future__ import annotations

import time
import warnings
from typing import Any, Callable, Dict, List, Optional

import torch
from torch import nn

from evox_torch.core import Algorithm, Monitor, Problem


class StdWorkflow(nn.Module):
    """The standard workflow.

    Args:
        algorithm: the optimisation algorithm.
        problem: the problem to solve.
        monitor: optional monitor that records fitness / timing.
        opt_direction: "min" or "max".
        solution_transform: optional callable applied to the population
            before evaluation (e.g. parameter adapter for neuroevolution).
        fitness_transform: optional callable applied to the fitness.
    """

    def __init__(
        self,
        algorithm: Algorithm,
        problem: Problem,
        monitor: Optional[Monitor] = None,
        opt_direction: str = "min",
        solution_transform: Optional[Callable] = None,
        fitness_transform: Optional[Callable] = None,
        device: Optional[torch.device | str] = None,
    ):
        super().__init__()
        if opt_direction not in ("min", "max"):
            raise ValueError(f"opt_direction must be 'min' or 'max', got {opt_direction}")
        self.algorithm = algorithm
        self.problem = problem
        self.monitor = monitor
        self.opt_direction = 1 if opt_direction == "min" else -1
        self.solution_transform = solution_transform
        self.fitness_transform = fitness_transform
        self.device = torch.device(device) if device is not None else torch.get_default_device()
        self.generation = 0
        self._compiled_step = None

    def _evaluate(self, population: torch.Tensor) -> torch.Tensor:
        if self.monitor is not None:
            self.monitor.pre_eval(population)
        pop = population if self.solution_transform is None else self.solution_transform(population)
        fitness = self.problem.evaluate(pop)
        if self.fitness_transform is not None:
            fitness = self.fitness_transform(fitness)
        if self.monitor is not None:
            self.monitor.post_eval(fitness)
        return fitness * self.opt_direction

    def init_step(self):
        """First generation: the algorithm's ``init_ask``/``init_tell`` if it has them."""
        if hasattr(self.algorithm, "init_ask"):
            pop = self.algorithm.init_ask()
            self.algorithm.init_tell(self._evaluate(pop))
        else:
            self.step()
        self.generation = 1

    def step(self):
        if self.monitor is not None:
            self.monitor.pre_step()
        pop = self.algorithm.ask()
        fit = self._evaluate(pop)
        self.algorithm.tell(fit)
        self.generation += 1
        if self.monitor is not None:
            self.monitor.post_step()

    def compile(self, mode: str = "max-autotune-no-cudagraphs", **kwargs):
        """Compiles ``step`` with torch.compile.

        ``max-autotune-no-cudagraphs`` is the best trade-off on GPUs: the
        algorithms mutate their state in place, which CUDA graphs dislike.
        """
        if self.device.type != "cuda":
            warnings.warn("torch.compile is only tuned for CUDA here; running eagerly instead")
            return self
        self._compiled_step = torch.compile(self.step, mode=mode, **kwargs)
        return self

    def run(self, n_steps: int, log_every: int = 0):
        self.init_step()
        step = self._compiled_step or self.step
        for i in range(1, n_steps):
            step()
            if log_every and (i + 1) % log_every == 0 and self.monitor is not None:
                print(f"[gen {self.generation}] best={self.monitor.get_best_fitness():.6g}")
        return self

    def state_dict_for_checkpoint(self) -> Dict[str, Any]:
        """Algorithm + monitor state moved to the host, plus the generation counter."""
        algo_state = {k: v.detach().cpu() if torch.is_tensor(v) else v for k, v in self.algorithm.state_dict().items()}
        return {"generation": self.generation, "algorithm": algo_state,
                "best_fitness": None if self.monitor is None else self.monitor.get_best_fitness()}

    def save(self, path: str):
        torch.save(self.state_dict_for_checkpoint(), path)

    def load(self, path: str):
        ckpt = torch.load(path, map_location=self.device)
        self.algorithm.load_state_dict(ckpt["algorithm"])
        self.generation = ckpt["generation"]
        return self


class EvalMonitor(Monitor):
    """Records the best fitness so far and (optionally) per-generation time."""

    def __init__(self, topk: int = 1, full_fit_history: bool = False, time_it: bool = True,
                 device: Optional[torch.device | str] = None):
        super().__init__()
        self.topk = topk
        self.full_fit_history = full_fit_history
        self.time_it = time_it
        self.device = torch.device(device) if device is not None else torch.get_default_device()
        self.best_fitness = torch.full((topk,), torch.inf, device=self.device)
        self.best_solution = None
        self.fitness_history: List[torch.Tensor] = []
        self.step_times: List[float] = []
        self._latest_population = None
        if self.time_it and self.device.type == "cuda":
            self._start = torch.cuda.Event(enable_timing=True)
            self._end = torch.cuda.Event(enable_timing=True)
        else:
            self._start = self._end = None
        self._t0 = 0.0

    def pre_step(self):
        if not self.time_it:
            return
        if self._start is not None:
            self._start.record()
        else:
            self._t0 = time.perf_counter()

    def post_step(self):
        if not self.time_it:
            return
        if self._end is not None:
            self._end.record()
            self._end.synchronize()
            self.step_times.append(self._start.elapsed_time(self._end) / 1e3)
        else:
            self.step_times.append(time.perf_counter() - self._t0)

    def pre_eval(self, population):
        self._latest_population = population

    def post_eval(self, fitness):
        if self.full_fit_history:
            self.fitness_history.append(fitness.detach().to("cpu", non_blocking=True))
        candidates = torch.cat([self.best_fitness, fitness.reshape(-1)])
        vals, idx = torch.topk(candidates, self.topk, largest=False)
        self.best_fitness = vals
        n_old = self.topk
        if bool((idx >= n_old).any()):
            new_idx = idx[idx >= n_old] - n_old
            self.best_solution = self._latest_population[new_idx[:1]].detach().clone()

    def get_best_fitness(self) -> float:
        return float(self.best_fitness[0])

    def summary(self) -> Dict[str, Any]:
        return {
            "best_fitness": self.get_best_fitness(),
            "mean_step_time": sum(self.step_times) / max(len(self.step_times), 1),
            "num_steps": len(self.step_times),
        }


if __name__ == "__main__":
    from evox_torch.algorithms import PSO
    from evox_torch.problems.numerical import Ackley

    torch.set_default_device("cuda" if torch.cuda.is_available() else "cpu")
    algo = PSO(pop_size=100_000, lb=-32 * torch.ones(1000), ub=32 * torch.ones(1000))
    prob = Ackley()
    mon = EvalMonitor()
    wf = StdWorkflow(algo, prob, mon).compile()
    wf.run(1000, log_every=100)
    print(mon.summary())
