# Written by Dr. Hicham Badri @Mobius Labs GmbH - 2023
#####################################################
import torch
import copy
from torch import uint8, int32, float16, nn, Tensor
from enum import Enum
from typing import Union

from .utils import is_divisible, encode_safetensor_type, decode_safetensor_type
from .optimize import optimize_weights_proximal
from .bitpack import BitPack

_META_TYPE = {
    "scale": torch.Tensor,
    "zero": torch.Tensor,
    "zero_scale": torch.Tensor,
    "compute_dtype": torch.dtype,
    "quant_zero": bool,
    "quant_scale": bool,
    "view_as_float": bool,
    "unpack_view_dtype": torch.dtype,
    "packing": str,
    "axis": int,
    "group_size": int,
    "nbits": int,
    "shape": torch.Size,
    "channel_wise": bool,
    "optimize": bool,
    "round_zero": bool,
}


class Quantizer:
    SUPPORTED_BITS = [8, 4, 3, 2, 1]
    optimize_weights = optimize_weights_proximal

    bit_to_packing = {8: "8bit_u8", 4: "4bit_u8", 3: "3bit_32", 2: "2bit_u8", 1: "1bit_u8"}

    pack = {
        "8bit_u8": BitPack.pack_8bit_u8,
        "4bit_u8": BitPack.pack_4bit_u8,
        "3bit_32": BitPack.pack_3bit_32,
        "2bit_u8": BitPack.pack_2bit_u8,
        "1bit_u8": BitPack.pack_1bit_u8,
    }

    unpack = {
        "8bit_u8": BitPack.unpack_8bit_u8,
        "4bit_u8": BitPack.unpack_4bit_u8,
        "3bit_32": BitPack.unpack_3bit_32,
        "2bit_u8": BitPack.unpack_2bit_u8,
        "1bit_u8": BitPack.unpack_1bit_u8,
    }

    @classmethod
    def quantize(cls, tensor: Tensor, nbits: float = 4, channel_wise: bool = True, group_size: int = 64,
                 optimize: bool = False, round_zero: bool = False, axis: int = 0, bitpack: bool = True,
                 compute_dtype: Union[torch.dtype, None] = None, view_as_float: bool = False,
                 device: str = "cuda") -> tuple:
        assert nbits in Quantizer.SUPPORTED_BITS, "nbits=" + str(nbits) + " not supported."
        assert axis in [0, 1], "axis should be either 0 or 1"
        if group_size is not None:
            assert is_divisible(tensor.numel(), group_size), "group_size should be divisble by the total tensor dimensions."

        W = tensor.float()
        shape = W.shape

        # Reshape for grouping
        if (group_size is not None) and channel_wise:
            W = W.reshape([-1, group_size]) if (axis == 1) else W.reshape([group_size, -1])

        # Get min/max values
        if not channel_wise:
            _min, _max = W.min(), W.max()
            optimize = False
        else:
            _min = W.min(axis=axis, keepdim=True)[0]
            _max = W.max(axis=axis, keepdim=True)[0]

        max_v = round(2**nbits - 1)
        min_v = 0
        min_max = [min_v, max_v]

        # Note: here we work with the inverse of the scale to avoid division and quantize instead via W*scale + zero, the scale is inverted later on.
        scale = (max_v / (_max - _min)).clamp(max=2e4)  # clamp to avoid half-precision problems
        zero = -_min * scale

        # Round zero as in: https://github.com/casper-hansen/AutoAWQ/blob/main/awq/quantize/quantizer.py#L42C9-L42C14
        if round_zero:
            zero = torch.round(zero)

        # Fine-tune weights
        if optimize:
            W_q, scale, zero = Quantizer.optimize_weights(tensor=W, scale=scale, zero=zero, min_max=min_max, axis=axis, device=device)
        else:
            W_q = torch.round(W * scale + zero).clamp(min_max[0], min_max[1])

        # Store meta-data (we invert the scale for dequantization)
        scale = 1.0 / scale
        meta = {"nbits": nbits, "group_size": group_size, "shape": shape, "scale": scale, "zero": zero,
                "axis": axis, "packing": Quantizer.bit_to_packing[nbits]}
        meta["unpack_view_dtype"] = torch.uint8

        # Pack bits
        if bitpack:
            W_q = Quantizer.pack[meta["packing"]](W_q)
        else:
            W_q = W_q.to(tensor.dtype)
            meta["packing"] = None

        # cleanup
        del W, _min, _max
        torch.cuda.empty_cache()

        return W_q, meta

    # Main dequantization: bit_unpacking > (W_q - z)*s > reshape
    @classmethod
    def dequantize(cls, W_q: Tensor, meta: dict) -> Tensor:
        compute_dtype = meta["compute_dtype"] if ("compute_dtype" in meta) else float16
        if meta["packing"]:
            W_r = Quantizer.unpack[meta["packing"]](W_q, dtype=compute_dtype)
            if meta["nbits"] == 3:
                W_r = W_r[: (meta["group_size"] if meta["axis"] == 0 else meta["shape"][0] * meta["shape"][1] // meta["group_size"])]
        else:
            W_r = W_q.to(compute_dtype)
        W_r = ((W_r - meta["zero"]) * meta["scale"]).reshape(meta["shape"])
        return W_r


class HQQBackend(Enum):
    # Name of the forward functions
    PYTORCH = "forward_pytorch_backprop"
    PYTORCH_COMPILE = "forward_pytorch_backprop_compile"
    ATEN = "forward_aten_backprop"


# No cache: less memory, slower
class HQQMatmulNoCacheDeq(torch.autograd.Function):
    @staticmethod
    def forward(x: Tensor, dequantize, bias: Tensor):
        out = torch.matmul(x, dequantize().t())
        if bias is not None:
            out += bias
        return out

    @staticmethod
    def setup_context(ctx, inputs, outputs):
        x, dequantize, bias = inputs
        ctx.save_for_backward(x, bias)
        ctx.dequantize = dequantize

    @staticmethod
    def backward(ctx, grad_output):
        x, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = torch.matmul(grad_output, ctx.dequantize())
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(dim=0)
        return grad_input, grad_weight, grad_bias


try:
    import hqq_aten
except Exception:
    hqq_aten = None


class HQQLinear(nn.Module):
    backend = HQQBackend.PYTORCH

    def __init__(self, linear_layer: Union[nn.Module, None], quant_config: dict, del_orig: bool = True,
                 compute_dtype: torch.dtype = float16, device: str = "cuda", initialize: bool = True):
        super().__init__()
        self.ready = False
        self.in_gpu = False
        self.bias = None
        self.axis = None
        self.device = device
        self.compute_dtype = compute_dtype
        self.quant_config = copy.deepcopy(quant_config)
        self.del_orig = del_orig
        self.offload_meta = self.quant_config.pop("offload_meta") if ("offload_meta" in self.quant_config) else False
        self.set_backend(HQQLinear.backend)
        self.linear_layer = linear_layer
        if initialize:
            self.initialize()

    def initialize(self):
        if self.linear_layer is not None:
            self.quantize(self.linear_layer.weight.data, **self.quant_config)
            self.bias = None if (self.linear_layer.bias is None) else self.linear_layer.bias.to(device=self.device, dtype=self.compute_dtype)
        if self.del_orig:
            del self.linear_layer
        torch.cuda.empty_cache()  # after init

    def set_backend(self, backend: HQQBackend):
        if backend == HQQBackend.ATEN and hqq_aten is None:
            print("ATEN backend not available, falling back to PYTORCH.")
            backend = HQQBackend.PYTORCH
        HQQLinear.backend = backend
        HQQLinear.forward = getattr(HQQLinear, backend.value)

    def quantize(self, W: Tensor, weight_quant_params: dict, scale_quant_params=dict, zero_quant_params=dict) -> None:
        quant_scale = scale_quant_params is not None
        quant_zero = zero_quant_params is not None
        self.in_features, self.out_features = W.t().shape
        W_q, meta = Quantizer.quantize(W, device=self.device, compute_dtype=self.compute_dtype, **weight_quant_params)
        meta.update({"quant_scale": quant_scale, "quant_zero": quant_zero})
        self.W_q = W_q.to(self.device)
        self.meta = meta
        self.meta["compute_dtype"] = self.compute_dtype
        self.cuda(self.device)
        self.ready = True

    def dequantize(self):
        assert self.ready, "model was not quantized"
        return Quantizer.dequantize(self.W_q, self.meta)

    def forward_pytorch_backprop(self, x: Tensor) -> Tensor:
        return HQQMatmulNoCacheDeq.apply(x, self.dequantize, self.bias)

    @torch.compile()
    def forward_pytorch_backprop_compile(self, x: Tensor) -> Tensor:
        return self.forward_pytorch_backprop(x)

    def forward_aten_backprop(self, x: Tensor) -> Tensor:
        W_q, meta = self.W_q, self.meta
        return hqq_aten.forward_with_quant(x, W_q, meta["zero"], meta["scale"], self.bias,
                                           meta["nbits"], meta["group_size"], meta["axis"], meta["packing"])


def hqq_base_quant_config(nbits: int = 4, group_size: int = 64, quant_zero: bool = True, quant_scale: bool = False,
                          offload_meta: bool = False, view_as_float: bool = False, axis: int = 0):
    assert nbits in Quantizer.SUPPORTED_BITS, "nbits value not supported. Check Quantizer.SUPPORTED_BITS."
    weight_quant_params = {"nbits": nbits, "channel_wise": True, "group_size": group_size, "optimize": True,
                           "round_zero": True if nbits == 4 else False, "axis": axis, "view_as_float": view_as_float}
    scale_quant_params = {"nbits": 8, "channel_wise": True, "group_size": 128, "optimize": False} if quant_scale else None
    zero_quant_params = {"nbits": 8, "channel_wise": False, "group_size": None, "optimize": False} if quant_zero else None
    return {"weight_quant_params": weight_quant_params, "scale_quant_params": scale_quant_params,
            "zero_quant_params": zero_quant_params, "offload_meta": offload_meta}


BaseQuantizeConfig = hqq_base_quant_config
