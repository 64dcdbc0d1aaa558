# Copyright (c) Meta Platforms, Inc. and affiliates.
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

# pyre-unsafe

from typing import List, Optional, Tuple

import torch

# @manual=//triton:triton
import triton

# @manual=//triton:triton
import triton.language as tl

from generative_recommenders.common import (
    autotune_max_seq_len,
    maybe_triton_autotune,
    switch_to_contiguous_if_needed,
)


def _get_bmm_configs() -> List[triton.Config]:
    configs = []
    for BLOCK_M in [64, 128]:
        for BLOCK_N in [64, 128, 256]:
            for BLOCK_K in [32, 64]:
                for num_stages in [2, 3, 4]:
                    for num_warps in [4, 8]:
                        configs.append(
                            triton.Config(
                                {
                                    "BLOCK_M": BLOCK_M,
                                    "BLOCK_N": BLOCK_N,
                                    "BLOCK_K": BLOCK_K,
                                },
                                num_stages=num_stages,
                                num_warps=num_warps,
                            )
                        )
    # Hopper has 228KB of shared memory per SM which makes the large tiles viable.
    if torch.cuda.get_device_capability()[0] >= 9:
        configs.append(
            triton.Config(
                {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64},
                num_stages=3,
                num_warps=8,
            )
        )
    return configs


