"""Vectorised evaluation of a whole population of small policies.

Given a template ``nn.Module`` and a (popsize, num_params) matrix of flat
parameter vectors, run all policies in one batched forward pass. Two paths:

* ``vmap``: ``torch.func.functional_call`` under ``torch.func.vmap`` —
  generic, works for any module.
* ``bmm``: for plain MLPs, reshape the flat vectors into per-layer weight
  stacks and use batched matmuls directly. This is ~2x faster on GPUs for
  popsizes above ~1k because it avoids vmap's batching-rule overhead.
"""

from __future__ import annotations

import math
from typing import Dict, List, Optional, Sequence, Tuple

import torch
from torch import nn
from torch.func import functional_call, stack_module_state

# TF32 matmuls are accurate enough for policy evaluation and much faster on Ampere+.
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True


def make_mlp(obs_dim: int, act_dim: int, hidden: int = 64, depth: int = 2, act: str = "tanh") -> nn.Module:
    acts = {"tanh": nn.Tanh, "relu": nn.ReLU, "elu": nn.ELU}
    layers: List[nn.Module] = []
    d = obs_dim
    for _ in range(depth):
        layers += [nn.Linear(d, hidden), acts[act]()]
        d = hidden
    layers += [nn.Linear(d, act_dim), nn.Tanh()]
    return nn.Sequential(*layers)


def _param_shapes(module: nn.Module) -> List[Tuple[str, torch.Size]]:
    return [(n, p.shape) for n, p in module.named_parameters()]


class PopulationPolicy:
    """Evaluates a population of flat parameter vectors with a shared template."""

    def __init__(self, template: nn.Module, device: torch.device | str = "cpu", use_bmm: bool = True):
        self.device = torch.device(device)
        self.template = template.to("meta")
        self.shapes = _param_shapes(template)
        self.numels = [int(math.prod(s)) for _, s in self.shapes]
        self.num_params = sum(self.numels)
        self.use_bmm = use_bmm and self._is_plain_mlp(template)
        self._acts = [m for m in template if not isinstance(m, nn.Linear)] if self.use_bmm else None

    @staticmethod
    def _is_plain_mlp(module: nn.Module) -> bool:
        if not isinstance(module, nn.Sequential):
            return False
        return all(isinstance(m, (nn.Linear, nn.Tanh, nn.ReLU, nn.ELU)) for m in module)

    def flat_init(self, seed: int = 0) -> torch.Tensor:
        """Default PyTorch init of the template, flattened (on the host)."""
        g = torch.Generator().manual_seed(seed)
        chunks = []
        for (name, shape) in self.shapes:
            if name.endswith("weight"):
                fan_in = shape[1]
                bound = 1.0 / math.sqrt(fan_in)
                chunks.append((torch.rand(shape, generator=g) * 2 - 1).mul_(bound).flatten())
            else:
                chunks.append(torch.zeros(shape).flatten())
        return torch.cat(chunks)

    def unflatten(self, flat: torch.Tensor) -> Dict[str, torch.Tensor]:
        """(popsize, num_params) -> dict of (popsize, *shape) tensors."""
        pieces = torch.split(flat, self.numels, dim=-1)
        return {n: p.reshape(flat.shape[:-1] + s) for (n, s), p in zip(self.shapes, pieces)}

    # ------------------------------------------------------------------
    def _forward_vmap(self, params: Dict[str, torch.Tensor], obs: torch.Tensor) -> torch.Tensor:
        def f(p, o):
            return functional_call(self.template, p, (o,))

        return torch.func.vmap(f, in_dims=(0, 0))(params, obs)

    def _forward_bmm(self, params: Dict[str, torch.Tensor], obs: torch.Tensor) -> torch.Tensor:
        x = obs
        names = [n for n, _ in self.shapes]
        lin = 0
        for i in range(0, len(names), 2):
            w = params[names[i]]          # (P, out, in)
            b = params[names[i + 1]]      # (P, out)
            x = torch.baddbmm(b.unsqueeze(1), x, w.transpose(1, 2))
            x = self._acts[lin](x)
            lin += 1
        return x

    def __call__(self, flat_params: torch.Tensor, obs: torch.Tensor) -> torch.Tensor:
        """
        flat_params: (P, num_params); obs: (P, E, obs_dim) with E envs per member.
        Returns actions of shape (P, E, act_dim).
        """
        params = self.unflatten(flat_params.to(self.device))
        obs = obs.to(self.device)
        if flat_params.is_cuda and self.use_bmm:
            return self._forward_bmm(params, obs)
        return self._forward_vmap(params, obs)


def stacked_from_modules(modules: Sequence[nn.Module]) -> Tuple[Dict[str, torch.Tensor], nn.Module]:
    """Stack the parameters of already-instantiated modules (e.g. an elite archive)."""
    params, buffers = stack_module_state(list(modules))
    base = modules[0]
    return {**params, **buffers}, base


def evaluate_modules(modules: Sequence[nn.Module], obs: torch.Tensor, device: Optional[torch.device] = None):
    """Runs a list of modules on the same observation batch with torch.vmap."""
    device = device or obs.device
    params, base = stacked_from_modules([m.to(device) for m in modules])
    base = base.to("meta")

    def f(p, o):
        return functional_call(base, p, (o,))

    return torch.vmap(f, in_dims=(0, None), randomness="different")(params, obs.to(device))
