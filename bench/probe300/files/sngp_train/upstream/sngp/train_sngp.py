"""Train an SNGP (spectral-normalised WRN-28-10 + random-feature GP head) on CIFAR-10/100.

Follows the uncertainty-baselines ``cifar/sngp.py`` recipe: SGD is replaced by AdamW for
the ViT variant, the GP covariance is reset at the start of every epoch, and the
mean-field factor is applied only at evaluation time.

    python sngp/train_sngp.py --dataset cifar10 --backbone wrn28 --epochs 250
    python sngp/train_sngp.py --backbone vit_s16 --optimizer adamw --compile --dtype bfloat16
"""
import argparse
import inspect
import json
import math
import os
import time
from contextlib import nullcontext

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
import torchvision.transforms as T

from sngp.layers import SNGPHead, sngp_uncertainty
from sngp.backbones import wrn28_10_sn, vit_small_sn
from sngp.metrics import expected_calibration_error, ood_auroc

parser = argparse.ArgumentParser()
parser.add_argument("--dataset", default="cifar10", choices=["cifar10", "cifar100"])
parser.add_argument("--ood_dataset", default="svhn")
parser.add_argument("--data_dir", default="./data")
parser.add_argument("--backbone", default="wrn28", choices=["wrn28", "vit_s16"])
parser.add_argument("--spec_norm_bound", type=float, default=6.0)
parser.add_argument("--num_inducing", type=int, default=1024)
parser.add_argument("--gp_cov_ridge_penalty", type=float, default=1.0)
parser.add_argument("--gp_cov_momentum", type=float, default=-1)
parser.add_argument("--mean_field_factor", type=float, default=math.pi / 8.0)
parser.add_argument("--optimizer", default="sgd", choices=["sgd", "adamw"])
parser.add_argument("--lr", type=float, default=0.08)
parser.add_argument("--weight_decay", type=float, default=3e-4)
parser.add_argument("--epochs", type=int, default=250)
parser.add_argument("--batch_size", type=int, default=128)
parser.add_argument("--device", default="cuda", help="cuda | cuda:N | cpu")
parser.add_argument("--dtype", default="float16", choices=["float32", "float16", "bfloat16"])
parser.add_argument("--compile", action="store_true", help="torch.compile the backbone")
parser.add_argument("--out_dir", default="./out/sngp")
parser.add_argument("--seed", type=int, default=42)
args = parser.parse_args()

torch.manual_seed(args.seed)
np.random.seed(args.seed)
torch.backends.cuda.matmul.allow_tf32 = True  # allow tf32 on matmul
torch.backends.cudnn.allow_tf32 = True  # allow tf32 on cudnn

device = torch.device(args.device)
device_type = "cuda" if "cuda" in args.device else "cpu"  # for later use in torch.autocast
ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[args.dtype]
if args.dtype == "bfloat16" and device_type == "cuda" and not torch.cuda.is_bf16_supported():
    print("bf16 not supported on this GPU, falling back to fp16")
    ptdtype = torch.float16
ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type=device_type, dtype=ptdtype)

# ----------------------------------------------------------------------------- data
num_classes = 10 if args.dataset == "cifar10" else 100
mean, std = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)
img_size = 224 if args.backbone == "vit_s16" else 32
train_tf = T.Compose([
    T.RandomResizedCrop(img_size, scale=(0.6, 1.0)) if img_size != 32 else T.RandomCrop(32, padding=4),
    T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize(mean, std),
])
test_tf = T.Compose([T.Resize(img_size), T.ToTensor(), T.Normalize(mean, std)])
DS = torchvision.datasets.CIFAR10 if args.dataset == "cifar10" else torchvision.datasets.CIFAR100
train_set = DS(args.data_dir, train=True, download=True, transform=train_tf)
test_set = DS(args.data_dir, train=False, download=True, transform=test_tf)
ood_set = torchvision.datasets.SVHN(args.data_dir, split="test", download=True, transform=test_tf)

loader_kw = dict(num_workers=8, pin_memory=(device_type == "cuda"))
train_loader = torch.utils.data.DataLoader(train_set, batch_size=args.batch_size, shuffle=True, drop_last=True, **loader_kw)
test_loader = torch.utils.data.DataLoader(test_set, batch_size=512, shuffle=False, **loader_kw)
ood_loader = torch.utils.data.DataLoader(ood_set, batch_size=512, shuffle=False, **loader_kw)

