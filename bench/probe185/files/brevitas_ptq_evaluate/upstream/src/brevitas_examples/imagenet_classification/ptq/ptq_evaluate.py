# Copyright (C) 2023, Advanced Micro Devices, Inc. All rights reserved.
# SPDX-License-Identifier: BSD-3-Clause

import argparse
from functools import partial
from itertools import product
import os
import random
import warnings

import numpy as np
import torch
import torch.backends.cudnn as cudnn
import torch.nn.parallel
import torch.optim
import torch.utils.data
import torch.utils.data.distributed
import torchvision

from brevitas.export import export_onnx_qcdq
from brevitas.export import export_torch_qcdq
from brevitas.graph.quantize import preprocess_for_quantize
from brevitas.graph.target.flexml import preprocess_for_flexml_quantize
from brevitas_examples.common.generative.quantize import quantize_model
from brevitas_examples.imagenet_classification.ptq.ptq_common import apply_act_equalization
from brevitas_examples.imagenet_classification.ptq.ptq_common import apply_bias_correction
from brevitas_examples.imagenet_classification.ptq.ptq_common import apply_gpfq
from brevitas_examples.imagenet_classification.ptq.ptq_common import apply_gptq
from brevitas_examples.imagenet_classification.ptq.ptq_common import apply_learned_round_learning
from brevitas_examples.imagenet_classification.ptq.ptq_common import calibrate
from brevitas_examples.imagenet_classification.ptq.ptq_common import calibrate_bn
from brevitas_examples.imagenet_classification.utils import generate_dataloader
from brevitas_examples.imagenet_classification.utils import SEED
from brevitas_examples.imagenet_classification.utils import validate

# Ignore warnings about __torch_function__
warnings.filterwarnings("ignore")

model_names = sorted(
    name for name in torchvision.models.__dict__ if name.islower() and not name.startswith("__") and
    callable(torchvision.models.__dict__[name]) and not name.startswith("get_"))

parser = argparse.ArgumentParser(description='PyTorch ImageNet PTQ Validation')
parser.add_argument(
    '--calibration-dir',
    required=True,
    help='Path to folder containing Imagenet calibration folder')
parser.add_argument(
    '--validation-dir', required=True, help='Path to folder containing Imagenet validation folder')
parser.add_argument(
    '--workers', default=8, type=int, help='Number of data loading workers (default: 8)')
parser.add_argument(
    '--batch-size-calibration',
    default=64,
    type=int,
    help='Minibatch size for calibration (default: 64)')
parser.add_argument(
    '--batch-size-validation',
    default=256,
    type=int,
    help='Minibatch size for validation (default: 256)')
parser.add_argument('--export-dir', default='.', type=str, help='Directory where to store the exported models')
parser.add_argument('--gpu', default=None, type=int, help='GPU id to use (default: None)')
parser.add_argument(
    '--calibration-samples', default=1000, type=int, help='Calibration size (default: 1000)')
parser.add_argument(
    '--model-name',
    default='resnet18',
    metavar='ARCH',
    choices=model_names,
    help='model architecture: ' + ' | '.join(model_names) + ' (default: resnet18)')
parser.add_argument(
    '--dtype', default='float', choices=['float', 'bfloat16'], help='Data type to use')
parser.add_argument(
    '--target-backend',
    default='fx',
    choices=['fx', 'layerwise', 'flexml'],
    help='Backend to target for quantization (default: fx)')
parser.add_argument(
    '--scale-factor-type',
    default='float_scale',
    choices=['float_scale', 'po2_scale'],
    help='Type for scale factors (default: float_scale)')
parser.add_argument(
    '--act-bit-width', default=8, type=int, help='Activations bit width (default: 8)')
parser.add_argument(
    '--weight-bit-width', default=8, type=int, help='Weights bit width (default: 8)')
parser.add_argument(
    '--layerwise-first-last-bit-width',
    default=8,
    type=int,
    help='Input and weights bit width for first and last layer w/ layerwise backend (default: 8)')
parser.add_argument(
    '--bias-bit-width', default=32, type=int, choices=[32, 16], help='Bias bit width (default: 32)')
parser.add_argument(
    '--act-quant-type',
    default='sym',
    choices=['sym', 'asym'],
    help='Activation quantization type (default: sym)')
parser.add_argument(
    '--weight-quant-granularity',
    default='per_tensor',
    choices=['per_tensor', 'per_channel'],
    help='Weight quantization type (default: per_tensor)')
parser.add_argument(
    '--act-quant-percentile',
    default=99.999,
    type=float,
    help='Percentile to use for stats of activation quantization (default: 99.999)')
parser.add_argument(
    '--graph-eq-iterations',
    default=20,
    type=int,
    help='Numbers of iterations for graph equalization (default: 20)')
parser.add_argument('--act-equalization', default=None, choices=['fx', 'layerwise', None],
                    help='Activation equalization type (default: None)')
parser.add_argument('--gptq', action='store_true', help='Enable GPTQ (default: disabled)')
parser.add_argument('--gpfq', action='store_true', help='Enable GPFQ (default: disabled)')
parser.add_argument('--learned-round', action='store_true', help='Enable AdaRound (default: disabled)')
parser.add_argument('--calibrate-bn', action='store_true', help='Calibrate BN (default: disabled)')
parser.add_argument('--bias-corr', action='store_true', help='Bias correction after calibration (default: disabled)')
parser.add_argument('--export-onnx-qcdq', action='store_true', help='If true, export the model in onnx qcdq format')
parser.add_argument('--export-torch-qcdq', action='store_true', help='If true, export the model in torch qcdq format')
parser.add_argument('--compile', action='store_true', help='torch.compile the quantized model before validation')


