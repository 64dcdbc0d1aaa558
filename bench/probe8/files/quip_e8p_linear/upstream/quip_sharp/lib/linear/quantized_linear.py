"""2-bit E8P lattice-codebook linear layer with randomised Hadamard incoherence processing.

W ~= diag(SV) H^T  decode(Qidxs)  H diag(SU), so y = x W^T is computed as
    x -> x * SU -> H x -> x decode(Qidxs)^T -> H^T -> * SV
The decode of the packed E8P code is done by the quiptools CUDA kernels (matvec for batch 1,
full decompression otherwise); a slow reference decoder in PyTorch is kept for testing.
"""
import itertools
import math
from functools import cache

import torch
import torch.nn as nn
from fast_hadamard_transform import hadamard_transform

import quiptools_cuda  # noqa: F401  (registers torch.ops.quip_lib.*)


# ----------------------------------------------------------------------------- E8P codebook
def _get_norm12():
    # 29 elements of norm 12 in E8 + 1/4
    return torch.tensor([
        [3, 1, 1, 1, 3, 3, 3, 3], [1, 3, 1, 1, 3, 3, 3, 3], [1, 1, 3, 1, 3, 3, 3, 3],
        [1, 1, 1, 3, 3, 3, 3, 3], [3, 3, 3, 1, 3, 3, 1, 1], [3, 3, 3, 1, 3, 1, 3, 1],
        [3, 3, 3, 1, 1, 3, 3, 1], [3, 3, 3, 1, 3, 1, 1, 3], [3, 3, 3, 1, 1, 3, 1, 3],
        [3, 3, 3, 1, 1, 1, 3, 3], [3, 3, 1, 3, 3, 3, 1, 1], [3, 3, 1, 3, 3, 1, 3, 1],
        [3, 3, 1, 3, 1, 3, 3, 1], [3, 3, 1, 3, 3, 1, 1, 3], [3, 3, 1, 3, 1, 3, 1, 3],
        [3, 3, 1, 3, 1, 1, 3, 3], [3, 1, 3, 3, 3, 3, 1, 1], [3, 1, 3, 3, 3, 1, 3, 1],
        [3, 1, 3, 3, 1, 3, 3, 1], [3, 1, 3, 3, 3, 1, 1, 3], [3, 1, 3, 3, 1, 3, 1, 3],
        [1, 3, 3, 3, 1, 1, 3, 3], [1, 3, 3, 3, 3, 3, 1, 1], [1, 3, 3, 3, 3, 1, 3, 1],
        [1, 3, 3, 3, 1, 3, 3, 1], [1, 3, 3, 3, 3, 1, 1, 3], [1, 3, 3, 3, 1, 3, 1, 3],
        [1, 1, 3, 3, 1, 3, 3, 3], [3, 3, 1, 1, 3, 3, 3, 1],
    ]) / 2


def _get_packed_abs_grid():
    intr = torch.arange(-4, 4)
    d8 = torch.cartesian_prod(*[intr] * 8).float() + 1 / 2
    d8m2 = d8.sum(dim=-1) % 2 == 0
    d8n = d8.norm(dim=-1) ** 2 <= 10
    d8abs = torch.unique(d8[sorted(torch.where(d8m2 * d8n)[0])].abs(), dim=0)
    norm12 = _get_norm12()
    cba = torch.concat([d8abs, norm12], dim=0)
    cba = cba[:, [0, 2, 4, 6, 1, 3, 5, 7]]
    cba[:, 7] *= (1 - 2 * (cba.sum(1) % 2))
    cba = cba * 2 + 8
    cba = cba.to(torch.int32)
    acc = cba[:, 0]
    for i in range(7):
        acc = acc | (cba[:, (i + 1)] << ((i + 1) * 4))
    return acc


def _get_abs_grid():
    intr = torch.arange(-4, 4)
    d8 = torch.cartesian_prod(*[intr] * 8).float() + 1 / 2
    d8m2 = d8.sum(dim=-1) % 2 == 0
    d8n = d8.norm(dim=-1) ** 2 <= 10
    d8abs = torch.unique(d8[sorted(torch.where(d8m2 * d8n)[0])].abs(), dim=0)
    return torch.concat([d8abs, _get_norm12()], dim=0)


