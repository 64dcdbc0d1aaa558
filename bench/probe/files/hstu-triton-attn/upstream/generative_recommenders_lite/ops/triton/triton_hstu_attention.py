# Copyright (c) Meta Platforms, Inc. and affiliates.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.

# pyre-unsafe

from typing import List, Optional, Tuple

import torch
import triton
import triton.language as tl

try:
    from triton.language.extra.libdevice import fast_dividef
except ImportError:
    try:
        from triton.language.extra.cuda.libdevice import fast_dividef
    except ImportError:
        from triton.language.math import fast_dividef


def _get_fw_configs() -> List[triton.Config]:
    configs = []
    if torch.version.hip:
        for BLOCK_M in [32, 64, 128]:
            for BLOCK_N in [32, 64]:
                for num_stages in [1, 2]:
                    for num_warps in [4, 8]:
                        configs.append(
                            triton.Config(
                                {"BLOCK_M": BLOCK_M, "BLOCK_N": BLOCK_N},
                                num_stages=num_stages,
                                num_warps=num_warps,
                            )
                        )
    else:
        configs = [
            triton.Config({"BLOCK_M": 16, "BLOCK_N": 32}, num_stages=2, num_warps=2),
            triton.Config({"BLOCK_M": 32, "BLOCK_N": 32}, num_stages=2, num_warps=2),
            triton.Config({"BLOCK_M": 32, "BLOCK_N": 64}, num_stages=2, num_warps=4),
            triton.Config({"BLOCK_M": 64, "BLOCK_N": 32}, num_stages=4, num_warps=2),
            triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_stages=4, num_warps=4),
            triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_stages=2, num_warps=8),
            triton.Config({"BLOCK_M": 128, "BLOCK_N": 128}, num_stages=2, num_warps=8, num_ctas=1),
        ]
    return configs


@triton.jit
def _hstu_silu(qk, alpha, MAX_SEQ_LEN):
    qk = qk * alpha
    return fast_dividef(qk, 1.0 + tl.exp(-qk)) / MAX_SEQ_LEN


