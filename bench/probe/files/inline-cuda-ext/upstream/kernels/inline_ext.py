"""JIT-compiled fused RMSNorm + residual add, built on first use with load_inline.

Falls back to eager PyTorch when the extension cannot be built.
"""
import functools
import os

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_SRC = r"""
#include <torch/extension.h>
torch::Tensor fused_add_rmsnorm(torch::Tensor x, torch::Tensor residual, torch::Tensor weight, double eps);
"""

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>

template <typename scalar_t>
__global__ void fused_add_rmsnorm_kernel(scalar_t* __restrict__ x, scalar_t* __restrict__ residual,
                                         const scalar_t* __restrict__ weight, const int hidden, const float eps) {
  const int row = blockIdx.x;
  __shared__ float s_var;
  float local = 0.f;
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) {
    float v = (float)x[row * hidden + i] + (float)residual[row * hidden + i];
    residual[row * hidden + i] = (scalar_t)v;
    local += v * v;
  }
  for (int offset = 16; offset > 0; offset >>= 1) local += __shfl_xor_sync(0xffffffff, local, offset);
  if (threadIdx.x == 0) s_var = rsqrtf(local / hidden + eps);
  __syncthreads();
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) {
    x[row * hidden + i] = (scalar_t)((float)residual[row * hidden + i] * s_var * (float)weight[i]);
  }
}

torch::Tensor fused_add_rmsnorm(torch::Tensor x, torch::Tensor residual, torch::Tensor weight, double eps) {
  const int hidden = x.size(-1);
  const int rows = x.numel() / hidden;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::ScalarType::Half, at::ScalarType::BFloat16, x.scalar_type(), "fused_add_rmsnorm", [&] {
    fused_add_rmsnorm_kernel<scalar_t><<<rows, 32>>>(x.data_ptr<scalar_t>(), residual.data_ptr<scalar_t>(),
                                                     weight.data_ptr<scalar_t>(), hidden, (float)eps);
  });
  return x;
}
"""


@functools.lru_cache(maxsize=1)
def _load_ext():
    if os.environ.get("DISABLE_FUSED_RMSNORM", "0") == "1":
        return None
    try:
        return load_inline(
            name="fused_add_rmsnorm_ext",
            cpp_sources=[_CPP_SRC],
            cuda_sources=[_CUDA_SRC],
            functions=["fused_add_rmsnorm"],
            extra_cuda_cflags=["-O3", "--use_fast_math", "-gencode=arch=compute_80,code=sm_80"],
            verbose=False,
        )
    except Exception as exc:  # pragma: no cover - compiler missing
        print(f"[inline_ext] falling back to eager RMSNorm: {exc}")
        return None


def _eager_add_rmsnorm(x, residual, weight, eps):
    residual = x + residual
    variance = residual.float().pow(2).mean(-1, keepdim=True)
    out = residual.float() * torch.rsqrt(variance + eps)
    return (out * weight.float()).to(x.dtype), residual


class FusedAddRMSNorm(nn.Module):
    def __init__(self, hidden_size: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.eps = eps

    def forward(self, x: torch.Tensor, residual: torch.Tensor):
        ext = _load_ext() if x.is_cuda else None
        if ext is None or self.training:
            return _eager_add_rmsnorm(x, residual, self.weight, self.eps)
        x = x.contiguous()
        residual = residual.contiguous()
        ext.fused_add_rmsnorm(x, residual, self.weight, self.eps)
        return x, residual


if __name__ == "__main__":
    norm = FusedAddRMSNorm(4096).cuda().half().eval()
    a = torch.randn(8, 512, 4096, device="cuda", dtype=torch.half)
    r = torch.randn_like(a)
    ref, _ = _eager_add_rmsnorm(a.clone(), r.clone(), norm.weight, norm.eps)
    out, _ = norm(a.clone(), r.clone())
    torch.cuda.synchronize()
    print("max abs diff", (out - ref).abs().max().item())
