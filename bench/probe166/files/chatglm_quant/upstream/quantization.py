from torch.nn import Linear
from torch.nn.parameter import Parameter

import bz2
import torch
import base64
import ctypes
from transformers.utils import logging

from typing import List
from functools import partial

logger = logging.get_logger(__name__)

try:
    from cpm_kernels.kernels.base import LazyKernelCModule, KernelFunction, round_up

    class Kernel:
        def __init__(self, code: bytes, function_names: List[str]):
            self.code = code
            self._function_names = function_names
            self._cmodule = LazyKernelCModule(self.code)

            for name in self._function_names:
                setattr(self, name, KernelFunction(self._cmodule, name))

    quantization_code = "QlpoOTFBWSZTWRFbLp4AAHx/////////////////////////////////////////////0APvbu73UrLznOp71pATAATAEwBMJgA0TAABqYAmGgAIwjTTAaAJiYANQDABoATAA0TEYAAJj1NJ5TAAaExMAgTEyYQ9NABNNMATEwNDSYAmjEYmBNoepMGIIxoNEwCYCaYTJhpDR4kYaaBqNlNNGJtAmRiNMRho0RhNGNTABIyMajaI2o2nqmh6JpkaaaaaaPUaPKeiAaepp6h6nqGno0htQepp5NIz1Jk8KaGaTxqTaIaeUD0TTQ8UeibU0aZPSGhkxDajJtRtTRiep6mnlMymTNQZqJPQmBMAaEYATJpgaIyM0Am1BkehMj0yNDaiZPU0Yh6ANBomamBGNANRgjRgNBNGAA0TTJvUjJmiGTIzRMg9CYBJ6NJ+pM1PRPSYNT01NPUyZqYm1Noym1G1HpNNNqNqPU00MCeiegBNNqYEyDQzUyDR5EMaJ6I3qn6oxNGaAjT1GDI0IxDAnqHqDAmhiMmnpB9ikMcyWId30EEXhGiSqAHPAgwer8W7jFKesJxXS8iS5rC/KbNaffEuGVWZFUH1W3+1QEWoE8bTH5F7T2t2y+EqoNGidRr091XoUsQ/JDedesnjOZKqt83qgVgkaWKlpeCBCzlKdjFXGhO9T3H5r9ZzIJvkGFd2y2VEGsSTeutwc+mx2j4Sg97YtoSn/oTc1P/tDpVYaCCiDPrcYB+ZsJxPUKS20V/CSHQVTUSD9I3hzD1bCGVslzaWQHrNci5dKMamMbbZYJeUYkJvVBDSZPTki1UYfLkxjmpk/ER+MD7LCz9p+2VJ4j7E+8APbUDfQNzyfyrLDVwmMtLCfIALtSjKda3BQdIRR/TP/3v8DUByUx0UPygvxHUZLXTeEtMiIbcxSjDGWz5/sX76GCgx5cAuSUwUZmqRM65gIOoQhmoiKiJrFp02ysIiPbQ5U2E+1u/qejTVk2VRHq2RX3dYPVIW4c60gUcY4FjQv6S5EWZGtoy8gyQQyGDjEz7CqcG23AC/BUBnJHBnzmkvCyZAjZfSJVjmWATP7usxmsSQZ6fZYQCXgHUiDqmXWt2wT6HuyFbh7m1DM2yGBnBFaltk4KMsF8yaG13Sbg0BtZEqABXihFvpdGII6Y6ELoSRykAS4KZBn1GXkzZqNYOz/gPee9CruzG/uIu5vJzMX6SvQocIlLXTa/E311T208Uq5nJQAmYL7bhuP3lC4vQLGf0KVCbc16Zr/NociLLDrhUZQky1Apw9RlSh4blLuErKtKU5cVVE7CVasmkgJjAWr32xLrgFBm1LA6N50qKa1T1306lnsf15T75JQMrZKIIJvMXB+I7Bg4iCL6EatDH3YwjgPHjgjy9ZQ/Y9t8CepNA4OiGJp3/CQCpPen1gjYg2+Iz0JelclvWYlBt9Ef7ikjkg+xX8sxPJc0SzyvqADqL/VRpRjFVBgm8BMcjqCsN7qnMD4IviP/t+sO6rwZM/Hq6YaPjjso8Bm40BFI4Cft83X/sSaZX0Eson9JPu/V+U7I3wEO5T0IVwy4bDYO7c7Yhm+gMc99u6b7APD0X9NhdmNdPvenXmHj2GjNRI10McG0DRBhZtFWKHVkHkAuCsR9HukaUI+eyBLsy4zzaGO/jXauRayKBPgFG5CIR+RMgeIzd4BQgOZZbXl72Ncvr3J8iRxigUrVsBhyIAVhp++Q0xogGMSgZ2gQMHqVNsE1IJp11E4uDxXdSPLbw2BRxfeDVXYCZDmQ/hiBPmZXYsthEOs705KgXQ/SvbJsleV2r0EM5Z2G8A37t6ILF/pJw+rQnpqr5NxpZx1Pf8TSGxQiTCMUpDPecXpJTrMHhNdy0L5lHWXT9gIjcov5epcheRP8guqP+NtExCK/RHHedWynKY7exIhmuIeUlVdiJcsdX9c1cdAPZR68YfUIZ+FuOdNF3uOl6D/VZghUdmiW46X8Ks1RxP0GDq/ROZ3UsCtms0wEoziEHJGQosskds2DQOoTNVwF9J/fnZ6EOGFuJtHSgnbAzvNPjHzxhqzBHrS2ao18pNEid2QL2ZQgBFFtQbE4eRY3NK0RN9ibVlaQolgdbxiMsj4tvByt7VULjWGSBIpO0Z07PPI3xig63M2Q2manmtdehTL0Qwvvt96UGuUWRT9ZcqmY1UNR0u+jwJqrJvgPEcAxy7CSWgv4swRpJtq6Zm6F/A10+Z6FP4Uc33WB84PdxkLK+Y+CwrBqDe5s6He459GisdYASwEV5kEwOYpdJoEBfOCSPVy9XRLYrmVqJ4rBdwUW6+81kuHOGKQbZZ6jyv0wA0JuOCJEYUAR67/0BeyAqDjQPKWQtX79IQH3JDT/ekEKDHC/V6Fi7DSfW7d+OxTDmiMbtFjBZU8Bz8SPeDNclOudvtnNUItNcxknAmeF7MORjN3whVSZd14PIDtKptN8/QHKCndDBOwfe8XckU4UJARWy6eA=="

    kernels = Kernel(
        bz2.decompress(base64.b64decode(quantization_code)),
        [
            "int4WeightCompression",
            "int4WeightExtractionFloat",
            "int4WeightExtractionHalf",
            "int8WeightExtractionFloat",
            "int8WeightExtractionHalf",
        ],
    )
