"""Contains the GridArchive (PyTorch port).

This is a port of ``ribs.archives.GridArchive`` where every field of the
archive is a torch tensor kept on an accelerator, so that insertion of a whole
batch of solutions is a few scatter kernels instead of a Python loop.
"""

import numpy as np
import torch

from ribs_torch._utils import check_batch_shape, check_finite, validate_batch
from ribs_torch.archives._archive_base import ArchiveBase
from ribs_torch.archives._archive_data_frame import ArchiveDataFrame
from ribs_torch.archives._archive_stats import ArchiveStats


def _default_device():
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")


class GridArchive(ArchiveBase):
    """An archive that divides each dimension into uniformly-sized cells.

    Args:
        solution_dim (int): Dimension of the solution space.
        dims (array-like of int): Number of cells in each dimension of the
            measure space, e.g. ``[20, 30, 40]``.
        ranges (array-like of (float, float)): Upper and lower bound of each
            dimension of the measure space.
        learning_rate (float): Learning rate for CMA-MAE threshold updates.
            ``1.0`` gives the standard MAP-Elites behaviour.
        threshold_min (float): Initial threshold of every cell.
        epsilon (float): Numerical tolerance at the upper bound of each range.
        qd_score_offset (float): Offset subtracted when computing the QD score.
        seed (int): Seed for the random generator used by :meth:`sample_elites`.
        dtype (torch.dtype): Dtype of solutions, objectives and measures.
        device (str or torch.device): Where the archive tensors live. Defaults
            to the first CUDA device.
    """

    def __init__(
        self,
        *,
        solution_dim,
        dims,
        ranges,
        learning_rate=None,
        threshold_min=-np.inf,
        epsilon=1e-6,
        qd_score_offset=0.0,
        seed=None,
        dtype=torch.float32,
        device=None,
    ):
        self._dims = np.array(dims, dtype=np.int64)
        if len(self._dims) != len(ranges):
            raise ValueError(
                f"dims (length {len(self._dims)}) and ranges (length {len(ranges)}) must be the same length"
            )
        self._device = _default_device() if device is None else torch.device(device)
        self._dtype = dtype

        ArchiveBase.__init__(
            self,
            solution_dim=solution_dim,
            cells=int(np.prod(self._dims)),
            measure_dim=len(self._dims),
            learning_rate=learning_rate,
            threshold_min=threshold_min,
            qd_score_offset=qd_score_offset,
            seed=seed,
            dtype=dtype,
            device=self._device,
        )

        ranges = list(zip(*ranges))
        self._lower_bounds = torch.tensor(ranges[0], dtype=dtype, device=self._device)
        self._upper_bounds = torch.tensor(ranges[1], dtype=dtype, device=self._device)
        self._interval_size = self._upper_bounds - self._lower_bounds
        self._epsilon = epsilon
        self._dims_t = torch.as_tensor(self._dims, device=self._device)

        # Boundaries of each dimension (dims[i] + 1 values each), kept on the
        # host as numpy for plotting, and on the device for bucketize().
        self._boundaries = [
            np.linspace(lo, hi, n + 1) for lo, hi, n in zip(ranges[0], ranges[1], self._dims)
        ]
        self._boundaries_t = [
            torch.as_tensor(b[1:-1], dtype=dtype, device=self._device) for b in self._boundaries
        ]
        # Row-major strides for ravel_multi_index.
        strides = np.cumprod(np.concatenate([self._dims[1:][::-1], [1]]))[::-1].copy()
        self._strides = torch.as_tensor(strides, dtype=torch.int64, device=self._device)

    # ------------------------------------------------------------------
    @property
    def dims(self):
        """(measure_dim,) numpy.ndarray: Number of cells in each dimension."""
        return self._dims

    @property
    def lower_bounds(self):
        return self._lower_bounds

    @property
    def upper_bounds(self):
        return self._upper_bounds

    @property
    def interval_size(self):
        return self._interval_size

    @property
    def boundaries(self):
        return self._boundaries

    @property
    def epsilon(self):
        return self._epsilon

    @property
    def device(self):
        return self._device

    # ------------------------------------------------------------------
    def index_of(self, measures):
        """Returns archive indices for the given batch of measures.

        Measures outside the bounds are clipped into the first/last cell.
        """
        measures = torch.as_tensor(measures, dtype=self._dtype, device=self._device)
        check_batch_shape(measures, "measures", self.measure_dim, "measure_dim")
        check_finite(measures, "measures")

        clipped = torch.minimum(
            torch.maximum(measures, self._lower_bounds),
            self._upper_bounds - self._epsilon,
        )
        grid_index = (self._dims_t * (clipped - self._lower_bounds) / self._interval_size).long()
        grid_index = torch.minimum(grid_index, self._dims_t - 1)
        return self.grid_to_int_index(grid_index)

    def index_of_single(self, measures):
        return self.index_of(torch.as_tensor(measures)[None])[0]

    def int_to_grid_index(self, int_indices):
        int_indices = torch.as_tensor(int_indices, dtype=torch.int64, device=self._device)
        out = []
        rem = int_indices
        for stride in self._strides.tolist():
            out.append(torch.div(rem, stride, rounding_mode="floor"))
            rem = rem % stride
        return torch.stack(out, dim=-1)

    def grid_to_int_index(self, grid_indices):
        grid_indices = torch.as_tensor(grid_indices, dtype=torch.int64, device=self._device)
        return (grid_indices * self._strides).sum(dim=-1)

    # ------------------------------------------------------------------
    def add(self, solution, objective, measures, **fields):
        """Inserts a batch of solutions into the archive.

        For each cell, only the best solution of the batch can replace the
        incumbent (batch-level elitism via scatter_reduce).
        """
        data = validate_batch(
            self,
            {
                "solution": torch.as_tensor(solution, dtype=self._dtype, device=self._device),
                "objective": torch.as_tensor(objective, dtype=self._dtype, device=self._device),
                "measures": torch.as_tensor(measures, dtype=self._dtype, device=self._device),
                **fields,
            },
        )
        batch_size = data["solution"].shape[0]
        indices = self.index_of(data["measures"])

        cur_threshold = self._thresholds[indices]
        cur_occupied = self._occupied[indices]
        cur_threshold = torch.where(cur_occupied, cur_threshold, torch.full_like(cur_threshold, self._threshold_min))
        improvement = data["objective"] - cur_threshold
        can_insert = data["objective"] > cur_threshold

        # best candidate per cell among those that can be inserted
        masked_obj = torch.where(can_insert, data["objective"], torch.full_like(data["objective"], -torch.inf))
        best_per_cell = torch.full((self.cells,), -torch.inf, dtype=self._dtype, device=self._device)
        best_per_cell.scatter_reduce_(0, indices, masked_obj, reduce="amax", include_self=True)
        is_winner = can_insert & (masked_obj == best_per_cell[indices])

        # break ties deterministically: first occurrence wins
        order = torch.arange(batch_size, device=self._device)
        first = torch.full((self.cells,), batch_size, dtype=torch.int64, device=self._device)
        first.scatter_reduce_(0, indices[is_winner], order[is_winner], reduce="amin", include_self=True)
        is_winner &= first[indices] == order

        win_idx = indices[is_winner]
        status = torch.zeros(batch_size, dtype=torch.int32, device=self._device)
        status[can_insert & cur_occupied] = 1
        status[can_insert & ~cur_occupied] = 2

        # CMA-MAE threshold update
        if self._learning_rate == 1.0:
            new_threshold = data["objective"][is_winner]
        else:
            new_threshold = (1.0 - self._learning_rate) * cur_threshold[is_winner] + self._learning_rate * data[
                "objective"
            ][is_winner]

        self._store.set(win_idx, {k: v[is_winner] for k, v in data.items()})
        self._thresholds[win_idx] = new_threshold
        self._occupied[win_idx] = True
        self._stats_dirty = True

        return {"status": status, "value": improvement}

    # ------------------------------------------------------------------
    def retrieve(self, measures):
        """Elites of the cells that the given measures fall into.

        Returns a tuple (occupied, data) where ``occupied`` is a boolean
        tensor and ``data`` is a dict of field tensors (garbage where the
        cell is empty).
        """
        indices = self.index_of(measures)
        occupied = self._occupied[indices]
        data = {name: self._store[name][indices] for name in self._store.field_names}
        data["index"] = indices
        return occupied, data

    def retrieve_single(self, measures):
        occupied, data = self.retrieve(torch.as_tensor(measures)[None])
        return bool(occupied[0]), {k: v[0] for k, v in data.items()}

    def sample_elites(self, n):
        """Uniformly samples ``n`` elites (with replacement) on the archive device."""
        occupied = self._occupied.nonzero(as_tuple=True)[0]
        if occupied.numel() == 0:
            raise IndexError("No elements in archive.")
        choice = torch.randint(0, occupied.numel(), (n,), generator=self._generator, device=self._device)
        picked = occupied[choice]
        return {name: self._store[name][picked] for name in self._store.field_names} | {"index": picked}

    def clear(self):
        """Removes all elites and resets the thresholds."""
        self._occupied.zero_()
        self._thresholds.fill_(self._threshold_min)
        self._store.clear()
        self._stats_dirty = True

    def __len__(self):
        return int(self._occupied.sum().item())

    def __iter__(self):
        occupied = self._occupied.nonzero(as_tuple=True)[0].tolist()
        for idx in occupied:
            yield {name: self._store[name][idx] for name in self._store.field_names}

    # ------------------------------------------------------------------
    def as_pandas(self, include_solutions=True, include_metadata=False):
        """Copies the occupied cells to the host and wraps them in a DataFrame."""
        occupied = self._occupied.nonzero(as_tuple=True)[0]
        data = {
            "index": occupied.cpu().numpy(),
            "objective": self._store["objective"][occupied].cpu().numpy(),
        }
        measures = self._store["measures"][occupied].cpu().numpy()
        for i in range(self.measure_dim):
            data[f"measures_{i}"] = measures[:, i]
        if include_solutions:
            sols = self._store["solution"][occupied].cpu().numpy()
            for i in range(self.solution_dim):
                data[f"solution_{i}"] = sols[:, i]
        return ArchiveDataFrame(data)

    def stats(self) -> ArchiveStats:
        if self._stats_dirty:
            occupied = self._occupied
            objs = self._store["objective"][occupied]
            num_elites = int(occupied.sum().item())
            self._stats = ArchiveStats(
                num_elites=num_elites,
                coverage=num_elites / self.cells,
                qd_score=float((objs - self._qd_score_offset).sum().item()),
                norm_qd_score=float((objs - self._qd_score_offset).sum().item()) / self.cells,
                obj_max=float(objs.max().item()) if num_elites else None,
                obj_mean=float(objs.mean().item()) if num_elites else None,
            )
            self._stats_dirty = False
        return self._stats
