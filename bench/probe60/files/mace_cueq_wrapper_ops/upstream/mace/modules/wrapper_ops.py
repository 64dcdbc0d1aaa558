"""
Wrapper classes that build either an e3nn module or its cuequivariance counterpart,
depending on the CuEquivarianceConfig the model was built with.
"""

import dataclasses
import itertools
from typing import Iterator, List, Optional

import numpy as np
import torch
from e3nn import o3

from mace.modules.symmetric_contraction import SymmetricContraction
from mace.tools.cg import O3_e3nn

try:
    import cuequivariance as cue
    import cuequivariance_torch as cuet

    CUET_AVAILABLE = True
except ImportError:
    CUET_AVAILABLE = False


@dataclasses.dataclass
class CuEquivarianceConfig:
    """Configuration for cuequivariance acceleration"""

    enabled: bool = False
    layout: str = "mul_ir"  # One of: mul_ir, ir_mul
    layout_str: str = "mul_ir"
    group: str = "O3"
    optimize_all: bool = False  # Set to True to enable all optimizations
    optimize_linear: bool = False
    optimize_channelwise: bool = False
    optimize_symmetric: bool = False
    optimize_fctp: bool = False
    conv_fusion: bool = False

    def __post_init__(self):
        if self.enabled and CUET_AVAILABLE:
            self.layout_str = self.layout
            self.layout = getattr(cue, self.layout)
            self.group = (
                O3_e3nn if self.group == "O3_e3nn" else getattr(cue, self.group)
            )
        if not CUET_AVAILABLE:
            self.enabled = False


def _use(cueq_config: Optional[CuEquivarianceConfig], flag: str) -> bool:
    return (
        CUET_AVAILABLE
        and cueq_config is not None
        and cueq_config.enabled
        and (cueq_config.optimize_all or getattr(cueq_config, flag))
    )


class Linear:
    """Returns an e3nn linear layer or cueq linear layer"""

    def __new__(
        cls,
        irreps_in: o3.Irreps,
        irreps_out: o3.Irreps,
        shared_weights: bool = True,
        internal_weights: bool = True,
        cueq_config: Optional[CuEquivarianceConfig] = None,
    ):
        if _use(cueq_config, "optimize_linear"):
            return cuet.Linear(
                cue.Irreps(cueq_config.group, irreps_in),
                cue.Irreps(cueq_config.group, irreps_out),
                layout=cueq_config.layout,
                shared_weights=shared_weights,
                use_fallback=True,
            )

        return o3.Linear(
            irreps_in,
            irreps_out,
            shared_weights=shared_weights,
            internal_weights=internal_weights,
        )


def with_scatter_sum(conv_tp: torch.nn.Module) -> torch.nn.Module:
    conv_tp.original_forward = conv_tp.forward

    def forward(
        self,
        node_feats: torch.Tensor,
        edge_attrs: torch.Tensor,
        tp_weights: torch.Tensor,
        edge_index: torch.Tensor,
    ) -> torch.Tensor:
        sender = edge_index[0]
        receiver = edge_index[1]
        num_nodes = node_feats.shape[0]
        mji = self.original_forward(node_feats[sender], edge_attrs, tp_weights)
        message = torch.zeros(
            (num_nodes, mji.shape[-1]), dtype=mji.dtype, device=mji.device
        )
        message = message.index_add_(0, receiver, mji)
        return message

    conv_tp.forward = types_method(forward, conv_tp)
    return conv_tp


def types_method(fn, obj):
    import types

    return types.MethodType(fn, obj)


class TensorProduct:
    """Wrapper around o3.TensorProduct / cuet.ChannelWiseTensorProduct"""

    def __new__(
        cls,
        irreps_in1: o3.Irreps,
        irreps_in2: o3.Irreps,
        irreps_out: o3.Irreps,
        instructions: Optional[List] = None,
        shared_weights: bool = False,
        internal_weights: bool = False,
        cueq_config: Optional[CuEquivarianceConfig] = None,
    ):
        if _use(cueq_config, "optimize_channelwise"):
            if cueq_config.conv_fusion:
                return with_cueq_conv_fusion(
                    cue.Irreps(cueq_config.group, irreps_in1),
                    cue.Irreps(cueq_config.group, irreps_in2),
                    cue.Irreps(cueq_config.group, irreps_out),
                    cueq_config,
                )
            return with_scatter_sum(
                cuet.ChannelWiseTensorProduct(
                    cue.Irreps(cueq_config.group, irreps_in1),
                    cue.Irreps(cueq_config.group, irreps_in2),
                    filter_irreps_out=cue.Irreps(cueq_config.group, irreps_out),
                    layout=cueq_config.layout,
                    shared_weights=shared_weights,
                    internal_weights=internal_weights,
                    dtype=torch.get_default_dtype(),
                    math_dtype=torch.get_default_dtype(),
                    use_fallback=False,  # the fused kernel is the point of switching
                )
            )

        return with_scatter_sum(
            o3.TensorProduct(
                irreps_in1,
                irreps_in2,
                irreps_out,
                instructions=instructions,
                shared_weights=shared_weights,
                internal_weights=internal_weights,
            )
        )


