# SPDX-FileCopyrightText: Copyright (c) 2024 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: MIT
#
# Permission is hereby granted, free of charge, to any person obtaining a
# copy of this software and associated documentation files (the "Software"),
# to deal in the Software without restriction, including without limitation
# the rights to use, copy, modify, merge, publish, distribute, sublicense,
# and/or sell copies of the Software, and to permit persons to whom the
# Software is furnished to do so, subject to the following conditions:
#
# The above copyright notice and this permission notice shall be included in
# all copies or substantial portions of the Software.
"""Quantize a timm vision model with ModelOpt (mtq) and export it as a Q/DQ ONNX file.

Example:
    python torch_quant_to_onnx.py --timm_model_name vit_base_patch16_224 \
        --quantize_mode int8 --onnx_save_path vit_base_patch16_224.int8.onnx

The exported ONNX can then be compiled with ``trtexec --onnx=... --stronglyTyped``.
"""

import argparse
import os
import re
import warnings

import timm
import torch
from timm.data import create_transform, resolve_data_config
from torch.utils.data import DataLoader, Subset
from torchvision.datasets import ImageFolder
from tqdm import tqdm

import modelopt.torch.opt as mto
import modelopt.torch.quantization as mtq
from modelopt.torch._deploy.utils import get_onnx_bytes

"""
The script is meant to work with the models in timm. Vision transformers and convnets
are both supported; weights are downloaded from the HF hub on first use.
"""

mp = {
    "fp8": mtq.FP8_DEFAULT_CFG,
    "int8": mtq.INT8_DEFAULT_CFG,
    "int8_sq": mtq.INT8_SMOOTHQUANT_CFG,
    "int4_awq": mtq.INT4_AWQ_CFG,
    "w4a8_awq": mtq.W4A8_AWQ_BETA_CFG,
}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timm_model_name", type=str, default="vit_base_patch16_224",
                        help="timm model name, see timm.list_models()")
    parser.add_argument("--quantize_mode", type=str, default="int8", choices=list(mp.keys()),
                        help="Quantization format")
    parser.add_argument("--onnx_save_path", type=str, required=True, help="Where to write the Q/DQ ONNX model")
    parser.add_argument("--calibration_data_size", type=int, default=512,
                        help="Number of images used for calibration")
    parser.add_argument("--calib_batch_size", type=int, default=16)
    parser.add_argument("--imagenet_path", type=str, default=None,
                        help="ImageNet val folder; random tensors are used if omitted")
    parser.add_argument("--save_modelopt_state", type=str, default=None,
                        help="Optional path for mto.save() so the quantized torch model can be restored")
    parser.add_argument("--fp16", action="store_true", help="Export the non-quantized parts in fp16")
    parser.add_argument("--no_dynamo", action="store_true", help="Use the TorchScript based ONNX exporter")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


