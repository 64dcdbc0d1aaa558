"""
lattice/u1/pytorch/lattice.py

2-D U(1) lattice gauge theory: link variables are angles x_mu(n) in [-pi, pi),
stored as a tensor of shape [batch, 2, Nt, Nx].  Everything here is device
agnostic; the trainer decides where the tensors live.
"""
from __future__ import absolute_import, annotations, division, print_function

import logging
import time
from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np
import torch

from l2hmc.utils.dist import DEVICE

log = logging.getLogger(__name__)

TWO_PI = 2. * np.pi
# double precision is the default for the gauge fields (see utils/dist.py)
PT_FLOAT = torch.get_default_dtype()


@dataclass
class Charges:
    intQ: torch.Tensor
    sinQ: torch.Tensor

    def asdict(self) -> dict:
        return {'intQ': self.intQ, 'sinQ': self.sinQ}


@dataclass
class LatticeMetrics:
    plaqs: torch.Tensor
    charges: Charges
    p4x4: torch.Tensor

    def asdict(self) -> dict:
        return {
            'plaqs': self.plaqs,
            'sinQ': self.charges.sinQ,
            'intQ': self.charges.intQ,
            'p4x4': self.p4x4,
        }


def area_law(beta: float, nplaqs: int):
    return (torch.special.i1(torch.tensor(beta)) / torch.special.i0(torch.tensor(beta))) ** nplaqs


def plaq_exact(beta: float) -> torch.Tensor:
    beta = torch.tensor(beta, dtype=torch.float64)
    return torch.special.i1(beta) / torch.special.i0(beta)


@torch.jit.script
def project_angle(x: torch.Tensor) -> torch.Tensor:
    """Returns the projection of an angle `x` from [-4pi, 4pi] to [-pi, pi]."""
    return x - 2. * np.pi * torch.floor((x + np.pi) / (2. * np.pi))


