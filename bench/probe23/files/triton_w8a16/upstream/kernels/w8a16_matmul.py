"""Weight-only INT8 (W8A16) matmul in Triton.

y = x @ dequant(W)^T, with W stored as int8 [N, K] and a per-output-channel
fp16 scale. Dequantization happens in registers inside the K loop, so the
fp16 weight never materializes in global memory.
"""
import torch
import triton
import triton.language as tl


def _configs():
    cfgs = []
    for bm, bn, bk, warps, stages in [
        (128, 256, 64, 8, 3), (64, 256, 32, 4, 4), (128, 128, 32, 4, 4),
        (128, 64, 32, 4, 4), (64, 128, 32, 4, 4), (32, 64, 32, 2, 5),
    ]:
        cfgs.append(triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8},
                                  num_warps=warps, num_stages=stages))
    return cfgs


@triton.autotune(configs=_configs(), key=["M", "N", "K"])
@triton.jit
def w8a16_kernel(x_ptr, w_ptr, s_ptr, y_ptr, M, N, K,
                 stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_pid_n
    gid = pid // group
    first_m = gid * GROUP_M
    gsize = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % gsize)
    pid_n = (pid % group) // gsize

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + rm[:, None] * stride_xm + rk[None, :] * stride_xk
    w_ptrs = w_ptr + rn[None, :] * stride_wn + rk[:, None] * stride_wk
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_rem = K - k * BLOCK_K
        x = tl.load(x_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < k_rem), other=0.0)
        w = tl.load(w_ptrs, mask=(rn[None, :] < N) & (rk[:, None] < k_rem), other=0,
                    eviction_policy="evict_last")
        acc += tl.dot(x, w.to(tl.float16))
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk
    scale = tl.load(s_ptr + rn, mask=rn < N, other=1.0)
    acc = acc * scale[None, :].to(tl.float32)
    y_ptrs = y_ptr + rm[:, None] * stride_ym + rn[None, :] * stride_yn
    tl.store(y_ptrs, acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


def quantize_weight(w: torch.Tensor):
    """Symmetric per-output-channel int8 quantization of an fp16/fp32 weight [N, K]."""
    scale = w.abs().amax(dim=1).clamp(min=1e-8) / 127.0
    q = torch.round(w / scale[:, None]).clamp(-127, 127).to(torch.int8)
    return q.contiguous(), scale.to(torch.float16)


def w8a16_matmul(x: torch.Tensor, qweight: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    assert x.is_cuda and qweight.is_cuda, "inputs must be CUDA tensors"
    assert x.dtype == torch.float16 and qweight.dtype == torch.int8
    orig_shape = x.shape
    x = x.reshape(-1, x.shape[-1])
    M, K = x.shape
    N = qweight.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=torch.float16)
    grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv(N, META["BLOCK_N"]),)
    with torch.cuda.device(x.device):
        w8a16_kernel[grid](x, qweight, scale, y, M, N, K,
                           x.stride(0), x.stride(1), qweight.stride(0), qweight.stride(1),
                           y.stride(0), y.stride(1))
    return y.reshape(*orig_shape[:-1], N)


class W8A16Linear(torch.nn.Module):
    def __init__(self, linear: torch.nn.Linear):
        super().__init__()
        q, s = quantize_weight(linear.weight.data)
        self.register_buffer("qweight", q)
        self.register_buffer("scale", s)
        self.bias = linear.bias

    def forward(self, x):
        y = w8a16_matmul(x.half(), self.qweight, self.scale)
        return y if self.bias is None else y + self.bias.half()


if __name__ == "__main__":
    torch.manual_seed(0)
    if torch.cuda.get_device_capability()[0] < 8:
        print("warning: tuned for Ampere+, expect lower performance")
    lin = torch.nn.Linear(4096, 11008, bias=False).half().cuda()
    x = torch.randn(16, 4096, device="cuda", dtype=torch.float16)
    ql = W8A16Linear(lin)
    ref, out = lin(x), ql(x)
    print("max abs err", (ref - out).abs().max().item())
    ms = triton.testing.do_bench(lambda: ql(x))
    print(f"w8a16: {ms:.3f} ms  fp16: {triton.testing.do_bench(lambda: lin(x)):.3f} ms")
