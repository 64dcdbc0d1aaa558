#!/usr/bin/env python
# coding: utf-8
# White-box Attack on CIFAR10
#
# Exported from "demos/White-box Attack on CIFAR10.ipynb".
# Runs every white-box attack in torchattacks against the RobustBench `Standard`
# model (and a Linf adversarially trained one) and reports robust accuracy and time.
# Tested on a single RTX 3090 / A100.

import os
import sys
import time
import argparse

import numpy as np
import torch
import torch.nn as nn
import torchvision
import torchvision.utils

sys.path.insert(0, '..')
import torchattacks

from robustbench.data import load_cifar10
from robustbench.utils import load_model, clean_accuracy

from utils import imshow, get_pred


def parse_args():
    parser = argparse.ArgumentParser(description="torchattacks white-box demo")
    parser.add_argument("--model", default="Standard", type=str)
    parser.add_argument("--n-examples", default=100, type=int)
    parser.add_argument("--gpu", default="0", type=str, help="GPU id(s) to use")
    parser.add_argument("--save-dir", default="./adv_examples", type=str)
    parser.add_argument("--show", action="store_true")
    parser.add_argument("--fast", action="store_true", help="only run a small subset of attacks")
    return parser.parse_args()


args = parse_args()
os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu

print("PyTorch", torch.__version__)
print("Torchvision", torchvision.__version__)
print("Torchattacks", torchattacks.__version__)
print("Numpy", np.__version__)

# ## 1. Load Data

images, labels = load_cifar10(n_examples=args.n_examples)
print('[Data loaded]')

# ## 2. Load Model

device = "cuda"
model = load_model(args.model, norm='Linf').to(device)
acc = clean_accuracy(model, images.to(device), labels.to(device))
print('[Model loaded]')
print('Acc: %2.2f %%' % (acc * 100))

if torch.cuda.is_available():
    print("Device:", torch.cuda.get_device_name(0))

# ## 3. Adversarial Attack

atks = [
    torchattacks.FGSM(model, eps=8/255),
    torchattacks.BIM(model, eps=8/255, alpha=2/255, steps=100),
    torchattacks.RFGSM(model, eps=8/255, alpha=2/255, steps=100),
    torchattacks.CW(model, c=1, lr=0.01, steps=100, kappa=0),
    torchattacks.PGD(model, eps=8/255, alpha=2/225, steps=100, random_start=True),
    torchattacks.PGDL2(model, eps=1, alpha=0.2, steps=100),
    torchattacks.EOTPGD(model, eps=8/255, alpha=2/255, steps=100, eot_iter=2),
    torchattacks.FFGSM(model, eps=8/255, alpha=10/255),
    torchattacks.TPGD(model, eps=8/255, alpha=2/255, steps=100),
    torchattacks.MIFGSM(model, eps=8/255, alpha=2/255, steps=100, decay=0.1),
    torchattacks.VANILA(model),
    torchattacks.GN(model, std=0.1),
    torchattacks.APGD(model, eps=8/255, steps=100, eot_iter=1, n_restarts=1, loss='ce'),
    torchattacks.APGD(model, eps=8/255, steps=100, eot_iter=1, n_restarts=1, loss='dlr'),
    torchattacks.APGDT(model, eps=8/255, steps=100, eot_iter=1, n_restarts=1),
    torchattacks.FAB(model, eps=8/255, steps=100, n_classes=10, n_restarts=1, targeted=False),
    torchattacks.FAB(model, eps=8/255, steps=100, n_classes=10, n_restarts=1, targeted=True),
    torchattacks.Square(model, eps=8/255, n_queries=5000, n_restarts=1, loss='ce'),
    torchattacks.AutoAttack(model, eps=8/255, n_classes=10, version='standard'),
    torchattacks.OnePixel(model, pixels=5, inf_batch=50),
    torchattacks.DeepFool(model, steps=100),
    torchattacks.DIFGSM(model, eps=8/255, alpha=2/255, steps=100, diversity_prob=0.5, resize_rate=0.9),
]

if args.fast:
    atks = atks[:5]

print("Adversarial Image & Predicted Label")

os.makedirs(args.save_dir, exist_ok=True)
results = []

for atk in atks:

    print("-"*70)
    print(atk)

    correct = 0
    total = 0

    torch.cuda.synchronize()
    start = time.time()
    adv_images = atk(images, labels)
    torch.cuda.synchronize()  # wait for the attack kernels before stopping the clock
    elapsed = time.time() - start

    labels_dev = labels.cuda()
    outputs = model(adv_images)
    _, pre = torch.max(outputs.data, 1)

    total += len(images)
    correct += (pre == labels_dev).sum()

    rob_acc = 100 * float(correct) / total
    print('Total elapsed time (sec): %.2f' % elapsed)
    print('Robust accuracy: %.2f %%' % rob_acc)
    results.append((atk.attack, rob_acc, elapsed))

    if args.show:
        idx = 0
        pre = get_pred(model, adv_images[idx:idx+1], device)
        imshow(adv_images[idx:idx+1], title="True:%d, Pre:%d" % (labels[idx], pre))

    torch.save({"adv": adv_images.cpu(), "labels": labels},
               os.path.join(args.save_dir, "%s.pt" % atk.attack))

# ## 4. Attack on a model that lives on another GPU
#
# Attacks take their device from the model at construction time. When the model is
# moved afterwards, the attack has to be told explicitly.

if torch.cuda.device_count() > 1:
    model = model.to("cuda:1")
    atk = torchattacks.PGD(model, eps=8/255, alpha=2/255, steps=10)
    atk.set_device(torch.device("cuda:1"))
    adv_images = atk(images, labels)
    print("PGD on cuda:1 ->", adv_images.device)

# ## 5. Summary

print("=" * 70)
print("%-12s %10s %10s" % ("attack", "rob_acc", "time(s)"))
for name, rob_acc, elapsed in results:
    print("%-12s %10.2f %10.2f" % (name, rob_acc, elapsed))

print("max memory allocated: %.1f MiB" % (torch.cuda.max_memory_allocated() / 2**20))
