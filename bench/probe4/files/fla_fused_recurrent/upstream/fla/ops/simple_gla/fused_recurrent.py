# -*- coding: utf-8 -*-
# Copyright (c) 2023-2025, Songlin Yang, Yu Zhang

import functools
from typing import Optional, Tuple

import torch
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

# ----------------------------------------------------------------------------------------------
# device helpers (normally in fla/utils.py)
# ----------------------------------------------------------------------------------------------

device = "cuda" if torch.cuda.is_available() else "cpu"
device_capacity = torch.cuda.get_device_capability()[0] >= 9
is_nvidia_hopper = device_capacity and "NVIDIA H" in torch.cuda.get_device_name(0)
use_cuda_graph = is_nvidia_hopper and torch.cuda.device_count() == 1
autocast_custom_fwd = functools.partial(torch.amp.custom_fwd, device_type="cuda")
autocast_custom_bwd = functools.partial(torch.amp.custom_bwd, device_type="cuda")


@functools.lru_cache(maxsize=None)
def check_shared_mem(arch: str = "none", tensor_idx: int = 0) -> bool:
    # 232448 bytes on Hopper (sm90), 166912 on Ampere A100, 101376 on consumer Ampere/Ada
    try:
        max_shared_mem = triton.runtime.driver.active.utils.get_device_properties(tensor_idx)["max_shared_mem"]
        return max_shared_mem >= {"hopper": 232448, "ampere": 166912, "ada": 101376}.get(arch, 102400)
    except Exception:
        return False


