# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD 3-Clause license found in the
# LICENSE file in the root directory of this source tree.
"""Int4 weight-only quantization with groupwise scales/zeros (tinygemm layout).

The packed layout is the one produced by ``torch.ops.aten._convert_weight_to_int4pack`` and
consumed by ``torch.ops.aten._weight_int4pack_mm`` (the "tensor core tiled" tinygemm kernel,
bf16 activations only, sm_80+).  On CPU we use the ``_for_cpu`` variants.
"""
import argparse
import logging
import time
from pathlib import Path
from typing import Dict, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

from torchao.utils import TORCH_VERSION_AT_LEAST_2_5, find_multiple

logger = logging.getLogger(__name__)

__all__ = [
    "Int4WeightOnlyLinear",
    "replace_linear_int4",
    "WeightOnlyInt4QuantHandler",
]


def _check_linear_int4_k(k: int, groupsize: int = 1, inner_k_tiles: int = 1) -> bool:
    return k % groupsize == 0 and k % (inner_k_tiles * 16) == 0


def _tinygemm_supported(device: torch.device) -> bool:
    # tinygemm needs bf16 tensor cores
    if device.type == "cpu":
        return TORCH_VERSION_AT_LEAST_2_5
    return torch.cuda.get_device_capability(device)[0] >= 8


def get_groupwise_affine_qparams(w: torch.Tensor, n_bit: int = 4, groupsize: int = 128, dtype=torch.bfloat16):
    if groupsize > w.shape[-1]:
        groupsize = w.shape[-1]
    assert groupsize > 1
    assert w.shape[-1] % groupsize == 0
    assert w.dim() == 2

    to_quant = w.reshape(-1, groupsize)
    assert torch.isnan(to_quant).sum() == 0

    max_val = to_quant.amax(dim=1, keepdim=True)
    min_val = to_quant.amin(dim=1, keepdim=True)
    max_int = 2**n_bit - 1
    scales = (max_val - min_val).clamp(min=1e-6) / max_int
    zeros = min_val + scales * (2 ** (n_bit - 1))
    return scales.to(dtype=dtype).reshape(w.shape[0], -1), zeros.to(dtype=dtype).reshape(w.shape[0], -1)


def pack_tinygemm_scales_and_zeros(scales: torch.Tensor, zeros: torch.Tensor, dtype=torch.bfloat16) -> torch.Tensor:
    assert scales.shape == zeros.shape
    assert scales.dtype == dtype
    assert zeros.dtype == dtype
    return (
        torch.cat(
            [
                scales.reshape(scales.size(0), scales.size(1), 1),
                zeros.reshape(zeros.size(0), zeros.size(1), 1),
            ],
            2,
        )
        .transpose(0, 1)
        .contiguous()
    )


def groupwise_affine_quantize_tensor_from_qparams(w, scales, zeros, n_bit=4, groupsize=128):
    assert groupsize > 1
    # needed for GPTQ single column quantize
    if groupsize > w.shape[-1] and scales.shape[-1] == 1:
        groupsize = w.shape[-1]

    assert w.shape[-1] % groupsize == 0
    assert w.dim() == 2

    to_quant = w.reshape(-1, groupsize)
    assert torch.isnan(to_quant).sum() == 0

    scales = scales.reshape(-1, 1)
    zeros = zeros.reshape(-1, 1)
    min_val = zeros - scales * (2 ** (n_bit - 1))
    max_int = 2**n_bit - 1
    min_int = 0
    w_int4x8 = (
        to_quant.sub(min_val)
        .div(scales)
        .round()
        .clamp_(min_int, max_int)
        .to(torch.int32)
        .reshape_as(w)
    )
    return w_int4x8


def groupwise_affine_quantize_tensor(w, n_bit=4, groupsize=128, dtype=torch.bfloat16):
    scales, zeros = get_groupwise_affine_qparams(w, n_bit, groupsize, dtype)
    w_int4x8 = groupwise_affine_quantize_tensor_from_qparams(w, scales, zeros, n_bit, groupsize)
    scales_and_zeros = pack_tinygemm_scales_and_zeros(scales, zeros, dtype)
    return w_int4x8, scales_and_zeros