except Exception as exception:
    kernels = None
    logger.warning("Failed to load cpm_kernels:" + str(exception))


class W8A16Linear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inp: torch.Tensor, quant_w: torch.Tensor, scale_w: torch.Tensor, weight_bit_width):
        ctx.inp_shape = inp.size()
        ctx.weight_bit_width = weight_bit_width
        out_features = quant_w.size(0)
        inp = inp.contiguous().view(-1, inp.size(-1))
        weight = extract_weight_to_half(quant_w, scale_w, weight_bit_width)
        ctx.weight_shape = weight.size()
        output = inp.mm(weight.t())
        ctx.save_for_backward(inp, quant_w, scale_w)
        return output.view(*(ctx.inp_shape[:-1] + (out_features,)))

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor):
        inp, quant_w, scale_w = ctx.saved_tensors
        weight = extract_weight_to_half(quant_w, scale_w, ctx.weight_bit_width)
        grad_output = grad_output.contiguous().view(-1, weight.size(0))
        grad_input = grad_output.mm(weight)
        grad_weight = grad_output.t().mm(inp)
        return grad_input.view(ctx.inp_shape), grad_weight.view(ctx.weight_shape), None, None


def compress_int4_weight(weight: torch.Tensor):  # (n, m)
    with torch.cuda.device(weight.device):
        n, m = weight.size(0), weight.size(1)
        assert m % 2 == 0
        m = m // 2
        out = torch.empty(n, m, dtype=torch.int8, device="cuda")
        stream = torch.cuda.current_stream()

        gridDim = (n, 1, 1)
        blockDim = (min(round_up(m, 32), 1024), 1, 1)

        kernels.int4WeightCompression(
            gridDim,
            blockDim,
            0,
            stream,
            [ctypes.c_void_p(weight.data_ptr()), ctypes.c_void_p(out.data_ptr()), ctypes.c_int32(n), ctypes.c_int32(m)],
        )
        return out


