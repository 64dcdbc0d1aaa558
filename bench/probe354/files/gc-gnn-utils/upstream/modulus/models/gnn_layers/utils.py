# SPDX-FileCopyrightText: Copyright (c) 2023 - 2024 NVIDIA CORPORATION & AFFILIATES.
# SPDX-FileCopyrightText: All rights reserved.
# SPDX-License-Identifier: Apache-2.0
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

from typing import Any, Callable, Dict, Tuple, Union

import dgl.function as fn
import torch
from dgl import DGLGraph
from torch import Tensor
from torch.utils.checkpoint import checkpoint

try:
    from pylibcugraphops.pytorch import BipartiteCSC, StaticCSC
    from pylibcugraphops.pytorch.operators import (
        agg_concat_e2n,
        update_efeat_bipartite_e2e,
        update_efeat_static_e2e,
    )

    USE_CUGRAPHOPS = True

except ImportError:
    BipartiteCSC = None
    StaticCSC = None
    USE_CUGRAPHOPS = False


class CuGraphCSC:
    """Constructs a CuGraphCSC object: a light-weight graph structure (compressed
    sparse column, i.e. offsets into the sorted destination list) that can be
    consumed either by the cugraph-ops fused kernels or converted to a DGLGraph.

    Parameters
    ----------
    offsets : Tensor
        The offsets tensor.
    indices : Tensor
        The indices tensor.
    num_src_nodes : int
        The number of source nodes.
    num_dst_nodes : int
        The number of destination nodes.
    ef_indices : Optional[Tensor], optional
        The edge feature indices tensor, by default None
    reverse_graph_bwd : bool, optional
        Whether to reverse the graph for the backward pass, by default True
    cache_graph : bool, optional
        Whether to cache graph structures when wrapping offsets and indices
        to the corresponding cugraph-ops graph types. If graph change in each
        iteration, set to False, by default True.
    """

    def __init__(
        self,
        offsets: Tensor,
        indices: Tensor,
        num_src_nodes: int,
        num_dst_nodes: int,
        ef_indices: Union[Tensor, None] = None,
        reverse_graph_bwd: bool = True,
        cache_graph: bool = True,
    ) -> None:
        self.offsets = offsets
        self.indices = indices
        self.num_src_nodes = num_src_nodes
        self.num_dst_nodes = num_dst_nodes
        self.ef_indices = ef_indices
        self.reverse_graph_bwd = reverse_graph_bwd
        self.cache_graph = cache_graph

        # cugraph-ops structures
        self.bipartite_csc = None
        self.static_csc = None
        # dgl graph
        self.dgl_graph = None

        self.is_distributed = False
        self.dist_csc = None

    @staticmethod
    def from_dgl(graph: DGLGraph, cache_graph: bool = True) -> "CuGraphCSC":
        """Convert a DGLGraph into a CuGraphCSC (edge ids become ef_indices)."""
        offsets, indices, edge_perm = graph.adj_tensors("csc")
        n_src_nodes, n_dst_nodes = (graph.num_src_nodes(), graph.num_dst_nodes())
        return CuGraphCSC(
            offsets.to(dtype=torch.int64),
            indices.to(dtype=torch.int64),
            n_src_nodes,
            n_dst_nodes,
            ef_indices=edge_perm.to(dtype=torch.int64) if edge_perm is not None else None,
            cache_graph=cache_graph,
        )

    def to(self, *args: Any, **kwargs: Any) -> "CuGraphCSC":
        """Moves the object to the specified device, dtype, or format and returns
        the updated object.
        """
        device, dtype, _, _ = torch._C._nn._parse_to(*args, **kwargs)
        if dtype not in (None, torch.int32, torch.int64):
            raise TypeError(
                f"Invalid dtype, expected torch.int32 or torch.int64, got {dtype}."
            )
        self.offsets = self.offsets.to(device=device, dtype=dtype)
        self.indices = self.indices.to(device=device, dtype=dtype)
        if self.ef_indices is not None:
            self.ef_indices = self.ef_indices.to(device=device, dtype=dtype)
        # cached structures refer to the old device
        self.bipartite_csc = None
        self.static_csc = None
        self.dgl_graph = None
        return self

    @property
    def device(self) -> torch.device:
        return self.offsets.device

    def to_bipartite_csc(self, dtype=None) -> BipartiteCSC:
        """Converts the graph to a bipartite CSC graph (cugraph-ops)."""
        if not (USE_CUGRAPHOPS):
            raise ImportError("pylibcugraphops is not available.")

        if self.offsets.device.type != "cuda":
            raise RuntimeError("cugraph-ops graph structures require CUDA tensors")

        if self.bipartite_csc is None:
            # DGL/cugraph-ops indices have to be int32 when offsets fit
            graph_offsets = self.offsets.to(dtype=torch.int32)
            graph_indices = self.indices.to(dtype=torch.int32)
            graph_ef_indices = None if self.ef_indices is None else self.ef_indices.to(dtype=torch.int32)
            graph = BipartiteCSC(
                graph_offsets,
                graph_indices,
                self.num_src_nodes,
                graph_ef_indices,
                reverse_graph_bwd=self.reverse_graph_bwd,
            )
            if self.cache_graph:
                self.bipartite_csc = graph
            return graph
        return self.bipartite_csc

    def to_static_csc(self, dtype=None) -> StaticCSC:
        """Converts the graph to a static CSC graph (cugraph-ops, src == dst node set)."""
        if not (USE_CUGRAPHOPS):
            raise ImportError("pylibcugraphops is not available.")

        if self.static_csc is None:
            graph_offsets = self.offsets.to(dtype=torch.int32)
            graph_indices = self.indices.to(dtype=torch.int32)
            graph_ef_indices = None if self.ef_indices is None else self.ef_indices.to(dtype=torch.int32)
            graph = StaticCSC(graph_offsets, graph_indices, graph_ef_indices)
            if self.cache_graph:
                self.static_csc = graph
            return graph
        return self.static_csc

    def to_dgl_graph(self) -> DGLGraph:
        """Converts the graph to a DGLGraph (used when cugraph-ops is unavailable)."""
        import dgl

        if self.dgl_graph is None:
            if self.ef_indices is not None:
                raise AssertionError("ef_indices is not supported.")
            graph_offsets = self.offsets
            dst_degree = graph_offsets[1:] - graph_offsets[:-1]
            src_indices = self.indices
            dst_indices = torch.arange(
                0, graph_offsets.size(0) - 1, dtype=graph_offsets.dtype, device=graph_offsets.device
            )
            dst_indices = torch.repeat_interleave(dst_indices, dst_degree, dim=0)

            # labels not important here
            dgl_graph = dgl.heterograph(
                {("src", "src2dst", "dst"): ("coo", (src_indices, dst_indices))},
                idtype=torch.int32,
            )
            if self.cache_graph:
                self.dgl_graph = dgl_graph
            return dgl_graph
        return self.dgl_graph


