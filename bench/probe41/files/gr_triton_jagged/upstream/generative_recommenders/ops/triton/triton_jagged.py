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
    get_num_sms,
    switch_to_contiguous_if_needed,
    triton_autotune,
)

# TF32 is fine for the jagged x dense GEMMs: outputs feed a LayerNorm right away.
ALLOW_TF32 = True


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
    return configs


@triton_autotune(
    configs=_get_bmm_configs(),
    key=["AUTOTUNE_MAX_SEQ_LEN", "N", "K"],
)
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
    Jagged has shape (sum_B(M_i), K), Dense has shape (B, K, N), Bias has shape (B, N),
    and Out has shape (sum_B(M_i), N)
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
            eviction_policy="evict_last",
        )
        accumulator += tl.dot(jg, dn, allow_tf32=ALLOW_TF32)
        jg_ptrs += BLOCK_K
        dn_ptrs += BLOCK_K * stride_dk

    if HAS_BIAS:
        bias_ptrs = Bias + off_b * stride_bias_b + offs_n
        bias = tl.load(bias_ptrs, mask=offs_n < N)
        accumulator += bias[None, :].to(tl.float32)

    out = accumulator.to(Out.dtype.element_ty)

    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_n = start_n + tl.arange(0, BLOCK_N)
    out_ptrs = Out + offs_m[:, None] * stride_om + offs_n[None, :]
    tl.store(out_ptrs, out, mask=(offs_m[:, None] < seq_len) & (offs_n[None, :] < N))


@triton.jit
def _concat_2D_jagged_persistent_kernel(
    OffsetsA,
    ValuesA,
    OffsetsB,
    ValuesB,
    Out,
    B,
    D,
    stride_ad,
    stride_bd,
    stride_od,
    NUM_PROGRAMS: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    # grid-stride loop over (batch, row) pairs; grid is sized to the SM count
    pid = tl.program_id(0)
    for off_z in range(pid, B, NUM_PROGRAMS):
        seq_start_a = tl.load(OffsetsA + off_z)
        seq_end_a = tl.load(OffsetsA + off_z + 1)
        seq_len_a = seq_end_a - seq_start_a
        seq_start_b = tl.load(OffsetsB + off_z)
        seq_end_b = tl.load(OffsetsB + off_z + 1)
        seq_len_b = seq_end_b - seq_start_b
        out_start = seq_start_a + seq_start_b
        offs_d = tl.arange(0, BLOCK_D)
        for i in range(0, seq_len_a):
            a = tl.load(
                ValuesA + (seq_start_a + i).to(tl.int64) * stride_ad + offs_d,
                mask=offs_d < D,
            )
            tl.store(
                Out + (out_start + i).to(tl.int64) * stride_od + offs_d,
                a,
                mask=offs_d < D,
            )
        for j in range(0, seq_len_b):
            b = tl.load(
                ValuesB + (seq_start_b + j).to(tl.int64) * stride_bd + offs_d,
                mask=offs_d < D,
            )
            tl.store(
                Out + (out_start + seq_len_a + j).to(tl.int64) * stride_od + offs_d,
                b,
                mask=offs_d < D,
            )


class _JaggedDenseBmmBroadcastAddFunction(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd
    def forward(
        ctx,
        max_seq_len: int,
        seq_offsets: torch.Tensor,
        jagged: torch.Tensor,
        dense: torch.Tensor,
        bias: torch.Tensor,
    ):
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

        with torch.cuda.device(jagged.device.index):
            jagged_dense_bmm_broadcast_add_kernel[grid](
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
                ALLOW_TF32=ALLOW_TF32,
            )

        ctx.save_for_backward(seq_offsets, jagged, dense)
        ctx.B = B
        ctx.max_seq_len = max_seq_len
        ctx.K = K
        ctx.N = N
        return out

    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(
        ctx, d_out: torch.Tensor
    ) -> Tuple[None, None, torch.Tensor, torch.Tensor, torch.Tensor]:
        seq_offsets, jagged, dense = ctx.saved_tensors
        d_jagged = torch.empty_like(jagged)
        d_dense = torch.empty_like(dense)
        d_bias = torch.empty((ctx.B, ctx.N), device=d_out.device, dtype=d_out.dtype)
        # reuse the forward kernel: dJ = dOut x D^T
        d_out = switch_to_contiguous_if_needed(d_out)
        grid = lambda meta: (  # noqa E731
            triton.cdiv(ctx.K, meta["BLOCK_N"]),
            triton.cdiv(ctx.max_seq_len, meta["BLOCK_M"]),
            ctx.B,
        )
        jagged_dense_bmm_broadcast_add_kernel[grid](
            seq_offsets=seq_offsets,
            Jagged=d_out,
            Dense=dense,
            Bias=None,
            Out=d_jagged,
            AUTOTUNE_MAX_SEQ_LEN=autotune_max_seq_len(ctx.max_seq_len),
            N=ctx.K,
            K=ctx.N,
            stride_jm=d_out.stride(0),
            stride_db=dense.stride(0),
            stride_dk=dense.stride(2),
            stride_dn=dense.stride(1),
            stride_bias_b=0,
            stride_om=d_jagged.stride(0),
            HAS_BIAS=False,
            ALLOW_TF32=ALLOW_TF32,
        )
        for b in range(ctx.B):
            s, e = int(seq_offsets[b]), int(seq_offsets[b + 1])
            d_dense[b] = jagged[s:e].t() @ d_out[s:e]
            d_bias[b] = d_out[s:e].sum(0)
        return None, None, d_jagged, d_dense, d_bias


def triton_jagged_dense_bmm_broadcast_add(
    max_seq_len: int,
    seq_offsets: torch.Tensor,
    jagged: torch.Tensor,
    dense: torch.Tensor,
    bias: torch.Tensor,
) -> torch.Tensor:
    return _JaggedDenseBmmBroadcastAddFunction.apply(
        max_seq_len, seq_offsets, jagged, dense, bias
    )


def triton_concat_2D_jagged(
    values_a: torch.Tensor,
    values_b: torch.Tensor,
    offsets_a: torch.Tensor,
    offsets_b: torch.Tensor,
    out_len: Optional[int] = None,
) -> torch.Tensor:
    values_a = switch_to_contiguous_if_needed(values_a)
    values_b = switch_to_contiguous_if_needed(values_b)
    B = offsets_a.numel() - 1
    D = values_a.shape[-1]
    if out_len is None:
        out_len = values_a.shape[0] + values_b.shape[0]
    out = torch.empty((out_len, D), dtype=values_a.dtype, device=values_a.device)
    num_programs = min(get_num_sms() * 4, B)
    _concat_2D_jagged_persistent_kernel[(num_programs,)](
        OffsetsA=offsets_a,
        ValuesA=values_a,
        OffsetsB=offsets_b,
        ValuesB=values_b,
        Out=out,
        B=B,
        D=D,
        stride_ad=values_a.stride(0),
        stride_bd=values_b.stride(0),
        stride_od=out.stride(0),
        NUM_PROGRAMS=num_programs,
        BLOCK_D=triton.next_power_of_2(D),
        num_warps=4,
    )
    return out
