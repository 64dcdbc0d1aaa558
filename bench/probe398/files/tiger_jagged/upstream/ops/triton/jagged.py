import torch
import triton
import triton.language as tl

from torch import Tensor
from torch.nested import Tensor as NestedTensor
from typing import Optional


# Jagged <-> padded helpers for the decoder. The generative retrieval model keeps
# user histories as jagged (nested) tensors so that variable-length sequences of
# semantic-id tokens do not waste compute on padding. The kernels below move data
# between the padded [B, N, D] layout produced by the tokenizer and the packed
# [sum(N_i), D] values buffer that backs a torch.nested jagged tensor.


def _next_power_of_2(n: int) -> int:
    return 1 << (n - 1).bit_length()


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_N": 16}, num_warps=2),
        triton.Config({"BLOCK_N": 32}, num_warps=4),
        triton.Config({"BLOCK_N": 64}, num_warps=4),
        triton.Config({"BLOCK_N": 128}, num_warps=8),
    ],
    key=["max_len", "D"],
)
@triton.jit
def _padded_to_jagged_kernel(
    padded_ptr,
    offsets_ptr,
    values_ptr,
    max_len,
    D,
    stride_pb,
    stride_pn,
    stride_vn,
    BLOCK_N: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    pid_b = tl.program_id(0)
    pid_n = tl.program_id(1)

    start = tl.load(offsets_ptr + pid_b)
    end = tl.load(offsets_ptr + pid_b + 1)
    seq_len = end - start

    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)

    mask = (offs_n[:, None] < seq_len) & (offs_d[None, :] < D)

    src = padded_ptr + pid_b * stride_pb + offs_n[:, None] * stride_pn + offs_d[None, :]
    x = tl.load(src, mask=mask, other=0.0)

    dst = values_ptr + (start + offs_n[:, None]) * stride_vn + offs_d[None, :]
    tl.store(dst, x, mask=mask)


@triton.jit
def _jagged_to_padded_kernel(
    values_ptr,
    offsets_ptr,
    padded_ptr,
    max_len,
    D,
    stride_vn,
    stride_pb,
    stride_pn,
    padding_value,
    BLOCK_N: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    pid_b = tl.program_id(0)
    pid_n = tl.program_id(1)

    start = tl.load(offsets_ptr + pid_b)
    end = tl.load(offsets_ptr + pid_b + 1)
    seq_len = end - start

    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)

    in_seq = offs_n[:, None] < seq_len
    in_bounds = (offs_n[:, None] < max_len) & (offs_d[None, :] < D)

    src = values_ptr + (start + offs_n[:, None]) * stride_vn + offs_d[None, :]
    x = tl.load(src, mask=in_seq & in_bounds, other=padding_value)

    dst = padded_ptr + pid_b * stride_pb + offs_n[:, None] * stride_pn + offs_d[None, :]
    tl.store(dst, x, mask=in_bounds)


def _lengths_to_offsets(lengths: Tensor) -> Tensor:
    return torch.cat([
        torch.zeros(1, dtype=lengths.dtype, device=lengths.device),
        lengths.cumsum(dim=0)
    ])


def _padded_to_values_torch(x: Tensor, lengths: Tensor) -> Tensor:
    B, N = x.shape[:2]
    mask = torch.arange(N, device=x.device)[None, :] < lengths[:, None]
    return x[mask]


def padded_to_jagged_tensor(x: Tensor, lengths: Tensor, max_len: int) -> NestedTensor:
    """
    Packs a padded tensor [B, N, ...] into a jagged nested tensor where row b keeps
    its first lengths[b] entries.
    """
    assert x.dim() >= 3, "Expected a [B, N, ...] tensor"
    lengths = lengths.to(torch.int64)
    offsets = _lengths_to_offsets(lengths)
    B, N = x.shape[:2]
    trailing = x.shape[2:]

    if x.is_cuda and x.is_contiguous():
        flat = x.reshape(B, N, -1)
        D = flat.shape[-1]
        values = torch.empty((int(offsets[-1].item()), D), dtype=x.dtype, device=x.device)
        BLOCK_D = _next_power_of_2(D)
        grid = lambda meta: (B, triton.cdiv(max_len, meta["BLOCK_N"]))
        _padded_to_jagged_kernel[grid](
            flat, offsets, values,
            max_len, D,
            flat.stride(0), flat.stride(1), values.stride(0),
            BLOCK_D=BLOCK_D,
        )
        values = values.reshape(-1, *trailing)
    else:
        values = _padded_to_values_torch(x, lengths)

    return torch.nested.nested_tensor_from_jagged(values, offsets, jagged_dim=1)


def jagged_to_flattened_tensor(x: NestedTensor) -> Tensor:
    return x.values()


def jagged_to_padded_tensor(x: NestedTensor, max_len: Optional[int] = None, padding_value: float = 0.0) -> Tensor:
    values = x.values()
    offsets = x.offsets()
    B = offsets.shape[0] - 1
    lengths = offsets.diff()
    if max_len is None:
        max_len = int(lengths.max().item())
    trailing = values.shape[1:]

    if values.is_cuda:
        flat = values.reshape(values.shape[0], -1).contiguous()
        D = flat.shape[-1]
        padded = torch.empty((B, max_len, D), dtype=values.dtype, device=values.device)
        BLOCK_N = 32
        BLOCK_D = _next_power_of_2(D)
        grid = (B, triton.cdiv(max_len, BLOCK_N))
        _jagged_to_padded_kernel[grid](
            flat, offsets, padded,
            max_len, D,
            flat.stride(0), padded.stride(0), padded.stride(1),
            padding_value,
            BLOCK_N=BLOCK_N,
            BLOCK_D=BLOCK_D,
            num_warps=4,
        )
        return padded.reshape(B, max_len, *trailing)

    return torch.nested.to_padded_tensor(x, padding_value, output_size=(B, max_len, *trailing))
