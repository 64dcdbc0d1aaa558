"""FX graph-mode post-training static quantization (x86 / fbgemm backend).

The float baseline is evaluated on the GPU when one is present; calibration,
convert_fx and int8 evaluation always run on the CPU because the quantized
kernels (fbgemm / x86) are CPU kernels.
"""
import argparse
import copy
import time

import torch
import torchvision
from torch.ao.quantization import QConfigMapping, get_default_qconfig_mapping
from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

from common.data import imagenet_val_loader  # local helper


def evaluate(model, loader, device, max_batches=None):
    model.eval().to(device)
    correct = total = 0
    with torch.no_grad():
        for i, (x, y) in enumerate(loader):
            if max_batches is not None and i >= max_batches:
                break
            x, y = x.to(device), y.to(device)
            correct += (model(x).argmax(dim=1) == y).sum().item()
            total += y.numel()
    return 100.0 * correct / total


def calibrate(prepared, loader, num_batches):
    prepared.eval()
    with torch.no_grad():
        for i, (x, _) in enumerate(loader):
            prepared(x)
            if i + 1 >= num_batches:
                break


def model_size_mb(model):
    torch.save(model.state_dict(), "/tmp/_size.pt")
    import os
    size = os.path.getsize("/tmp/_size.pt") / 1e6
    os.remove("/tmp/_size.pt")
    return size


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--arch", default="resnet18")
    p.add_argument("--calib-batches", type=int, default=32)
    p.add_argument("--eval-batches", type=int, default=100)
    p.add_argument("--skip-fp32", action="store_true", help="skip the (GPU) float baseline")
    args = p.parse_args()

    fp_device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loader = imagenet_val_loader(args.data, batch_size=32, workers=8)

    float_model = getattr(torchvision.models, args.arch)(weights="DEFAULT")
    if not args.skip_fp32:
        t0 = time.time()
        acc_fp = evaluate(copy.deepcopy(float_model), loader, fp_device, args.eval_batches)
        print(f"fp32 top-1 {acc_fp:.2f} ({time.time() - t0:.0f}s on {fp_device})")

    torch.backends.quantized.engine = "x86"
    qconfig_mapping: QConfigMapping = get_default_qconfig_mapping("x86")
    # keep the classifier in float: accuracy is very sensitive to it
    qconfig_mapping.set_module_name("fc", None)

    example_inputs = (torch.randn(1, 3, 224, 224),)
    model_fp = copy.deepcopy(float_model).cpu().eval()
    prepared = prepare_fx(model_fp, qconfig_mapping, example_inputs)
    calibrate(prepared, loader, args.calib_batches)
    quantized = convert_fx(prepared)

    acc_q = evaluate(quantized, loader, torch.device("cpu"), args.eval_batches)
    print(f"int8 top-1 {acc_q:.2f}")
    print(f"size fp32 {model_size_mb(float_model):.1f} MB -> int8 {model_size_mb(quantized):.1f} MB")
    torch.jit.save(torch.jit.script(quantized), f"{args.arch}_int8_fx.pt")


if __name__ == "__main__":
    main()