def checkpoint_identity(layer: Callable, *args: Any, **kwargs: Any) -> Any:
    """Applies the identity function for checkpointing."""
    return layer(*args)


def set_checkpoint_fn(do_checkpointing: bool) -> Callable:
    """Sets checkpoint function (activation recomputation in the processor)."""
    if do_checkpointing:
        return checkpoint
    else:
        return checkpoint_identity


def concat_message_function(edges: Tensor) -> Dict[str, Tensor]:
    """Concatenates source node, destination node, and edge features."""
    # concats src node , dst node, and edge features
    cat_feat = torch.cat((edges.data["x"], edges.src["x"], edges.dst["x"]), dim=1)
    return {"cat_feat": cat_feat}


@torch.jit.ignore()
def concat_efeat_dgl(
    efeat: Tensor,
    nfeat: Union[Tensor, Tuple[torch.Tensor, torch.Tensor]],
    graph: DGLGraph,
) -> Tensor:
    """Concatenates edge features with source and destination node features (DGL)."""
    if isinstance(nfeat, Tuple):
        src_feat, dst_feat = nfeat
        with graph.local_scope():
            graph.srcdata["x"] = src_feat
            graph.dstdata["x"] = dst_feat
            graph.edata["x"] = efeat
            graph.apply_edges(concat_message_function)
            return graph.edata["cat_feat"]

    with graph.local_scope():
        graph.ndata["x"] = nfeat
        graph.edata["x"] = efeat
        graph.apply_edges(concat_message_function)
        return graph.edata["cat_feat"]


