"""Fast batch iterators for tabular data that already fits in GPU memory.

``torch.utils.data.DataLoader`` is the bottleneck for small MLPs on tabular data: collating
thousands of 1-row samples per batch costs more than the forward pass. These loaders keep
whole tensors on the device and slice them with a random permutation instead.

* ``GPUTensorLoader``  - tensors already on the GPU (from cuDF via DLPack, or copied once)
* ``CUDAPrefetcher``   - wraps any host-side iterator and overlaps H2D copies with compute
                         on a side stream (the classic apex/ImageNet trick)
"""
from __future__ import annotations

import math
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np
import pandas as pd
import torch
from torch.utils.dlpack import from_dlpack

try:
    import cudf

    HAS_CUDF = True
except ImportError:  # CPU-only environment
    cudf = None
    HAS_CUDF = False


def _cudf_column_to_tensor(col) -> torch.Tensor:
    return from_dlpack(col.to_dlpack())


class GPUTensorLoader:
    """Iterate over aligned tensors in (optionally shuffled) mini-batches, entirely on the device.

    >>> loader = GPUTensorLoader.from_pandas(df, feats, "target", batch_size=4096, shuffle=True)
    >>> for x, y in loader: ...
    """

    def __init__(self, *tensors: torch.Tensor, batch_size: int = 1024, shuffle: bool = False,
                 drop_last: bool = False, seed: Optional[int] = None):
        assert all(t.shape[0] == tensors[0].shape[0] for t in tensors), "size mismatch between tensors"
        self.tensors = tensors
        self.device = tensors[0].device
        self.n = tensors[0].shape[0]
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.generator = None
        if seed is not None:
            self.generator = torch.Generator(device=self.device)
            self.generator.manual_seed(seed)

    @classmethod
    def from_pandas(cls, df: pd.DataFrame, features: Sequence[str], target: Optional[str] = None,
                    device: str | torch.device = "cuda", **kw) -> "GPUTensorLoader":
        x = torch.from_numpy(df[list(features)].to_numpy(dtype=np.float32))
        x = x.pin_memory().to(device, non_blocking=True)
        tensors = [x]
        if target is not None:
            y = torch.from_numpy(df[target].to_numpy(dtype=np.float32)).to(device)
            tensors.append(y)
        return cls(*tensors, **kw)

    @classmethod
    def from_cudf(cls, gdf, features: Sequence[str], target: Optional[str] = None, **kw) -> "GPUTensorLoader":
        """Zero-copy construction from a cuDF frame (columns are stacked on the GPU)."""
        if not HAS_CUDF:
            raise RuntimeError("cuDF is not installed; use from_pandas")
        cols = [_cudf_column_to_tensor(gdf[c].astype("float32")) for c in features]
        x = torch.stack(cols, dim=1)
        tensors = [x]
        if target is not None:
            tensors.append(_cudf_column_to_tensor(gdf[target].astype("float32")))
        return cls(*tensors, **kw)

    def __len__(self) -> int:
        if self.drop_last:
            return self.n // self.batch_size
        return math.ceil(self.n / self.batch_size)

    def __iter__(self) -> Iterator[Tuple[torch.Tensor, ...]]:
        if self.shuffle:
            idx = torch.randperm(self.n, device=self.device, generator=self.generator)
        else:
            idx = None
        for i in range(len(self)):
            sl = slice(i * self.batch_size, (i + 1) * self.batch_size)
            if idx is None:
                yield tuple(t[sl] for t in self.tensors)
            else:
                b = idx[sl]
                yield tuple(t.index_select(0, b) for t in self.tensors)


class CUDAPrefetcher:
    """Prefetch the next batch to the GPU on a side stream while the current one is consumed."""

    def __init__(self, loader, device: torch.device | str = "cuda"):
        self.loader = loader
        self.device = torch.device(device)
        self.stream = torch.cuda.Stream(device=self.device)
        self._iter = None
        self._next = None

    def _to_device(self, batch):
        if isinstance(batch, torch.Tensor):
            return batch.to(self.device, non_blocking=True)
        if isinstance(batch, dict):
            return {k: self._to_device(v) for k, v in batch.items()}
        return type(batch)(self._to_device(b) for b in batch)

    def _preload(self):
        try:
            batch = next(self._iter)
        except StopIteration:
            self._next = None
            return
        with torch.cuda.stream(self.stream):
            self._next = self._to_device(batch)

    @staticmethod
    def _record(batch, stream):
        if isinstance(batch, torch.Tensor):
            batch.record_stream(stream)
        elif isinstance(batch, dict):
            for v in batch.values():
                CUDAPrefetcher._record(v, stream)
        else:
            for b in batch:
                CUDAPrefetcher._record(b, stream)

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        self._iter = iter(self.loader)
        self._preload()
        while self._next is not None:
            torch.cuda.current_stream(self.device).wait_stream(self.stream)
            batch = self._next
            self._record(batch, torch.cuda.current_stream(self.device))
            self._preload()
            yield batch


def make_loaders(train_df: pd.DataFrame, valid_df: pd.DataFrame, features: List[str], target: str,
                 batch_size: int, device: torch.device, use_cudf: bool = False) -> Dict[str, GPUTensorLoader]:
    """Build train/valid loaders; with ``use_cudf`` the frames are moved to the GPU with cuDF first."""
    if use_cudf and HAS_CUDF:
        train_g = cudf.from_pandas(train_df[features + [target]])
        valid_g = cudf.from_pandas(valid_df[features + [target]])
        tr = GPUTensorLoader.from_cudf(train_g, features, target, batch_size=batch_size, shuffle=True, drop_last=True)
        va = GPUTensorLoader.from_cudf(valid_g, features, target, batch_size=batch_size * 4)
    else:
        tr = GPUTensorLoader.from_pandas(train_df, features, target, device=device, batch_size=batch_size,
                                         shuffle=True, drop_last=True)
        va = GPUTensorLoader.from_pandas(valid_df, features, target, device=device, batch_size=batch_size * 4)
    return {"train": tr, "valid": va}
