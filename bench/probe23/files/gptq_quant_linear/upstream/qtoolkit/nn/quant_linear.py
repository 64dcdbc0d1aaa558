"""4-bit packed linear layer (GPTQ format) with an optional CUDA kernel.

qweight: int32 [K // 8, N]   eight 4-bit values per int32, packed along K
qzeros : int32 [G, N // 8]   packed zero points per group
scales : fp16  [G, N]
g_idx  : int32 [K]           group index of every input channel
"""
import math
import warnings

import torch
import torch.nn as nn

try:
    import quant_cuda  # built by setup.py (csrc/quant_cuda_kernel.cu)

    HAS_CUDA_KERNEL = True
except ImportError:  # pragma: no cover
    quant_cuda = None
    HAS_CUDA_KERNEL = False
    warnings.warn("quant_cuda extension not found, falling back to the (slow) torch dequant path")


def unpack_int4(packed: torch.Tensor, dim: int) -> torch.Tensor:
    shifts = torch.arange(0, 32, 4, device=packed.device, dtype=torch.int32)
    if dim == 0:
        out = (packed.unsqueeze(1) >> shifts[None, :, None]) & 0xF
        return out.reshape(-1, packed.shape[1])
    out = (packed.unsqueeze(2) >> shifts[None, None, :]) & 0xF
    return out.reshape(packed.shape[0], -1)


class QuantLinear(nn.Module):
    def __init__(self, in_features, out_features, group_size=128, bias=True):
        super().__init__()
        if in_features % 8 or out_features % 8:
            raise ValueError("in/out features must be multiples of 8")
        self.in_features = in_features
        self.out_features = out_features
        self.group_size = group_size if group_size != -1 else in_features
        groups = math.ceil(in_features / self.group_size)
        self.register_buffer("qweight", torch.zeros(in_features // 8, out_features, dtype=torch.int32))
        self.register_buffer("qzeros", torch.zeros(groups, out_features // 8, dtype=torch.int32))
        self.register_buffer("scales", torch.zeros(groups, out_features, dtype=torch.float16))
        self.register_buffer("g_idx", torch.tensor([i // self.group_size for i in range(in_features)],
                                                    dtype=torch.int32))
        self.bias = nn.Parameter(torch.zeros(out_features, dtype=torch.float16)) if bias else None
        self._w_cache = None

    def dequantize(self) -> torch.Tensor:
        w = unpack_int4(self.qweight, dim=0).to(torch.int32)       # [K, N]
        z = unpack_int4(self.qzeros, dim=1).to(torch.int32) + 1    # [G, N]
        g = self.g_idx.long()
        return (w - z[g]).to(torch.float16) * self.scales[g]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out_shape = x.shape[:-1] + (self.out_features,)
        x2d = x.reshape(-1, x.shape[-1])
        if HAS_CUDA_KERNEL and x.is_cuda and x2d.shape[0] <= 8:
            # matrix-vector fast path (decode): fused unpack + dequant + GEMV
            y = torch.zeros((x2d.shape[0], self.out_features), device=x.device, dtype=torch.float32)
            quant_cuda.vecquant4matmul(x2d.float(), self.qweight, y, self.scales.float(), self.qzeros,
                                       self.g_idx)
            y = y.to(x.dtype)
        else:
            if self._w_cache is None or self._w_cache.device != x.device:
                self._w_cache = self.dequantize().to(x.device)
            y = x2d.to(torch.float16) @ self._w_cache
            y = y.to(x.dtype)
        if self.bias is not None:
            y = y + self.bias.to(y.dtype)
        return y.reshape(out_shape)

    @classmethod
    def from_float(cls, linear: nn.Linear, scales, zeros, g_idx, group_size=128):
        q = cls(linear.in_features, linear.out_features, group_size, linear.bias is not None)
        w = linear.weight.data.t().contiguous()                      # [K, N]
        g = g_idx.long()
        intw = torch.round(w / scales[g] + zeros[g]).clamp(0, 15).to(torch.int32)
        packed = torch.zeros(intw.shape[0] // 8, intw.shape[1], dtype=torch.int32, device=intw.device)
        for i in range(8):
            packed |= intw[i::8] << (4 * i)
        zq = (zeros.to(torch.int32) - 1).clamp(0, 15)
        pz = torch.zeros(zq.shape[0], zq.shape[1] // 8, dtype=torch.int32, device=zq.device)
        for i in range(8):
            pz |= zq[:, i::8] << (4 * i)
        q.qweight.copy_(packed.cpu())
        q.qzeros.copy_(pz.cpu())
        q.scales.copy_(scales.half().cpu())
        q.g_idx.copy_(g_idx.int().cpu())
        if linear.bias is not None:
            q.bias.data.copy_(linear.bias.data.half())
        return q