class E8P12Codebook(nn.Module):
    codesz = 8
    idx_dtype = torch.int64

    def __init__(self):
        super().__init__()
        grid_abs = _get_abs_grid()
        self.register_buffer("grid_abs", grid_abs)
        self.register_buffer("grid_packed_abs", _get_packed_abs_grid())
        self.register_buffer("grid_norm", grid_abs.norm(dim=-1) ** 2)

    def to_current_device(self):
        dev = torch.cuda.current_device()
        self.grid_packed_abs = self.grid_packed_abs.to(dev)
        self.grid_abs = self.grid_abs.to(dev)
        self.grid_norm = self.grid_norm.to(dev)
        return self

    def decode_torch(self, idxs: torch.Tensor) -> torch.Tensor:
        """Reference decoder: idxs (int64, 16-bit codes) -> (N, 8) lattice points."""
        abs_idx = (idxs >> 8) & 0xFF
        sign_bits = idxs & 0xFF
        vals = self.grid_abs[abs_idx]
        signs = ((sign_bits.unsqueeze(-1) >> torch.arange(8, device=idxs.device)) & 1).to(vals.dtype)
        flip = (signs.sum(-1, keepdim=True) % 2 != (vals.sum(-1, keepdim=True) % 2 != 0)).to(vals.dtype)
        signs[..., 7:8] = (signs[..., 7:8] + flip) % 2
        return vals * (1 - 2 * signs) - 1 / 4 * (1 - 2 * signs)


def _fwht_torch(x: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
    """Fast Walsh-Hadamard transform over the last dim (power of two), pure PyTorch."""
    n = x.shape[-1]
    h = 1
    out = x.clone()
    while h < n:
        out = out.view(*out.shape[:-1], n // (2 * h), 2, h)
        a, b = out[..., 0, :], out[..., 1, :]
        out = torch.stack([a + b, a - b], dim=-2)
        h *= 2
    return out.view(*x.shape) * scale


# ----------------------------------------------------------------------------- layer
class QuantizedE8PLinear(nn.Module):
    def __init__(self, in_features: int, out_features: int, rescale_WH: bool = False,
                 use_torch_decode: bool = False):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.rescale_WH = rescale_WH
        self.use_torch_decode = use_torch_decode
        self.register_buffer("SU", torch.ones(in_features))
        self.register_buffer("SV", torch.ones(out_features))
        self.register_buffer("Wscale", torch.ones(()))
        self.register_buffer("Qidxs", torch.zeros(out_features, in_features // 8, dtype=torch.int16))
        if rescale_WH:
            self.register_buffer("scaleWH", torch.ones(in_features))
        else:
            self.scaleWH = None
        self.codebook = E8P12Codebook()
        self.built = False

    def _decompress_torch(self) -> torch.Tensor:
        m, n = self.out_features, self.in_features
        codes = self.Qidxs.to(torch.int64) & 0xFFFF
        W = self.codebook.decode_torch(codes.view(-1)).view(m, n)
        return W

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        if not self.built:
            self.codebook.to_current_device()
            self.built = True
        n, m = self.in_features, self.out_features
        x = input.view(-1, n).to(torch.float32)
        if self.rescale_WH:
            x = x / self.scaleWH
        x = x * self.SU
        x = hadamard_transform(x, scale=1.0 / math.sqrt(n))
        if self.use_torch_decode or not input.is_cuda:
            W = self._decompress_torch().to(torch.float16)
            x = (x.to(torch.float16) @ W.T).to(torch.float32)
        elif x.size(0) == 1:
            x = torch.ops.quip_lib.decode_matvec_e8p(
                x[0].to(torch.float16),
                self.Qidxs.view(m // 16, n // 64, 8, 4),
                self.codebook.grid_packed_abs,
            ).to(torch.float32)
        else:
            W_decompressed = torch.ops.quip_lib.decompress_packed_e8p(
                self.Qidxs.view(m // 16, n // 64, 8, 4), self.codebook.grid_packed_abs
            )
            x = (x.to(torch.float16) @ W_decompressed.T).to(torch.float32)
        x = x * self.Wscale
        x = hadamard_transform(x, scale=1.0 / math.sqrt(m))
        x = x * self.SV
        return x.view(*input.shape[:-1], m).to(input.dtype)


@cache
def _hadamard_ref(n: int, device: str = "cpu") -> torch.Tensor:
    H = torch.ones(1, 1)
    while H.shape[0] < n:
        H = torch.cat([torch.cat([H, H], 1), torch.cat([H, -H], 1)], 0)
    return (H / math.sqrt(n)).to(device)


def check_layer(layer: QuantizedE8PLinear, atol: float = 5e-2) -> bool:
    """Compare the fused path with an explicit dense reconstruction (tests only)."""
    n, m = layer.in_features, layer.out_features
    x = torch.randn(4, n, device=layer.SU.device)
    W = layer._decompress_torch().float()
    Hn, Hm = _hadamard_ref(n, str(x.device)), _hadamard_ref(m, str(x.device))
    W_full = (layer.SV.view(-1, 1) * (Hm.T @ W @ Hn) * layer.SU.view(1, -1)) * layer.Wscale
    return torch.allclose(layer(x), x @ W_full.T, atol=atol)
