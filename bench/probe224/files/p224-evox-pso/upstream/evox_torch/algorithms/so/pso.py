"""Particle Swarm Optimisation (PyTorch backend).

Port of ``evox.algorithms.so.pso_variants.PSO``. Everything is expressed as
whole-swarm tensor ops, so a swarm of 100k particles in 1000 dimensions is a
few dozen kernels per step on a GPU; nothing here is GPU-specific though --
tensors are created on ``torch.get_default_device()`` unless a device is
passed explicitly.
"""

from __future__ import annotations

from typing import Optional

import torch

from evox_torch.core import Algorithm, Mutable, Parameter
from evox_torch.utils import clamp


def min_by(values: torch.Tensor, keys: torch.Tensor):
    """Returns the value with the smallest key (ties: first)."""
    idx = torch.argmin(keys)
    return values[idx], keys[idx]


class PSO(Algorithm):
    """Canonical PSO with inertia weight.

    Args:
        pop_size: number of particles.
        lb, ub: (dim,) lower / upper bounds.
        w: inertia weight.
        phi_p: cognitive coefficient.
        phi_g: social coefficient.
        device: device for the swarm; defaults to the current default device
            (set ``torch.set_default_device("cuda")`` to run on a GPU).
    """

    def __init__(
        self,
        pop_size: int,
        lb: torch.Tensor,
        ub: torch.Tensor,
        w: float = 0.6,
        phi_p: float = 2.5,
        phi_g: float = 0.8,
        device: Optional[torch.device] = None,
    ):
        super().__init__()
        device = torch.get_default_device() if device is None else torch.device(device)
        assert lb.shape == ub.shape and lb.ndim == 1, "lb and ub must be 1-D and of equal shape"
        self.pop_size = pop_size
        self.dim = lb.shape[0]
        self.w = Parameter(w, device=device)
        self.phi_p = Parameter(phi_p, device=device)
        self.phi_g = Parameter(phi_g, device=device)

        lb = lb[None, :].to(device=device)
        ub = ub[None, :].to(device=device)
        length = ub - lb
        population = torch.rand(self.pop_size, self.dim, device=device)
        population = length * population + lb
        velocity = torch.rand(self.pop_size, self.dim, device=device)
        velocity = 2 * length * velocity - length

        self.lb = lb
        self.ub = ub
        self.pop = Mutable(population)
        self.velocity = Mutable(velocity)
        self.fit = Mutable(torch.full((self.pop_size,), torch.inf, device=device))
        self.local_best_location = Mutable(population)
        self.local_best_fit = Mutable(torch.full((self.pop_size,), torch.inf, device=device))
        self.global_best_location = Mutable(population[0])
        self.global_best_fit = Mutable(torch.tensor(torch.inf, device=device))

    def step(self):
        """One PSO iteration: evaluate, update bests, move particles."""
        fit = self.evaluate(self.pop)
        compare = self.local_best_fit > fit
        self.local_best_location = torch.where(compare[:, None], self.pop, self.local_best_location)
        self.local_best_fit = torch.where(compare, fit, self.local_best_fit)
        self.global_best_location, self.global_best_fit = min_by(
            torch.cat([self.global_best_location[None, :], self.pop], dim=0),
            torch.cat([self.global_best_fit.unsqueeze(0), fit]),
        )

        rg = torch.rand(self.pop_size, self.dim, device=fit.device)
        rp = torch.rand(self.pop_size, self.dim, device=fit.device)
        velocity = (
            self.w * self.velocity
            + self.phi_p * rp * (self.local_best_location - self.pop)
            + self.phi_g * rg * (self.global_best_location - self.pop)
        )
        population = self.pop + velocity
        self.pop = clamp(population, self.lb, self.ub)
        self.velocity = clamp(velocity, self.lb, self.ub)
        self.fit = fit

    def init_step(self):
        """First step: only evaluate and set the bests."""
        self.fit = self.evaluate(self.pop)
        self.local_best_fit = self.fit
        self.global_best_location, self.global_best_fit = min_by(self.pop, self.fit)

    def record_step(self):
        return {"pop": self.pop, "fit": self.fit}


class CLPSO(PSO):
    """Comprehensive-learning PSO (Liang et al., 2006), simplified."""

    def __init__(self, *args, c: float = 1.49445, refresh_gap: int = 7, **kwargs):
        super().__init__(*args, **kwargs)
        device = self.pop.device
        self.c = Parameter(c, device=device)
        self.refresh_gap = refresh_gap
        idx = torch.arange(self.pop_size, device=device)
        self.learning_prob = 0.05 + 0.45 * (torch.exp(10 * idx / (self.pop_size - 1)) - 1) / (torch.exp(torch.tensor(10.0, device=device)) - 1)
        self.stagnation = Mutable(torch.zeros(self.pop_size, dtype=torch.int64, device=device))
        self.exemplar = Mutable(torch.arange(self.pop_size, device=device)[:, None].expand(-1, self.dim).clone())

    def _refresh_exemplars(self, mask: torch.Tensor):
        device = self.pop.device
        a = torch.randint(0, self.pop_size, (self.pop_size, self.dim), device=device)
        b = torch.randint(0, self.pop_size, (self.pop_size, self.dim), device=device)
        better = torch.where(self.local_best_fit[a] < self.local_best_fit[b], a, b)
        use_other = torch.rand(self.pop_size, self.dim, device=device) < self.learning_prob[:, None]
        own = torch.arange(self.pop_size, device=device)[:, None].expand(-1, self.dim)
        new_exemplar = torch.where(use_other, better, own)
        self.exemplar = torch.where(mask[:, None], new_exemplar, self.exemplar)
        self.stagnation = torch.where(mask, torch.zeros_like(self.stagnation), self.stagnation)

    def step(self):
        fit = self.evaluate(self.pop)
        improved = fit < self.local_best_fit
        self.local_best_location = torch.where(improved[:, None], self.pop, self.local_best_location)
        self.local_best_fit = torch.where(improved, fit, self.local_best_fit)
        self.stagnation = torch.where(improved, torch.zeros_like(self.stagnation), self.stagnation + 1)
        self._refresh_exemplars(self.stagnation >= self.refresh_gap)

        target = torch.gather(self.local_best_location, 0, self.exemplar)
        r = torch.rand(self.pop_size, self.dim, device=fit.device)
        velocity = self.w * self.velocity + self.c * r * (target - self.pop)
        self.pop = clamp(self.pop + velocity, self.lb, self.ub)
        self.velocity = velocity
        self.fit = fit