def with_cueq_conv_fusion(irreps_in1, irreps_in2, irreps_out, cueq_config):
    """Fused gather + channel-wise TP + scatter implemented by a single cuequivariance kernel."""
    descriptor = cue.descriptors.channelwise_tensor_product(
        irreps_in1, irreps_in2, irreps_out
    ).flatten_coefficient_modes()
    poly = descriptor.polynomial.squeeze_modes().split_mode("u", 32)
    fused = cuet.SegmentedPolynomial(poly, method="uniform_1d")
    fused.weight_numel = descriptor.inputs[0].numel
    return fused


def FullyConnectedTensorProduct(
    irreps_in1: o3.Irreps,
    irreps_in2: o3.Irreps,
    irreps_out: o3.Irreps,
    shared_weights: bool = True,
    internal_weights: bool = True,
    cueq_config: Optional[CuEquivarianceConfig] = None,
):
    """
    Wrapper around o3.FullyConnectedTensorProduct/cuet.FullyConnectedTensorProduct
    """
    if _use(cueq_config, "optimize_fctp"):
        return cuet.FullyConnectedTensorProduct(
            cue.Irreps(cueq_config.group, irreps_in1),
            cue.Irreps(cueq_config.group, irreps_in2),
            cue.Irreps(cueq_config.group, irreps_out),
            layout=cueq_config.layout,
            shared_weights=shared_weights,
            internal_weights=internal_weights,
            use_fallback=True,
        )

    return o3.FullyConnectedTensorProduct(
        irreps_in1,
        irreps_in2,
        irreps_out,
        shared_weights=shared_weights,
        internal_weights=internal_weights,
    )


def SymmetricContractionWrapper(
    irreps_in: o3.Irreps,
    irreps_out: o3.Irreps,
    correlation: int,
    num_elements: Optional[int] = None,
    cueq_config: Optional[CuEquivarianceConfig] = None,
    oeq_config=None,
):
    """
    Wrapper around SymmetricContraction/cuet.SymmetricContraction
    """
    if _use(cueq_config, "optimize_symmetric"):
        return cuet.SymmetricContraction(
            cue.Irreps(cueq_config.group, irreps_in),
            cue.Irreps(cueq_config.group, irreps_out),
            layout_in=cue.ir_mul,
            layout_out=cueq_config.layout,
            contraction_degree=correlation,
            num_elements=num_elements,
            original_mace=True,
            dtype=torch.get_default_dtype(),
            math_dtype=torch.get_default_dtype(),
            use_fallback=False,
        )

    return SymmetricContraction(
        irreps_in=irreps_in,
        irreps_out=irreps_out,
        correlation=correlation,
        num_elements=num_elements,
    )


def mul_ir_to_ir_mul(x: torch.Tensor, irreps: o3.Irreps) -> torch.Tensor:
    """Transpose a feature tensor from (mul, ir) to (ir, mul) layout without a kernel."""
    chunks = []
    offset = 0
    for mul, ir in irreps:
        d = ir.dim
        block = x[..., offset : offset + mul * d].reshape(*x.shape[:-1], mul, d)
        chunks.append(block.transpose(-1, -2).reshape(*x.shape[:-1], mul * d))
        offset += mul * d
    return torch.cat(chunks, dim=-1)


def iter_cueq_modules(model: torch.nn.Module) -> Iterator[torch.nn.Module]:
    if not CUET_AVAILABLE:
        return iter(())
    kinds = (cuet.Linear, cuet.ChannelWiseTensorProduct, cuet.SymmetricContraction)
    return (m for m in model.modules() if isinstance(m, kinds))


def count_cueq_modules(model: torch.nn.Module) -> int:
    return sum(1 for _ in iter_cueq_modules(model))


def all_irreps_dims(irreps_list: List[o3.Irreps]) -> List[int]:
    return list(itertools.chain.from_iterable([ir.dim for _, ir in irreps] for irreps in irreps_list))


def shapes_are_uniform(irreps: o3.Irreps) -> bool:
    muls = np.array([mul for mul, _ in irreps])
    return bool(len(muls) == 0 or np.all(muls == muls[0]))
