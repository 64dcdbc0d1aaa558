"""Low-bit (W4A4) QAT of a CNV-style network with Brevitas, CIFAR-10.

    python train_w4a4.py --gpu 0 --epochs 200 --weight-bits 4 --act-bits 4
    python train_w4a4.py --gpu -1 ...        # CPU (slow, for debugging)
"""
import argparse
import os
import random

import numpy as np
import torch
import torch.backends.cudnn as cudnn
import torch.nn as nn
import torch.nn.functional as F
from torchvision import datasets, transforms

import brevitas.nn as qnn
from brevitas.core.restrict_val import RestrictValueType
from brevitas.export import export_onnx_qcdq
from brevitas.quant import Int8ActPerTensorFloat, Int8WeightPerTensorFloat


class CommonWeightQuant(Int8WeightPerTensorFloat):
    scaling_min_val = 2e-16
    restrict_scaling_type = RestrictValueType.LOG_FP


class CommonActQuant(Int8ActPerTensorFloat):
    scaling_min_val = 2e-16
    restrict_scaling_type = RestrictValueType.LOG_FP


class CNV(nn.Module):
    def __init__(self, num_classes=10, weight_bits=4, act_bits=4, in_ch=3):
        super().__init__()
        wq = dict(weight_quant=CommonWeightQuant, weight_bit_width=weight_bits)
        aq = dict(act_quant=CommonActQuant, bit_width=act_bits)
        self.inp = qnn.QuantIdentity(act_quant=CommonActQuant, bit_width=8, return_quant_tensor=True)
        chans = [(in_ch, 64), (64, 64), (64, 128), (128, 128), (128, 256), (256, 256)]
        layers = []
        for i, (ci, co) in enumerate(chans):
            layers += [qnn.QuantConv2d(ci, co, 3, bias=False, **wq), nn.BatchNorm2d(co),
                       qnn.QuantReLU(return_quant_tensor=True, **aq)]
            if i in (1, 3):
                layers.append(nn.MaxPool2d(2))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(
            qnn.QuantLinear(256, 512, bias=False, **wq), nn.BatchNorm1d(512), qnn.QuantReLU(**aq),
            qnn.QuantLinear(512, num_classes, bias=True, **wq))

    def forward(self, x):
        x = self.inp(2.0 * x - 1.0)
        x = self.features(x)
        x = x.value if hasattr(x, "value") else x
        x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return self.classifier(x)


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    cudnn.deterministic = True
    cudnn.benchmark = False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpu", type=int, default=0, help="GPU id, -1 for CPU")
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--lr", type=float, default=0.02)
    ap.add_argument("--weight-bits", type=int, default=4)
    ap.add_argument("--act-bits", type=int, default=4)
    ap.add_argument("--debug", action="store_true")
    ap.add_argument("--export", default="cnv_w4a4_qcdq.onnx")
    args = ap.parse_args()

    if args.debug:
        os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
    set_seed(1)
    use_gpu = args.gpu >= 0 and torch.cuda.is_available()
    if use_gpu:
        torch.cuda.set_device(args.gpu)
    device = torch.device(f"cuda:{args.gpu}" if use_gpu else "cpu")

    tf_train = transforms.Compose([transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip(),
                                   transforms.ToTensor()])
    train = datasets.CIFAR10("./data", train=True, download=True, transform=tf_train)
    test = datasets.CIFAR10("./data", train=False, download=True, transform=transforms.ToTensor())
    train_loader = torch.utils.data.DataLoader(train, batch_size=100, shuffle=True, num_workers=4,
                                               pin_memory=use_gpu)
    test_loader = torch.utils.data.DataLoader(test, batch_size=100, shuffle=False, num_workers=4)

    model = CNV(weight_bits=args.weight_bits, act_bits=args.act_bits)
    if use_gpu:
        model = model.cuda(args.gpu)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=0)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[80, 140, 180], gamma=0.1)

    best = 0.0
    for epoch in range(args.epochs):
        model.train()
        for x, y in train_loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            loss = criterion(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
        model.eval()
        correct = 0
        with torch.no_grad():
            for x, y in test_loader:
                x, y = x.to(device), y.to(device)
                correct += (model(x).argmax(1) == y).sum().item()
        acc = 100.0 * correct / len(test)
        best = max(best, acc)
        print(f"epoch {epoch:3d} loss {loss.item():.3f} acc {acc:.2f} best {best:.2f}")

    model.cpu().eval()
    export_onnx_qcdq(model, args=torch.randn(1, 3, 32, 32), export_path=args.export)
    print("exported", args.export)


if __name__ == "__main__":
    main()