def prepare_int4_weight_and_scales_and_zeros(weight_bf16, groupsize, inner_k_tiles, precision=torch.bfloat16):
    weight_int32, scales_and_zeros = groupwise_affine_quantize_tensor(
        weight_bf16, n_bit=4, groupsize=groupsize, dtype=precision
    )
    if weight_bf16.device.type == "cpu":
        weight_int4pack = torch.ops.aten._convert_weight_to_int4pack_for_cpu(weight_int32, inner_k_tiles)
    else:
        weight_uint8 = (weight_int32[::, ::2] << 4 | weight_int32[::, 1::2]).to(torch.uint8)
        weight_int4pack = torch.ops.aten._convert_weight_to_int4pack(weight_uint8, inner_k_tiles)
    return weight_int4pack, scales_and_zeros


def linear_forward_int4(x, weight_int4pack, scales_and_zeros, out_features, groupsize, precision=torch.bfloat16):
    origin_x_size = x.size()
    x = x.reshape(-1, origin_x_size[-1])
    if x.device.type == "cpu":
        c = torch.ops.aten._weight_int4pack_mm_for_cpu(
            x.to(precision), weight_int4pack, groupsize, scales_and_zeros
        )
    else:
        c = torch.ops.aten._weight_int4pack_mm(
            x.to(precision), weight_int4pack, groupsize, scales_and_zeros
        )
    new_shape = origin_x_size[:-1] + (out_features,)
    c = c.reshape(new_shape)
    return c