def concat_efeat(
    efeat: Tensor,
    nfeat: Union[Tensor, Tuple[Tensor]],
    graph: Union[DGLGraph, CuGraphCSC],
) -> Tensor:
    """Concatenates edge features with source and destination node features.
    Use for homogeneous graphs (static) or bipartite graphs (src != dst).
    """
    if isinstance(nfeat, Tensor):
        if isinstance(graph, CuGraphCSC):
            if graph.dgl_graph is not None or not USE_CUGRAPHOPS:
                src_feat, dst_feat = nfeat, nfeat
                if graph.is_distributed:
                    src_feat = graph.get_src_node_features_in_local_graph(nfeat)
                efeat = concat_efeat_dgl(efeat, (src_feat, dst_feat), graph.to_dgl_graph())
            else:
                static_graph = graph.to_static_csc()
                efeat = update_efeat_static_e2e(
                    efeat, nfeat, static_graph, mode="concat", use_source_emb=True, use_target_emb=True
                )
        else:
            efeat = concat_efeat_dgl(efeat, nfeat, graph)
    else:
        src_feat, dst_feat = nfeat
        # update edge features through concatenating edge and node features
        if isinstance(graph, CuGraphCSC):
            if graph.dgl_graph is not None or not USE_CUGRAPHOPS:
                efeat = concat_efeat_dgl(efeat, (src_feat, dst_feat), graph.to_dgl_graph())
            else:
                bipartite_graph = graph.to_bipartite_csc()
                efeat = update_efeat_bipartite_e2e(efeat, src_feat, dst_feat, bipartite_graph, "concat")
        else:
            efeat = concat_efeat_dgl(efeat, (src_feat, dst_feat), graph)

    return efeat


@torch.jit.script
def sum_efeat_dgl(efeat: Tensor, src_feat: Tensor, dst_feat: Tensor, src_idx: Tensor, dst_idx: Tensor) -> Tensor:
    """Sums edge features with source and destination node features (gather version)."""
    return efeat + src_feat[src_idx] + dst_feat[dst_idx]


@torch.jit.ignore()
def agg_concat_dgl(efeat: Tensor, dst_nfeat: Tensor, graph: DGLGraph, aggregation: str) -> Tensor:
    """Aggregates edge features and concatenates result with destination node features.

    Parameters
    ----------
    efeat : Tensor
        Edge features.
    dst_nfeat : Tensor
        Node features (destination nodes).
    graph : DGLGraph
        Graph.
    aggregation : str
        Aggregation method (sum or mean).
    """
    with graph.local_scope():
        # populate features on graph edges
        graph.edata["x"] = efeat

        # aggregate edge features
        if aggregation == "sum":
            graph.update_all(fn.copy_e("x", "m"), fn.sum("m", "h_dest"))
        elif aggregation == "mean":
            graph.update_all(fn.copy_e("x", "m"), fn.mean("m", "h_dest"))
        else:
            raise RuntimeError("Not a valid aggregation!")

        # concat dst-node & edge features
        cat_feat = torch.cat((graph.dstdata["h_dest"], dst_nfeat), -1)
        return cat_feat


def aggregate_and_concat(
    efeat: Tensor,
    nfeat: Tensor,
    graph: Union[DGLGraph, CuGraphCSC],
    aggregation: str,
):
    """Aggregates edge features onto destination nodes and concatenates with node features."""
    if isinstance(graph, CuGraphCSC):
        # in this case, we don't have to distinguish a distributed setting
        # or the defalt setting as both efeat and nfeat are already
        # gurantueed to be on the same rank on both cases due to our
        # partitioning scheme
        if graph.dgl_graph is not None or not USE_CUGRAPHOPS:
            cat_feat = agg_concat_dgl(efeat, nfeat, graph.to_dgl_graph(), aggregation)
        else:
            static_graph = graph.to_static_csc()
            cat_feat = agg_concat_e2n(nfeat, efeat, static_graph, aggregation)
    else:
        cat_feat = agg_concat_dgl(efeat, nfeat, graph, aggregation)

    return cat_feat
