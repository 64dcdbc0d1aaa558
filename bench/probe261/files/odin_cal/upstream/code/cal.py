# -*- coding: utf-8 -*-
"""
Created on Sat Sep 19 20:55:56 2015

@author: liangshiyu

Usage (from code/):
    python cal.py --nn densenet10 --out_dataset Imagenet --magnitude 0.0014 \
        --temperature 1000 --gpu 0
"""

from __future__ import print_function
import argparse
import os
import torch
from torch.autograd import Variable
import torch.nn as nn
import torch.nn.functional as F
import numpy as np
import torch.optim as optim
import torchvision
import torchvision.transforms as transforms
import time
from scipy import misc
import calMetric as m
import calData as d
# CUDA_DEVICE = 0

start = time.time()
# loading data sets

transform = transforms.Compose([
    transforms.ToTensor(),
    transforms.Normalize((125.3 / 255, 123.0 / 255, 113.9 / 255),
                         (63.0 / 255, 62.1 / 255.0, 66.7 / 255.0)),
])

# loading neural network

# Name of neural networks
# Densenet trained on CIFAR-10:         densenet10
# Densenet trained on CIFAR-100:        densenet100
# Densenet trained on WideResNet-10:    wideresnet10
# Densenet trained on WideResNet-100:   wideresnet100
# nnName = "densenet10"

# imName = "Imagenet"

criterion = nn.CrossEntropyLoss()


def test(nnName, dataName, CUDA_DEVICE, epsilon, temperature):
    # the .pth files are whole pickled nn.Module objects saved from the GPU
    net1 = torch.load("../models/{}.pth".format(nnName))
    optimizer1 = optim.SGD(net1.parameters(), lr=0, momentum=0)
    net1.cuda(CUDA_DEVICE)
    net1.eval()

    if dataName != "Uniform" and dataName != "Gaussian":
        testsetout = torchvision.datasets.ImageFolder(
            "../data/{}".format(dataName), transform=transform)
        testloaderOut = torch.utils.data.DataLoader(testsetout,
                                                    batch_size=1,
                                                    shuffle=False,
                                                    num_workers=2)

    if nnName == "densenet10" or nnName == "wideresnet10":
        testset = torchvision.datasets.CIFAR10(root='../data',
                                               train=False,
                                               download=True,
                                               transform=transform)
        testloaderIn = torch.utils.data.DataLoader(testset,
                                                   batch_size=1,
                                                   shuffle=False,
                                                   num_workers=2)
    if nnName == "densenet100" or nnName == "wideresnet100":
        testset = torchvision.datasets.CIFAR100(root='../data',
                                                train=False,
                                                download=True,
                                                transform=transform)
        testloaderIn = torch.utils.data.DataLoader(testset,
                                                   batch_size=1,
                                                   shuffle=False,
                                                   num_workers=2)

    if dataName == "Gaussian":
        d.testGaussian(net1, criterion, CUDA_DEVICE, testloaderIn,
                       testloaderIn, nnName, dataName, epsilon, temperature)
        m.metric(nnName, dataName)

    elif dataName == "Uniform":
        d.testUni(net1, criterion, CUDA_DEVICE, testloaderIn, testloaderIn,
                  nnName, dataName, epsilon, temperature)
        m.metric(nnName, dataName)
    else:
        d.testData(net1, criterion, CUDA_DEVICE, testloaderIn, testloaderOut,
                   nnName, dataName, epsilon, temperature)
        m.metric(nnName, dataName)


parser = argparse.ArgumentParser(description='Pytorch Detecting Out-of-distribution examples in neural networks')

parser.add_argument('--nn', default="densenet10", type=str,
                    help='neural network name and training set')
parser.add_argument('--out_dataset', default="Imagenet", type=str,
                    help='out-of-distribution dataset')
parser.add_argument('--magnitude', default=0.0014, type=float,
                    help='perturbation magnitude')
parser.add_argument('--temperature', default=1000, type=int,
                    help='temperature scaling')
parser.add_argument('--gpu', default=0, type=int,
                    help='gpu index')
parser.set_defaults(argument=True)


def main():
    global args
    args = parser.parse_args()
    os.makedirs("./softmax_scores", exist_ok=True)
    # keep every lazily-created tensor (e.g. torch.cuda.FloatTensor in
    # calData.testUni) on the requested card
    with torch.cuda.device(args.gpu):
        test(args.nn, args.out_dataset, args.gpu, args.magnitude,
             args.temperature)
    print("Total: {:.1f} min".format((time.time() - start) / 60.0))


if __name__ == '__main__':
    main()