class LatticeU1:
    def __init__(self, nchains: int, shape: Tuple[int, int]):
        self.nchains = nchains
        self._dim = 2
        assert len(shape) == 2
        self._nt, self._nx = shape
        self.xshape = (self._dim, *shape)
        self._shape = (nchains, *self.xshape)
        self.nplaqs = self._nt * self._nx
        self.nlinks = self.nplaqs * self._dim

    def draw_uniform_batch(self) -> torch.Tensor:
        unif = torch.rand(self._shape, dtype=PT_FLOAT, device=DEVICE)
        return TWO_PI * unif - np.pi

    def unnormalized_action(self, x: torch.Tensor) -> torch.Tensor:
        return self.action(x=x, beta=torch.tensor(1.0, dtype=x.dtype, device=x.device))

    def action(self, x: torch.Tensor, beta: torch.Tensor) -> torch.Tensor:
        """Returns the Wilson gauge action, sum_P beta * (1 - cos(x_P))."""
        wloops = self.wilson_loops(x)
        return beta * (1.0 - torch.cos(wloops)).sum((1, 2))

    def grad_action(self, x: torch.Tensor, beta: torch.Tensor) -> torch.Tensor:
        """Returns the derivative of the action with respect to the link angles."""
        x.requires_grad_(True)
        s = self.action(x, beta)
        identity = torch.ones(x.shape[0], device=x.device)
        dsdx, = torch.autograd.grad(s, x, grad_outputs=identity, retain_graph=True)
        return dsdx

    def plaqs_diff(self, beta: float, x: Optional[torch.Tensor] = None,
                   wloops: Optional[torch.Tensor] = None) -> torch.Tensor:
        wloops = self.wilson_loops(x) if wloops is None else wloops
        plaqs = self.plaqs(wloops=wloops)
        pexact = plaq_exact(beta) * torch.ones_like(plaqs)
        return pexact - plaqs

    def calc_metrics(self, x: torch.Tensor, beta: Optional[torch.Tensor] = None) -> dict[str, torch.Tensor]:
        wloops = self.wilson_loops(x)
        plaqs = self.plaqs(wloops=wloops)
        charges = self.charges(wloops=wloops)
        metrics = {'plaqs': plaqs, 'intQ': charges.intQ, 'sinQ': charges.sinQ}
        if beta is not None:
            pexact = plaq_exact(beta) * torch.ones_like(plaqs)
            metrics.update({'plaqs_err': pexact - plaqs})
        return metrics

    def wilson_loops(self, x: torch.Tensor) -> torch.Tensor:
        """Returns the 1x1 plaquettes x_01(n) = x_0(n) + x_1(n+0) - x_0(n+1) - x_1(n)."""
        x = x.view(-1, *self.xshape)
        x0 = x[:, 0]
        x1 = x[:, 1]
        # periodic shifts along t (dim 1) and x (dim 2) of the [batch, Nt, Nx] slices
        return x0 + torch.roll(x1, -1, dims=1) - torch.roll(x0, -1, dims=2) - x1

    def wilson_loops4x4(self, x: torch.Tensor) -> torch.Tensor:
        """Returns the 4x4 Wilson loops."""
        x = x.view(-1, *self.xshape)
        x0 = x[:, 0]
        x1 = x[:, 1]
        return (
            x0
            + x0.roll(-1, dims=2) + x0.roll(-2, dims=2) + x0.roll(-3, dims=2)
            + x1.roll(-4, dims=2) + x1.roll((-4, -1), dims=(2, 1))
            + x1.roll((-4, -2), dims=(2, 1)) + x1.roll((-4, -3), dims=(2, 1))
            - x0.roll((-3, -4), dims=(2, 1)) - x0.roll((-2, -4), dims=(2, 1))
            - x0.roll((-1, -4), dims=(2, 1)) - x0.roll(-4, dims=1)
            - x1.roll(-3, dims=1) - x1.roll(-2, dims=1) - x1.roll(-1, dims=1) - x1
        )

    def plaqs(self, x: Optional[torch.Tensor] = None, wloops: Optional[torch.Tensor] = None) -> torch.Tensor:
        if wloops is None:
            assert x is not None
            wloops = self.wilson_loops(x)
        return torch.cos(wloops).mean((1, 2))

    def plaqs4x4(self, x: Optional[torch.Tensor] = None, wloops: Optional[torch.Tensor] = None) -> torch.Tensor:
        if wloops is None:
            assert x is not None
            wloops = self.wilson_loops4x4(x)
        return torch.cos(wloops).mean((1, 2))

    def _sin_charges(self, wloops: torch.Tensor) -> torch.Tensor:
        return torch.sin(wloops).sum((1, 2)) / TWO_PI

    def _int_charges(self, wloops: torch.Tensor) -> torch.Tensor:
        return project_angle(wloops).sum((1, 2)) / TWO_PI

    def charges(self, x: Optional[torch.Tensor] = None, wloops: Optional[torch.Tensor] = None) -> Charges:
        if wloops is None:
            assert x is not None
            wloops = self.wilson_loops(x)
        return Charges(intQ=self._int_charges(wloops), sinQ=self._sin_charges(wloops))

    def random(self) -> torch.Tensor:
        return self.draw_uniform_batch()

    def random_momentum(self) -> torch.Tensor:
        return torch.randn(self._shape, dtype=PT_FLOAT, device=DEVICE)

    def kinetic_energy(self, v: torch.Tensor) -> torch.Tensor:
        return 0.5 * v.reshape(v.shape[0], -1).square().sum(-1)


def benchmark_wilson_loops(nchains: int = 1024, shape=(16, 16), nrep: int = 50) -> float:
    """Rough timing of the plaquette kernel, reported in the trainer's startup log."""
    lat = LatticeU1(nchains, shape)
    x = lat.random()
    for _ in range(5):
        lat.wilson_loops(x)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(nrep):
        lat.wilson_loops(x)
    torch.cuda.synchronize()  # wait for the last launch
    dt = (time.perf_counter() - t0) / nrep
    log.info(f'wilson_loops: {1e3 * dt:.3f} ms / call ({nchains} chains, {shape})')
    return dt
