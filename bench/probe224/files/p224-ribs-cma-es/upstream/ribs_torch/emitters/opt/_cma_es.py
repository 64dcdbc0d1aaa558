"""Implementation of CMA-ES used by the evolution-strategy emitters (torch port).

Adapted from ``ribs.emitters.opt._cma_es``; the covariance matrix and all
per-generation statistics live on the same device as the archive. The
covariance is kept in float64 because the eigendecomposition becomes unstable
in float32 beyond ~200 dimensions.
"""

import warnings

import numpy as np
import torch

from ribs_torch.emitters.opt._evolution_strategy_base import EvolutionStrategyBase

# cuSOLVER's syevd is considerably faster than MAGMA for the batch sizes we use.
if torch.cuda.is_available():
    torch.backends.cuda.preferred_linalg_library("cusolver")


class DecompMatrix:
    """Maintains a covariance matrix and its eigendecomposition.

    The eigendecomposition is only recomputed every ``lazy_gap`` evaluations
    (Hansen's lazy update), since it is the only O(n^3) step.
    """

    def __init__(self, dimension, dtype, device):
        self.dtype = dtype
        self.device = device
        self.cov = torch.eye(dimension, dtype=dtype, device=device)
        self.eigenbasis = torch.eye(dimension, dtype=dtype, device=device)
        self.eigenvalues = torch.ones(dimension, dtype=dtype, device=device)
        self.condition_number = 1.0
        self.invsqrt = torch.eye(dimension, dtype=dtype, device=device)
        self.updated_eval = 0

    def update_eigensystem(self, current_eval, lazy_gap_evals):
        if current_eval <= self.updated_eval + lazy_gap_evals:
            return
        # Force symmetry.
        self.cov = torch.maximum(self.cov, self.cov.T)
        eigenvalues, eigenbasis = torch.linalg.eigh(self.cov)
        self.eigenvalues = eigenvalues.real
        self.eigenbasis = eigenbasis.real
        self.condition_number = float(self.eigenvalues.max() / self.eigenvalues.min())
        self.invsqrt = (self.eigenbasis * (1.0 / torch.sqrt(self.eigenvalues))) @ self.eigenbasis.T
        self.updated_eval = current_eval


