# SPDX-FileCopyrightText: Copyright (c) 2023 - 2024 NVIDIA CORPORATION & AFFILIATES.
# SPDX-FileCopyrightText: All rights reserved.
# SPDX-License-Identifier: Apache-2.0

"""Processor of the GraphCast-style encoder/processor/decoder, pure PyTorch message passing.

Edges are kept as (src, dst) index tensors in CSC order; aggregation uses index_add_.
When pylibcugraphops is installed the aggregation can instead use its fused CUDA kernels
(``use_cugraphops_processor=True``).
"""

from typing import Optional, Tuple

import torch
import torch.nn as nn
from torch import Tensor

try:
    from apex.normalization import FusedLayerNorm

    apex_imported = True
except ImportError:
    apex_imported = False

try:
    from pylibcugraphops.pytorch import StaticCSC
    from pylibcugraphops.pytorch.operators import agg_concat_e2n

    cugraphops_imported = True
except ImportError:
    StaticCSC = None
    cugraphops_imported = False


def get_layer_norm(norm_type: str, dim: int) -> nn.Module:
    """LayerNorm factory: fused apex kernel if asked for and available, else torch."""
    if norm_type == "apex":
        if not apex_imported:
            raise ValueError("norm_type='apex' requested but apex is not installed")
        return FusedLayerNorm(dim)
    if norm_type == "TELayerNorm":
        import transformer_engine.pytorch as te

        return te.LayerNorm(dim)
    return nn.LayerNorm(dim)


class MeshGraphMLP(nn.Module):
    """MLP with SiLU activations and an optional output LayerNorm, as in GraphCast."""

    def __init__(
        self,
        input_dim: int,
        output_dim: int = 512,
        hidden_dim: int = 512,
        hidden_layers: int = 1,
        activation_fn: nn.Module = nn.SiLU(),
        norm_type: Optional[str] = "LayerNorm",
        recompute_activation: bool = False,
    ):
        super().__init__()
        layers = [nn.Linear(input_dim, hidden_dim), activation_fn]
        for _ in range(hidden_layers - 1):
            layers += [nn.Linear(hidden_dim, hidden_dim), activation_fn]
        layers.append(nn.Linear(hidden_dim, output_dim))
        self.model = nn.Sequential(*layers)
        self.norm = get_layer_norm(norm_type, output_dim) if norm_type is not None else nn.Identity()
        self.recompute_activation = recompute_activation

    def forward(self, x: Tensor) -> Tensor:
        if self.recompute_activation and self.training:
            x = torch.utils.checkpoint.checkpoint(self.model, x, use_reentrant=False)
        else:
            x = self.model(x)
        return self.norm(x)


class MeshEdgeBlock(nn.Module):
    """Edge update: e' = e + MLP([e, h_src, h_dst])."""

    def __init__(self, hidden_dim: int = 512, hidden_layers: int = 1, norm_type: str = "LayerNorm", recompute_activation: bool = False):
        super().__init__()
        self.edge_mlp = MeshGraphMLP(3 * hidden_dim, hidden_dim, hidden_dim, hidden_layers,
                                     norm_type=norm_type, recompute_activation=recompute_activation)

    def forward(self, efeat: Tensor, nfeat: Tensor, src: Tensor, dst: Tensor) -> Tensor:
        cat = torch.cat([efeat, nfeat[src], nfeat[dst]], dim=-1)
        return efeat + self.edge_mlp(cat)


class MeshNodeBlock(nn.Module):
    """Node update: h' = h + MLP([h, sum_{e -> h} e])."""

    def __init__(self, hidden_dim: int = 512, hidden_layers: int = 1, norm_type: str = "LayerNorm",
                 recompute_activation: bool = False, use_cugraphops: bool = False):
        super().__init__()
        self.node_mlp = MeshGraphMLP(2 * hidden_dim, hidden_dim, hidden_dim, hidden_layers,
                                     norm_type=norm_type, recompute_activation=recompute_activation)
        self.use_cugraphops = use_cugraphops

    def aggregate(self, efeat: Tensor, nfeat: Tensor, dst: Tensor, graph: Optional["StaticCSC"]) -> Tensor:
        if self.use_cugraphops:
            # fused gather + sum + concat on the GPU
            return agg_concat_e2n(nfeat, efeat, graph, "sum")
        agg = torch.zeros_like(nfeat).index_add_(0, dst, efeat)
        return torch.cat([nfeat, agg], dim=-1)

    def forward(self, efeat: Tensor, nfeat: Tensor, dst: Tensor, graph: Optional["StaticCSC"] = None) -> Tensor:
        cat = self.aggregate(efeat, nfeat, dst, graph)
        return nfeat + self.node_mlp(cat)


