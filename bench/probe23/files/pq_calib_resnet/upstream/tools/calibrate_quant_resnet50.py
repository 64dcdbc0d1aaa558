#!/usr/bin/env python
"""Post-training calibration of a ResNet-50 with NVIDIA pytorch-quantization.

Usage:
    python tools/calibrate_quant_resnet50.py --data /datasets/imagenet \
        --calibrator histogram --percentile 99.99 --out resnet50_int8.pth

The calibrated checkpoint can be exported to ONNX (QDQ) and built into a
TensorRT INT8 engine without a calibration cache.
"""
import argparse
import logging
import os
import time

import torch
import torch.nn as nn
import torch.utils.data
import torchvision
from torchvision import transforms
from tqdm import tqdm

from pytorch_quantization import calib
from pytorch_quantization import nn as quant_nn
from pytorch_quantization import quant_modules
from pytorch_quantization.tensor_quant import QuantDescriptor

logger = logging.getLogger("calibrate")


def parse_args():
    p = argparse.ArgumentParser(description="PTQ calibration (runs on a CUDA GPU)")
    p.add_argument("--data", required=True)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--num-calib-batch", type=int, default=16)
    p.add_argument("--calibrator", choices=["max", "histogram"], default="histogram")
    p.add_argument("--method", choices=["percentile", "mse", "entropy"], default="percentile")
    p.add_argument("--percentile", type=float, default=99.99)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--gpu", type=int, default=0, help="GPU index used for calibration")
    p.add_argument("--out", default="resnet50_int8.pth")
    return p.parse_args()


def build_loader(root, batch_size, workers):
    tf = transforms.Compose([
        transforms.Resize(256),
        transforms.CenterCrop(224),
        transforms.ToTensor(),
        transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
    ])
    ds = torchvision.datasets.ImageFolder(os.path.join(root, "val"), tf)
    return torch.utils.data.DataLoader(ds, batch_size=batch_size, shuffle=True,
                                       num_workers=workers, pin_memory=True, drop_last=True)


def collect_stats(model, loader, num_batches):
    """Feed data to the network and collect statistics."""
    for _, module in model.named_modules():
        if isinstance(module, quant_nn.TensorQuantizer):
            if module._calibrator is not None:
                module.disable_quant()
                module.enable_calib()
            else:
                module.disable()

    for i, (image, _) in tqdm(enumerate(loader), total=num_batches):
        model(image.cuda())
        if i >= num_batches:
            break

    for _, module in model.named_modules():
        if isinstance(module, quant_nn.TensorQuantizer):
            if module._calibrator is not None:
                module.enable_quant()
                module.disable_calib()
            else:
                module.enable()


def compute_amax(model, **kwargs):
    for name, module in model.named_modules():
        if isinstance(module, quant_nn.TensorQuantizer):
            if module._calibrator is not None:
                if isinstance(module._calibrator, calib.MaxCalibrator):
                    module.load_calib_amax()
                else:
                    module.load_calib_amax(**kwargs)
            logger.info("%-40s %s", name, module)
    model.cuda()  # amax buffers are created on the host


@torch.no_grad()
def evaluate(model, loader, max_batches=50):
    model.eval()
    correct, total = 0, 0
    for i, (image, target) in enumerate(loader):
        if i >= max_batches:
            break
        image = image.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        logits = model(image)
        correct += (logits.argmax(1) == target).sum().item()
        total += target.numel()
    return 100.0 * correct / max(total, 1)


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO)
    torch.cuda.set_device(args.gpu)

    desc = QuantDescriptor(calib_method=args.calibrator)
    quant_nn.QuantConv2d.set_default_quant_desc_input(desc)
    quant_nn.QuantLinear.set_default_quant_desc_input(desc)
    quant_nn.QuantAdaptiveAvgPool2d.set_default_quant_desc_input(desc)

    # Monkey-patch torch.nn layers with their quantized counterparts.
    quant_modules.initialize()
    model = torchvision.models.resnet50(weights="IMAGENET1K_V1")
    model.cuda()
    quant_modules.deactivate()

    loader = build_loader(args.data, args.batch_size, args.workers)

    t0 = time.time()
    with torch.no_grad():
        collect_stats(model, loader, num_batches=args.num_calib_batch)
        if args.calibrator == "max":
            compute_amax(model)
        else:
            compute_amax(model, method=args.method, percentile=args.percentile)
    torch.cuda.synchronize()
    logger.info("calibration took %.1fs", time.time() - t0)

    top1 = evaluate(model, loader)
    logger.info("INT8 (fake-quant) top-1 on calib subset: %.2f", top1)
    logger.info("peak memory: %.1f MiB", torch.cuda.max_memory_allocated() / 2**20)

    torch.save(model.state_dict(), args.out)
    logger.info("saved %s", args.out)


if __name__ == "__main__":
    main()
