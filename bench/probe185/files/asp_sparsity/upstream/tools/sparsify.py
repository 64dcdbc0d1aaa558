#!/usr/bin/env python3
"""Sparsify a trained classifier and fine-tune it to recover accuracy.

Two recipes:
  --method asp        NVIDIA ASP 2:4 structured sparsity (apex.contrib.sparsity); the sparse
                      tensor cores of Ampere+ GPUs give the speed-up at TensorRT build time
  --method magnitude  global unstructured magnitude pruning with torch.nn.utils.prune

    python tools/sparsify.py --arch resnet50 --data /imagenet --method asp --epochs 5 --out rn50_2to4.pth
"""
import argparse
import os
import time
import warnings

import torch
import torch.nn as nn
import torch.nn.utils.prune as prune
import torchvision
import torchvision.transforms as T

try:
    from apex.contrib.sparsity import ASP
    HAS_ASP = True
except ImportError:  # apex built without --contrib / no apex at all
    ASP = None
    HAS_ASP = False


def get_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--arch", default="resnet50")
    p.add_argument("--ckpt", default=None, help="dense checkpoint; torchvision weights if omitted")
    p.add_argument("--data", required=True)
    p.add_argument("--method", choices=["asp", "magnitude"], default="asp")
    p.add_argument("--amount", type=float, default=0.5, help="magnitude pruning: global sparsity")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--amp", action="store_true")
    p.add_argument("--out", default="sparse.pth")
    return p.parse_args()


def loaders(args):
    norm = T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    train = torchvision.datasets.ImageFolder(os.path.join(args.data, "train"), T.Compose([
        T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(), norm]))
    val = torchvision.datasets.ImageFolder(os.path.join(args.data, "val"), T.Compose([
        T.Resize(256), T.CenterCrop(224), T.ToTensor(), norm]))
    kw = dict(batch_size=args.batch_size, num_workers=args.workers, pin_memory=True)
    return (torch.utils.data.DataLoader(train, shuffle=True, drop_last=True, **kw),
            torch.utils.data.DataLoader(val, shuffle=False, **kw))


def global_magnitude_prune(model, amount):
    params = [(m, "weight") for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
    prune.global_unstructured(params, pruning_method=prune.L1Unstructured, amount=amount)
    return params


def make_permanent(params):
    for m, name in params:
        prune.remove(m, name)


def sparsity_report(model):
    total, zeros = 0, 0
    for name, p in model.named_parameters():
        if p.dim() > 1:
            total += p.numel()
            zeros += (p == 0).sum().item()
    return zeros / max(total, 1)


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    correct = total = 0
    for images, labels in loader:
        images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)
        correct += (model(images).argmax(1) == labels).sum().item()
        total += labels.numel()
    return 100.0 * correct / total


def finetune(model, optimizer, train_loader, epochs, use_amp):
    criterion = nn.CrossEntropyLoss().cuda()
    scaler = torch.cuda.amp.GradScaler(enabled=use_amp)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs * len(train_loader))
    for epoch in range(epochs):
        model.train()
        t0 = time.time()
        for i, (x, y) in enumerate(train_loader):
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            with torch.cuda.amp.autocast(enabled=use_amp):
                loss = criterion(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            sched.step()
            if i % 100 == 0:
                print(f"epoch {epoch} it {i}/{len(train_loader)} loss {loss.item():.3f} ({time.time() - t0:.0f}s)")


def main():
    args = get_args()
    model = torchvision.models.__dict__[args.arch](weights=None if args.ckpt else "DEFAULT")
    if args.ckpt:
        model.load_state_dict(torch.load(args.ckpt, map_location="cpu"))
    model = model.cuda()
    train_loader, val_loader = loaders(args)
    print(f"dense top-1: {evaluate(model, val_loader):.2f}")

    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-5)

    if args.method == "asp":
        if not HAS_ASP:
            raise SystemExit("--method asp needs apex built with --cpp_ext --cuda_ext (contrib.sparsity)")
        major, _ = torch.cuda.get_device_capability()
        if major < 8:
            warnings.warn("2:4 sparsity only accelerates on sm_80+ (Ampere) sparse tensor cores; "
                          "masks are still applied but no speed-up will be seen")
        ASP.prune_trained_model(model, optimizer)
        params = None
    else:
        params = global_magnitude_prune(model, args.amount)

    print(f"sparsity after masking: {sparsity_report(model) * 100:.1f}%  top-1 {evaluate(model, val_loader):.2f}")
    finetune(model, optimizer, train_loader, args.epochs, args.amp)

    if params is not None:
        make_permanent(params)
    acc = evaluate(model, val_loader)
    print(f"sparse fine-tuned top-1: {acc:.2f}, sparsity {sparsity_report(model) * 100:.1f}%")
    torch.save(model.state_dict(), args.out)
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