def input_guard(fn):
    """Make every tensor argument contiguous and run the kernel on the tensors' device."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        args = tuple(a.contiguous() if isinstance(a, torch.Tensor) else a for a in args)
        kwargs = {k: (v.contiguous() if isinstance(v, torch.Tensor) else v) for k, v in kwargs.items()}
        tensor = next((a for a in args if isinstance(a, torch.Tensor)), None)
        if tensor is None:
            return fn(*args, **kwargs)
        with torch.cuda.device(tensor.device.index):
            return fn(*args, **kwargs)

    return wrapper


@triton.jit
def fast_tanh(x):
    return tl.inline_asm_elementwise(
        "tanh.approx.f32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1
    )


# ----------------------------------------------------------------------------------------------
# kernels
# ----------------------------------------------------------------------------------------------


@triton.heuristics({
    "USE_INITIAL_STATE": lambda args: args["h0"] is not None,
    "STORE_FINAL_STATE": lambda args: args["ht"] is not None,
})
@triton.autotune(
    configs=[
        triton.Config({}, num_warps=num_warps, num_stages=num_stages)
        for num_warps in [1, 2, 4, 8]
        for num_stages in [2, 3, 4]
    ],
    key=["BK", "BV"],
    use_cuda_graph=use_cuda_graph,
)
@triton.jit(do_not_specialize=["T"])
def fused_recurrent_simple_gla_fwd_kernel(
    q, k, v, g, o, h0, ht,
    scale,
    T,
    H: tl.constexpr,
    K: tl.constexpr,
    V: tl.constexpr,
    BK: tl.constexpr,
    BV: tl.constexpr,
    USE_INITIAL_STATE: tl.constexpr,
    STORE_FINAL_STATE: tl.constexpr,
    GATE_TANH: tl.constexpr,
):
    i_v, i_k, i_nh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    i_n, i_h = i_nh // H, i_nh % H
    bos = i_n * T

    o_k = i_k * BK + tl.arange(0, BK)
    o_v = i_v * BV + tl.arange(0, BV)
    p_q = q + (bos * H + i_h) * K + o_k
    p_k = k + (bos * H + i_h) * K + o_k
    p_v = v + (bos * H + i_h) * V + o_v
    p_g = g + bos * H + i_h
    p_o = o + ((i_k * T + bos) * H + i_h) * V + o_v

    mask_k = o_k < K
    mask_v = o_v < V
    mask_h = mask_k[None, :] & mask_v[:, None]
    b_h = tl.zeros([BV, BK], dtype=tl.float32)
    if USE_INITIAL_STATE:
        p_h0 = h0 + i_nh * K * V + o_k[None, :] * V + o_v[:, None]
        b_h += tl.load(p_h0, mask=mask_h, other=0).to(tl.float32)

    for _ in range(0, T):
        b_q = tl.load(p_q, mask=mask_k, other=0).to(tl.float32) * scale
        b_k = tl.load(p_k, mask=mask_k, other=0).to(tl.float32)
        b_v = tl.load(p_v, mask=mask_v, other=0).to(tl.float32)
        b_g = tl.load(p_g).to(tl.float32)
        if GATE_TANH:
            b_g = fast_tanh(b_g)
        b_h = b_h * libdevice.fast_expf(b_g)
        b_h += b_k[None, :] * b_v[:, None]
        b_o = tl.sum(b_h * b_q[None, :], 1)
        tl.store(p_o, b_o.to(p_o.dtype.element_ty), mask=mask_v)

        p_q += H * K
        p_k += H * K
        p_v += H * V
        p_g += H
        p_o += H * V

    if STORE_FINAL_STATE:
        p_ht = ht + i_nh * K * V + o_k[None, :] * V + o_v[:, None]
        tl.store(p_ht, b_h.to(p_ht.dtype.element_ty), mask=mask_h)


def fused_recurrent_simple_gla_fwd(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    scale: float,
    initial_state: Optional[torch.Tensor] = None,
    output_final_state: bool = False,
    gate_tanh: bool = False,
) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
    B, T, H, K, V = *k.shape, v.shape[-1]
    N = B
    if check_shared_mem("hopper", k.device.index):
        BK, BV = min(triton.next_power_of_2(K), 128), min(triton.next_power_of_2(V), 128)
    else:
        BK, BV = min(triton.next_power_of_2(K), 64), min(triton.next_power_of_2(V), 64)
    NK, NV = triton.cdiv(K, BK), triton.cdiv(V, BV)

    o = q.new_empty(NK, *v.shape, dtype=torch.float32)
    ht = q.new_empty(N, H, K, V, dtype=torch.float32) if output_final_state else None

    grid = (NV, NK, N * H)
    fused_recurrent_simple_gla_fwd_kernel[grid](
        q, k, v, g, o, initial_state, ht,
        scale,
        T=T, H=H, K=K, V=V, BK=BK, BV=BV,
        GATE_TANH=gate_tanh,
    )
    o = o.sum(0)
    return o.to(q.dtype), ht


class FusedRecurrentSimpleGLAFunction(torch.autograd.Function):

    @staticmethod
    @input_guard
    @autocast_custom_fwd
    def forward(ctx, q, k, v, g, scale, initial_state, output_final_state, gate_tanh):
        o, ht = fused_recurrent_simple_gla_fwd(
            q, k, v, g, scale, initial_state, output_final_state, gate_tanh
        )
        return o, ht

    @staticmethod
    @input_guard
    @autocast_custom_bwd
    def backward(ctx, do, dht):
        raise NotImplementedError(
            "Backward of fused_recurrent_simple_gla is not implemented; use chunk_simple_gla for training."
        )


def fused_recurrent_simple_gla(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    scale: Optional[float] = None,
    initial_state: Optional[torch.Tensor] = None,
    output_final_state: bool = False,
    gate_tanh: bool = False,
) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
    r"""
    Args:
        q/k: [B, T, H, K];  v: [B, T, H, V];  g: [B, T, H] log-space forget gates.
        scale: defaults to 1 / sqrt(K).
    Returns:
        o: [B, T, H, V] and the final state [B, H, K, V] when output_final_state.
    """
    if scale is None:
        scale = k.shape[-1] ** -0.5
    o, final_state = FusedRecurrentSimpleGLAFunction.apply(
        q, k, v, g, scale, initial_state, output_final_state, gate_tanh
    )
    return o, final_state
