# Copyright (c) Meta Platforms, Inc. and affiliates.
# Licensed under the Apache License, Version 2.0

# pyre-unsafe

"""
Top-K retrieval modules used in evaluation: exact MIPS on the accelerator and an
approximate IVF-PQ index kept on the GPU through faiss.
"""

import abc
import logging
from typing import Optional, Tuple

import numpy as np
import torch

try:
    import faiss  # faiss-gpu
    import faiss.contrib.torch_utils  # noqa: F401  lets faiss take torch tensors directly
except ImportError:
    faiss = None

logger = logging.getLogger(__name__)


class TopKModule(torch.nn.Module, abc.ABC):
    @abc.abstractmethod
    def forward(
        self, query_embeddings: torch.Tensor, k: int
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        """returns (scores [B, K], ids [B, K])"""
        pass


class MIPSBruteForceTopK(TopKModule):
    def __init__(self, item_embeddings: torch.Tensor, item_ids: torch.Tensor) -> None:
        super().__init__()
        self._item_embeddings_t = item_embeddings.t().contiguous()  # [D, X]
        self._item_ids = item_ids.view(-1)  # [X]

    def forward(
        self, query_embeddings: torch.Tensor, k: int, chunk_size: int = 65536
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        # chunk over the catalog to bound the [B, X] score matrix
        best_scores: Optional[torch.Tensor] = None
        best_ids: Optional[torch.Tensor] = None
        X = self._item_ids.numel()
        for start in range(0, X, chunk_size):
            scores = torch.mm(query_embeddings, self._item_embeddings_t[:, start : start + chunk_size])
            s, idx = torch.topk(scores, k=min(k, scores.size(1)), dim=1)
            ids = self._item_ids[start : start + chunk_size][idx]
            if best_scores is None:
                best_scores, best_ids = s, ids
            else:
                cat_s = torch.cat([best_scores, s], dim=1)
                cat_i = torch.cat([best_ids, ids], dim=1)
                best_scores, pos = torch.topk(cat_s, k=k, dim=1)
                best_ids = torch.gather(cat_i, 1, pos)
        assert best_scores is not None and best_ids is not None
        return best_scores, best_ids


class GpuIVFPQTopK(TopKModule):
    """
    Approximate MIPS with a faiss IVF-PQ index resident in GPU memory. Used for the
    Amazon Books / ML-20M "full catalog" evals where brute force is too slow at
    eval_batch_size=4096.
    """

    def __init__(
        self,
        item_embeddings: torch.Tensor,
        item_ids: torch.Tensor,
        nlist: int = 4096,
        m: int = 32,
        nbits: int = 8,
        nprobe: int = 64,
        use_float16_lookup_tables: bool = True,
    ) -> None:
        super().__init__()
        if faiss is None:
            raise ImportError("faiss-gpu is required for GpuIVFPQTopK")
        d = item_embeddings.size(1)
        self._item_ids = item_ids.view(-1)
        self._device_id = torch.cuda.current_device()

        self._res = faiss.StandardGpuResources()
        self._res.setTempMemory(512 * 1024 * 1024)
        cfg = faiss.GpuIndexIVFPQConfig()
        cfg.device = self._device_id
        cfg.useFloat16LookupTables = use_float16_lookup_tables
        self._index = faiss.GpuIndexIVFPQ(
            self._res, d, nlist, m, nbits, faiss.METRIC_INNER_PRODUCT, cfg
        )
        xb = item_embeddings.detach().float().contiguous()
        train_size = min(xb.size(0), nlist * 64)
        perm = torch.randperm(xb.size(0), device=xb.device)[:train_size]
        self._index.train(xb[perm])
        self._index.add(xb)
        self._index.nprobe = nprobe
        logger.info(
            f"built GpuIndexIVFPQ on device {self._device_id}: "
            f"{self._index.ntotal} items, nlist={nlist}, m={m}, nprobe={nprobe}"
        )

    def forward(
        self, query_embeddings: torch.Tensor, k: int
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        scores, idx = self._index.search(query_embeddings.detach().float().contiguous(), k)
        idx = idx.clamp(min=0)
        return scores.to(query_embeddings.dtype), self._item_ids[idx]


class CpuIndexFallback(TopKModule):
    """HNSW on the host, for small debugging runs without faiss-gpu."""

    def __init__(self, item_embeddings: torch.Tensor, item_ids: torch.Tensor, M: int = 32) -> None:
        super().__init__()
        if faiss is None:
            raise ImportError("faiss is required for CpuIndexFallback")
        xb = item_embeddings.detach().float().cpu().numpy()
        self._index = faiss.IndexHNSWFlat(xb.shape[1], M, faiss.METRIC_INNER_PRODUCT)
        self._index.add(xb)
        self._item_ids = item_ids.view(-1)

    def forward(self, query_embeddings: torch.Tensor, k: int) -> Tuple[torch.Tensor, torch.Tensor]:
        q = query_embeddings.detach().float().cpu().numpy()
        scores, idx = self._index.search(q, k)
        idx_t = torch.from_numpy(np.maximum(idx, 0)).to(self._item_ids.device)
        return (
            torch.from_numpy(scores).to(query_embeddings.device, query_embeddings.dtype),
            self._item_ids[idx_t],
        )


def get_top_k_module(
    top_k_method: str,
    item_embeddings: torch.Tensor,
    item_ids: torch.Tensor,
    **kwargs,
) -> TopKModule:
    if top_k_method == "MIPSBruteForceTopK":
        return MIPSBruteForceTopK(item_embeddings, item_ids)
    elif top_k_method == "GpuIVFPQTopK":
        return GpuIVFPQTopK(item_embeddings, item_ids, **kwargs)
    elif top_k_method == "CpuIndexFallback":
        return CpuIndexFallback(item_embeddings, item_ids, **kwargs)
    raise ValueError(f"unknown top_k_method {top_k_method}")
