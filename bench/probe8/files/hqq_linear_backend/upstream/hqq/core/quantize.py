"""Half-Quadratic Quantization (HQQ): calibration-free weight quantisation.

Zero-points (and optionally scales) are refined with a proximal solver that minimises an
lp (p < 1) norm of the weight error; no calibration data is needed. HQQLinear keeps the packed
weights plus meta data and dequantises on the fly.
"""
from enum import Enum
from typing import Optional, Tuple

import torch
import torch.nn as nn
from torch import Tensor

try:
    import hqq_aten  # optional C++/CUDA fused dequant + matmul
except ImportError:
    hqq_aten = None

from .bitpack import BitPack
from .utils import is_divisible


class Quantizer:
    SUPPORTED_BITS = [8, 4, 3, 2, 1]
    pack = {8: BitPack.pack_8bit_u8, 4: BitPack.pack_4bit_u8, 3: BitPack.pack_3bit_32,
            2: BitPack.pack_2bit_u8, 1: BitPack.pack_1bit_u8}
    unpack = {"8bit_u8": BitPack.unpack_8bit_u8, "4bit_u8": BitPack.unpack_4bit_u8,
              "3bit_32": BitPack.unpack_3bit_32, "2bit_u8": BitPack.unpack_2bit_u8,
              "1bit_u8": BitPack.unpack_1bit_u8}
    bit_to_packing = {8: "8bit_u8", 4: "4bit_u8", 3: "3bit_32", 2: "2bit_u8", 1: "1bit_u8"}

    @classmethod
    def quantize(cls, tensor: Tensor, nbits: int = 4, channel_wise: bool = True, group_size: int = 64,
                 optimize: bool = True, round_zero: bool = False, axis: int = 1, bitpack: bool = True,
                 compute_dtype=torch.float16, device: str = "cuda") -> Tuple[Tensor, dict]:
        assert nbits in cls.SUPPORTED_BITS, f"nbits={nbits} not supported"
        if group_size is not None:
            assert is_divisible(tensor.numel(), group_size), "group_size should divide the weight size"
        W = tensor.float()
        shape = W.shape
        if group_size is not None and channel_wise:
            W = W.reshape([-1, group_size]) if axis == 1 else W.reshape([group_size, -1])
        _min = W.min(axis=axis, keepdim=True)[0]
        _max = W.max(axis=axis, keepdim=True)[0]
        max_v = 2 ** nbits - 1
        min_v = 0
        min_max = [min_v, max_v]
        scale = (max_v / (_max - _min)).clamp(max=2e4)
        zero = -_min * scale
        if round_zero:
            zero = torch.round(zero)
        if optimize:
            W_q, scale, zero = optimize_weights_proximal(W, scale, zero, min_max=min_max, axis=axis, device=device)
        else:
            W_q = torch.round(W * scale + zero).clamp(min_max[0], min_max[1])
        scale = 1.0 / scale
        meta = {"nbits": nbits, "group_size": group_size, "shape": shape, "scale": scale, "zero": zero,
                "axis": axis, "packing": cls.bit_to_packing[nbits]}
        meta["unpack_view_dtype"] = torch.uint8 if nbits != 3 else torch.int32
        if bitpack:
            W_q = cls.pack[nbits](W_q)
        else:
            W_q = W_q.to(tensor.dtype)
            meta["packing"] = None
        del W, _min, _max
        torch.cuda.empty_cache()
        return W_q, meta

    @classmethod
    def dequantize(cls, W_q: Tensor, meta: dict) -> Tensor:
        compute_dtype = meta.get("compute_dtype", torch.float16)
        if meta["packing"]:
            W_r = cls.unpack[meta["packing"]](W_q, dtype=compute_dtype)
            if meta["group_size"] is not None and meta["nbits"] == 3:
                W_r = W_r[: meta["group_size"]] if meta["axis"] == 0 else W_r[:, : meta["group_size"]]
        else:
            W_r = W_q.to(compute_dtype)
        W_r = ((W_r - meta["zero"]) * meta["scale"]).reshape(meta["shape"])
        return W_r


