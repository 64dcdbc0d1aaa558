# Copyright (c) 2023, NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
"""MLPs used on the nodes and edges of the GraphCast multi-mesh (encoder / processor / decoder).

Each MLP is Linear -> SiLU -> ... -> Linear followed by an optional LayerNorm. The edge MLPs
take the concatenation [e_ij, h_src, h_dst]; instead of materialising that concatenation they
apply the first linear layer to the three parts separately ("sum" efficient variant).
"""

from typing import Optional, Tuple, Union

import torch
import torch.nn as nn
from torch import Tensor
from torch.autograd.function import once_differentiable

from .utils import CuGraphCSC, concat_efeat, sum_efeat

try:
    import transformer_engine as te

    te_imported = True
except ImportError:
    te_imported = False


def get_norm_layer(norm_type: str, dim: int) -> nn.Module:
    if norm_type == "LayerNorm":
        return nn.LayerNorm(dim)
    if norm_type == "TELayerNorm":
        if not te_imported:
            raise ValueError("TELayerNorm requires transformer-engine to be installed.")
        return te.pytorch.LayerNorm(dim)
    raise ValueError(f"Invalid norm_type {norm_type}, expected LayerNorm or TELayerNorm")


class CustomSiLuLinearAutogradFunction(torch.autograd.Function):
    """Custom SiLU + Linear autograd function: recomputes the SiLU in backward instead of
    keeping its output alive, which saves one activation per MLP layer on large graphs."""

    @staticmethod
    def forward(ctx, features: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
        out = torch.nn.functional.silu(features)
        out = torch.nn.functional.linear(out, weight, bias)
        ctx.save_for_backward(features, weight)
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output: Tensor) -> Tuple[Optional[Tensor], Optional[Tensor], Optional[Tensor]]:
        (need_dgrad, need_wgrad, need_bgrad) = ctx.needs_input_grad
        features, weight = ctx.saved_tensors
        grad_features = grad_weight = grad_bias = None

        if need_bgrad:
            grad_bias = grad_output.sum(dim=0)

        if need_wgrad:
            out = torch.nn.functional.silu(features)
            grad_weight = grad_output.T @ out

        if need_dgrad:
            grad_features = grad_output @ weight
            sig = torch.sigmoid(features)
            grad_features = grad_features * sig * (1 + features * (1 - sig))

        return grad_features, grad_weight, grad_bias


class MeshGraphMLP(nn.Module):
    """MLP layer which is commonly used in building blocks of models operating on the
    union of grids and meshes."""

    def __init__(
        self,
        input_dim: int,
        output_dim: int = 512,
        hidden_dim: int = 512,
        hidden_layers: Union[int, None] = 1,
        activation_fn: nn.Module = nn.SiLU(),
        norm_type: str = "TELayerNorm",
        recompute_activation: bool = False,
    ):
        super().__init__()

        if hidden_layers is not None:
            layers = [nn.Linear(input_dim, hidden_dim), activation_fn]
            self.hidden_layers = hidden_layers
            for _ in range(hidden_layers - 1):
                layers += [nn.Linear(hidden_dim, hidden_dim), activation_fn]
            layers.append(nn.Linear(hidden_dim, output_dim))

            self.norm_type = norm_type
            if norm_type is not None:
                layers.append(get_norm_layer(norm_type, output_dim))
        else:
            layers = [nn.Identity()]
            self.hidden_layers = 0
            self.norm_type = None

        self.model = nn.Sequential(*layers)

        if recompute_activation:
            if not isinstance(activation_fn, nn.SiLU):
                raise ValueError(activation_fn)
            self.recompute_activation = True
        else:
            self.recompute_activation = False

    def default_forward(self, x: Tensor) -> Tensor:
        return self.model(x)

    def custom_silu_linear_forward(self, x: Tensor) -> Tensor:
        lin = self.model[0]
        hidden = lin(x)
        for i in range(1, self.hidden_layers + 1):
            lin = self.model[2 * i]
            hidden = CustomSiLuLinearAutogradFunction.apply(hidden, lin.weight, lin.bias)
        if self.norm_type is not None:
            norm = self.model[2 * self.hidden_layers + 1]
            hidden = norm(hidden)
        return hidden

    def forward(self, x: Tensor) -> Tensor:
        if self.recompute_activation:
            return self.custom_silu_linear_forward(x)
        return self.default_forward(x)


