# -*- coding: utf-8 -*-
"""
Created on Sat Sep 19 20:55:56 2015

@author: liangshiyu
"""

from __future__ import print_function
import torch
from torch.autograd import Variable
import torch.nn as nn
import torch.nn.functional as F
import numpy as np
import torch.optim as optim
import torchvision
import torchvision.transforms as transforms
import numpy as np
import time
from scipy import misc
import cal as c
import argparse


parser = argparse.ArgumentParser(description='Pytorch Detecting Out-of-distribution examples in neural networks')

parser.add_argument('--in-dataset', default="CIFAR-10", type=str,
                    help='in-distribution dataset')
parser.add_argument('--out-dataset', default="Imagenet", type=str,
                    help='out-of-distribution dataset')
parser.add_argument('--nn', default="densenet10", type=str,
                    help='neural network name and training set')
parser.add_argument('--magnitude', default=0.0014, type=float,
                    help='perturbation magnitude')
parser.add_argument('--temperature', default=1000, type=int,
                    help='temperature scaling')
parser.add_argument('--gpu', default = 0, type = int,
		    help='gpu index')
parser.set_defaults(argument=True)


# Setting the name of neural networks

# Densenet trained on CIFAR-10:         densenet10
# Densenet trained on CIFAR-100:        densenet100
# Densenet trained on WideResNet-10:    wideresnet10
# Densenet trained on WideResNet-100:   wideresnet100
#nnName = "densenet10"

#imName = "Imagenet"



def main():
    global args
    args = parser.parse_args()
    c.test(args.nn, args.out_dataset, args.gpu, args.magnitude, args.temperature)


if __name__ == '__main__':
    main()
