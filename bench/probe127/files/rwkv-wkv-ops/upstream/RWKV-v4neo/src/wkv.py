########################################################################################################
# The RWKV Language Model - https://github.com/BlinkDL/RWKV-LM
########################################################################################################

import os
from enum import Enum

import torch
from torch.utils.cpp_extension import load

T_MAX = int(os.environ.get("RWKV_T_MAX", 1024))  # increase this if your ctx_len is long [NOTE: TAKES LOTS OF VRAM!]
RWKV_FLOAT_MODE = os.environ.get("RWKV_FLOAT_MODE", "bf16")
# the CUDA kernel is on by default for training; set RWKV_CUDA_ON=0 to use the pure-torch recurrence
RWKV_CUDA_ON = os.environ.get("RWKV_CUDA_ON", "1") == "1"


class WKVBackend(str, Enum):
    CUDA = "cuda"
    TORCH = "torch"


wkv_cuda = None
if RWKV_CUDA_ON:
    # it's possible to go beyond CUDA limitations if you slice the ctx and pass the hidden state in each slice
    if RWKV_FLOAT_MODE == "bf16":
        wkv_cuda = load(name=f"wkv_{T_MAX}_bf16", sources=["cuda/wkv_op_bf16.cpp", "cuda/wkv_cuda_bf16.cu"], verbose=True, extra_cuda_cflags=["-t 4", "-std=c++17", "-res-usage", "--maxrregcount 60", "--use_fast_math", "-O3", "-Xptxas -O3", "--extra-device-vectorization", f"-DTmax={T_MAX}"])
    else:
        wkv_cuda = load(name=f"wkv_{T_MAX}", sources=["cuda/wkv_op.cpp", "cuda/wkv_cuda.cu"], verbose=True, extra_cuda_cflags=["-res-usage", "--maxrregcount 60", "--use_fast_math", "-O3", "-Xptxas -O3", "--extra-device-vectorization", f"-DTmax={T_MAX}"])


class WKV(torch.autograd.Function):
    @staticmethod
    def forward(ctx, B, T, C, w, u, k, v):
        ctx.B = B
        ctx.T = T
        ctx.C = C
        assert T <= T_MAX
        assert B * C % min(C, 32) == 0
        if RWKV_FLOAT_MODE == "bf16":
            w = -torch.exp(w.float().contiguous())
            u = u.contiguous()
            k = k.contiguous()
            v = v.contiguous()
            y = torch.empty((B, T, C), device=w.device, memory_format=torch.contiguous_format, dtype=torch.bfloat16)
            wkv_cuda.forward(B, T, C, w, u, k, v, y)
            ctx.save_for_backward(w, u, k, v, y)
            return y
        else:
            w = -torch.exp(w.contiguous())
            y = torch.empty((B, T, C), device=w.device, memory_format=torch.contiguous_format)
            wkv_cuda.forward(B, T, C, w, u.contiguous(), k.contiguous(), v.contiguous(), y)
            ctx.save_for_backward(w, u, k, v, y)
            if "32" in RWKV_FLOAT_MODE:
                return y
            elif RWKV_FLOAT_MODE == "fp16":
                return y.half()

    @staticmethod
    def backward(ctx, gy):
        B = ctx.B
        T = ctx.T
        C = ctx.C
        assert T <= T_MAX
        assert B * C % min(C, 32) == 0
        w, u, k, v, y = ctx.saved_tensors
        gw = torch.empty((B, C), device=gy.device, memory_format=torch.contiguous_format, dtype=w.dtype)
        gu = torch.empty((B, C), device=gy.device, memory_format=torch.contiguous_format, dtype=u.dtype)
        gk = torch.empty((B, T, C), device=gy.device, memory_format=torch.contiguous_format, dtype=k.dtype)
        gv = torch.empty((B, T, C), device=gy.device, memory_format=torch.contiguous_format, dtype=v.dtype)
        wkv_cuda.backward(B, T, C, w, u, k, v, y, gy.contiguous(), gw, gu, gk, gv)
        gw = torch.sum(gw, dim=0)
        gu = torch.sum(gu, dim=0)
        return (None, None, None, gw, gu, gk, gv)


def RUN_CUDA(B, T, C, w, u, k, v):
    return WKV.apply(B, T, C, w, u, k, v)


def wkv_torch(w, u, k, v, state=None):
    """Reference WKV recurrence (numerically stable form), O(T) python loop.

    w, u: (C,)   k, v: (B, T, C)   returns y: (B, T, C) in the input dtype.
    The recurrence must run in fp32: exp() of the decayed state overflows in half precision.
    """
    B, T, C = k.shape
    dtype = k.dtype
    with torch.cuda.amp.autocast(enabled=False):
        w = -torch.exp(w.float())
        u = u.float()
        k = k.float()
        v = v.float()
        if state is None:
            aa = torch.zeros(B, C, device=k.device)
            bb = torch.zeros(B, C, device=k.device)
            pp = torch.full((B, C), -1e38, device=k.device)
        else:
            aa, bb, pp = state
        ys = []
        for t in range(T):
            kk = k[:, t]
            vv = v[:, t]
            ww = u + kk
            p = torch.maximum(pp, ww)
            e1 = torch.exp(pp - p)
            e2 = torch.exp(ww - p)
            ys.append((e1 * aa + e2 * vv) / (e1 * bb + e2))
            ww = w + pp
            p = torch.maximum(ww, kk)
            e1 = torch.exp(ww - p)
            e2 = torch.exp(kk - p)
            aa = e1 * aa + e2 * vv
            bb = e1 * bb + e2
            pp = p
        y = torch.stack(ys, dim=1)
    return y.to(dtype), (aa, bb, pp)


def select_backend(x: torch.Tensor, backend=None) -> WKVBackend:
    backend = backend or os.environ.get("RWKV_WKV_BACKEND")
    if backend is not None:
        return WKVBackend(backend)
    if x.is_cuda and wkv_cuda is not None:
        return WKVBackend.CUDA
    return WKVBackend.TORCH


def run_wkv(B, T, C, w, u, k, v, backend=None):
    if select_backend(k, backend) is WKVBackend.CUDA:
        return RUN_CUDA(B, T, C, w, u, k, v)
    y, _ = wkv_torch(w, u, k, v)
    return y