class MeshGraphEdgeMLPConcat(MeshGraphMLP):
    """Edge MLP on [e_ij, h_src, h_dst], implemented with an explicit concatenation."""

    def __init__(self, efeat_dim: int = 512, src_dim: int = 512, dst_dim: int = 512, output_dim: int = 512,
                 hidden_dim: int = 512, hidden_layers: int = 2, activation_fn: nn.Module = nn.SiLU(),
                 norm_type: str = "TELayerNorm", bias: bool = True, recompute_activation: bool = False):
        cat_dim = efeat_dim + src_dim + dst_dim
        super().__init__(cat_dim, output_dim, hidden_dim, hidden_layers, activation_fn, norm_type,
                         recompute_activation)

    def forward(self, efeat: Tensor, nfeat: Union[Tensor, Tuple[Tensor]], graph: CuGraphCSC) -> Tensor:
        efeat = concat_efeat(efeat, nfeat, graph)
        efeat = self.model(efeat)
        return efeat


class MeshGraphEdgeMLPSum(nn.Module):
    """Edge MLP that applies the first linear layer to e_ij, h_src and h_dst separately and
    sums the three products gathered on the edges (avoids the [E, 3*D] concatenation)."""

    def __init__(self, efeat_dim: int = 512, src_dim: int = 512, dst_dim: int = 512, output_dim: int = 512,
                 hidden_dim: int = 512, hidden_layers: int = 1, activation_fn: nn.Module = nn.SiLU(),
                 norm_type: str = "TELayerNorm", bias: bool = True, recompute_activation: bool = False):
        super().__init__()
        self.efeat_dim = efeat_dim
        self.src_dim = src_dim
        self.dst_dim = dst_dim

        tmp_lin = nn.Linear(efeat_dim + src_dim + dst_dim, hidden_dim, bias=bias)
        # orig_weight has shape (hidden_dim, efeat_dim + src_dim + dst_dim)
        orig_weight = tmp_lin.weight
        w_efeat, w_src, w_dst = torch.split(orig_weight, [efeat_dim, src_dim, dst_dim], dim=1)
        self.lin_efeat = nn.Parameter(w_efeat)
        self.lin_src = nn.Parameter(w_src)
        self.lin_dst = nn.Parameter(w_dst)

        if bias:
            self.bias = tmp_lin.bias
        else:
            self.bias = None

        layers = [activation_fn]
        self.hidden_layers = hidden_layers
        for _ in range(hidden_layers - 1):
            layers += [nn.Linear(hidden_dim, hidden_dim), activation_fn]
        layers.append(nn.Linear(hidden_dim, output_dim))

        self.norm_type = norm_type
        if norm_type is not None:
            layers.append(get_norm_layer(norm_type, output_dim))

        self.model = nn.Sequential(*layers)

        if recompute_activation:
            if not isinstance(activation_fn, nn.SiLU):
                raise ValueError(activation_fn)
            self.recompute_activation = True
        else:
            self.recompute_activation = False

    def forward_truncated_sum(self, efeat: Tensor, nfeat: Union[Tensor, Tuple[Tensor]], graph: CuGraphCSC) -> Tensor:
        if isinstance(nfeat, Tensor):
            src_feat, dst_feat = nfeat, nfeat
        else:
            src_feat, dst_feat = nfeat
        mlp_efeat = nn.functional.linear(efeat, self.lin_efeat, None)
        mlp_src = nn.functional.linear(src_feat, self.lin_src, None)
        mlp_dst = nn.functional.linear(dst_feat, self.lin_dst, self.bias)
        mlp_sum = sum_efeat(mlp_efeat, (mlp_src, mlp_dst), graph)
        return mlp_sum

    def default_forward(self, efeat: Tensor, nfeat: Union[Tensor, Tuple[Tensor]], graph: CuGraphCSC) -> Tensor:
        mlp_sum = self.forward_truncated_sum(efeat, nfeat, graph)
        return self.model(mlp_sum)

    def custom_silu_linear_forward(self, efeat: Tensor, nfeat: Union[Tensor, Tuple[Tensor]], graph: CuGraphCSC) -> Tensor:
        mlp_sum = self.forward_truncated_sum(efeat, nfeat, graph)
        lin = self.model[1]
        hidden = CustomSiLuLinearAutogradFunction.apply(mlp_sum, lin.weight, lin.bias)
        for i in range(2, self.hidden_layers + 1):
            lin = self.model[2 * i - 1]
            hidden = CustomSiLuLinearAutogradFunction.apply(hidden, lin.weight, lin.bias)
        if self.norm_type is not None:
            norm = self.model[2 * self.hidden_layers]
            hidden = norm(hidden)
        return hidden

    def forward(self, efeat: Tensor, nfeat: Union[Tensor, Tuple[Tensor]], graph: CuGraphCSC) -> Tensor:
        if self.recompute_activation:
            return self.custom_silu_linear_forward(efeat, nfeat, graph)
        return self.default_forward(efeat, nfeat, graph)