@triton.jit
def jagged_dense_bmm_broadcast_add_kernel(
    seq_offsets,
    Jagged,
    Dense,
    Bias,
    Out,
    AUTOTUNE_MAX_SEQ_LEN,
    N,
    K,
    stride_jm,
    stride_db,
    stride_dk,
    stride_dn,
    stride_bias_b,
    stride_om,
    HAS_BIAS: tl.constexpr,
    ALLOW_TF32: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    """
    Computing bmm Out = Jagged x Dense + Bias
    M is the jagged dimension
    Jagged has shape (sum_B(M_i), K), Dense has shape (B, K, N), Bias has shape (B, N), and Out has shape (sum_B(M_i), N)
    """

    off_n = tl.program_id(0)
    off_m = tl.program_id(1)
    off_b = tl.program_id(2)

    seq_start = tl.load(seq_offsets + off_b).to(tl.int64)
    seq_end = tl.load(seq_offsets + off_b + 1)
    seq_len = seq_end - seq_start
    start_m = off_m * BLOCK_M
    start_n = off_n * BLOCK_N
    if start_m >= seq_len:
        return

    Jagged += seq_start * stride_jm
    Dense += off_b.to(tl.int64) * stride_db
    Out += seq_start * stride_om

    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_n = start_n + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    jg_ptrs = Jagged + offs_m[:, None] * stride_jm + offs_k[None, :]
    dn_ptrs = Dense + offs_k[:, None] * stride_dk + offs_n[None, :] * stride_dn

    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        jg = tl.load(
            jg_ptrs,
            # pyre-fixme[16]: `int` has no attribute `__getitem__`.
            mask=(offs_m[:, None] < seq_len) and ((k + offs_k)[None, :] < K),
            other=0.0,
        )
        dn = tl.load(
            dn_ptrs,
            mask=((k + offs_k)[:, None] < K) and (offs_n[None, :] < N),
            other=0.0,
        )
        accumulator += tl.dot(jg, dn, allow_tf32=ALLOW_TF32)
        jg_ptrs += BLOCK_K
        dn_ptrs += BLOCK_K * stride_dk

    if HAS_BIAS:
        bias_ptrs = Bias + off_b * stride_bias_b + offs_n
        bias = tl.load(bias_ptrs, mask=offs_n < N)
        out = accumulator + bias[None, :].to(tl.float32)
    else:
        out = accumulator
    out = out.to(Out.dtype.element_ty)

    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_n = start_n + tl.arange(0, BLOCK_N)
    out_ptrs = Out + offs_m[:, None] * stride_om + offs_n[None, :]
    tl.store(out_ptrs, out, mask=(offs_m[:, None] < seq_len) & (offs_n[None, :] < N))


jagged_dense_bmm_broadcast_add_kernel_tuned = maybe_triton_autotune(
    configs=_get_bmm_configs(),
    key=["AUTOTUNE_MAX_SEQ_LEN", "N", "K"],
)(jagged_dense_bmm_broadcast_add_kernel)


@triton.jit
def concat_2D_jagged_w_prefix(
    OffsetsA,
    ValuesA,
    OffsetsB,
    ValuesB,
    DenseSize,
    Out,
    D,
    stride_ad,
    stride_bd,
    stride_dense_batch,
    stride_od,
    n_prefix_from_B,  # nonzero is not supported when IS_REPLACE=True
    IS_DENSE_A: tl.constexpr,
    IS_DENSE_B: tl.constexpr,
    BLOCK_D: tl.constexpr,
    IS_REPLACE: tl.constexpr,
):
    off_z = tl.program_id(1)
    off_n = tl.program_id(0)
    if IS_DENSE_A:
        seq_start_a = off_z * DenseSize
        seq_len_a = DenseSize
        seq_start_b = tl.load(OffsetsB + off_z)
        seq_end_b = tl.load(OffsetsB + off_z + 1)
        seq_len_b = seq_end_b - seq_start_b
    elif IS_DENSE_B:
        seq_start_a = tl.load(OffsetsA + off_z)
        seq_end_a = tl.load(OffsetsA + off_z + 1)
        seq_len_a = seq_end_a - seq_start_a
        seq_start_b = off_z * DenseSize
        seq_len_b = DenseSize
    else:
        seq_start_a = tl.load(OffsetsA + off_z)
        seq_end_a = tl.load(OffsetsA + off_z + 1)
        seq_len_a = seq_end_a - seq_start_a
        seq_start_b = tl.load(OffsetsB + off_z)
        seq_end_b = tl.load(OffsetsB + off_z + 1)
        seq_len_b = seq_end_b - seq_start_b

    if IS_REPLACE:
        seq_len = seq_len_a
    else:
        seq_len = seq_len_a + seq_len_b
    if off_n >= seq_len:
        return

    offs_d = tl.arange(0, BLOCK_D)
    if IS_REPLACE:
        out_seq_start = seq_start_a + off_n
        out_seq_b_start = seq_len_a - seq_len_b
    else:
        out_seq_start = seq_start_a + seq_start_b + off_n
        out_seq_b_start = seq_len_a + n_prefix_from_B

    out_ptrs = Out + out_seq_start.to(tl.int64) * stride_od + offs_d
    if off_n < out_seq_b_start and off_n >= n_prefix_from_B:
        off_a = off_n - n_prefix_from_B
        if IS_DENSE_A:
            in_ptrs = (
                ValuesA
                + off_a.to(tl.int64) * stride_ad
                + off_z.to(tl.int64) * stride_dense_batch
                + offs_d
            )
        else:
            in_ptrs = ValuesA + (off_a + seq_start_a).to(tl.int64) * stride_ad + offs_d
    else:
        off_b = off_n - out_seq_b_start + n_prefix_from_B
        if off_n < n_prefix_from_B:
            off_b += out_seq_b_start - n_prefix_from_B
        if IS_DENSE_B:
            in_ptrs = (
                ValuesB
                + off_b.to(tl.int64) * stride_bd
                + off_z.to(tl.int64) * stride_dense_batch
                + offs_d
            )
        else:
            in_ptrs = ValuesB + (off_b + seq_start_b).to(tl.int64) * stride_bd + offs_d
    v = tl.load(in_ptrs, mask=offs_d < D)
    tl.store(out_ptrs, v, mask=offs_d < D)


def triton_jagged_dense_bmm_broadcast_add(
    max_seq_len: int,
    seq_offsets: torch.Tensor,
    jagged: torch.Tensor,
    dense: torch.Tensor,
    bias: torch.Tensor,
) -> torch.Tensor:
    jagged = switch_to_contiguous_if_needed(jagged)
    bias = switch_to_contiguous_if_needed(bias)
    L, K = jagged.shape
    B, _, N = dense.shape
    out = torch.empty((L, N), dtype=jagged.dtype, device=jagged.device)

    grid = lambda meta: (  # noqa E731
        triton.cdiv(N, meta["BLOCK_N"]),
        triton.cdiv(max_seq_len, meta["BLOCK_M"]),
        B,
    )

    jagged_dense_bmm_broadcast_add_kernel_tuned[grid](
        seq_offsets=seq_offsets,
        Jagged=jagged,
        Dense=dense,
        Bias=bias,
        Out=out,
        AUTOTUNE_MAX_SEQ_LEN=autotune_max_seq_len(max_seq_len),
        N=N,
        K=K,
        stride_jm=jagged.stride(0),
        stride_db=dense.stride(0),
        stride_dk=dense.stride(1),
        stride_dn=dense.stride(2),
        stride_bias_b=bias.stride(0),
        stride_om=out.stride(0),
        HAS_BIAS=True,
        ALLOW_TF32=torch.backends.cuda.matmul.allow_tf32,
    )
    return out


def triton_concat_2D_jagged(
    max_seq_len: int,
    values_a: torch.Tensor,
    values_b: torch.Tensor,
    offsets_a: Optional[torch.Tensor] = None,
    offsets_b: Optional[torch.Tensor] = None,
    max_len_a: Optional[int] = None,
    max_len_b: Optional[int] = None,
    n_prefix_from_B: int = 0,
) -> torch.Tensor:
    values_a = switch_to_contiguous_if_needed(values_a)
    values_b = switch_to_contiguous_if_needed(values_b)
    is_dense_a = offsets_a is None
    is_dense_b = offsets_b is None
    total_len_a, D = values_a.shape
    total_len_b, _ = values_b.shape
    if is_dense_a:
        assert max_len_a is not None
        B = total_len_a // max_len_a
    elif is_dense_b:
        assert max_len_b is not None
        B = total_len_b // max_len_b
    else:
        assert offsets_a is not None
        B = offsets_a.shape[0] - 1
    total_seq_len = total_len_a + total_len_b
    BLOCK_D = triton.next_power_of_2(D)
    values_out = torch.empty(
        (total_seq_len, D), device=values_a.device, dtype=values_a.dtype
    )
    concat_2D_jagged_w_prefix[(max_seq_len, B)](
        OffsetsA=offsets_a,
        ValuesA=values_a,
        OffsetsB=offsets_b,
        ValuesB=values_b,
        DenseSize=max_len_a if is_dense_a else max_len_b,
        Out=values_out,
        D=D,
        stride_ad=values_a.stride(-2),
        stride_bd=values_b.stride(-2),
        stride_dense_batch=(max_len_a if is_dense_a else max_len_b) or 0,
        stride_od=values_out.stride(0),
        n_prefix_from_B=n_prefix_from_B,
        IS_DENSE_A=is_dense_a,  # pyre-ignore[6]
        IS_DENSE_B=is_dense_b,  # pyre-ignore[6]
        BLOCK_D=BLOCK_D,  # pyre-ignore[6]
        IS_REPLACE=False,  # pyre-ignore[6]
        num_warps=4 if BLOCK_D <= 256 else 8,
    )
    return values_out


def triton_split_2D_jagged(
    max_seq_len: int,
    values: torch.Tensor,
    max_len_a: Optional[int],
    max_len_b: Optional[int],
    offsets_a: Optional[torch.Tensor],
    offsets_b: Optional[torch.Tensor],
    n_prefix_from_B: int = 0,
) -> Tuple[torch.Tensor, torch.Tensor]:
    # Implemented as a gather on the concat layout; the dedicated split kernel
    # lives next to the concat one in the full repo.
    values = switch_to_contiguous_if_needed(values)
    if offsets_a is None:
        assert max_len_a is not None and offsets_b is not None
        B = offsets_b.size(0) - 1
        offsets_a = torch.arange(B + 1, device=values.device, dtype=offsets_b.dtype) * max_len_a
    if offsets_b is None:
        assert max_len_b is not None
        B = offsets_a.size(0) - 1
        offsets_b = torch.arange(B + 1, device=values.device, dtype=offsets_a.dtype) * max_len_b
    lengths_a = offsets_a[1:] - offsets_a[:-1]
    lengths_b = offsets_b[1:] - offsets_b[:-1]
    B = lengths_a.numel()
    row_ids = torch.arange(B, device=values.device).repeat_interleave(lengths_a + lengths_b)
    pos = torch.arange(values.size(0), device=values.device) - (offsets_a + offsets_b)[:-1][row_ids]
    is_a = pos < lengths_a[row_ids]
    return values[is_a], values[~is_a]