class CMAEvolutionStrategy(EvolutionStrategyBase):
    """CMA-ES with rank-mu and rank-one updates.

    Args:
        sigma0 (float): Initial step size.
        solution_dim (int): Size of the solution space.
        batch_size (int): Number of solutions per ``ask()``. Defaults to
            ``4 + floor(3 * ln(n))``.
        seed (int): Seed for the torch generator used for sampling.
        dtype: dtype of the returned solutions (float32 or float64).
        lower_bounds, upper_bounds: Bounds of the solution space; solutions
            outside are resampled.
        device: Device for the distribution state. Defaults to the archive
            device, typically "cuda".
    """

    def __init__(
        self,
        sigma0,
        solution_dim,
        batch_size=None,
        seed=None,
        dtype=torch.float64,
        lower_bounds=-np.inf,
        upper_bounds=np.inf,
        device=None,
    ):
        self.batch_size = 4 + int(3 * np.log(solution_dim)) if batch_size is None else batch_size
        self.sigma0 = sigma0
        self.solution_dim = solution_dim
        self.dtype = dtype
        self.device = torch.device(device) if device is not None else torch.device("cuda")

        # Internal state is always float64 (see module docstring).
        self._state_dtype = torch.float64
        self._generator = torch.Generator(device=self.device)
        if seed is not None:
            self._generator.manual_seed(seed)

        self.lower_bounds = torch.as_tensor(lower_bounds, dtype=self.dtype, device=self.device)
        self.upper_bounds = torch.as_tensor(upper_bounds, dtype=self.dtype, device=self.device)

        self.cov = None
        self.mean = None
        self.sigma = None
        self.pc = None
        self.ps = None
        self.current_eval = None
        self._solutions = None

    # ------------------------------------------------------------------
    def reset(self, x0):
        self.current_eval = 0
        self.sigma = self.sigma0
        self.mean = torch.as_tensor(x0, dtype=self._state_dtype, device=self.device).clone()
        self.pc = torch.zeros(self.solution_dim, dtype=self._state_dtype, device=self.device)
        self.ps = torch.zeros(self.solution_dim, dtype=self._state_dtype, device=self.device)
        self.cov = DecompMatrix(self.solution_dim, self._state_dtype, self.device)

    def check_stop(self, ranking_values):
        if self.cov.condition_number > 1e14:
            return True
        area = self.sigma * torch.sqrt(self.cov.eigenvalues.max())
        if area < 1e-11:
            return True
        if len(ranking_values) >= 2 and abs(float(ranking_values[0]) - float(ranking_values[-1])) < 1e-12:
            return True
        return False

    @staticmethod
    def _transform(mean, sigma, eigenbasis, eigenvalues, noise):
        return mean + sigma * (noise * torch.sqrt(eigenvalues)) @ eigenbasis.T

    def ask(self, batch_size=None):
        if batch_size is None:
            batch_size = self.batch_size
        lazy_gap_evals = 0.5 * self.solution_dim * self.batch_size * (self.c1 + self.cmu) ** -1 / self.solution_dim**2
        self.cov.update_eigensystem(self.current_eval, lazy_gap_evals)

        solutions = torch.empty((batch_size, self.solution_dim), dtype=self._state_dtype, device=self.device)
        remaining = torch.arange(batch_size, device=self.device)
        for _ in range(100):  # resample out-of-bounds solutions, bounded number of tries
            if remaining.numel() == 0:
                break
            noise = torch.randn(
                (remaining.numel(), self.solution_dim),
                generator=self._generator,
                dtype=self._state_dtype,
                device=self.device,
            )
            solutions[remaining] = self._transform(
                self.mean, self.sigma, self.cov.eigenbasis, self.cov.eigenvalues, noise
            )
            oob = (solutions[remaining] < self.lower_bounds) | (solutions[remaining] > self.upper_bounds)
            remaining = remaining[oob.any(dim=1)]
        if remaining.numel() > 0:
            warnings.warn("CMA-ES: some solutions still out of bounds after 100 resamples; clipping")
            solutions = torch.clamp(solutions, self.lower_bounds, self.upper_bounds)

        self._solutions = solutions
        return solutions.to(self.dtype)

    # ------------------------------------------------------------------
    def _calc_strat_params(self, num_parents):
        weights = np.log(num_parents + 0.5) - np.log(np.arange(1, num_parents + 1))
        total = weights.sum()
        weights = weights / total
        mueff = 1.0 / np.sum(weights**2)
        n = self.solution_dim
        cc = (4 + mueff / n) / (n + 4 + 2 * mueff / n)
        cs = (mueff + 2) / (n + mueff + 5)
        c1 = 2 / ((n + 1.3) ** 2 + mueff)
        cmu = min(1 - c1, 2 * (mueff - 2 + 1 / mueff) / ((n + 2) ** 2 + mueff))
        return torch.as_tensor(weights, dtype=self._state_dtype, device=self.device), mueff, cc, cs, c1, cmu

    @property
    def c1(self):
        n = self.solution_dim
        return 2 / ((n + 1.3) ** 2 + self.batch_size / 2)

    @property
    def cmu(self):
        n = self.solution_dim
        mu = self.batch_size / 2
        return min(1 - self.c1, 2 * (mu - 2 + 1 / mu) / ((n + 2) ** 2 + mu))

    def tell(self, ranking_indices, ranking_values, num_parents):
        self.current_eval += len(self._solutions)
        if num_parents == 0:
            return

        parents = self._solutions[ranking_indices][:num_parents]
        weights, mueff, cc, cs, c1, cmu = self._calc_strat_params(num_parents)
        damps = 1 + 2 * max(0, np.sqrt((mueff - 1) / (self.solution_dim + 1)) - 1) + cs
        chi_n = self.solution_dim**0.5 * (1 - 1 / (4 * self.solution_dim) + 1.0 / (21 * self.solution_dim**2))

        old_mean = self.mean
        self.mean = weights @ parents
        y = self.mean - old_mean

        z = self.cov.invsqrt @ y
        self.ps = (1 - cs) * self.ps + (np.sqrt(cs * (2 - cs) * mueff) / self.sigma) * z
        left = torch.sum(self.ps**2) / self.solution_dim / (
            1 - (1 - cs) ** (2 * self.current_eval / self.batch_size)
        )
        right = 2 + 4.0 / (self.solution_dim + 1)
        hsig = 1.0 if float(left) < right else 0.0
        self.pc = (1 - cc) * self.pc + hsig * np.sqrt(cc * (2 - cc) * mueff) * y / self.sigma

        c1a = c1 * (1 - (1 - hsig**2) * cc * (2 - cc))
        self.cov.cov *= 1 - c1a - cmu
        self.cov.cov += c1 * torch.outer(self.pc, self.pc)
        ys = (parents - old_mean) / self.sigma
        self.cov.cov += cmu * (ys.T * weights) @ ys

        cn, sum_square_ps = cs / damps, float(torch.sum(self.ps**2))
        self.sigma *= float(np.exp(min(1, cn * (sum_square_ps / self.solution_dim - 1) / 2)))


