"""Planar robotic arm tasks (PyTorch port of ``qdax.tasks.arm``).

The genotype is a vector of joint angles in [0, 1] (scaled to [0, 2*pi]);
the descriptor is the end-effector position in [0, 1]^2 and the fitness is
minus the variance of the angles (a smooth arm is preferred).
"""

from __future__ import annotations

import math
import time
from typing import Tuple

import numpy as np
import torch

from qdax_torch.types import Descriptor, ExtraScores, Fitness, Genotype

DEFAULT_DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def arm(params: Genotype) -> Tuple[Fitness, Descriptor]:
    """Computes fitness and descriptor of a batch of arms.

    Args:
        params: (batch_size, num_joints) tensor of angles in [0, 1].
    """
    batch_size, num_joints = params.shape
    lengths = torch.ones(num_joints, dtype=params.dtype, device=params.device) / num_joints
    angles = 2 * math.pi * params
    cum_angles = torch.cumsum(angles, dim=1)
    x_pos = torch.sum(lengths * torch.cos(cum_angles), dim=1)
    y_pos = torch.sum(lengths * torch.sin(cum_angles), dim=1)

    fitness = -torch.std(params, dim=1, unbiased=False)
    descriptor = 0.5 * torch.stack((x_pos, y_pos), dim=1) + 0.5
    return fitness, descriptor


def arm_scoring_function(params: Genotype, generator: torch.Generator | None = None) -> Tuple[Fitness, Descriptor, ExtraScores]:
    """Scoring function wrapping :func:`arm` (deterministic)."""
    out_of_bounds = (params < 0.0) | (params > 1.0)
    fitness, descriptor = arm(torch.clamp(params, 0.0, 1.0))
    # penalise out-of-bounds genotypes like QDax does
    fitness = torch.where(out_of_bounds.any(dim=1), fitness - 1.0, fitness)
    return fitness, descriptor, {}


def noisy_arm_scoring_function(
    params: Genotype,
    generator: torch.Generator,
    fit_variance: float = 0.1,
    desc_variance: float = 0.05,
    params_variance: float = 0.02,
) -> Tuple[Fitness, Descriptor, ExtraScores]:
    """Arm with Gaussian noise on the parameters, fitness and descriptor."""
    noise = torch.randn(params.shape, generator=generator, device=params.device, dtype=params.dtype)
    noisy_params = params + math.sqrt(params_variance) * noise
    fitness, descriptor, extra = arm_scoring_function(noisy_params, generator)
    fitness = fitness + math.sqrt(fit_variance) * torch.randn(
        fitness.shape, generator=generator, device=fitness.device, dtype=fitness.dtype
    )
    descriptor = descriptor + math.sqrt(desc_variance) * torch.randn(
        descriptor.shape, generator=generator, device=descriptor.device, dtype=descriptor.dtype
    )
    return fitness, descriptor, extra


def random_genotypes(batch_size: int, num_joints: int, generator: torch.Generator, device=None) -> Genotype:
    device = DEFAULT_DEVICE if device is None else device
    return torch.rand((batch_size, num_joints), generator=generator, device=device)


def _benchmark(batch_size: int = 65536, num_joints: int = 100, repeats: int = 50):
    """Quick timing of the scoring function on CPU vs. the default device."""
    results = {}
    for dev in ("cpu", DEFAULT_DEVICE):
        dev = torch.device(dev)
        gen = torch.Generator(device=dev).manual_seed(0)
        x = random_genotypes(batch_size, num_joints, gen, device=dev)
        arm_scoring_function(x)  # warm-up
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        t0 = time.perf_counter()
        for _ in range(repeats):
            arm_scoring_function(x)
        if dev.type == "cuda":  # wait for queued kernels before stopping the clock
            torch.cuda.synchronize()
        results[str(dev)] = (time.perf_counter() - t0) / repeats
    # host-side reference (numpy), used to sanity-check the torch port
    angles_cuda_ref = np.random.default_rng(0).random((16, num_joints))
    fit_ref = -np.std(angles_cuda_ref, axis=1)
    fit_t, _, _ = arm_scoring_function(torch.as_tensor(angles_cuda_ref))
    assert np.allclose(fit_ref, fit_t.numpy(), atol=1e-6)
    return results


if __name__ == "__main__":
    for k, v in _benchmark().items():
        print(f"{k:>8s}: {1e3 * v:7.3f} ms / batch")
