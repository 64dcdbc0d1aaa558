"""Deep Ensembles (Lakshminarayanan et al., 2017) on CIFAR-10 / SVHN.

Trains M independently initialised ResNet-18s with proper scoring rules (NLL) and,
optionally, FGSM adversarial training as in the paper.  Members are trained one after
another on the same GPU(s); use scripts/train_ensemble_parallel.sh to spread them
over several GPUs instead.
"""
from __future__ import print_function

import argparse
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import torch.backends.cudnn as cudnn

import torchvision
import torchvision.transforms as transforms

from models import ResNet18, ResNet34, WideResNet28
from utils import progress_bar, AverageMeter

parser = argparse.ArgumentParser(description="Deep Ensembles training")
parser.add_argument("--dataset", default="cifar10", choices=["cifar10", "cifar100", "svhn"])
parser.add_argument("--arch", default="resnet18", choices=["resnet18", "resnet34", "wrn28"])
parser.add_argument("--lr", default=0.1, type=float, help="learning rate")
parser.add_argument("--epochs", default=200, type=int)
parser.add_argument("--batch-size", default=128, type=int)
parser.add_argument("--num-members", default=5, type=int, help="ensemble size M")
parser.add_argument("--member-offset", default=0, type=int,
                    help="index of the first member (for splitting members across jobs)")
parser.add_argument("--adv", action="store_true", help="FGSM adversarial training")
parser.add_argument("--adv-eps", default=0.01, type=float, help="FGSM step (fraction of input range)")
parser.add_argument("--gpu", default="0", type=str, help="comma-separated GPU ids")
parser.add_argument("--workers", default=4, type=int)
parser.add_argument("--out", default="./checkpoints/ensemble", type=str)
parser.add_argument("--seed", default=0, type=int)
args = parser.parse_args()

os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu

device = "cuda" if torch.cuda.is_available() else "cpu"
best_acc = 0  # best test accuracy

# Data
print("==> Preparing data..")
if args.dataset in ["cifar10", "cifar100"]:
    mean, std = (0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010)
    transform_train = transforms.Compose([
        transforms.RandomCrop(32, padding=4),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize(mean, std),
    ])
else:
    mean, std = (0.4377, 0.4438, 0.4728), (0.1980, 0.2010, 0.1970)
    transform_train = transforms.Compose([transforms.ToTensor(), transforms.Normalize(mean, std)])
transform_test = transforms.Compose([transforms.ToTensor(), transforms.Normalize(mean, std)])

if args.dataset == "cifar10":
    trainset = torchvision.datasets.CIFAR10(root="./data", train=True, download=True, transform=transform_train)
    testset = torchvision.datasets.CIFAR10(root="./data", train=False, download=True, transform=transform_test)
    num_classes = 10
elif args.dataset == "cifar100":
    trainset = torchvision.datasets.CIFAR100(root="./data", train=True, download=True, transform=transform_train)
    testset = torchvision.datasets.CIFAR100(root="./data", train=False, download=True, transform=transform_test)
    num_classes = 100
else:
    trainset = torchvision.datasets.SVHN(root="./data", split="train", download=True, transform=transform_train)
    testset = torchvision.datasets.SVHN(root="./data", split="test", download=True, transform=transform_test)
    num_classes = 10

trainloader = torch.utils.data.DataLoader(
    trainset, batch_size=args.batch_size, shuffle=True, num_workers=args.workers, pin_memory=True)
testloader = torch.utils.data.DataLoader(
    testset, batch_size=100, shuffle=False, num_workers=args.workers)

# pixel-space bounds for the adversarial step (inputs are normalised)
mean_t = torch.tensor(mean).view(1, 3, 1, 1).to(device)
std_t = torch.tensor(std).view(1, 3, 1, 1).to(device)
lower, upper = (0 - mean_t) / std_t, (1 - mean_t) / std_t


def build_model():
    if args.arch == "resnet18":
        return ResNet18(num_classes=num_classes)
    if args.arch == "resnet34":
        return ResNet34(num_classes=num_classes)
    return WideResNet28(widen_factor=10, num_classes=num_classes)


def fgsm(net, inputs, targets, eps):
    """Fast gradient sign method, eps given as a fraction of the [0,1] input range."""
    inputs = inputs.clone().detach().requires_grad_(True)
    loss = F.cross_entropy(net(inputs), targets)
    grad, = torch.autograd.grad(loss, inputs)
    adv = inputs + (eps / std_t) * grad.sign()
    adv = torch.max(torch.min(adv, upper), lower)
    return adv.detach()


def train(epoch, net, optimizer, member):
    print("\n[member %d] Epoch: %d" % (member, epoch))
    net.train()
    train_loss = 0
    correct = 0
    total = 0
    for batch_idx, (inputs, targets) in enumerate(trainloader):
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        outputs = net(inputs)
        loss = criterion(outputs, targets)
        if args.adv:
            adv_inputs = fgsm(net, inputs, targets, args.adv_eps)
            loss = loss + criterion(net(adv_inputs), targets)
        loss.backward()
        optimizer.step()

        train_loss += loss.item()
        _, predicted = outputs.max(1)
        total += targets.size(0)
        correct += predicted.eq(targets).sum().item()

        progress_bar(batch_idx, len(trainloader), "Loss: %.3f | Acc: %.3f%% (%d/%d)"
                     % (train_loss / (batch_idx + 1), 100. * correct / total, correct, total))


def test(epoch, net, member):
    net.eval()
    test_loss = 0
    correct = 0
    total = 0
    nll = AverageMeter()
    with torch.no_grad():
        for batch_idx, (inputs, targets) in enumerate(testloader):
            inputs, targets = inputs.to(device), targets.to(device)
            outputs = net(inputs)
            loss = criterion(outputs, targets)

            test_loss += loss.item()
            _, predicted = outputs.max(1)
            total += targets.size(0)
            correct += predicted.eq(targets).sum().item()
            nll.update(F.cross_entropy(outputs, targets).item(), targets.size(0))

            progress_bar(batch_idx, len(testloader), "Loss: %.3f | Acc: %.3f%% (%d/%d)"
                         % (test_loss / (batch_idx + 1), 100. * correct / total, correct, total))
    acc = 100. * correct / total
    return acc, nll.avg


criterion = nn.CrossEntropyLoss()
os.makedirs(args.out, exist_ok=True)

for member in range(args.member_offset, args.member_offset + args.num_members):
    # every member gets its own seed -> different init and data order
    torch.manual_seed(args.seed + member)
    np.random.seed(args.seed + member)

    print("==> Building model for member %d.." % member)
    net = build_model()
    net = net.to(device)
    if device == "cuda":
        net = torch.nn.DataParallel(net)
        cudnn.benchmark = True

    optimizer = optim.SGD(net.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    best_acc = 0
    start = time.time()
    for epoch in range(args.epochs):
        train(epoch, net, optimizer, member)
        acc, nll = test(epoch, net, member)
        scheduler.step()
        if acc > best_acc:
            print("Saving.. (acc %.2f, nll %.4f)" % (acc, nll))
            state = {
                "net": net.state_dict(),
                "acc": acc,
                "nll": nll,
                "epoch": epoch,
                "member": member,
                "args": vars(args),
            }
            torch.save(state, os.path.join(args.out, "%s_%s_m%d.pth" % (args.dataset, args.arch, member)))
            best_acc = acc
    print("member %d done in %.1f min, best acc %.2f" % (member, (time.time() - start) / 60, best_acc))
