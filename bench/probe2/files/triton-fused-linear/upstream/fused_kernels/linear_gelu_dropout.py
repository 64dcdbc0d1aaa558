"""Fused Linear + bias + GELU(tanh) epilogue and a seeded dropout kernel, in Triton.

Used by the MLP blocks: y = dropout(gelu(x @ W^T + b)). Autotuned over CUDA tile configs.
"""
import torch
import triton
import triton.language as tl

try:
    from triton.language.extra.cuda import libdevice
except ImportError:
    from triton.language.math import libdevice  # older triton


def is_cuda():
    return triton.runtime.driver.active.get_current_target().backend == "cuda"


def supports_fp8():
    return is_cuda() and torch.cuda.get_device_capability()[0] >= 9


def get_cuda_autotune_config():
    return [
        triton.Config({'BLOCK_M': 128, 'BLOCK_N': 256, 'BLOCK_K': 64, 'GROUP_M': 8}, num_stages=3, num_warps=8),
        triton.Config({'BLOCK_M': 64, 'BLOCK_N': 256, 'BLOCK_K': 32, 'GROUP_M': 8}, num_stages=4, num_warps=4),
        triton.Config({'BLOCK_M': 128, 'BLOCK_N': 128, 'BLOCK_K': 32, 'GROUP_M': 8}, num_stages=4, num_warps=4),
        triton.Config({'BLOCK_M': 128, 'BLOCK_N': 64, 'BLOCK_K': 32, 'GROUP_M': 8}, num_stages=4, num_warps=4),
        triton.Config({'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 32, 'GROUP_M': 8}, num_stages=4, num_warps=4),
        triton.Config({'BLOCK_M': 128, 'BLOCK_N': 32, 'BLOCK_K': 32, 'GROUP_M': 8}, num_stages=4, num_warps=4),
        triton.Config({'BLOCK_M': 64, 'BLOCK_N': 32, 'BLOCK_K': 32, 'GROUP_M': 8}, num_stages=5, num_warps=2),
        triton.Config({'BLOCK_M': 32, 'BLOCK_N': 64, 'BLOCK_K': 32, 'GROUP_M': 8}, num_stages=5, num_warps=2),
    ]


@triton.jit
def _gelu_tanh(x):
    # 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
    k0 = 0.7978845608028654
    return 0.5 * x * (1.0 + libdevice.tanh(k0 * (x + 0.044715 * x * x * x)))


@triton.autotune(configs=get_cuda_autotune_config(), key=['M', 'N', 'K'])
@triton.jit
def linear_gelu_kernel(a_ptr, w_ptr, bias_ptr, c_ptr, M, N, K,
                       stride_am, stride_ak, stride_wn, stride_wk, stride_cm, stride_cn,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       GROUP_M: tl.constexpr, APPLY_GELU: tl.constexpr):
    # grouped ordering of the program ids for L2 reuse
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak)
    w_ptrs = w_ptr + (offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        w = tl.load(w_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, w, acc, allow_tf32=True)
        a_ptrs += BLOCK_K * stride_ak
        w_ptrs += BLOCK_K * stride_wk

    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    acc += bias[None, :]
    if APPLY_GELU:
        acc = _gelu_tanh(acc)
    c = acc.to(c_ptr.dtype.element_ty)

    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def seeded_dropout_kernel(x_ptr, out_ptr, n_elements, p, seed, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    # Philox-based random numbers, reproducible from (seed, offset)
    r = tl.rand(seed, offsets)
    keep = r > p
    out = tl.where(keep, x / (1 - p), 0.0)
    tl.store(out_ptr + offsets, out, mask=mask)


def linear_gelu(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, apply_gelu: bool = True):
    assert x.is_cuda and weight.is_cuda, "fused linear requires CUDA tensors"
    assert x.shape[-1] == weight.shape[1], "Incompatible dimensions"
    x2 = x.reshape(-1, x.shape[-1])
    M, K = x2.shape
    N = weight.shape[0]
    c = torch.empty((M, N), device=x.device, dtype=x.dtype)
    grid = lambda META: (triton.cdiv(M, META['BLOCK_M']) * triton.cdiv(N, META['BLOCK_N']),)
    linear_gelu_kernel[grid](x2, weight, bias, c, M, N, K,
                             x2.stride(0), x2.stride(1), weight.stride(0), weight.stride(1),
                             c.stride(0), c.stride(1), APPLY_GELU=apply_gelu)
    return c.reshape(*x.shape[:-1], N)


def seeded_dropout(x: torch.Tensor, p: float, seed: int):
    out = torch.empty_like(x)
    assert x.is_contiguous()
    n_elements = x.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta['BLOCK_SIZE']),)
    seeded_dropout_kernel[grid](x, out, n_elements, p, seed, BLOCK_SIZE=1024, num_warps=4)
    return out


class FusedMLP(torch.nn.Module):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.1):
        super().__init__()
        self.fc1 = torch.nn.Linear(d_model, d_ff)
        self.fc2 = torch.nn.Linear(d_ff, d_model)
        self.p = dropout
        self.dtype = torch.float8_e5m2 if supports_fp8() else torch.bfloat16

    def forward(self, x):
        h = linear_gelu(x, self.fc1.weight, self.fc1.bias, apply_gelu=True)
        if self.training and self.p > 0:
            seed = int(torch.randint(0, 2**31 - 1, (1,)).item())
            h = seeded_dropout(h.contiguous(), self.p, seed)
        return linear_gelu(h, self.fc2.weight, self.fc2.bias, apply_gelu=False)


if __name__ == "__main__":
    torch.manual_seed(0)
    a = torch.randn((512, 512), device="cuda", dtype=torch.float16)
    w = torch.randn((1024, 512), device="cuda", dtype=torch.float16)
    b = torch.randn((1024,), device="cuda", dtype=torch.float16)
    ref = torch.nn.functional.gelu(a @ w.T + b, approximate="tanh")
    out = linear_gelu(a, w, b)
    print("max abs err", (out - ref).abs().max().item())