@triton.autotune(
    configs=_get_fw_configs(),
    key=["AUTOTUNE_Z", "H", "AUTOTUNE_MAX_SEQ_LEN", "DimQ", "DimV"],
)
@triton.jit
def _hstu_attn_fwd(
    Q, K, V, seq_offsets, Out,
    stride_qm, stride_qh, stride_kn, stride_kh,
    stride_vn, stride_vh, stride_om, stride_oh,
    alpha, Z, AUTOTUNE_Z, H, MAX_SEQ_LEN, AUTOTUNE_MAX_SEQ_LEN,
    DimQ, DimV,
    CAUSAL: tl.constexpr,
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
    if start_m < seq_len:
        offs_m = start_m + tl.arange(0, BLOCK_M)
        offs_n = tl.arange(0, BLOCK_N)
        offs_dq = tl.arange(0, BLOCK_D_Q)
        offs_dv = tl.arange(0, BLOCK_D_V)
        q = tl.load(Q + (seq_start + offs_m[:, None]) * stride_qm + off_h * stride_qh + offs_dq[None, :],
                    mask=(offs_m[:, None] < seq_len) & (offs_dq[None, :] < DimQ), other=0.0)
        acc = tl.zeros([BLOCK_M, BLOCK_D_V], dtype=tl.float32)
        end_n = tl.minimum(start_m + BLOCK_M, seq_len) if CAUSAL else seq_len
        for start_n in range(0, end_n, BLOCK_N):
            cur_offs_n = start_n + offs_n
            k = tl.load(K + (seq_start + cur_offs_n[:, None]) * stride_kn + off_h * stride_kh + offs_dq[None, :],
                        mask=(cur_offs_n[:, None] < seq_len) & (offs_dq[None, :] < DimQ), other=0.0)
            v = tl.load(V + (seq_start + cur_offs_n[:, None]) * stride_vn + off_h * stride_vh + offs_dv[None, :],
                        mask=(cur_offs_n[:, None] < seq_len) & (offs_dv[None, :] < DimV), other=0.0)
            qk = tl.dot(q, tl.trans(k), allow_tf32=False)
            silu = _hstu_silu(qk, alpha, MAX_SEQ_LEN)
            valid = cur_offs_n[None, :] < seq_len
            if CAUSAL:
                valid = valid & (offs_m[:, None] >= cur_offs_n[None, :])
            silu = tl.where(valid, silu, 0)
            acc += tl.dot(silu.to(v.dtype), v, allow_tf32=False)
        tl.store(Out + (seq_start + offs_m[:, None]) * stride_om + off_h * stride_oh + offs_dv[None, :],
                 acc.to(Out.dtype.element_ty),
                 mask=(offs_m[:, None] < seq_len) & (offs_dv[None, :] < DimV))


@triton.jit
def _hstu_attn_bwd_dq_locked(
    DQ, dq, LOCK, offs_m, seq_start, stride_dqm, off_h, stride_dqh, offs_dq, seq_len, DimQ,
):
    # Serialise the read-modify-write of dq across key blocks with a spin lock.
    while tl.atomic_cas(LOCK, 0, 1) == 1:
        pass
    dq_ptrs = DQ + (seq_start + offs_m[:, None]) * stride_dqm + off_h * stride_dqh + offs_dq[None, :]
    mask = (offs_m[:, None] < seq_len) & (offs_dq[None, :] < DimQ)
    dq_old = tl.load(dq_ptrs, mask=mask, other=0.0, eviction_policy="evict_last")
    tl.store(dq_ptrs, (dq_old + dq).to(DQ.dtype.element_ty), mask=mask, eviction_policy="evict_last")
    tl.debug_barrier()
    tl.atomic_xchg(LOCK, 0)


def _next_pow2_clamped(x: int) -> int:
    return max(triton.next_power_of_2(x), 16)


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
    L, H, DimQ = q.shape
    _, _, DimV = v.shape
    out = torch.empty_like(v)
    if L == 0:
        return out
    device = triton.runtime.driver.active.get_active_torch_device()
    assert q.device == device, f"expected tensors on {device}"
    grid = lambda meta: (triton.cdiv(N, meta["BLOCK_M"]), Z * H)  # noqa E731
    _hstu_attn_fwd[grid](
        Q=q, K=k, V=v, seq_offsets=seq_offsets, Out=out,
        stride_qm=q.stride(0), stride_qh=q.stride(1),
        stride_kn=k.stride(0), stride_kh=k.stride(1),
        stride_vn=v.stride(0), stride_vh=v.stride(1),
        stride_om=out.stride(0), stride_oh=out.stride(1),
        alpha=alpha, Z=Z, AUTOTUNE_Z=_next_pow2_clamped(Z), H=H,
        MAX_SEQ_LEN=N, AUTOTUNE_MAX_SEQ_LEN=_next_pow2_clamped(N),
        DimQ=DimQ, DimV=DimV,
        CAUSAL=causal,
        BLOCK_D_Q=_next_pow2_clamped(DimQ),
        BLOCK_D_V=_next_pow2_clamped(DimV),
    )
    return out


def allocate_dq_locks(Z: int, H: int, N: int, block_m: int, device: torch.device) -> torch.Tensor:
    # one lock per (sequence, head, query block) for the serialised dq accumulation
    n_blocks = triton.cdiv(N, block_m)
    return torch.zeros((Z * H * n_blocks,), dtype=torch.int32, device=device)


class _HSTUAttentionFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, N, alpha, q, k, v, seq_offsets, causal):
        out = triton_hstu_attention_fwd(N, alpha, q, k, v, seq_offsets, causal)
        ctx.save_for_backward(q, k, v, seq_offsets)
        ctx.N, ctx.alpha, ctx.causal = N, alpha, causal
        return out

    @staticmethod
    def backward(ctx, dout):
        raise NotImplementedError("backward launcher lives in triton_hstu_attention_bwd.py")


def triton_hstu_mha(N, alpha, q, k, v, seq_offsets, causal=True):
    return _HSTUAttentionFunction.apply(N, alpha, q, k, v, seq_offsets, causal)
