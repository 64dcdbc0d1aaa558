"""Split-K GEMM in Triton for skinny decode-time matmuls (M <= 64, large K).

With M=1..16 a classic tiled GEMM launches only N/BLOCK_N programs and leaves most SMs idle; split-K
partitions the reduction dimension as well and accumulates the partial tiles with atomics.
"""
import argparse

import torch
import triton
import triton.language as tl


def _splitk_configs():
    configs = []
    for block_m in (16, 32):
        for block_n in (32, 64, 128):
            for block_k in (64, 128, 256):
                for split_k in (2, 4, 8, 16):
                    configs.append(triton.Config(
                        {"BLOCK_M": block_m, "BLOCK_N": block_n, "BLOCK_K": block_k, "SPLIT_K": split_k},
                        num_stages=4 if block_k <= 128 else 3,
                        num_warps=4 if block_n <= 64 else 8))
    return configs


@triton.autotune(configs=_splitk_configs(), key=["M", "N", "K"], reset_to_zero=["c_ptr"])
@triton.jit
def splitk_gemm_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    SPLIT_K: tl.constexpr, GROUP_M: tl.constexpr, ALLOW_TF32: tl.constexpr,
):
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)

    # re-order program ID for better L2 performance
    width = GROUP_M * grid_n
    group_id = pid // width
    group_size = min(grid_m - group_id * GROUP_M, GROUP_M)
    pid_m = group_id * GROUP_M + (pid % group_size)
    pid_n = (pid % width) // group_size

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ram = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M)
    rbn = tl.max_contiguous(tl.multiple_of(rn % N, BLOCK_N), BLOCK_N)
    rk = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)

    a_ptrs = a_ptr + (ram[:, None] * stride_am + rk[None, :] * stride_ak)
    b_ptrs = b_ptr + (rk[:, None] * stride_bk + rbn[None, :] * stride_bn)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K * SPLIT_K)):
        k_remaining = K - k * (BLOCK_K * SPLIT_K)
        a = tl.load(a_ptrs, mask=rk[None, :] < k_remaining, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < k_remaining, other=0.0)
        acc += tl.dot(a, b, allow_tf32=ALLOW_TF32)
        a_ptrs += BLOCK_K * SPLIT_K * stride_ak
        b_ptrs += BLOCK_K * SPLIT_K * stride_bk

    acc = acc.to(c_ptr.dtype.element_ty)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + (rm[:, None] * stride_cm + rn[None, :] * stride_cn)
    mask = (rm < M)[:, None] & (rn < N)[None, :]
    if SPLIT_K == 1:
        tl.store(c_ptrs, acc, mask=mask)
    else:
        tl.atomic_add(c_ptrs, acc, mask=mask)


_SM_CACHE = {}


def _num_sms(device):
    idx = device.index if device.index is not None else torch.cuda.current_device()
    if idx not in _SM_CACHE:
        _SM_CACHE[idx] = torch.cuda.get_device_properties(idx).multi_processor_count
    return _SM_CACHE[idx]


def splitk_gemm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """c = a @ b for a (M, K) and b (K, N), fp16/bf16, M small."""
    assert a.is_cuda and b.is_cuda, "splitk_gemm runs on CUDA tensors only"
    assert a.shape[1] == b.shape[0], "incompatible dimensions"
    if a.dtype == torch.bfloat16 and torch.cuda.get_device_capability(a.device)[0] < 8:
        raise RuntimeError("bf16 tensor-core dot needs sm_80 or newer")
    M, K = a.shape
    _, N = b.shape
    if M > 64:
        # the classic tiling already fills the machine
        return torch.matmul(a, b)

    # fp16 atomics are slow and lossy: accumulate split-K partials in an fp32 buffer
    c = torch.zeros((M, N), device=a.device, dtype=torch.float32)
    tiles = triton.cdiv(M, 16) * triton.cdiv(N, 64)
    if tiles >= _num_sms(a.device):
        return torch.matmul(a, b)

    grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv(N, META["BLOCK_N"]), META["SPLIT_K"])  # noqa
    splitk_gemm_kernel[grid](
        a, b, c, M, N, K,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        GROUP_M=8, ALLOW_TF32=torch.backends.cuda.matmul.allow_tf32,
    )
    return c.to(a.dtype)


def benchmark(M, N, K, dtype=torch.float16):
    a = torch.randn((M, K), device="cuda", dtype=dtype)
    b = torch.randn((K, N), device="cuda", dtype=dtype)
    torch.testing.assert_close(splitk_gemm(a, b), torch.matmul(a, b), atol=1e-1, rtol=1e-2)
    ms_triton = triton.testing.do_bench(lambda: splitk_gemm(a, b))
    ms_torch = triton.testing.do_bench(lambda: torch.matmul(a, b))
    tflops = lambda ms: 2 * M * N * K * 1e-12 / (ms * 1e-3)  # noqa
    print(f"M={M:4d} N={N:6d} K={K:6d}  triton {tflops(ms_triton):7.2f} TFLOP/s  "
          f"torch {tflops(ms_torch):7.2f} TFLOP/s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--dtype", default="float16", choices=["float16", "bfloat16"])
    args = parser.parse_args()
    print(torch.cuda.get_device_name(), "SMs:", _num_sms(torch.device("cuda")))
    for m in (1, 4, 16, 32):
        for n, k in ((4096, 4096), (11008, 4096), (4096, 11008), (32000, 4096)):
            benchmark(m, n, k, getattr(torch, args.dtype))
