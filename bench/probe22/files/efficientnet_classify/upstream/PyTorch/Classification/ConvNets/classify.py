# Copyright (c) 2018-2019, NVIDIA CORPORATION
# All rights reserved.
"""Single-image classification / TorchScript export for ResNet50, EfficientNet and friends."""

import argparse
import os

import numpy as np
import torch
import torch.backends.cudnn as cudnn
import torch.nn.functional as F
import torchvision.transforms as transforms
from PIL import Image

from image_classification.models import (
    efficientnet_b0, efficientnet_b4, efficientnet_widese_b0, efficientnet_widese_b4, resnet50, resnext101_32x4d,
)

MODELS = {
    "efficientnet-b0": efficientnet_b0,
    "efficientnet-b4": efficientnet_b4,
    "efficientnet-widese-b0": efficientnet_widese_b0,
    "efficientnet-widese-b4": efficientnet_widese_b4,
    "resnet50": resnet50,
    "resnext101-32x4d": resnext101_32x4d,
}


def add_parser_arguments(parser):
    model_names = list(MODELS.keys())
    parser.add_argument("--image-size", default="224", type=int)
    parser.add_argument("--arch", "-a", metavar="ARCH", default="efficientnet-b0", choices=model_names)
    parser.add_argument("--precision", metavar="PREC", default="AMP", choices=["AMP", "FP32"])
    parser.add_argument("--cpu", action="store_true", help="perform inference on CPU")
    parser.add_argument("--weights", type=str, default=None, help="checkpoint to load")
    parser.add_argument("--channels-last", action="store_true", help="use NHWC memory layout (Tensor Cores)")
    parser.add_argument("--export-torchscript", type=str, default=None, help="path of the TorchScript file to write")
    parser.add_argument("--image", metavar="<path>", help="path to classified image")


def load_jpeg_from_file(path, image_size, cuda=True):
    img_transforms = transforms.Compose(
        [transforms.Resize(image_size + 32), transforms.CenterCrop(image_size), transforms.ToTensor()])

    img = img_transforms(Image.open(path))
    with torch.no_grad():
        # mean and std are not multiplied by 255 as they are in training pipeline
        mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
        std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)

        if cuda:
            mean = mean.cuda(non_blocking=True)
            std = std.cuda(non_blocking=True)
            img = img.cuda(non_blocking=True)
        img = img.float()

        input = img.unsqueeze(0).sub_(mean).div_(std)

    return input


def check_quant_weight_correctness(checkpoint_path, model):
    state_dict = torch.load(checkpoint_path, map_location=torch.device("cpu"))
    state_dict = {k[len("module."):] if k.startswith("module.") else k: v for k, v in state_dict.items()}
    quantizers_sd_keys = {f"{n[0]}._amax" for n in model.named_modules() if "quantizer" in n[0]}
    sd_all_keys = quantizers_sd_keys | set(model.state_dict().keys())
    assert set(state_dict.keys()) == sd_all_keys, (
        f"Passed quantized architecture, but following keys are missing in "
        f"checkpoint: {list(sd_all_keys - set(state_dict.keys()))}")


def main(args, model_args):
    imgnet_classes = np.array(["class_%d" % i for i in range(1000)])
    model = MODELS[args.arch](**model_args.__dict__)

    if args.weights is not None:
        weights = torch.load(args.weights, map_location=lambda storage, loc: storage)
        model.load_state_dict(weights)

    if not args.cpu:
        model = model.cuda()
        cudnn.benchmark = True
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)
    model.eval()

    input = load_jpeg_from_file(args.image, args.image_size, cuda=not args.cpu)
    if args.channels_last:
        input = input.contiguous(memory_format=torch.channels_last)

    if args.export_torchscript:
        scripted = torch.jit.script(model)
        scripted.save(args.export_torchscript)
        print(f"TorchScript model written to {args.export_torchscript}")

    with torch.no_grad(), torch.cuda.amp.autocast(enabled=args.precision == "AMP"):
        output = F.softmax(model(input), dim=1)

    output = output.float().cpu().view(-1).numpy()
    top5 = np.argsort(output)[-5:][::-1]

    print(args.image)
    for c, v in zip(imgnet_classes[top5], output[top5]):
        print(f"{c}: {100 * v:.1f}%")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="PyTorch ImageNet Classification")
    add_parser_arguments(parser)
    args, rest = parser.parse_known_args()
    model_args, rest = argparse.ArgumentParser().parse_known_args(rest)
    assert len(rest) == 0, f"Unknown args passed: {rest}"
    cudnn.benchmark = True
    main(args, model_args)
