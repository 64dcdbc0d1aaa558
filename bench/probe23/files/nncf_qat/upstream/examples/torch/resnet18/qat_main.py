"""NNCF quantization-aware training for ResNet-18 on Tiny-ImageNet.

1. nncf.quantize() inserts FakeQuantize operations and initializes them on a
   calibration subset (post-training quantization).
2. The quantized model is fine-tuned for a few epochs (QAT) on the GPU.
3. The result is exported to OpenVINO IR for INT8 inference on Intel CPUs.
"""
import time
from pathlib import Path

import nncf
import openvino as ov
import torch
import torch.nn as nn
import torchvision.models as models
from nncf.common.logging.logger import set_log_level
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

ROOT = Path(__file__).parent.resolve()
DATASET_PATH = Path("~/.cache/nncf/datasets/tiny-imagenet-200").expanduser()
BASE_CKPT = ROOT / "resnet18_tiny_imagenet_fp32.pth"
IMAGE_SIZE = 64
BATCH_SIZE = 128
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def create_loaders():
    norm = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train_ds = datasets.ImageFolder(DATASET_PATH / "train", transforms.Compose([
        transforms.Resize(IMAGE_SIZE), transforms.RandomHorizontalFlip(), transforms.ToTensor(), norm]))
    val_ds = datasets.ImageFolder(DATASET_PATH / "val", transforms.Compose([
        transforms.Resize(IMAGE_SIZE), transforms.ToTensor(), norm]))
    train = DataLoader(train_ds, batch_size=BATCH_SIZE, shuffle=True, num_workers=8, pin_memory=True)
    val = DataLoader(val_ds, batch_size=BATCH_SIZE, shuffle=False, num_workers=8, pin_memory=True)
    return train, val


def validate(model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for images, target in loader:
            images, target = images.to(device), target.to(device)
            correct += (model(images).argmax(1) == target).sum().item()
            total += target.numel()
    return correct / total


def train_epoch(model, loader, criterion, optimizer):
    model.train()
    for i, (images, target) in enumerate(loader):
        images = images.to(device, non_blocking=True)
        target = target.to(device, non_blocking=True)
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i % 100 == 0:
            print(f"  it {i:4d} loss {loss.item():.4f}")


def main():
    set_log_level(20)
    train_loader, val_loader = create_loaders()

    model = models.resnet18(num_classes=200)
    model.load_state_dict(torch.load(BASE_CKPT, map_location="cpu"))
    model.to(device)
    acc_fp32 = validate(model, val_loader)
    print(f"FP32 top-1: {acc_fp32:.3f}")

    def transform_fn(data_item):
        images, _ = data_item
        return images.to(device)

    calibration_dataset = nncf.Dataset(train_loader, transform_fn)
    quantized_model = nncf.quantize(model, calibration_dataset, subset_size=300,
                                    target_device=nncf.TargetDevice.CPU)
    torch.cuda.empty_cache()
    print(f"INT8 (PTQ) top-1: {validate(quantized_model, val_loader):.3f}")

    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.Adam(quantized_model.parameters(), lr=1e-5)
    for epoch in range(3):
        t0 = time.time()
        train_epoch(quantized_model, train_loader, criterion, optimizer)
        print(f"epoch {epoch}: top-1 {validate(quantized_model, val_loader):.3f} ({time.time() - t0:.0f}s)")

    quantized_model.cpu().eval()
    example_input = torch.randn(1, 3, IMAGE_SIZE, IMAGE_SIZE)
    ov_model = ov.convert_model(quantized_model, example_input=example_input,
                                input=[-1, 3, IMAGE_SIZE, IMAGE_SIZE])
    ov.save_model(ov_model, ROOT / "resnet18_int8.xml")
    compiled = ov.Core().compile_model(ov_model, "CPU")
    print("exported; OpenVINO output shape", compiled(example_input.numpy())[0].shape)


if __name__ == "__main__":
    main()
