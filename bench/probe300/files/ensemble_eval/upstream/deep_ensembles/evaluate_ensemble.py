"""Evaluate a trained deep ensemble: accuracy, NLL, Brier, ECE, and OOD detection.

Loads every member checkpoint written by train_ensemble.py, averages the softmax
outputs, and reports in-distribution calibration plus CIFAR-10 -> SVHN OOD AUROC
using predictive entropy and mutual information (BALD) as scores.

    python deep_ensembles/evaluate_ensemble.py --ckpt-dir checkpoints/ensemble --members 5
"""
import argparse
import glob
import json
import os
from collections import OrderedDict

import numpy as np
import torch
import torch.nn.functional as F
import torchvision
import torchvision.transforms as transforms
from sklearn.metrics import roc_auc_score, average_precision_score

from models import ResNet18, ResNet34, WideResNet28

parser = argparse.ArgumentParser()
parser.add_argument("--ckpt-dir", required=True)
parser.add_argument("--dataset", default="cifar10")
parser.add_argument("--ood-dataset", default="svhn")
parser.add_argument("--arch", default="resnet18")
parser.add_argument("--members", type=int, default=5)
parser.add_argument("--batch-size", type=int, default=500)
parser.add_argument("--gpu", type=int, default=0)
parser.add_argument("--n-bins", type=int, default=15)
parser.add_argument("--out", default=None)
args = parser.parse_args()

torch.cuda.set_device(args.gpu)

mean, std = (0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010)
tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize(mean, std)])

in_set = torchvision.datasets.CIFAR10(root="./data", train=False, download=True, transform=tf)
ood_set = torchvision.datasets.SVHN(root="./data", split="test", download=True, transform=tf)
in_loader = torch.utils.data.DataLoader(in_set, batch_size=args.batch_size, shuffle=False, num_workers=4)
ood_loader = torch.utils.data.DataLoader(ood_set, batch_size=args.batch_size, shuffle=False, num_workers=4)


def build_model(arch, num_classes=10):
    return {"resnet18": ResNet18, "resnet34": ResNet34}.get(arch, WideResNet28)(num_classes=num_classes)


def strip_module_prefix(state_dict):
    # members trained with nn.DataParallel carry a "module." prefix
    out = OrderedDict()
    for k, v in state_dict.items():
        out[k[len("module."):] if k.startswith("module.") else k] = v
    return out


def load_member(path):
    ckpt = torch.load(path, map_location="cuda:%d" % args.gpu)
    net = build_model(args.arch)
    net.load_state_dict(strip_module_prefix(ckpt["net"]))
    return net.cuda().eval()


@torch.no_grad()
def member_probs(net, loader):
    probs = []
    for x, _ in loader:
        x = x.cuda(non_blocking=True)
        probs.append(F.softmax(net(x), dim=1).cpu())
    return torch.cat(probs)


def labels_of(loader):
    if hasattr(loader.dataset, "targets"):
        return torch.as_tensor(loader.dataset.targets)
    return torch.as_tensor(loader.dataset.labels)


def entropy(p, eps=1e-12):
    return -(p * torch.log(p + eps)).sum(dim=-1)


def mutual_information(member_p):
    # member_p: [M, N, C]
    mean_p = member_p.mean(0)
    return entropy(mean_p) - entropy(member_p).mean(0)


def ece_score(probs, labels, n_bins=15):
    conf, pred = probs.max(1)
    acc = pred.eq(labels).float()
    bins = torch.linspace(0, 1, n_bins + 1)
    ece = torch.zeros(1)
    for lo, hi in zip(bins[:-1], bins[1:]):
        m = (conf > lo) & (conf <= hi)
        if m.any():
            ece += m.float().mean() * (conf[m].mean() - acc[m].mean()).abs()
    return ece.item()


def brier(probs, labels):
    onehot = F.one_hot(labels, probs.shape[1]).float()
    return ((probs - onehot) ** 2).sum(1).mean().item()


def main():
    paths = sorted(glob.glob(os.path.join(args.ckpt_dir, "%s_%s_m*.pth" % (args.dataset, args.arch))))
    paths = paths[: args.members]
    assert len(paths) > 0, "no checkpoints found in %s" % args.ckpt_dir
    print("evaluating %d members on GPU %d (%s)" % (len(paths), args.gpu, torch.cuda.get_device_name(args.gpu)))

    in_probs, ood_probs = [], []
    for p in paths:
        net = load_member(p)
        in_probs.append(member_probs(net, in_loader))
        ood_probs.append(member_probs(net, ood_loader))
        del net
        torch.cuda.empty_cache()

    in_probs = torch.stack(in_probs)      # [M, N, C]
    ood_probs = torch.stack(ood_probs)
    y = labels_of(in_loader)

    results = {}
    for m in range(1, len(paths) + 1):
        p = in_probs[:m].mean(0)
        results[m] = {
            "acc": p.argmax(1).eq(y).float().mean().item() * 100,
            "nll": F.nll_loss(torch.log(p + 1e-12), y).item(),
            "brier": brier(p, y),
            "ece": ece_score(p, y, args.n_bins),
        }
        q = ood_probs[:m].mean(0)
        scores_in, scores_out = entropy(p), entropy(q)
        lab = np.concatenate([np.zeros(len(scores_in)), np.ones(len(scores_out))])
        results[m]["auroc_entropy"] = roc_auc_score(lab, np.concatenate([scores_in.numpy(), scores_out.numpy()]))
        results[m]["aupr_entropy"] = average_precision_score(lab, np.concatenate([scores_in.numpy(), scores_out.numpy()]))
        if m > 1:
            mi_in, mi_out = mutual_information(in_probs[:m]), mutual_information(ood_probs[:m])
            results[m]["auroc_mi"] = roc_auc_score(lab, np.concatenate([mi_in.numpy(), mi_out.numpy()]))
        print("M=%d  " % m + "  ".join("%s=%.4f" % (k, v) for k, v in results[m].items()))

    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
