"""
Split-K W4A16 GEMM in Triton: fp16/bf16 activations x int4 (packed int32) weights with per-group scales
and zeros, for batch-1..16 LLM decoding where the weight read dominates.

    y = x @ dequant(qweight, scales, zeros)       x: [M, K], qweight: [K // 8, N] int32

Split-K: each program reduces a K/SPLIT_K slice and atomically adds its partial tile into the fp32
output, which keeps all SMs busy even when M is tiny.
"""
import functools
import os

import torch
import triton
import triton.language as tl


@functools.lru_cache(maxsize=None)
def _sm_count(device_index: int = 0) -> int:
    return torch.cuda.get_device_properties(device_index).multi_processor_count


@functools.lru_cache(maxsize=None)
def _is_sm90() -> bool:
    major, _ = torch.cuda.get_device_capability()
    return major >= 9


def _autotune_configs():
    configs = []
    for block_m in [16, 32]:
        for block_n in [64, 128, 256]:
            for block_k in [64, 128]:
                for split_k in [2, 4, 8]:
                    for num_warps, num_stages in [(4, 3), (4, 4), (8, 3)]:
                        configs.append(
                            triton.Config(
                                {"BLOCK_M": block_m, "BLOCK_N": block_n, "BLOCK_K": block_k, "SPLIT_K": split_k},
                                num_warps=num_warps,
                                num_stages=num_stages,
                            )
                        )
    if os.environ.get("W4A16_FAST_TUNE"):
        configs = configs[:8]
    return configs


def _prune_configs(configs, named_args, **kwargs):
    """Drop configs whose pipelined tiles would not fit into shared memory."""
    max_smem = 228 * 1024 if _is_sm90() else 163 * 1024
    pruned = []
    for cfg in configs:
        kw = cfg.kwargs
        smem = cfg.num_stages * (kw["BLOCK_M"] * kw["BLOCK_K"] * 2 + kw["BLOCK_K"] // 8 * kw["BLOCK_N"] * 4)
        if smem <= max_smem:
            pruned.append(cfg)
    return pruned


@triton.autotune(
    configs=_autotune_configs(),
    key=["M", "N", "K"],
    prune_configs_by={"early_config_prune": _prune_configs},
    reset_to_zero=["c_ptr"],
)
@triton.jit
def _w4a16_splitk_kernel(
    a_ptr, b_ptr, c_ptr, scales_ptr, zeros_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    stride_scales_g, stride_zeros_g,
    group_size: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    SPLIT_K: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    pid_k = tl.program_id(axis=1)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)

    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + (offs_k[:, None] // 8) * stride_bk + offs_n[None, :] * stride_bn
    shifts = (offs_k % 8) * 4

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K * SPLIT_K)):
        k_start = (k * SPLIT_K + pid_k) * BLOCK_K
        g = k_start // group_size
        scales = tl.load(scales_ptr + g * stride_scales_g + offs_n)
        zeros = tl.load(zeros_ptr + g * stride_zeros_g + offs_n)

        a = tl.load(a_ptrs, mask=offs_m[:, None] < M, other=0.0, eviction_policy="evict_last")
        b = tl.load(b_ptrs, eviction_policy="evict_first", cache_modifier=".cg")
        b = (b >> shifts[:, None]) & 0xF
        b = (b.to(tl.float16) - zeros[None, :]) * scales[None, :]
        acc += tl.dot(a, b.to(a.dtype))

        a_ptrs += BLOCK_K * SPLIT_K * stride_ak
        b_ptrs += (BLOCK_K * SPLIT_K // 8) * stride_bk

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.atomic_add(c_ptrs, acc, mask=mask, sem="relaxed")


def w4a16_matmul(x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor, zeros: torch.Tensor,
                 group_size: int = 128) -> torch.Tensor:
    assert x.is_cuda and qweight.is_cuda, "w4a16_matmul needs CUDA tensors"
    assert x.dtype in (torch.float16, torch.bfloat16)
    M, K = x.shape
    N = qweight.shape[1]
    c = torch.zeros((M, N), device=x.device, dtype=torch.float32)

    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]), meta["SPLIT_K"])

    with torch.cuda.device(x.device):
        _w4a16_splitk_kernel[grid](
            x, qweight, c, scales, zeros,
            M, N, K,
            x.stride(0), x.stride(1),
            qweight.stride(0), qweight.stride(1),
            c.stride(0), c.stride(1),
            scales.stride(0), zeros.stride(0),
            group_size=group_size,
        )
    return c.to(x.dtype)


def w4a16_linear(x: torch.Tensor, qweight, scales, zeros, bias=None, group_size: int = 128) -> torch.Tensor:
    """nn.Linear-compatible wrapper: flattens leading dims, falls back to dequant+matmul for big M."""
    shape = x.shape
    x2 = x.reshape(-1, shape[-1])
    if x2.shape[0] > 4 * _sm_count(x.device.index or 0):
        # compute-bound regime: dequantize once and use cuBLAS
        w = dequantize(qweight, scales, zeros, group_size).to(x.dtype)
        y = x2 @ w
    else:
        y = w4a16_matmul(x2, qweight, scales, zeros, group_size)
    if bias is not None:
        y = y + bias
    return y.reshape(*shape[:-1], -1)


def dequantize(qweight, scales, zeros, group_size=128):
    shifts = torch.arange(0, 32, 4, device=qweight.device, dtype=torch.int32)
    w = (qweight.unsqueeze(1) >> shifts.view(1, -1, 1)) & 0xF          # [K//8, 8, N]
    w = w.reshape(-1, qweight.shape[1]).to(scales.dtype)                # [K, N]
    g = torch.arange(w.shape[0], device=w.device) // group_size
    return (w - zeros[g]) * scales[g]


if __name__ == "__main__":
    torch.manual_seed(0)
    M, K, N = 4, 4096, 11008
    x = torch.randn(M, K, device="cuda", dtype=torch.float16)
    qweight = torch.randint(0, 2**31 - 1, (K // 8, N), device="cuda", dtype=torch.int32)
    scales = torch.rand(K // 128, N, device="cuda", dtype=torch.float16) * 0.01
    zeros = torch.full((K // 128, N), 8.0, device="cuda", dtype=torch.float16)
    ref = x @ dequantize(qweight, scales, zeros)
    out = w4a16_matmul(x, qweight, scales, zeros)
    print("max abs err", (out - ref).abs().max().item())
    ms = triton.testing.do_bench(lambda: w4a16_matmul(x, qweight, scales, zeros))
    print(f"{ms * 1e3:.1f} us, {(K * N / 2 + M * K * 2) / ms / 1e6:.1f} GB/s")
