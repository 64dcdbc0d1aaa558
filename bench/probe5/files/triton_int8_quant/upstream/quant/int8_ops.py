"""
W8A8 inference kernels: per-token dynamic activation quantisation and an int8 x int8 -> int32
GEMM with a fused dequantisation epilogue (per-token scale x per-channel weight scale), in Triton.

    layer = W8A8Linear.from_float(linear)      # weights quantised once, per output channel
    y = layer(x)                               # x: (..., K) fp16/bf16
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice


@triton.jit
def _quant_per_token_kernel(X, Q, S, stride_x, stride_q, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    amax = tl.max(tl.abs(x), axis=0)
    scale = tl.maximum(amax, 1e-8) / 127.0
    q = libdevice.rint(x / scale)
    q = tl.minimum(tl.maximum(q, -128.0), 127.0).to(tl.int8)
    tl.store(Q + row * stride_q + cols, q, mask=mask)
    tl.store(S + row, scale)


def quant_per_token(x: torch.Tensor):
    """x: (M, K) -> (int8 (M, K), fp32 scales (M,))"""
    M, K = x.shape
    q = torch.empty((M, K), dtype=torch.int8, device=x.device)
    s = torch.empty((M,), dtype=torch.float32, device=x.device)
    BLOCK = triton.next_power_of_2(K)
    num_warps = 4 if BLOCK <= 2048 else (8 if BLOCK <= 8192 else 16)
    _quant_per_token_kernel[(M,)](x, q, s, x.stride(0), q.stride(0), K, BLOCK=BLOCK, num_warps=num_warps)
    return q, s


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, num_stages=3, num_warps=8),
        triton.Config({"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_stages=3, num_warps=8),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 128, "GROUP_M": 8}, num_stages=4, num_warps=4),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 128, "GROUP_M": 8}, num_stages=4, num_warps=4),
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 64, "BLOCK_K": 256, "GROUP_M": 8}, num_stages=5, num_warps=2),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def _w8a8_gemm_kernel(A, B, C, SA, SB, BIAS, M, N, K,
                      stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                      HAS_BIAS: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
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
    a_ptrs = A + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = B + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_rem = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_rem), other=0,
                    eviction_policy="evict_last")
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_rem) & (offs_n[None, :] < N), other=0,
                    cache_modifier=".cg")
        acc += tl.dot(a, b, out_dtype=tl.int32)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    sa = tl.load(SA + offs_m, mask=offs_m < M, other=0.0)
    sb = tl.load(SB + offs_n, mask=offs_n < N, other=0.0)
    out = acc.to(tl.float32) * sa[:, None] * sb[None, :]
    if HAS_BIAS:
        out += tl.load(BIAS + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)[None, :]
    c_ptrs = C + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, out.to(C.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def w8a8_gemm(a_q, a_s, b_q, b_s, bias, out_dtype):
    """a_q: (M, K) int8, b_q: (K, N) int8 (column-major friendly), scales fp32."""
    M, K = a_q.shape
    N = b_q.shape[1]
    c = torch.empty((M, N), dtype=out_dtype, device=a_q.device)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    _w8a8_gemm_kernel[grid](a_q, b_q, c, a_s, b_s, bias if bias is not None else c, M, N, K,
                            a_q.stride(0), a_q.stride(1), b_q.stride(0), b_q.stride(1), c.stride(0), c.stride(1),
                            HAS_BIAS=bias is not None)
    return c


class W8A8Linear(nn.Module):
    def __init__(self, in_features, out_features, bias=True, out_dtype=torch.float16):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.register_buffer("weight_q", torch.zeros(in_features, out_features, dtype=torch.int8))
        self.register_buffer("weight_scale", torch.ones(out_features, dtype=torch.float32))
        self.register_buffer("bias", torch.zeros(out_features, dtype=out_dtype) if bias else None)
        self.out_dtype = out_dtype
        # int8 tensor-core path needs Turing or newer
        self.use_triton = torch.cuda.is_available() and torch.cuda.get_device_capability() >= (7, 5)

    @classmethod
    @torch.no_grad()
    def from_float(cls, linear: nn.Linear, out_dtype=torch.float16):
        m = cls(linear.in_features, linear.out_features, linear.bias is not None, out_dtype)
        w = linear.weight.float()  # (N, K)
        scale = w.abs().amax(dim=1).clamp(min=1e-8) / 127.0
        m.weight_q.copy_(torch.round(w / scale[:, None]).clamp(-128, 127).to(torch.int8).t())
        m.weight_scale.copy_(scale)
        if linear.bias is not None:
            m.bias.copy_(linear.bias.to(out_dtype))
        return m.to(linear.weight.device)

    def _reference(self, x2d):
        w = self.weight_q.float() * self.weight_scale[None, :]
        y = x2d.float() @ w
        if self.bias is not None:
            y = y + self.bias.float()
        return y.to(self.out_dtype)

    def forward(self, x):
        shape = x.shape
        x2d = x.reshape(-1, shape[-1]).contiguous()
        if self.use_triton and x.is_cuda:
            x_q, x_s = quant_per_token(x2d)
            y = w8a8_gemm(x_q, x_s, self.weight_q, self.weight_scale, self.bias, self.out_dtype)
        else:
            y = self._reference(x2d)
        return y.reshape(*shape[:-1], self.out_features)


if __name__ == "__main__":
    torch.manual_seed(0)
    dev = "cuda"
    lin = nn.Linear(4096, 11008, bias=True).half().to(dev)
    q = W8A8Linear.from_float(lin)
    x = torch.randn(512, 4096, dtype=torch.float16, device=dev)
    ref = lin(x)
    out = q(x)
    rel = ((out.float() - ref.float()).norm() / ref.float().norm()).item()
    print(f"relative error {rel:.4f}")
    ms_fp16 = triton.testing.do_bench(lambda: lin(x))
    ms_int8 = triton.testing.do_bench(lambda: q(x))
    print(f"fp16 {ms_fp16:.3f} ms, w8a8 {ms_int8:.3f} ms")
