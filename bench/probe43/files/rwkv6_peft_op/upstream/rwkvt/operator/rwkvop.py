"""RWKV-6 time-mix operator with three interchangeable backends.

WKV=cuda  (default) : hand-written CUDA kernels, JIT-compiled on first import
WKV=fla             : flash-linear-attention Triton kernels (chunk / fused_recurrent)
WKV=torch           : slow reference recurrence, for debugging only
"""
import os

import torch
from einops import rearrange
from torch.utils.cpp_extension import load as load_kernel

HEAD_SIZE = int(os.environ.get("RWKV_HEAD_SIZE_A", "64"))
CTXLEN = int(os.environ.get("RWKV_CTXLEN", "4096"))
TRAIN_TYPE = os.environ.get("RWKV_TRAIN_TYPE", "none")
WKV_MODE = os.environ.get("WKV", "cuda")

_CUDA_FLAGS = [
    "-res-usage",
    "--use_fast_math",
    "-O3",
    "-Xptxas -O3",
    "--extra-device-vectorization",
    f"-D_N_={HEAD_SIZE}",
    f"-D_T_={CTXLEN}",
]


def RUN_RWKV6_TORCH(B, T, C, H, r, k, v, w, u, s=None):
    """Reference recurrence (fp32). r,k,v,w: (B,T,C); u: (H,N); s: (B,H,N,N)."""
    N = C // H
    r = r.float().view(B, T, H, N)
    k = k.float().view(B, T, H, N)
    v = v.float().view(B, T, H, N)
    w = torch.exp(-torch.exp(w.float().view(B, T, H, N)))
    u = u.float().view(1, H, N, 1)
    state = torch.zeros(B, H, N, N, device=r.device, dtype=torch.float32) if s is None else s.float().clone()
    out = torch.empty(B, T, H, N, device=r.device, dtype=torch.float32)
    for t in range(T):
        kv = k[:, t].unsqueeze(-1) * v[:, t].unsqueeze(-2)  # (B,H,N,N)
        out[:, t] = (r[:, t].unsqueeze(-2) @ (u * kv + state)).squeeze(-2)
        state = w[:, t].unsqueeze(-1) * state + kv
    return out.view(B, T, C).to(torch.bfloat16), state


if WKV_MODE == "fla":
    from fla.ops.rwkv6 import chunk_rwkv6

    def RUN_CUDA_RWKV6(B, T, C, H, r, k, v, w, u, s=None):
        r, k, v, w = [rearrange(x, "b l (h d) -> b h l d", h=H) for x in (r, k, v, w)]
        o, state = chunk_rwkv6(r, k, v, -torch.exp(w.float()).to(r.dtype), u=u, scale=1.0,
                               initial_state=s, output_final_state=s is not None)
        return rearrange(o, "b h l d -> b l (h d)"), state

elif WKV_MODE == "torch":
    RUN_CUDA_RWKV6 = RUN_RWKV6_TORCH

