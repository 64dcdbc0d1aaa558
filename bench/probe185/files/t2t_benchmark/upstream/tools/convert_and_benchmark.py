#!/usr/bin/env python3
"""Convert a torchvision classifier with torch2trt and compare it against PyTorch.

Follows the torch2trt README flow:

    model = alexnet(pretrained=True).eval().cuda()
    x = torch.ones((1, 3, 224, 224)).cuda()
    model_trt = torch2trt(model, [x])

and adds int8 calibration, save/load of the TRTModule and a throughput table.
"""
import argparse
import json
import os
import time

import torch
import torchvision
from torch2trt import TRTModule, torch2trt
from torch2trt.calibration import DEFAULT_CALIBRATION_ALGORITHM

MODELS = {
    "resnet18": torchvision.models.resnet18,
    "resnet50": torchvision.models.resnet50,
    "mobilenet_v2": torchvision.models.mobilenet_v2,
    "squeezenet1_1": torchvision.models.squeezenet1_1,
    "densenet121": torchvision.models.densenet121,
}


class ImageFolderCalibDataset(object):
    """Tiny dataset adapter: torch2trt's calibrator expects a list of input tensors per item."""

    def __init__(self, root, size=224, limit=512):
        self.dataset = torchvision.datasets.ImageFolder(
            root,
            transform=torchvision.transforms.Compose([
                torchvision.transforms.Resize(256),
                torchvision.transforms.CenterCrop(size),
                torchvision.transforms.ToTensor(),
                torchvision.transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
            ]))
        self.limit = min(limit, len(self.dataset))

    def __len__(self):
        return self.limit

    def __getitem__(self, idx):
        image, _ = self.dataset[idx]
        image = image[None, ...].cuda()  # add batch dim, calibrator runs on the device
        return [image]


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="resnet18", choices=sorted(MODELS))
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--fp16", action="store_true", help="build the engine with fp16_mode")
    parser.add_argument("--int8", action="store_true", help="build the engine with int8_mode")
    parser.add_argument("--calib-dir", default=None, help="ImageFolder used for int8 calibration")
    parser.add_argument("--max-workspace-size", type=int, default=1 << 25)
    parser.add_argument("--iters", type=int, default=200)
    parser.add_argument("--output", default="model_trt.pth")
    parser.add_argument("--report", default=None, help="write the results as json")
    return parser.parse_args()


@torch.no_grad()
def throughput(module, inputs, iters):
    for _ in range(10):
        module(*inputs)
    torch.cuda.current_stream().synchronize()  # finish warmup
    t0 = time.time()
    for _ in range(iters):
        module(*inputs)
    torch.cuda.current_stream().synchronize()
    t1 = time.time()
    return iters * inputs[0].shape[0] / (t1 - t0)


def max_abs_error(a, b):
    return float(torch.max(torch.abs(a.float() - b.float())))


def main():
    args = parse_args()
    dtype = torch.half if args.fp16 else torch.float32

    model = MODELS[args.model](pretrained=True).eval().cuda()
    if args.fp16:
        model = model.half()

    x = torch.ones((args.batch_size, 3, 224, 224)).cuda().type(dtype)

    kwargs = dict(fp16_mode=args.fp16, max_workspace_size=args.max_workspace_size, max_batch_size=args.batch_size)
    if args.int8:
        if args.calib_dir is None:
            raise SystemExit("--int8 needs --calib-dir")
        kwargs.update(
            int8_mode=True,
            int8_calib_dataset=ImageFolderCalibDataset(args.calib_dir),
            int8_calib_algorithm=DEFAULT_CALIBRATION_ALGORITHM,
            int8_calib_batch_size=8,
        )

    t0 = time.time()
    model_trt = torch2trt(model, [x], **kwargs)
    build_s = time.time() - t0
    print("engine built in %.1fs" % build_s)

    y = model(x)
    y_trt = model_trt(x)
    err = max_abs_error(y, y_trt)
    print("max abs error vs PyTorch: %.3e" % err)

    torch.save(model_trt.state_dict(), args.output)

    # reload through TRTModule to make sure the serialized engine round-trips
    model_trt_loaded = TRTModule()
    model_trt_loaded.load_state_dict(torch.load(args.output))
    err_loaded = max_abs_error(y_trt, model_trt_loaded(x))

    fps_torch = throughput(model, [x], args.iters)
    fps_trt = throughput(model_trt_loaded, [x], args.iters)

    result = {
        "model": args.model,
        "batch_size": args.batch_size,
        "precision": "int8" if args.int8 else ("fp16" if args.fp16 else "fp32"),
        "device": torch.cuda.get_device_name(0),
        "build_seconds": round(build_s, 2),
        "max_abs_error": err,
        "max_abs_error_reloaded": err_loaded,
        "fps_torch": round(fps_torch, 1),
        "fps_trt": round(fps_trt, 1),
        "speedup": round(fps_trt / fps_torch, 2),
    }
    print("| model | precision | fps torch | fps trt | speedup |")
    print("|---|---|---|---|---|")
    print("| {model} | {precision} | {fps_torch} | {fps_trt} | {speedup}x |".format(**result))
    if args.report:
        with open(args.report, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    os.environ.setdefault("CUDA_MODULE_LOADING", "LAZY")
    main()
