"""Contains the CVTArchive (PyTorch port).

Centroids of the Centroidal Voronoi Tessellation are computed once with
k-means on the host. Finding the nearest centroid for a batch of measures is
the hot loop of every ``add()``; for large archives (10k+ cells) we use a
small CUDA kernel (``csrc/cvt_nn_kernel.cu``) that keeps the centroid tile in
shared memory. When the extension cannot be built, we fall back to
``torch.cdist`` + ``argmin`` in chunks.
"""

import logging
import os
import warnings

import numpy as np
import torch
from sklearn.cluster import k_means

from ribs_torch.archives._archive_base import ArchiveBase

logger = logging.getLogger(__name__)

_HERE = os.path.dirname(os.path.abspath(__file__))
_CSRC = os.path.join(os.path.dirname(_HERE), "csrc")

_EXT = None
_EXT_FAILED = False


def _load_extension():
    """JIT-compiles the nearest-centroid extension the first time it is needed."""
    global _EXT, _EXT_FAILED
    if _EXT is not None or _EXT_FAILED:
        return _EXT
    try:
        from torch.utils.cpp_extension import load

        _EXT = load(
            name="ribs_cvt_nn",
            sources=[os.path.join(_CSRC, "cvt_nn.cpp"), os.path.join(_CSRC, "cvt_nn_kernel.cu")],
            extra_cflags=["-O3"],
            extra_cuda_cflags=["-O3", "--use_fast_math", "-lineinfo"],
            verbose=bool(int(os.environ.get("RIBS_TORCH_VERBOSE_BUILD", "0"))),
        )
    except Exception as e:  # pylint: disable = broad-except
        warnings.warn(f"Could not build the CVT CUDA extension ({e}); using torch.cdist fallback.")
        _EXT_FAILED = True
    return _EXT


def _kernel_supported(device: torch.device) -> bool:
    if device.type != "cuda":
        return False
    major, _ = torch.cuda.get_device_capability(device)
    # The kernel uses __shfl_down_sync and 48 KiB of shared memory per block.
    return major >= 7


def nearest_centroid_cdist(measures, centroids, chunk_size=4096):
    """Brute-force nearest-centroid search, chunked to bound memory."""
    out = torch.empty(measures.shape[0], dtype=torch.int64, device=measures.device)
    for start in range(0, measures.shape[0], chunk_size):
        block = measures[start : start + chunk_size]
        dists = torch.cdist(block, centroids)
        out[start : start + chunk_size] = dists.argmin(dim=1)
    return out


class CVTArchive(ArchiveBase):
    """An archive that divides the measure space into Voronoi cells.

    Args:
        solution_dim (int): Dimension of the solution space.
        cells (int): Number of centroids.
        ranges (array-like of (float, float)): Bounds of the measure space.
        samples (int): Number of random samples used by k-means.
        custom_centroids (array-like): Precomputed centroids, skips k-means.
        use_kernel (bool): Use the custom CUDA nearest-centroid kernel when
            possible.
        device: Device of the archive tensors.
    """

    def __init__(
        self,
        *,
        solution_dim,
        cells,
        ranges,
        learning_rate=None,
        threshold_min=-np.inf,
        qd_score_offset=0.0,
        seed=None,
        dtype=torch.float32,
        device="cuda:0",
        custom_centroids=None,
        samples=100_000,
        k_means_kwargs=None,
        use_kernel=True,
    ):
        self._device = torch.device(device)
        ArchiveBase.__init__(
            self,
            solution_dim=solution_dim,
            cells=cells,
            measure_dim=len(ranges),
            learning_rate=learning_rate,
            threshold_min=threshold_min,
            qd_score_offset=qd_score_offset,
            seed=seed,
            dtype=dtype,
            device=self._device,
        )
        ranges = list(zip(*ranges))
        self._lower_bounds = np.array(ranges[0], dtype=np.float64)
        self._upper_bounds = np.array(ranges[1], dtype=np.float64)

        rng = np.random.default_rng(seed)
        if custom_centroids is None:
            self._samples = rng.uniform(self._lower_bounds, self._upper_bounds, size=(samples, self.measure_dim))
            kwargs = {"n_init": 1, "init": "random", "algorithm": "lloyd", "random_state": seed}
            kwargs.update(k_means_kwargs or {})
            centroids = k_means(self._samples, self.cells, **kwargs)[0]
            if centroids.shape[0] < self.cells:
                raise RuntimeError("k-means returned fewer centroids than requested")
        else:
            centroids = np.asarray(custom_centroids)
            self._samples = None

        self._centroids_np = centroids
        self._centroids = torch.as_tensor(centroids, dtype=dtype, device=self._device).contiguous()
        self._use_kernel = bool(use_kernel) and _kernel_supported(self._device)
        if self._use_kernel and _load_extension() is None:
            self._use_kernel = False
        logger.info(
            "CVTArchive with %d cells on %s (nearest-centroid kernel: %s)",
            self.cells,
            self._device,
            "cuda" if self._use_kernel else "cdist",
        )

    @property
    def centroids(self):
        """(n_centroids, measure_dim) numpy.ndarray: The centroids."""
        return self._centroids_np

    @property
    def samples(self):
        return self._samples

    def index_of(self, measures):
        measures = torch.as_tensor(measures, dtype=self.dtype, device=self._device).contiguous()
        if self._use_kernel:
            return _EXT.nearest_centroid(measures, self._centroids)
        return nearest_centroid_cdist(measures, self._centroids)

    def index_of_single(self, measures):
        return int(self.index_of(torch.as_tensor(measures)[None])[0].item())

    def add(self, solution, objective, measures, **fields):
        """Batched insertion; the elitist per-cell logic lives in ArchiveBase."""
        solution = torch.as_tensor(solution, dtype=self.dtype, device=self._device)
        objective = torch.as_tensor(objective, dtype=self.dtype, device=self._device)
        measures = torch.as_tensor(measures, dtype=self.dtype, device=self._device)
        indices = self.index_of(measures)
        return self._insert_batch(indices, solution=solution, objective=objective, measures=measures, **fields)

    def closest_centroid_distance(self, measures):
        """Distance from each measure to its cell centroid (diagnostics for CVT quality)."""
        measures = torch.as_tensor(measures, dtype=self.dtype, device=self._device)
        idx = self.index_of(measures)
        return torch.linalg.vector_norm(measures - self._centroids[idx], dim=1)

    def state_dict(self):
        """Host-side snapshot used by the checkpointing in the example scripts."""
        sd = ArchiveBase.state_dict(self)
        sd["centroids"] = self._centroids.detach().cpu()
        sd["use_kernel"] = self._use_kernel
        return sd