# ----------------------------------------------------------------------------- model
if args.backbone == "wrn28":
    backbone, feat_dim = wrn28_10_sn(spec_norm_bound=args.spec_norm_bound), 640
else:
    backbone, feat_dim = vit_small_sn(img_size=img_size, spec_norm_bound=args.spec_norm_bound), 384

model = SNGPHead(
    backbone, feat_dim, num_classes,
    num_inducing=args.num_inducing,
    mean_field_factor=args.mean_field_factor,
    gp_cov_momentum=args.gp_cov_momentum,
    gp_cov_ridge_penalty=args.gp_cov_ridge_penalty,
)
model.to(device)

if args.compile:
    print("compiling the backbone... (takes a minute)")
    model.backbone = torch.compile(model.backbone, mode="max-autotune")

# ----------------------------------------------------------------------------- optimizer
if args.optimizer == "adamw":
    decay, no_decay = [], []
    for n, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.dim() < 2 or "norm" in n else decay).append(p)
    groups = [{"params": decay, "weight_decay": args.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    fused_available = "fused" in inspect.signature(torch.optim.AdamW).parameters
    use_fused = fused_available and device_type == "cuda"
    extra_args = dict(fused=True) if use_fused else dict()
    optimizer = torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, 0.999), **extra_args)
    print(f"using fused AdamW: {use_fused}")
else:
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9,
                                weight_decay=args.weight_decay, nesterov=True)
scheduler = torch.optim.lr_scheduler.OneCycleLR(
    optimizer, max_lr=args.lr, total_steps=args.epochs * len(train_loader), pct_start=0.1)
scaler = torch.cuda.amp.GradScaler(enabled=(args.dtype == "float16"))


# ----------------------------------------------------------------------------- loops
def train_epoch(epoch):
    model.train()
    model.reset_covariance()  # fresh precision matrix every epoch (momentum = -1)
    tot, correct, loss_sum = 0, 0, 0.0
    t0 = time.time()
    for it, (x, y) in enumerate(train_loader):
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        with ctx:
            logits = model(x)
            loss = F.cross_entropy(logits, y)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        tot += y.numel()
        correct += (logits.argmax(-1) == y).sum().item()
        loss_sum += loss.item() * y.numel()
    dt = time.time() - t0
    return {"loss": loss_sum / tot, "acc": correct / tot, "imgs_per_s": tot / dt}


@torch.no_grad()
def predict(loader):
    model.eval()
    all_logits, all_y = [], []
    for x, y in loader:
        x = x.to(device, non_blocking=True)
        with ctx:
            logits = model(x)
        all_logits.append(logits.float().cpu())
        all_y.append(y)
    return torch.cat(all_logits), torch.cat(all_y)


history = []
os.makedirs(args.out_dir, exist_ok=True)
for epoch in range(args.epochs):
    tr = train_epoch(epoch)
    row = {"epoch": epoch, **{f"train_{k}": v for k, v in tr.items()}}
    if epoch % 10 == 9 or epoch == args.epochs - 1:
        logits, y = predict(test_loader)
        ood_logits, _ = predict(ood_loader)
        probs = logits.softmax(-1)
        row["test_acc"] = (probs.argmax(-1) == y).float().mean().item()
        row["test_nll"] = F.cross_entropy(logits, y).item()
        row["test_ece"] = expected_calibration_error(probs.numpy(), y.numpy())
        row["ood_auroc_ds"] = ood_auroc(sngp_uncertainty(logits, num_classes).numpy(),
                                        sngp_uncertainty(ood_logits, num_classes).numpy())
        row["ood_auroc_maxprob"] = ood_auroc(-probs.max(-1)[0].numpy(), -ood_logits.softmax(-1).max(-1)[0].numpy())
    history.append(row)
    print(json.dumps(row))

torch.save(model.state_dict(), os.path.join(args.out_dir, "sngp_final.pt"))
with open(os.path.join(args.out_dir, "history.json"), "w") as f:
    json.dump(history, f)
