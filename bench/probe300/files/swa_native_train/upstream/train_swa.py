"""Stochastic Weight Averaging with torch.optim.swa_utils (CIFAR-10/100, PreResNet / WideResNet).

Re-implementation of Izmailov et al. (2018) on top of the utilities that ship with PyTorch
(``AveragedModel``, ``SWALR``, ``update_bn``) plus optional mixed precision.

Example:
    python train_swa.py --dataset CIFAR100 --model PreResNet164 --epochs 225 \
        --lr_init 0.1 --wd 3e-4 --swa --swa_start 126 --swa_lr 0.05 --amp
"""
import argparse
import json
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
import torchvision.transforms as T
from torch.optim.swa_utils import AveragedModel, SWALR, update_bn, get_ema_multi_avg_fn

import models


def get_args():
    p = argparse.ArgumentParser(description="SWA training (torch.optim.swa_utils)")
    p.add_argument("--dir", type=str, default="./runs/swa", help="output directory")
    p.add_argument("--dataset", type=str, default="CIFAR10", choices=["CIFAR10", "CIFAR100"])
    p.add_argument("--data_path", type=str, default="~/data")
    p.add_argument("--model", type=str, default="PreResNet164")
    p.add_argument("--batch_size", type=int, default=128)
    p.add_argument("--num_workers", type=int, default=4)
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--lr_init", type=float, default=0.1)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--wd", type=float, default=3e-4)
    p.add_argument("--swa", action="store_true")
    p.add_argument("--swa_start", type=int, default=161)
    p.add_argument("--swa_lr", type=float, default=0.05)
    p.add_argument("--anneal_epochs", type=int, default=5)
    p.add_argument("--ema", action="store_true", help="use an EMA instead of an equal average")
    p.add_argument("--ema_decay", type=float, default=0.999)
    p.add_argument("--amp", action="store_true", help="mixed precision training")
    p.add_argument("--gpu", type=int, default=0, help="which GPU to use")
    p.add_argument("--eval_freq", type=int, default=5)
    p.add_argument("--seed", type=int, default=1)
    return p.parse_args()


def build_loaders(args):
    if args.dataset == "CIFAR10":
        mean, std, ds_cls, num_classes = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616), torchvision.datasets.CIFAR10, 10
    else:
        mean, std, ds_cls, num_classes = (0.5071, 0.4865, 0.4409), (0.2673, 0.2564, 0.2762), torchvision.datasets.CIFAR100, 100

    transform_train = T.Compose([
        T.RandomCrop(32, padding=4),
        T.RandomHorizontalFlip(),
        T.ToTensor(),
        T.Normalize(mean, std),
    ])
    transform_test = T.Compose([T.ToTensor(), T.Normalize(mean, std)])

    root = os.path.expanduser(args.data_path)
    train_set = ds_cls(root, train=True, download=True, transform=transform_train)
    test_set = ds_cls(root, train=False, download=True, transform=transform_test)

    train_loader = torch.utils.data.DataLoader(
        train_set, batch_size=args.batch_size, shuffle=True,
        num_workers=args.num_workers, pin_memory=True, drop_last=False,
    )
    test_loader = torch.utils.data.DataLoader(
        test_set, batch_size=args.batch_size, shuffle=False,
        num_workers=args.num_workers, pin_memory=True,
    )
    return train_loader, test_loader, num_classes


def lr_schedule(epoch, args):
    # the piecewise-linear schedule from the SWA paper, used before swa_start
    t = epoch / (args.swa_start if args.swa else args.epochs)
    lr_ratio = args.swa_lr / args.lr_init if args.swa else 0.01
    if t <= 0.5:
        factor = 1.0
    elif t <= 0.9:
        factor = 1.0 - (1.0 - lr_ratio) * (t - 0.5) / 0.4
    else:
        factor = lr_ratio
    return args.lr_init * factor