class Int4WeightOnlyLinear(nn.Module):
    __constants__ = ["in_features", "out_features"]
    in_features: int
    out_features: int
    weight: torch.Tensor

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias=False,
        device=None,
        dtype=None,
        groupsize: int = 128,
        inner_k_tiles: int = 8,
        precision: torch.dtype = torch.bfloat16,
        scales_precision: torch.dtype = torch.bfloat16,
    ) -> None:
        super().__init__()
        self.padding = not _check_linear_int4_k(in_features, groupsize, inner_k_tiles)
        if self.padding:
            self.origin_in_features = in_features
            in_features = find_multiple(in_features, 1024)

        self.in_features = in_features
        self.out_features = out_features
        assert not bias, "require bias=False"
        self.device = device
        self.groupsize = groupsize
        self.inner_k_tiles = inner_k_tiles
        self.precision = precision
        self.scales_precision = scales_precision

        if dtype is not None:
            raise ValueError("Please specify 'precision' instead of 'dtype'")

        assert out_features % 8 == 0, "require out_features % 8 == 0"
        assert in_features % (inner_k_tiles * 16) == 0, "require in_features % (innerKTiles * 16) == 0"
        if device is not None and torch.device(device).type == "cpu":
            self.register_buffer(
                "weight",
                torch.zeros((out_features, in_features // 2), dtype=torch.uint8, device=device),
            )
        else:
            self.register_buffer(
                "weight",
                torch.zeros(
                    (
                        out_features // 8,
                        in_features // (inner_k_tiles * 16),
                        32,
                        inner_k_tiles // 2,
                    ),
                    dtype=torch.int32,
                    device=device,
                ),
            )
        self.dtype = dtype
        self.register_buffer(
            "scales_and_zeros",
            torch.zeros(
                (in_features // groupsize, out_features, 2),
                dtype=self.scales_precision,
                device=device,
            ),
        )

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        if self.padding:
            input = F.pad(input, pad=(0, self.in_features - self.origin_in_features))
        return linear_forward_int4(
            input,
            self.weight,
            self.scales_and_zeros,
            self.out_features,
            self.groupsize,
            self.precision,
        )


def replace_linear_int4(module, groupsize, inner_k_tiles, padding_allowed, skip_layer_func=None, device="cuda"):
    for name, child in module.named_children():
        if isinstance(child, nn.Linear) and (skip_layer_func is None or not skip_layer_func(child.weight)):
            if _check_linear_int4_k(child.in_features, groupsize, inner_k_tiles) or padding_allowed:
                setattr(
                    module,
                    name,
                    Int4WeightOnlyLinear(
                        child.in_features,
                        child.out_features,
                        bias=False,
                        groupsize=groupsize,
                        inner_k_tiles=inner_k_tiles,
                        device=device,
                    ),
                )
        else:
            replace_linear_int4(child, groupsize, inner_k_tiles, padding_allowed, skip_layer_func, device)


class WeightOnlyInt4QuantHandler:
    def __init__(self, mod, groupsize=128, inner_k_tiles=8, padding_allowed=True, device="cuda"):
        self.mod = mod
        self.groupsize = groupsize
        self.inner_k_tiles = inner_k_tiles
        self.padding_allowed = padding_allowed
        self.device = torch.device(device)
        assert groupsize in [32, 64, 128, 256]
        assert inner_k_tiles in [2, 4, 8]
        if not _tinygemm_supported(self.device):
            raise RuntimeError("int4 weight-only (tinygemm) needs an Ampere or newer GPU")

    @torch.no_grad()
    def create_quantized_state_dict(self) -> Dict[str, torch.Tensor]:
        cur_state_dict = self.mod.state_dict()
        for fqn, mod in self.mod.named_modules():
            if isinstance(mod, torch.nn.Linear):
                assert not mod.bias
                out_features = mod.out_features
                in_features = mod.in_features
                assert out_features % 8 == 0, "require out_features % 8 == 0"
                logger.info(f"linear: {fqn}, in={in_features}, out={out_features}")

                weight = mod.weight.data
                if not _check_linear_int4_k(in_features, self.groupsize, self.inner_k_tiles):
                    if self.padding_allowed:
                        padded_in_features = find_multiple(in_features, 1024)
                        weight = F.pad(weight, pad=(0, padded_in_features - in_features))
                    else:
                        logger.warning(
                            f"warning: {fqn} is skipped, int4 requires that in_features is 32, 64, or is divisible by 1024, "
                            + "and that groupsize and inner_k_tiles*16 evenly divide into it"
                        )
                        continue
                weight_int4pack, scales_and_zeros = prepare_int4_weight_and_scales_and_zeros(
                    weight.to(torch.bfloat16).to(self.device), self.groupsize, self.inner_k_tiles
                )
                cur_state_dict[f"{fqn}.weight"] = weight_int4pack.to("cpu")
                cur_state_dict[f"{fqn}.scales_and_zeros"] = scales_and_zeros.to("cpu")
        return cur_state_dict

    def convert_for_runtime(self):
        replace_linear_int4(self.mod, self.groupsize, self.inner_k_tiles, self.padding_allowed, device=self.device)
        return self.mod


def quantize_checkpoint(checkpoint_path: Path, groupsize: int = 128, device: str = "cuda") -> None:
    from torchao._models.llama.model import Transformer

    assert checkpoint_path.is_file(), checkpoint_path
    precision = torch.bfloat16

    print("Loading model ...")
    t0 = time.time()
    with torch.device("meta"):
        model = Transformer.from_name(checkpoint_path.parent.name)

    checkpoint = torch.load(str(checkpoint_path), mmap=True, weights_only=True)
    model.load_state_dict(checkpoint, assign=True)
    model = model.to(dtype=precision, device=device)

    print("Quantizing model weights for int4 weight-only affine per-channel groupwise quantization")
    quant_handler = WeightOnlyInt4QuantHandler(model, groupsize, device=device)
    quantized_state_dict = quant_handler.create_quantized_state_dict()

    dir_name = checkpoint_path.parent
    base_name = checkpoint_path.name
    new_base_name = base_name.replace(".pth", f".int4.g{groupsize}.pth")
    quantize_path = dir_name / new_base_name
    print(f"Writing quantized weights to {quantize_path}")
    quantize_path.unlink(missing_ok=True)  # remove existing file if one already there
    torch.save(quantized_state_dict, quantize_path)
    print(f"Quantization complete took {time.time() - t0:.02f} seconds")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Quantize a model checkpoint to int4 weight-only.")
    parser.add_argument(
        "--checkpoint_path",
        type=Path,
        default=Path("checkpoints/meta-llama/Llama-2-7b-chat-hf/model.pth"),
        help="Path to the model checkpoint to be quantized.",
    )
    parser.add_argument("--groupsize", type=int, default=128, help="Group size for int4 quantization.")
    parser.add_argument("--device", type=str, default="cuda", help="device to use for quantization")

    args = parser.parse_args()
    quantize_checkpoint(args.checkpoint_path, args.groupsize, args.device)
