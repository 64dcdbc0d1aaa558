# Copyright (c) 2023, NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
"""Graph containers and message-passing primitives for the GraphCast grid2mesh / mesh / mesh2grid
graphs. Uses cugraph-ops fused kernels when available and a plain torch gather/scatter
implementation otherwise."""

import warnings
from typing import Any, Callable, Dict, Optional, Tuple, Union

import torch
from torch import Tensor
from torch.utils.checkpoint import checkpoint

try:
    from pylibcugraphops.pytorch import BipartiteCSC, StaticCSC
    import pylibcugraphops.pytorch.operators as ops

    USE_CUGRAPHOPS = True
except ImportError:
    StaticCSC = None
    BipartiteCSC = None
    ops = None
    USE_CUGRAPHOPS = False


class CuGraphCSC:
    """Graph in CSC format (offsets over destination nodes, indices = source nodes).

    Parameters
    ----------
    offsets : Tensor   (num_dst_nodes + 1,)
    indices : Tensor   (num_edges,)
    num_src_nodes, num_dst_nodes : int
    ef_indices : Tensor, optional  permutation from CSC edge order to the original edge order
    reverse_graph_bwd : bool       build the reverse graph for a faster backward pass
    cache_graph : bool             cache the cugraph-ops graph object across calls
    """

    def __init__(
        self,
        offsets: Tensor,
        indices: Tensor,
        num_src_nodes: int,
        num_dst_nodes: int,
        ef_indices: Optional[Tensor] = None,
        reverse_graph_bwd: bool = True,
        cache_graph: bool = True,
        use_cugraphops: bool = True,
    ) -> None:
        self.offsets = offsets
        self.indices = indices
        self.num_src_nodes = num_src_nodes
        self.num_dst_nodes = num_dst_nodes
        self.ef_indices = ef_indices
        self.reverse_graph_bwd = reverse_graph_bwd
        self.cache_graph = cache_graph
        self.bipartite_csc = None
        self.static_csc = None
        self.use_cugraphops = use_cugraphops
        if self.use_cugraphops and not USE_CUGRAPHOPS:
            warnings.warn("pylibcugraphops is not installed, using the torch gather/scatter path")
            self.use_cugraphops = False

        # destination index of every edge, in CSC order (used by the torch path)
        counts = self.offsets[1:] - self.offsets[:-1]
        self.dst_index = torch.repeat_interleave(torch.arange(num_dst_nodes, device=offsets.device), counts)

    def to(self, *args: Any, **kwargs: Any) -> "CuGraphCSC":
        device, dtype, _, _ = torch._C._nn._parse_to(*args, **kwargs)
        if dtype not in (None, torch.int32, torch.int64):
            raise TypeError(f"Invalid dtype, expected torch.int32 or torch.int64, got {dtype}.")
        self.offsets = self.offsets.to(device=device, dtype=dtype)
        self.indices = self.indices.to(device=device, dtype=dtype)
        self.dst_index = self.dst_index.to(device=device)
        if self.ef_indices is not None:
            self.ef_indices = self.ef_indices.to(device=device, dtype=dtype)
        return self

    def to_bipartite_csc(self, dtype=None) -> "BipartiteCSC":
        if not self.use_cugraphops:
            raise RuntimeError("Conversion failed, expected cugraph-ops to be installed.")
        if not self.offsets.is_cuda:
            raise RuntimeError("Expected the graph structures to reside on GPU.")
        if self.bipartite_csc is None or not self.cache_graph:
            graph_offsets = self.offsets
            graph_indices = self.indices
            if dtype is not None:
                graph_offsets = self.offsets.to(dtype=dtype)
                graph_indices = self.indices.to(dtype=dtype)
            graph = BipartiteCSC(graph_offsets, graph_indices, self.num_src_nodes)
            self.bipartite_csc = graph
            self.bipartite_csc.add_reverse_graph()
            return graph
        return self.bipartite_csc

    def to_static_csc(self, dtype=None) -> "StaticCSC":
        if not self.use_cugraphops:
            raise RuntimeError("Conversion failed, expected cugraph-ops to be installed.")
        if not self.offsets.is_cuda:
            raise RuntimeError("Expected the graph structures to reside on GPU.")
        if self.static_csc is None or not self.cache_graph:
            graph = StaticCSC(self.offsets.to(dtype=dtype) if dtype else self.offsets,
                              self.indices.to(dtype=dtype) if dtype else self.indices)
            self.static_csc = graph
            return graph
        return self.static_csc