def extract_weight_to_half(weight: torch.Tensor, scale_list: torch.Tensor, source_bit_width: int):
    if source_bit_width == 8:
        func = kernels.int8WeightExtractionHalf
    elif source_bit_width == 4:
        func = kernels.int4WeightExtractionHalf
    else:
        assert False, "Unsupported bit-width"

    device = weight.device
    with torch.cuda.device(device):
        n, m = weight.size(0), weight.size(1)
        out = torch.empty(n, m * (8 // source_bit_width), dtype=torch.half, device="cuda")
        stream = torch.cuda.current_stream(device)

        gridDim = (n, 1, 1)
        blockDim = (min(round_up(m, 32), 1024), 1, 1)

        func(
            gridDim,
            blockDim,
            0,
            stream,
            [
                ctypes.c_void_p(weight.data_ptr()),
                ctypes.c_void_p(scale_list.data_ptr()),
                ctypes.c_void_p(out.data_ptr()),
                ctypes.c_int32(n),
                ctypes.c_int32(m),
            ],
        )
        return out


class QuantizedLinear(Linear):
    def __init__(self, weight_bit_width: int, weight_tensor=None, bias_tensor=None, empty_init=False, *args, **kwargs):
        super(QuantizedLinear, self).__init__(*args, **kwargs)
        self.weight_bit_width = weight_bit_width

        shape = self.weight.shape
        del self.weight

        if weight_tensor is None or empty_init:
            self.weight = torch.empty(
                shape[0], shape[1] * weight_bit_width // 8, dtype=torch.int8, device=kwargs["device"]
            )
            self.weight_scale = torch.empty(shape[0], dtype=kwargs["dtype"], device=kwargs["device"])
        else:
            self.weight_scale = (weight_tensor.abs().max(dim=-1).values / ((2 ** (weight_bit_width - 1)) - 1)).half()
            self.weight = torch.round(weight_tensor / self.weight_scale[:, None]).to(torch.int8)
            if weight_bit_width == 4:
                self.weight = compress_int4_weight(self.weight)

        self.weight = Parameter(self.weight.to(kwargs["device"]), requires_grad=False)
        self.weight_scale = Parameter(self.weight_scale.to(kwargs["device"]), requires_grad=False)
        if bias_tensor is not None:
            self.bias = Parameter(bias_tensor.to(kwargs["device"]), requires_grad=False)
        else:
            self.bias = None

    def forward(self, input):
        output = W8A16Linear.apply(input, self.weight, self.weight_scale, self.weight_bit_width)
        if self.bias is not None:
            output = output + self.bias
        return output


def quantize(model, weight_bit_width, empty_init=False, **kwargs):
    """Replace fp16 linear with quantized linear"""
    for layer in model.layers:
        layer.attention.query_key_value = QuantizedLinear(
            weight_bit_width=weight_bit_width,
            weight_tensor=layer.attention.query_key_value.weight.to(torch.cuda.current_device()),
            bias_tensor=layer.attention.query_key_value.bias,
            in_features=layer.attention.query_key_value.in_features,
            out_features=layer.attention.query_key_value.out_features,
            bias=True,
            dtype=torch.half,
            device=layer.attention.query_key_value.weight.device,
            empty_init=empty_init
        )
        layer.attention.dense = QuantizedLinear(
            weight_bit_width=weight_bit_width,
            weight_tensor=layer.attention.dense.weight.to(torch.cuda.current_device()),
            bias_tensor=layer.attention.dense.bias,
            in_features=layer.attention.dense.in_features,
            out_features=layer.attention.dense.out_features,
            bias=True,
            dtype=torch.half,
            device=layer.attention.dense.weight.device,
            empty_init=empty_init
        )
        layer.mlp.dense_h_to_4h = QuantizedLinear(
            weight_bit_width=weight_bit_width,
            weight_tensor=layer.mlp.dense_h_to_4h.weight.to(torch.cuda.current_device()),
            bias_tensor=layer.mlp.dense_h_to_4h.bias,
            in_features=layer.mlp.dense_h_to_4h.in_features,
            out_features=layer.mlp.dense_h_to_4h.out_features,
            bias=True,
            dtype=torch.half,
            device=layer.mlp.dense_h_to_4h.weight.device,
            empty_init=empty_init
        )
        layer.mlp.dense_4h_to_h = QuantizedLinear(
            weight_bit_width=weight_bit_width,
            weight_tensor=layer.mlp.dense_4h_to_h.weight.to(torch.cuda.current_device()),
            bias_tensor=layer.mlp.dense_4h_to_h.bias,
            in_features=layer.mlp.dense_4h_to_h.in_features,
            out_features=layer.mlp.dense_4h_to_h.out_features,
            bias=True,
            dtype=torch.half,
            device=layer.mlp.dense_4h_to_h.weight.device,
            empty_init=empty_init
        )
    return model
