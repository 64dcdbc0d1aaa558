"""Zero-copy (UVA) feature store for billion-edge graphs.

Node features that do not fit in device memory are kept in page-locked host
memory that is *registered* with the CUDA driver, so that a gather kernel on
the GPU can read individual rows over PCIe/NVLink without staging them through
a host-side copy.  The hottest rows (by in-degree) are additionally cached in
device memory.  Design follows quiver's ``Feature`` and DGL's
``UnifiedTensor``.
"""
import logging
import math
import os
import os.path as osp
from typing import List, Optional

import torch
from torch import Tensor
from torch.utils.cpp_extension import load

logger = logging.getLogger(__name__)

_HERE = osp.dirname(osp.abspath(__file__))

# The gather kernel is JIT-compiled on first import and cached in
# ~/.cache/torch_extensions.
_uva = load(
    name="uva_gather",
    sources=[osp.join(_HERE, "csrc", "uva_gather.cpp"),
             osp.join(_HERE, "csrc", "uva_gather_kernel.cu")],
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3", "--use_fast_math", "-lineinfo"],
    verbose=bool(int(os.environ.get("GNNLAB_VERBOSE_BUILD", "0"))),
)


def _parse_size(size: str) -> int:
    size = size.strip().upper()
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if size[-1] in units:
        return int(float(size[:-1]) * units[size[-1]])
    return int(size)