class GraphCastProcessor(nn.Module):
    """Processor block used in GraphCast operating on a latent space represented by hierarchy of icosahedral graphs."""

    def __init__(
        self,
        aggregation: str = "sum",
        processor_layers: int = 16,
        input_dim_nodes: int = 512,
        input_dim_edges: int = 512,
        hidden_dim: int = 512,
        hidden_layers: int = 1,
        norm_type: str = "LayerNorm",
        do_concat_trick: bool = False,
        recompute_activation: bool = False,
        use_cugraphops_processor: bool = True,
    ):
        super().__init__()
        assert aggregation == "sum", "only sum aggregation is implemented in the torch path"
        self.use_cugraphops = use_cugraphops_processor and cugraphops_imported
        self.edge_blocks = nn.ModuleList()
        self.node_blocks = nn.ModuleList()
        for _ in range(processor_layers):
            self.edge_blocks.append(MeshEdgeBlock(hidden_dim, hidden_layers, norm_type, recompute_activation))
            self.node_blocks.append(MeshNodeBlock(hidden_dim, hidden_layers, norm_type, recompute_activation, self.use_cugraphops))
        self.processor_layers = processor_layers
        self._csc_cache: Optional["StaticCSC"] = None

    def _graph(self, src: Tensor, dst: Tensor, num_nodes: int) -> Optional["StaticCSC"]:
        if not self.use_cugraphops:
            return None
        if self._csc_cache is None:
            offsets = torch.zeros(num_nodes + 1, dtype=torch.int64, device=dst.device)
            offsets[1:] = torch.bincount(dst, minlength=num_nodes).cumsum(0)
            self._csc_cache = StaticCSC(offsets=offsets.int(), indices=src.int())
        return self._csc_cache

    def forward(self, efeat: Tensor, nfeat: Tensor, src: Tensor, dst: Tensor) -> Tuple[Tensor, Tensor]:
        graph = self._graph(src, dst, nfeat.shape[0])
        for i in range(self.processor_layers):
            torch.cuda.nvtx.range_push(f"GraphCastProcessor layer {i}")
            efeat = self.edge_blocks[i](efeat, nfeat, src, dst)
            nfeat = self.node_blocks[i](efeat, nfeat, dst, graph)
            torch.cuda.nvtx.range_pop()
        return efeat, nfeat


class GraphCastProcessorWithCheckpoint(GraphCastProcessor):
    """Same as GraphCastProcessor but checkpoints every `segment_size` layers to save memory at 0.25 deg."""

    def __init__(self, *args, segment_size: int = 4, **kwargs):
        super().__init__(*args, **kwargs)
        self.segment_size = segment_size

    def _run_segment(self, start: int, efeat: Tensor, nfeat: Tensor, src: Tensor, dst: Tensor, graph):
        for i in range(start, min(start + self.segment_size, self.processor_layers)):
            efeat = self.edge_blocks[i](efeat, nfeat, src, dst)
            nfeat = self.node_blocks[i](efeat, nfeat, dst, graph)
        return efeat, nfeat

    def forward(self, efeat: Tensor, nfeat: Tensor, src: Tensor, dst: Tensor) -> Tuple[Tensor, Tensor]:
        graph = self._graph(src, dst, nfeat.shape[0])
        for start in range(0, self.processor_layers, self.segment_size):
            with torch.cuda.nvtx.range(f"processor segment {start // self.segment_size}"):
                efeat, nfeat = torch.utils.checkpoint.checkpoint(
                    self._run_segment, start, efeat, nfeat, src, dst, graph, use_reentrant=False
                )
        return efeat, nfeat