elif TRAIN_TYPE == "states":
    wkv6state_cuda = load_kernel(
        name="wkv6state",
        sources=["rwkvt/operator/cuda/wkv6state_op.cpp", "rwkvt/operator/cuda/wkv6state_cuda.cu"],
        verbose=True,
        extra_cuda_cflags=_CUDA_FLAGS,
    )

    class WKV_6STATE(torch.autograd.Function):
        @staticmethod
        def forward(ctx, B, T, C, H, r, k, v, w, u, s):
            with torch.no_grad():
                assert r.dtype == torch.bfloat16
                assert k.dtype == torch.bfloat16
                assert v.dtype == torch.bfloat16
                assert w.dtype == torch.bfloat16
                assert u.dtype == torch.bfloat16
                assert s.dtype == torch.bfloat16
                assert HEAD_SIZE == C // H
                ctx.B = B
                ctx.T = T
                ctx.C = C
                ctx.H = H
                assert r.is_contiguous()
                assert k.is_contiguous()
                assert v.is_contiguous()
                assert w.is_contiguous()
                assert u.is_contiguous()
                assert s.is_contiguous()
                ctx.save_for_backward(r, k, v, w, u, s)
                y = torch.empty((B, T, C), device=r.device, dtype=torch.bfloat16, memory_format=torch.contiguous_format)
                wkv6state_cuda.forward(B, T, C, H, r, k, v, w, u, s, y)
                return y

        @staticmethod
        def backward(ctx, gy):
            with torch.no_grad():
                assert gy.dtype == torch.bfloat16
                B, T, C, H = ctx.B, ctx.T, ctx.C, ctx.H
                assert gy.is_contiguous()
                r, k, v, w, u, s = ctx.saved_tensors
                gr = torch.empty((B, T, C), device=gy.device, requires_grad=False, dtype=torch.bfloat16, memory_format=torch.contiguous_format)
                gk = torch.empty((B, T, C), device=gy.device, requires_grad=False, dtype=torch.bfloat16, memory_format=torch.contiguous_format)
                gv = torch.empty((B, T, C), device=gy.device, requires_grad=False, dtype=torch.bfloat16, memory_format=torch.contiguous_format)
                gw = torch.empty((B, T, C), device=gy.device, requires_grad=False, dtype=torch.bfloat16, memory_format=torch.contiguous_format)
                gu = torch.empty((B, C), device=gy.device, requires_grad=False, dtype=torch.bfloat16, memory_format=torch.contiguous_format)
                gs = torch.empty((B, H, C // H, C // H), device=gy.device, requires_grad=False, dtype=torch.bfloat16, memory_format=torch.contiguous_format)
                wkv6state_cuda.backward(B, T, C, H, r, k, v, w, u, s, gy, gr, gk, gv, gw, gu, gs)
                gu = torch.sum(gu, 0).view(H, C // H)
                gs = torch.sum(gs, 0).view(H, C // H, C // H)
                return (None, None, None, None, gr, gk, gv, gw, gu, gs)

    def RUN_CUDA_RWKV6(B, T, C, H, r, k, v, w, u, s=None):
        return WKV_6STATE.apply(B, T, C, H, r, k, v, w, u, s), None

else:
    wkv6_cuda = load_kernel(
        name="wkv6",
        sources=["rwkvt/operator/cuda/wkv6_op.cpp", "rwkvt/operator/cuda/wkv6_cuda.cu"],
        verbose=True,
        extra_cuda_cflags=_CUDA_FLAGS,
    )

    class WKV_6(torch.autograd.Function):
        @staticmethod
        def forward(ctx, B, T, C, H, r, k, v, w, u):
            with torch.no_grad():
                assert r.dtype == torch.bfloat16
                assert HEAD_SIZE == C // H
                ctx.B = B
                ctx.T = T
                ctx.C = C
                ctx.H = H
                ew = (-torch.exp(w.float())).contiguous()
                ctx.save_for_backward(r, k, v, ew, u)
                y = torch.empty((B, T, C), device=r.device, dtype=torch.bfloat16, memory_format=torch.contiguous_format)
                wkv6_cuda.forward(B, T, C, H, r, k, v, ew, u, y)
                return y

        @staticmethod
        def backward(ctx, gy):
            with torch.no_grad():
                B, T, C, H = ctx.B, ctx.T, ctx.C, ctx.H
                r, k, v, ew, u = ctx.saved_tensors
                gr = torch.empty((B, T, C), device=gy.device, requires_grad=False, dtype=torch.bfloat16, memory_format=torch.contiguous_format)
                gk = torch.empty((B, T, C), device=gy.device, requires_grad=False, dtype=torch.bfloat16, memory_format=torch.contiguous_format)
                gv = torch.empty((B, T, C), device=gy.device, requires_grad=False, dtype=torch.bfloat16, memory_format=torch.contiguous_format)
                gw = torch.empty((B, T, C), device=gy.device, requires_grad=False, dtype=torch.bfloat16, memory_format=torch.contiguous_format)
                gu = torch.empty((B, C), device=gy.device, requires_grad=False, dtype=torch.bfloat16, memory_format=torch.contiguous_format)
                wkv6_cuda.backward(B, T, C, H, r, k, v, ew, u, gy, gr, gk, gv, gw, gu)
                gu = torch.sum(gu, 0).view(H, C // H)
                return (None, None, None, None, gr, gk, gv, gw, gu)

    def RUN_CUDA_RWKV6(B, T, C, H, r, k, v, w, u, s=None):
        return WKV_6.apply(B, T, C, H, r, k, v, w, u), None