def main():
    args = parser.parse_args()
    dtype = getattr(torch, args.dtype)

    random.seed(SEED)
    np.random.seed(SEED)
    torch.manual_seed(SEED)

    if args.act_quant_percentile == 100.0:
        args.act_quant_percentile = None

    config = f"{args.model_name}_{args.target_backend}_{args.scale_factor_type}_" \
             f"a{args.act_bit_width}w{args.weight_bit_width}_{args.act_quant_type}_{args.weight_quant_granularity}"
    print(f"Model: {args.model_name} - Target backend: {args.target_backend} - Config: {config}")

    # Get model-specific configurations about input shapes and normalization
    model_config = get_model_config(args.model_name)

    # Generate calibration and validation dataloaders
    resize_shape = model_config['resize_shape']
    center_crop_shape = model_config['center_crop_shape']
    inception_preprocessing = model_config['inception_preprocessing']
    calib_loader = generate_dataloader(
        args.calibration_dir,
        args.batch_size_calibration,
        args.workers,
        resize_shape,
        center_crop_shape,
        args.calibration_samples,
        inception_preprocessing)
    val_loader = generate_dataloader(
        args.validation_dir,
        args.batch_size_validation,
        args.workers,
        resize_shape,
        center_crop_shape,
        inception_preprocessing=inception_preprocessing)

    # Get the model from torchvision
    model = get_torchvision_model(args.model_name)
    model = model.to(dtype)

    # Preprocess the model for quantization
    if args.target_backend == 'flexml':
        # flexml requires static shapes, pass a representative input in
        img_shape = model_config['center_crop_shape']
        model = preprocess_for_flexml_quantize(
            model,
            torch.ones(1, 3, img_shape, img_shape, dtype=dtype),
            equalize_iters=args.graph_eq_iterations,
            equalize_merge_bias=True)
    elif args.target_backend == 'fx' or args.target_backend == 'layerwise':
        model = preprocess_for_quantize(
            model, equalize_iters=args.graph_eq_iterations, equalize_merge_bias=True)
    else:
        raise RuntimeError(f"{args.target_backend} backend not supported.")

    # If available, use the selected GPU
    if args.gpu is not None:
        torch.cuda.set_device(args.gpu)
        model = model.cuda(args.gpu)
        cudnn.benchmark = False

    if args.act_equalization is not None:
        print("Applying activation equalization:")
        apply_act_equalization(model, calib_loader, layerwise=args.act_equalization == 'layerwise')

    # Define the quantized model
    quant_model = quantize_model(
        model,
        dtype=dtype,
        backend=args.target_backend,
        scale_factor_type=args.scale_factor_type,
        bias_bit_width=args.bias_bit_width,
        weight_bit_width=args.weight_bit_width,
        weight_quant_granularity=args.weight_quant_granularity,
        act_quant_percentile=args.act_quant_percentile,
        act_quant_type=args.act_quant_type,
        layerwise_first_last_bit_width=args.layerwise_first_last_bit_width,
        act_bit_width=args.act_bit_width)

    # Calibrate the quant_model on the calibration dataloader
    print("Starting activation calibration:")
    calibrate(calib_loader, quant_model)

    if args.gpfq:
        print("Performing GPFQ:")
        apply_gpfq(calib_loader, quant_model)

    if args.gptq:
        print("Performing GPTQ:")
        apply_gptq(calib_loader, quant_model)

    if args.learned_round:
        print("Applying Learned Round:")
        apply_learned_round_learning(quant_model, calib_loader)

    if args.calibrate_bn:
        print("Calibrate BN:")
        calibrate_bn(calib_loader, quant_model)

    if args.bias_corr:
        print("Applying bias correction:")
        apply_bias_correction(calib_loader, quant_model)

    if args.compile:
        quant_model = torch.compile(quant_model, fullgraph=True, dynamic=False)

    # Validate the quant_model on the validation dataloader
    print("Starting validation:")
    validate(val_loader, quant_model, stable=dtype != torch.bfloat16)

    if args.export_onnx_qcdq or args.export_torch_qcdq:
        # Generate reference input tensor to drive the export process
        model_config = get_model_config(args.model_name)
        center_crop_shape = model_config['center_crop_shape']
        img_shape = center_crop_shape
        device, dtype = next(model.parameters()).device, next(model.parameters()).dtype
        ref_input = torch.ones(1, 3, img_shape, img_shape, device=device, dtype=dtype)

        export_path = os.path.join(args.export_dir, config)
        if args.export_onnx_qcdq:
            export_path = export_path + '.onnx'
            export_onnx_qcdq(quant_model, ref_input, export_path, opset_version=13)
        if args.export_torch_qcdq:
            export_path = export_path + '.pt'
            export_torch_qcdq(quant_model, ref_input, export_path)


def get_model_config(model_name):
    config = dict()
    # Set-up config parameters
    if model_name == 'inception_v3' or model_name == 'googlenet':
        config['inception_preprocessing'] = True
    else:
        config['inception_preprocessing'] = False

    if model_name == 'inception_v3':
        input_shape = 299
        resize_shape = 342
    else:
        input_shape = 224
        resize_shape = 256
    config['resize_shape'] = resize_shape
    config['center_crop_shape'] = input_shape
    return config


def get_torchvision_model(model_name):
    model_fn = getattr(torchvision.models, model_name)
    if model_name == 'inception_v3' or model_name == 'googlenet':
        model = model_fn(weights='DEFAULT', transform_input=False)
    else:
        model = model_fn(weights='DEFAULT')
    return model


if __name__ == '__main__':
    main()