@torch.inference_mode()
def optimize_weights_proximal(tensor: Tensor, scale: Tensor, zero: Tensor, min_max: list, axis: int = 0,
                              device: str = "cuda", opt_params: Optional[dict] = None, verbose: bool = False):
    opt_params = opt_params or {"lp_norm": 0.7, "beta": 1e1, "kappa": 1.01, "iters": 20}
    lp_norm, beta, kappa, iters = (opt_params[k] for k in ("lp_norm", "beta", "kappa", "iters"))
    dtype = torch.float16 if device == "cuda" else torch.float32
    W_f = tensor.to(dtype).to(device)
    scale = scale.to(dtype).to(device)
    zero = zero.to(dtype).to(device)

    def shrink_op(x, beta, p=lp_norm):
        if p == 1:
            return torch.sign(x) * torch.nn.functional.relu(torch.abs(x) - 1.0 / beta)
        return torch.sign(x) * torch.nn.functional.relu(torch.abs(x) - (1.0 / beta) * torch.pow(torch.abs(x) + 1e-8, p - 1))

    best_error = 1e4
    for i in range(iters):
        W_q = torch.round(W_f * scale + zero).clamp(min_max[0], min_max[1])
        W_r = (W_q - zero) / scale
        W_e = shrink_op(W_f - W_r, beta)
        zero = torch.mean(W_q - (W_f - W_e) * scale, axis=axis, keepdim=True)
        beta *= kappa
        current_error = float(torch.abs(W_f - W_r).mean())
        if verbose:
            print(i, round(current_error, 6))
        if current_error < best_error:
            best_error = current_error
        else:
            break
    scale = scale.to(tensor.device)
    zero = zero.to(tensor.device)
    del W_f, W_e, W_r
    return W_q.to(tensor.device), scale, zero


class HQQBackend(Enum):
    PYTORCH = "forward_pytorch"
    PYTORCH_COMPILE = "forward_pytorch_compile"
    ATEN = "forward_aten"


class HQQLinear(nn.Module):
    backend = HQQBackend.PYTORCH_COMPILE

    def __init__(self, linear_layer: Optional[nn.Linear], quant_config: dict, del_orig: bool = True,
                 compute_dtype=torch.float16, device: str = "cuda", initialize: bool = True):
        super().__init__()
        self.linear_layer = linear_layer
        self.quant_config = dict(quant_config)
        self.del_orig = del_orig
        self.compute_dtype = compute_dtype
        self.device = device
        self.ready = False
        self.in_features = linear_layer.in_features if linear_layer is not None else None
        self.out_features = linear_layer.out_features if linear_layer is not None else None
        if initialize and linear_layer is not None:
            self.initialize()

    @classmethod
    def set_backend(cls, backend: HQQBackend):
        if backend == HQQBackend.ATEN and hqq_aten is None:
            raise RuntimeError("hqq_aten is not installed; build it from hqq/kernels")
        cls.backend = backend

    def initialize(self):
        W = self.linear_layer.weight.data
        self.bias = None if self.linear_layer.bias is None else self.linear_layer.bias.to(self.compute_dtype).cuda(self.device)
        W_q, meta = Quantizer.quantize(W, device=self.device, compute_dtype=self.compute_dtype, **self.quant_config)
        self.W_q = nn.Parameter(W_q.to(self.device), requires_grad=False)
        meta["compute_dtype"] = self.compute_dtype
        for k in ("scale", "zero"):
            meta[k] = meta[k].to(device=self.device, dtype=self.compute_dtype)
        self.meta = meta
        if self.del_orig:
            del self.linear_layer
            self.linear_layer = None
        self.ready = True

    def cuda(self, device=None):
        device = device or self.device
        self.W_q.data = self.W_q.data.cuda(device)
        for k in ("scale", "zero"):
            self.meta[k] = self.meta[k].cuda(device)
        if self.bias is not None:
            self.bias = self.bias.cuda(device)
        self.device = device
        return self

    def dequantize(self) -> Tensor:
        return Quantizer.dequantize(self.W_q, self.meta)

    def forward_pytorch(self, x: Tensor) -> Tensor:
        out = torch.matmul(x.to(self.compute_dtype), self.dequantize().t())
        if self.bias is not None:
            out += self.bias
        return out

    @torch.compile(mode="reduce-overhead", fullgraph=True)
    def forward_pytorch_compile(self, x: Tensor) -> Tensor:
        return self.forward_pytorch(x)

    def forward_aten(self, x: Tensor) -> Tensor:
        meta = self.meta
        return hqq_aten.forward_with_quant(
            x, self.bias, self.W_q, meta["scale"], meta["zero"], meta["shape"], meta["group_size"],
            meta["nbits"], meta["axis"], meta["packing"],
        )

    def forward(self, x: Tensor) -> Tensor:
        return getattr(self, self.backend.value)(x)


def hqq_quantize_model(model: nn.Module, quant_config: dict, compute_dtype=torch.float16, skip=("lm_head",)):
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            if isinstance(child, nn.Linear) and child_name not in skip:
                setattr(module, child_name, HQQLinear(child, quant_config, compute_dtype=compute_dtype))
    torch.cuda.empty_cache()  # release the fp16 originals
    return model