class UVAFeature:
    r"""Row-partitioned feature tensor: a device cache for hot rows plus a
    registered host buffer for the rest.

    Args:
        device_cache_size (str): e.g. ``"4G"``; ``"auto"`` uses 40% of the
            free device memory.
        csr_topo: optional CSR topology used to rank nodes by degree.
    """

    def __init__(self, rank: int = 0, device_cache_size: str = "auto",
                 csr_topo=None, prefetch: bool = True):
        self.rank = rank
        self.device = torch.device(f"cuda:{rank}")
        self.device_cache_size = device_cache_size
        self.csr_topo = csr_topo
        self.prefetch = prefetch

        self.host_feat: Optional[Tensor] = None
        self.dev_feat: Optional[Tensor] = None
        self.feature_order: Optional[Tensor] = None
        self.cache_rows = 0
        self._registered = False
        self.copy_stream = torch.cuda.Stream(device=self.device)

    # ------------------------------------------------------------------ #
    def _cache_budget(self, row_bytes: int) -> int:
        if self.device_cache_size == "auto":
            free, total = torch.cuda.mem_get_info(self.device)
            budget = int(free * 0.4)
        else:
            budget = _parse_size(self.device_cache_size)
        return max(budget // row_bytes, 0)

    def from_cpu_tensor(self, feat: Tensor) -> "UVAFeature":
        assert feat.device.type == "cpu", "pass the full feature matrix on CPU"
        num_nodes, dim = feat.shape
        row_bytes = dim * feat.element_size()

        if self.csr_topo is not None:
            degree = self.csr_topo.indptr[1:] - self.csr_topo.indptr[:-1]
            order = torch.argsort(degree, descending=True)
            feat = feat[order]
            self.feature_order = torch.empty_like(order)
            self.feature_order[order] = torch.arange(num_nodes)

        self.cache_rows = min(self._cache_budget(row_bytes), num_nodes)
        logger.info("caching %d/%d rows (%.1f%%) on %s", self.cache_rows,
                    num_nodes, 100.0 * self.cache_rows / max(num_nodes, 1),
                    self.device)

        self.dev_feat = feat[:self.cache_rows].to(self.device)
        host = feat[self.cache_rows:]
        if not host.is_contiguous():
            host = host.contiguous()
        self.host_feat = self._register(host)
        if self.feature_order is not None:
            self.feature_order = self.feature_order.to(self.device)
        return self

    def _register(self, host: Tensor) -> Tensor:
        """Page-lock ``host`` in place and map it into the device address
        space (cudaHostRegisterMapped)."""
        if host.numel() == 0:
            return host
        cudart = torch.cuda.cudart()
        nbytes = host.numel() * host.element_size()
        err = cudart.cudaHostRegister(host.data_ptr(), nbytes, 2)
        if err.value != 0:
            logger.warning("cudaHostRegister failed (%s); falling back to "
                           "pin_memory() copy", err)
            return host.pin_memory()
        self._registered = True
        return host

    def unregister(self):
        if self._registered and self.host_feat is not None:
            torch.cuda.cudart().cudaHostUnregister(self.host_feat.data_ptr())
            self._registered = False

    def __del__(self):
        try:
            self.unregister()
        except Exception:
            pass

    # ------------------------------------------------------------------ #
    def __getitem__(self, n_id: Tensor) -> Tensor:
        if self.feature_order is not None:
            n_id = self.feature_order[n_id.to(self.device)]
        else:
            n_id = n_id.to(self.device, non_blocking=True)
        return _uva.gather(self.dev_feat, self.host_feat, n_id,
                           self.cache_rows)

    def prefetch_async(self, n_id: Tensor) -> Tensor:
        """Gather on the side stream; the caller synchronises with
        :meth:`wait` before using the result."""
        with torch.cuda.stream(self.copy_stream):
            out = self[n_id]
        return out

    def wait(self, out: Tensor) -> Tensor:
        torch.cuda.current_stream(self.device).wait_stream(self.copy_stream)
        out.record_stream(torch.cuda.current_stream(self.device))
        return out

    @property
    def shape(self):
        rows = self.cache_rows + (0 if self.host_feat is None
                                  else self.host_feat.size(0))
        dim = self.dev_feat.size(1) if self.dev_feat is not None else 0
        return torch.Size([rows, dim])

    def size(self, dim: int) -> int:
        return self.shape[dim]

    def share_ipc(self):
        """Export handles so DDP workers on the same host can attach."""
        return (self.rank, self.device_cache_size, self.cache_rows,
                self.dev_feat.untyped_storage()._share_cuda_(),
                self.host_feat, self.feature_order)


class PrefetchingLoader:
    """Wraps a PyG/DGL-style sampler so that the feature gather for batch
    ``i + 1`` overlaps with the model step for batch ``i``."""

    def __init__(self, loader, feature: UVAFeature, labels: Tensor):
        self.loader = loader
        self.feature = feature
        self.labels = labels.pin_memory()

    def __len__(self):
        return len(self.loader)

    def _load(self, batch):
        n_id = batch.n_id
        x = self.feature.prefetch_async(n_id)
        y = self.labels[n_id[:batch.batch_size]].to(
            self.feature.device, non_blocking=True)
        return batch, x, y

    def __iter__(self):
        it = iter(self.loader)
        try:
            nxt = self._load(next(it))
        except StopIteration:
            return
        for raw in it:
            cur = nxt
            nxt = self._load(raw)
            batch, x, y = cur
            yield batch, self.feature.wait(x), y
        batch, x, y = nxt
        yield batch, self.feature.wait(x), y


def build_feature_store(feat: Tensor, rank: int, cache: str = "auto",
                        csr_topo=None) -> UVAFeature:
    if not torch.cuda.is_available():
        raise RuntimeError("UVAFeature requires a CUDA device")
    torch.cuda.set_device(rank)
    store = UVAFeature(rank=rank, device_cache_size=cache, csr_topo=csr_topo)
    return store.from_cpu_tensor(feat)


def estimate_epoch_traffic(num_batches: int, batch_nodes: int, dim: int,
                           cache_hit: float, dtype=torch.float32) -> float:
    """Bytes read over the host link per epoch (for logging only)."""
    itemsize = torch.tensor([], dtype=dtype).element_size()
    miss = (1.0 - cache_hit) * batch_nodes
    return num_batches * miss * dim * itemsize / math.pow(1024, 3)


def split_ids(n_id: Tensor, cache_rows: int) -> List[Tensor]:
    """Helper used by the tests: which ids hit the device cache."""
    hit = n_id < cache_rows
    return [n_id[hit], n_id[~hit] - cache_rows]