class SeparableCMAEvolutionStrategy(CMAEvolutionStrategy):
    """sep-CMA-ES (Ros & Hansen, 2008): diagonal covariance, O(n) per sample.

    Used for high-dimensional QD problems (e.g. neuroevolution of policies
    with 10k+ parameters) where the full covariance does not fit.
    """

    def reset(self, x0):
        super().reset(x0)
        self.diag = torch.ones(self.solution_dim, dtype=self._state_dtype, device=self.device)

    def ask(self, batch_size=None):
        if batch_size is None:
            batch_size = self.batch_size
        noise = torch.randn(
            (batch_size, self.solution_dim), generator=self._generator, dtype=self._state_dtype, device=self.device
        )
        solutions = self.mean + self.sigma * noise * torch.sqrt(self.diag)
        solutions = torch.clamp(solutions, self.lower_bounds, self.upper_bounds)
        self._solutions = solutions
        return solutions.to(self.dtype)

    def check_stop(self, ranking_values):
        if float(self.diag.max() / self.diag.min()) > 1e14:
            return True
        return self.sigma * float(torch.sqrt(self.diag.max())) < 1e-11

    def tell(self, ranking_indices, ranking_values, num_parents):
        self.current_eval += len(self._solutions)
        if num_parents == 0:
            return
        parents = self._solutions[ranking_indices][:num_parents]
        weights, mueff, cc, cs, c1, cmu = self._calc_strat_params(num_parents)
        n = self.solution_dim
        # learning rates scaled up for the diagonal model
        c1 = c1 * (n + 2) / 3
        cmu = min(1 - c1, cmu * (n + 2) / 3)
        damps = 1 + 2 * max(0, np.sqrt((mueff - 1) / (n + 1)) - 1) + cs
        chi_n = n**0.5 * (1 - 1 / (4 * n) + 1.0 / (21 * n**2))

        old_mean = self.mean
        self.mean = weights @ parents
        y = (self.mean - old_mean) / self.sigma
        z = y / torch.sqrt(self.diag)
        self.ps = (1 - cs) * self.ps + np.sqrt(cs * (2 - cs) * mueff) * z
        hsig = float(torch.linalg.norm(self.ps)) / np.sqrt(1 - (1 - cs) ** (2 * self.current_eval / self.batch_size)) < (1.4 + 2 / (n + 1)) * chi_n
        self.pc = (1 - cc) * self.pc + float(hsig) * np.sqrt(cc * (2 - cc) * mueff) * y
        ys = (parents - old_mean) / self.sigma
        self.diag = (1 - c1 - cmu) * self.diag + c1 * self.pc**2 + cmu * (weights[:, None] * ys**2).sum(0)
        self.sigma *= float(np.exp((cs / damps) * (float(torch.linalg.norm(self.ps)) / chi_n - 1)))
