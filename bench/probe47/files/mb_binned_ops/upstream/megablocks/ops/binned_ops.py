"""Autograd wrappers around the `megablocks_ops` C++/CUDA extension.

The extension provides the small integer primitives the dropless MoE needs
to build its routing metadata: a histogram of expert assignments, CUB radix
sort, inclusive/exclusive prefix sums, block-sparse topology construction and
the replicate / reduce pair used for the expert-parallel token counts.
"""
from typing import Any

import numpy as np
import torch

# Wrap this in a try-block with better error message and
# instructions for building the c++ operations.
try:
    import megablocks_ops as ops  # type: ignore
except ModuleNotFoundError as e:
    raise ModuleNotFoundError("No module named 'megablocks_ops'. Please run `pip install .` from the megablocks "
                              "source tree so that the CUDA extension gets built.") from e

_BITS_FOR_DTYPE = {
    torch.int16: 16,
    torch.int32: 32,
    torch.int64: 64,
}


# Autograd wrapper for histogram kernel.
#
# NOTE: Does not support gradients.
class HistogramOp(torch.autograd.Function):

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, max_val: float):
        return ops.histogram(x, max_val)


histogram = HistogramOp.apply


# Autograd wrapper for sort kernel.
#
# NOTE: Does not support gradients.
class SortOp(torch.autograd.Function):

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, end_bit: int = None):
        if end_bit is None:
            end_bit = _BITS_FOR_DTYPE[x.dtype]
        x_out = torch.empty_like(x)
        iota_out = torch.empty_like(x)
        ops.sort(x, end_bit, x_out, iota_out)
        return (x_out, iota_out)


sort = SortOp.apply


# Autograd wrappers for cumsum kernels.
#
# NOTE: Does not support gradients.
class ExclusiveCumsumOp(torch.autograd.Function):

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, dim: int):
        if len(x.size()) == 1:
            x = x.view([1, -1])
            out = torch.empty_like(x)
            ops.exclusive_cumsum(x, 1, out)
            return out.squeeze()
        out = torch.empty_like(x)
        ops.exclusive_cumsum(x, dim, out)
        return out


exclusive_cumsum = ExclusiveCumsumOp.apply


class InclusiveCumsumOp(torch.autograd.Function):

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, dim: int) -> torch.Tensor:
        if len(x.size()) == 1:
            x = x.view([1, -1])
            out = torch.empty_like(x)
            ops.inclusive_cumsum(x, 1, out)
            return out.squeeze()
        out = torch.empty_like(x)
        ops.inclusive_cumsum(x, dim, out)
        return out


inclusive_cumsum = InclusiveCumsumOp.apply


# Autograd wrapper for topology kernel.
#
# NOTE: Does not support gradients.
class TopologyOp(torch.autograd.Function):

    @staticmethod
    def forward(
        ctx: Any,
        padded_bins: torch.Tensor,
        block_size: int,
        output_block_rows: int,
        output_block_columns: int,
    ):
        out = torch.empty(
            output_block_rows * output_block_columns,
            dtype=torch.int16,
            device=padded_bins.device,
        )
        ops.indices(
            padded_bins,
            block_size,
            output_block_rows,
            output_block_columns,
            out,
        )
        return out


topology = TopologyOp.apply


# Autograd wrapper for replicate kernel.
class ReplicateOp(torch.autograd.Function):

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, bins: torch.Tensor, num_outputs: int):
        ctx.save_for_backward(bins)
        out = torch.empty((x.shape[0], num_outputs), dtype=x.dtype, device=x.device)
        ops.replicate_forward(x, bins, out)
        return out

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor):
        bins, = ctx.saved_tensors
        out = torch.empty((grad.shape[0], bins.shape[0]), dtype=grad.dtype, device=grad.device)
        ops.replicate_backward(grad, bins, out)
        return out, None, None


replicate = ReplicateOp.apply


# Autograd wrapper for the repeat kernel used to expand per-expert token
# counts across the expert-parallel ranks.
class RepeatOp(torch.autograd.Function):

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, tiling: torch.Size):
        # Plain torch: x is tiny (one entry per expert).
        return x.repeat(tiling)


repeat = RepeatOp.apply


# Round the per-expert counts up to a multiple of the block size so that the
# block-sparse matmuls see whole blocks.
def round_up(x: torch.Tensor, value: int) -> torch.Tensor:
    assert isinstance(value, int)
    assert x.dtype == torch.int32

    # Add value - 1 and then mask off the bits.
    return torch.div(x + (value - 1), value, rounding_mode="floor") * value


def sort_end_bit(num_experts: int) -> int:
    # Sorting only needs as many bits as it takes to represent the experts.
    return max(int(np.ceil(np.log2(num_experts))), 1)


def indices_and_bins(top_expert: torch.Tensor, num_experts: int, sort_end: int):
    # Sort the expert ids to produce the scatter/gather
    # indices for the permutation.
    #
    # TODO(tgale): Is it worth doing this conversion to 32-bit
    # prior? Could we place the `torch.max` operation to return
    # 32-bit expert indices?
    top_expert = top_expert.int()
    bin_ids, indices = sort(top_expert, sort_end)

    # Histogram the expert ids to identify the number of
    # tokens routed to each expert.
    tokens_per_expert = histogram(top_expert, num_experts)

    # Calculate the bin bounds for the sorted tokens.
    bins = inclusive_cumsum(tokens_per_expert, 0)
    bins = bins.view(1) if not len(bins.size()) else bins
    return indices, bin_ids, bins, tokens_per_expert