def train_one_epoch(model, loader, optimizer, scaler, device, amp_dtype, use_amp):
    model.train()
    loss_sum, correct, n = 0.0, 0, 0
    for x, y in loader:
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        with torch.cuda.amp.autocast(enabled=use_amp, dtype=amp_dtype):
            out = model(x)
            loss = F.cross_entropy(out, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

        loss_sum += loss.item() * x.size(0)
        correct += (out.argmax(1) == y).sum().item()
        n += x.size(0)
    return {"loss": loss_sum / n, "accuracy": 100.0 * correct / n}


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    loss_sum, correct, n = 0.0, 0, 0
    nll_terms, conf_sum = 0.0, 0.0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        out = model(x)
        loss_sum += F.cross_entropy(out, y, reduction="sum").item()
        probs = out.softmax(dim=-1)
        conf, pred = probs.max(dim=-1)
        correct += (pred == y).sum().item()
        conf_sum += conf.sum().item()
        nll_terms += -torch.log(probs[torch.arange(len(y), device=y.device), y] + 1e-12).sum().item()
        n += x.size(0)
    return {
        "loss": loss_sum / n,
        "accuracy": 100.0 * correct / n,
        "nll": nll_terms / n,
        "avg_conf": conf_sum / n,
    }


def main():
    args = get_args()
    os.makedirs(args.dir, exist_ok=True)
    with open(os.path.join(args.dir, "args.json"), "w") as f:
        json.dump(vars(args), f, indent=2)

    torch.manual_seed(args.seed)
    torch.backends.cudnn.benchmark = True

    device = torch.device(f"cuda:{args.gpu}" if torch.cuda.is_available() else "cpu")
    print(f"Running on {device}")

    # bf16 is only worth it on Ampere and newer; older cards get fp16 + loss scaling
    use_bf16 = args.amp and torch.cuda.get_device_capability()[0] >= 8
    amp_dtype = torch.bfloat16 if use_bf16 else torch.float16

    train_loader, test_loader, num_classes = build_loaders(args)

    model_cfg = getattr(models, args.model)
    model = model_cfg.base(*model_cfg.args, num_classes=num_classes, **model_cfg.kwargs)
    model = model.to(device)

    optimizer = torch.optim.SGD(
        model.parameters(), lr=args.lr_init, momentum=args.momentum, weight_decay=args.wd
    )
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp and not use_bf16)

    if args.swa:
        if args.ema:
            swa_model = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(args.ema_decay))
        else:
            swa_model = AveragedModel(model)
        swa_scheduler = SWALR(
            optimizer, swa_lr=args.swa_lr, anneal_epochs=args.anneal_epochs, anneal_strategy="cos"
        )
    else:
        swa_model, swa_scheduler = None, None

    history = []
    for epoch in range(args.epochs):
        t0 = time.time()
        swa_phase = args.swa and epoch >= args.swa_start
        if not swa_phase:
            lr = lr_schedule(epoch, args)
            for g in optimizer.param_groups:
                g["lr"] = lr

        train_res = train_one_epoch(
            model, train_loader, optimizer, scaler, device, amp_dtype, args.amp
        )

        if swa_phase:
            swa_model.update_parameters(model)
            swa_scheduler.step()

        row = {"epoch": epoch + 1, "lr": optimizer.param_groups[0]["lr"], **{f"train_{k}": v for k, v in train_res.items()}}
        if epoch % args.eval_freq == args.eval_freq - 1 or epoch == args.epochs - 1:
            row.update({f"test_{k}": v for k, v in evaluate(model, test_loader, device).items()})
            if swa_phase:
                # recompute BN statistics for the averaged weights before evaluating them
                update_bn(train_loader, swa_model, device=device)
                row.update({f"swa_{k}": v for k, v in evaluate(swa_model, test_loader, device).items()})
        row["time"] = time.time() - t0
        history.append(row)
        print(" | ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()))

    torch.save({"state_dict": model.state_dict(), "epoch": args.epochs}, os.path.join(args.dir, "sgd_final.pt"))
    if swa_model is not None:
        update_bn(train_loader, swa_model, device=device)
        torch.save({"state_dict": swa_model.module.state_dict(), "n_averaged": swa_model.n_averaged.item()},
                   os.path.join(args.dir, "swa_final.pt"))
    with open(os.path.join(args.dir, "history.json"), "w") as f:
        json.dump(history, f)


if __name__ == "__main__":
    main()