def _src_dst_feat(nfeat: Union[Tensor, Tuple[Tensor, Tensor]]) -> Tuple[Tensor, Tensor]:
    if isinstance(nfeat, Tensor):
        return nfeat, nfeat
    return nfeat


def concat_efeat(efeat: Tensor, nfeat: Union[Tensor, Tuple[Tensor, Tensor]], graph: CuGraphCSC) -> Tensor:
    """[e_ij, h_src(j), h_dst(i)] for every edge."""
    src_feat, dst_feat = _src_dst_feat(nfeat)
    if graph.use_cugraphops:
        bipartite_graph = graph.to_bipartite_csc()
        return ops.update_efeat_bipartite_e2e(efeat, src_feat, dst_feat, bipartite_graph, "concat")
    with torch.cuda.nvtx.range("concat_efeat"):
        src = src_feat.index_select(0, graph.indices)
        dst = dst_feat.index_select(0, graph.dst_index)
        return torch.cat((efeat, src, dst), dim=-1)


def sum_efeat(efeat: Tensor, nfeat: Union[Tensor, Tuple[Tensor, Tensor]], graph: CuGraphCSC) -> Tensor:
    """e_ij + h_src(j) + h_dst(i) for every edge (features already projected)."""
    src_feat, dst_feat = _src_dst_feat(nfeat)
    if graph.use_cugraphops:
        bipartite_graph = graph.to_bipartite_csc()
        return ops.update_efeat_bipartite_e2e(efeat, src_feat, dst_feat, bipartite_graph, "sum")
    return efeat + src_feat.index_select(0, graph.indices) + dst_feat.index_select(0, graph.dst_index)


def aggregate_edges(efeat: Tensor, graph: CuGraphCSC, aggregation: str = "sum") -> Tensor:
    """Reduce edge features onto destination nodes."""
    out = efeat.new_zeros((graph.num_dst_nodes, efeat.shape[-1]))
    if aggregation == "sum":
        return out.index_add_(0, graph.dst_index, efeat)
    if aggregation == "mean":
        out.index_add_(0, graph.dst_index, efeat)
        deg = (graph.offsets[1:] - graph.offsets[:-1]).clamp(min=1).to(efeat.dtype)
        return out / deg.unsqueeze(-1)
    if aggregation == "max":
        index = graph.dst_index.unsqueeze(-1).expand_as(efeat)
        return out.scatter_reduce_(0, index, efeat, reduce="amax", include_self=False)
    raise ValueError(f"Invalid aggregation {aggregation}")


def aggregate_and_concat(efeat: Tensor, nfeat: Tensor, graph: CuGraphCSC, aggregation: str) -> Tensor:
    """Aggregate edge features on the destination nodes and concatenate with the node features."""
    if graph.use_cugraphops:
        static_graph = graph.to_static_csc()
        if aggregation == "sum":
            return ops.agg_concat_e2n(nfeat, efeat, static_graph, "sum")
        if aggregation == "mean":
            return ops.agg_concat_e2n(nfeat, efeat, static_graph, "mean")
        raise ValueError(f"Invalid aggregation {aggregation} for cugraph-ops")

    torch.cuda.nvtx.range_push("aggregate_and_concat")
    h_dest = aggregate_edges(efeat, graph, aggregation)
    cat_feat = torch.cat((h_dest, nfeat), -1)
    torch.cuda.nvtx.range_pop()
    return cat_feat


def checkpoint_identity(layer: Callable, *args: Any, **kwargs: Any) -> Any:
    """Applies the identity function for checkpointing (no recomputation)."""
    return layer(*args)


def set_checkpoint_fn(do_checkpointing: bool) -> Callable:
    """Checkpointing function used in the processor / encoder / decoder."""
    if do_checkpointing:
        return checkpoint
    return checkpoint_identity


def graph_from_edges(src: Tensor, dst: Tensor, num_src: int, num_dst: int, use_cugraphops: bool = True) -> Tuple[CuGraphCSC, Tensor]:
    """Sort edges by destination and build the CSC graph; returns the graph and the edge permutation."""
    perm = torch.argsort(dst * num_src + src)
    src_sorted = src[perm]
    dst_sorted = dst[perm]
    counts = torch.bincount(dst_sorted, minlength=num_dst)
    offsets = torch.zeros(num_dst + 1, dtype=torch.int64, device=src.device)
    offsets[1:] = torch.cumsum(counts, dim=0)
    graph = CuGraphCSC(offsets, src_sorted, num_src, num_dst, ef_indices=perm, use_cugraphops=use_cugraphops)
    return graph, perm