class RandomCalibSet(torch.utils.data.Dataset):
    """Stand-in calibration set when no ImageNet folder is given."""

    def __init__(self, n, shape, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.data = torch.rand((n, *shape), generator=g)

    def __len__(self):
        return self.data.shape[0]

    def __getitem__(self, i):
        return self.data[i], 0


def load_calibration_data(model, data_size, batch_size, imagenet_path=None, seed=0):
    data_config = resolve_data_config({}, model=model)
    if imagenet_path is None:
        warnings.warn("No --imagenet_path given, calibrating on random data; accuracy will suffer.")
        dataset = RandomCalibSet(data_size, data_config["input_size"], seed=seed)
    else:
        transform = create_transform(**data_config)
        dataset = ImageFolder(imagenet_path, transform=transform)
        indices = torch.randperm(len(dataset), generator=torch.Generator().manual_seed(seed))[:data_size]
        dataset = Subset(dataset, indices.tolist())
    return DataLoader(dataset, batch_size=batch_size, shuffle=False, num_workers=4, drop_last=False)


def quantize_model(model, config, data_loader=None):
    # To customize the quantization config, modify the config dict before calling mtq.quantize
    def forward_loop(model):
        for batch, _ in tqdm(data_loader, desc="calibrating"):
            model(batch.cuda())

    quantized_model = mtq.quantize(model, config, forward_loop)
    return quantized_model


def disable_problematic_quantizers(model, mode):
    """Keep the first conv / patch embedding and the classifier head in high precision."""
    patterns = [r".*patch_embed.*", r".*head.*", r".*conv_stem.*", r".*fc\..*"]
    if mode in ("int4_awq", "w4a8_awq"):
        # Weight-only formats: activations stay in fp16 anyway.
        patterns.append(r".*input_quantizer")
    for name, module in model.named_modules():
        if any(re.match(p, name) for p in patterns) and hasattr(module, "disable"):
            module.disable()


def evaluate_consistency(ref_model, q_model, data_loader, num_batches=4):
    """Cheap sanity check: top-1 agreement between the fp model and the fake-quantized one."""
    agree, total = 0, 0
    with torch.no_grad():
        for i, (x, _) in enumerate(data_loader):
            if i >= num_batches:
                break
            x = x.cuda(non_blocking=True)
            a = ref_model(x).argmax(-1)
            b = q_model(x).argmax(-1)
            agree += (a == b).sum().item()
            total += x.shape[0]
    return agree / max(total, 1)


def export_to_onnx(model, input_shape, onnx_save_path, device, weights_dtype="fp32", dynamo=True):
    """Exports the torch model to ONNX format."""
    # Export the model to ONNX with a static batch of 1
    input_tensor = torch.randn(input_shape).to(device)
    model_name = os.path.basename(onnx_save_path).replace(".onnx", "")

    onnx_model_bytes = get_onnx_bytes(
        model=model,
        dummy_input=(input_tensor,),
        weights_dtype=weights_dtype,
        model_name=model_name,
        dynamo_export=dynamo,
    )

    # Write ONNX model to disk
    with open(onnx_save_path, "wb") as f:
        f.write(onnx_model_bytes)
    print(f"Quantized ONNX model is saved to {onnx_save_path}")


def main():
    args = parse_args()
    torch.manual_seed(args.seed)

    if args.quantize_mode == "fp8" and torch.cuda.get_device_capability() < (8, 9):
        raise RuntimeError("FP8 fake quantization requires an Ada or Hopper GPU (sm_89+).")

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    # Create the timm model and load pretrained weights
    model = timm.create_model(args.timm_model_name, pretrained=True, num_classes=1000).to(device)
    model.eval()
    ref_model = timm.create_model(args.timm_model_name, pretrained=True, num_classes=1000).to(device).eval()

    data_config = resolve_data_config({}, model=model)
    input_shape = (1,) + tuple(data_config["input_size"])

    # Load the calibration data
    data_loader = load_calibration_data(
        model, args.calibration_data_size, args.calib_batch_size, args.imagenet_path, args.seed
    )

    # Quantize the model
    config = mp[args.quantize_mode]
    quantized_model = quantize_model(model, config, data_loader)
    disable_problematic_quantizers(quantized_model, args.quantize_mode)

    # Print quantization summary after successfully quantizing the model with mtq
    # This will show the quantizers inserted in the model and their configs
    mtq.print_quant_summary(quantized_model)

    agreement = evaluate_consistency(ref_model, quantized_model, data_loader)
    print(f"top-1 agreement fp vs {args.quantize_mode}: {agreement * 100:.2f}%")

    if args.save_modelopt_state:
        mto.save(quantized_model, args.save_modelopt_state)
        print(f"ModelOpt state saved to {args.save_modelopt_state}")

    weights_dtype = "fp16" if args.fp16 else "fp32"
    export_to_onnx(
        quantized_model,
        input_shape,
        args.onnx_save_path,
        device,
        weights_dtype=weights_dtype,
        dynamo=not args.no_dynamo,
    )
    torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
