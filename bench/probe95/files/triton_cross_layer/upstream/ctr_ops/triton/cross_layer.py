"""Fused DCN-V2 cross layer in Triton.

    x_{l+1} = x_0 * (x_l @ W^T + b) + x_l

A plain PyTorch cross layer launches a GEMM plus three element-wise kernels and materialises x_l @ W^T in
HBM. Here the GEMM accumulator stays in registers and the bias / Hadamard / residual epilogue is applied
before the single store. Backward reuses cuBLAS through torch (it is GEMM-bound anyway).

Only the forward is fused; `CrossLayerV2` falls back to the eager formula when Triton is unavailable or
the input is not on a GPU.
"""
import functools

import torch
import torch.nn as nn
import triton
import triton.language as tl


def _cross_configs():
    configs = []
    for bm, bn, bk, warps, stages in [
        (128, 128, 32, 8, 3),
        (128, 64, 32, 4, 4),
        (64, 128, 32, 4, 4),
        (64, 64, 64, 4, 3),
        (32, 64, 64, 2, 5),
    ]:
        configs.append(triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8},
                                     num_warps=warps, num_stages=stages))
    return configs


@triton.autotune(configs=_cross_configs(), key=["M", "N", "K"])
@triton.jit
def _cross_fwd_kernel(
    X0, XL, W, B, OUT,
    M, N, K,
    stride_xm, stride_xk,
    stride_wn, stride_wk,
    stride_om, stride_on,
    ALLOW_TF32: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (pid % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    xl_ptrs = XL + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = W + offs_n[None, :] * stride_wn + offs_k[:, None] * stride_wk

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_mask = offs_k[None, :] < K - k * BLOCK_K
        a = tl.load(xl_ptrs, mask=(offs_m[:, None] < M) & k_mask, other=0.0)
        b = tl.load(w_ptrs, mask=(offs_n[None, :] < N) & (offs_k[:, None] < K - k * BLOCK_K), other=0.0)
        acc += tl.dot(a, b, allow_tf32=ALLOW_TF32)
        xl_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk

    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    bias = tl.load(B + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    x0 = tl.load(X0 + offs_m[:, None] * stride_xm + offs_n[None, :] * stride_xk, mask=mask, other=0.0,
                 eviction_policy="evict_first")
    xl = tl.load(XL + offs_m[:, None] * stride_xm + offs_n[None, :] * stride_xk, mask=mask, other=0.0)
    out = x0.to(tl.float32) * (acc + bias[None, :]) + xl.to(tl.float32)
    tl.store(OUT + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on,
             out.to(OUT.dtype.element_ty), mask=mask)


@functools.lru_cache(maxsize=None)
def _device_allows_tf32(device_index):
    major, _ = torch.cuda.get_device_capability(device_index)
    return major >= 8 and torch.backends.cuda.matmul.allow_tf32


@functools.lru_cache(maxsize=None)
def _num_sms(device_index):
    return torch.cuda.get_device_properties(device_index).multi_processor_count


def cross_forward(x0, xl, weight, bias):
    """x0, xl: (M, K) with K == N; weight: (N, K); bias: (N,)."""
    assert x0.shape == xl.shape and weight.shape[0] == weight.shape[1] == x0.shape[1]
    x0 = x0.contiguous()
    xl = xl.contiguous()
    M, K = xl.shape
    N = weight.shape[0]
    out = torch.empty_like(xl)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    _cross_fwd_kernel[grid](
        x0, xl, weight, bias, out,
        M, N, K,
        xl.stride(0), xl.stride(1),
        weight.stride(0), weight.stride(1),
        out.stride(0), out.stride(1),
        ALLOW_TF32=_device_allows_tf32(xl.device.index),
    )
    return out


class _CrossFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x0, xl, weight, bias):
        ctx.save_for_backward(x0, xl, weight)
        return cross_forward(x0, xl, weight, bias)

    @staticmethod
    def backward(ctx, grad_out):
        x0, xl, weight = ctx.saved_tensors
        h = xl @ weight.t()  # recompute instead of storing (M, N) activations
        grad_h = grad_out * x0
        grad_x0 = grad_out * h
        grad_xl = grad_h @ weight + grad_out
        grad_w = grad_h.t() @ xl
        grad_b = grad_h.sum(0)
        return grad_x0, grad_xl, grad_w, grad_b


class CrossLayerV2(nn.Module):
    def __init__(self, dim, use_triton=True):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(dim, dim))
        self.bias = nn.Parameter(torch.zeros(dim))
        nn.init.xavier_uniform_(self.weight)
        self.use_triton = use_triton

    def forward(self, x0, xl):
        if self.use_triton and xl.is_cuda and xl.dim() == 2:
            return _CrossFn.apply(x0, xl, self.weight.to(xl.dtype), self.bias.to(xl.dtype))
        return x0 * (xl @ self.weight.t() + self.bias) + xl


class CrossNetV2Triton(nn.Module):
    def __init__(self, dim, num_layers, use_triton=True):
        super().__init__()
        self.layers = nn.ModuleList([CrossLayerV2(dim, use_triton) for _ in range(num_layers)])

    def forward(self, x):
        x0, xl = x, x
        for layer in self.layers:
            xl = layer(x0, xl)
        return xl


def persistent_grid(M, N, block_m=128, block_n=128, device_index=0):
    """Launch grid capped at one wave of CTAs (used by the persistent variant in benchmarks/)."""
    tiles = triton.cdiv(M, block_m) * triton.cdiv(N, block_n)
    return (min(tiles, _num_sms(device_index) * 2),)


if __name__ == "__main__":
    torch.manual_seed(0)
    layer = CrossLayerV2(512).cuda().half()
    x = torch.randn(8192, 512, device="cuda", dtype=torch.float16)
    ref = x * (x @ layer.weight.t() + layer.bias) + x
    out = layer(x, x)
    print("max abs err", (out - ref).abs().max().item())
