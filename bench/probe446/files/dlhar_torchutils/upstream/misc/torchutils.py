##################################################
# Helper functions for PyTorch (seeding, init, gradient plots)
##################################################
# Author: Marius Bock
##################################################

import os
import random

import numpy as np
import torch
import torch.nn as nn
import matplotlib.pyplot as plt
from matplotlib.lines import Line2D


def seed_torch(seed):
    """
    Seeds all relevant random number generators so that results are reproducible (as far as cuDNN allows).
    """
    random.seed(seed)
    os.environ['PYTHONHASHSEED'] = str(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)  # if you are using multi-GPU.
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True


def seed_worker(worker_id):
    """
    Seeds DataLoader workers (see https://pytorch.org/docs/stable/notes/randomness.html).
    """
    worker_seed = torch.initial_seed() % 2 ** 32
    np.random.seed(worker_seed)
    random.seed(worker_seed)


def init_weights(network, method='xavier_normal'):
    """
    Weight initialisation of a network. LSTM weights get orthogonal init, biases zero.
    """
    for m in network.modules():
        if isinstance(m, (nn.Conv1d, nn.Conv2d)):
            if method == 'normal':
                nn.init.normal_(m.weight)
            elif method == 'orthogonal':
                nn.init.orthogonal_(m.weight)
            elif method == 'xavier_uniform':
                nn.init.xavier_uniform_(m.weight, gain=1)
            elif method == 'xavier_normal':
                nn.init.xavier_normal_(m.weight, gain=1)
            elif method == 'kaiming_uniform':
                nn.init.kaiming_uniform_(m.weight, mode='fan_in', nonlinearity='relu')
            elif method == 'kaiming_normal':
                nn.init.kaiming_normal_(m.weight, mode='fan_in', nonlinearity='relu')
            if m.bias is not None:
                nn.init.constant_(m.bias, 0)
        elif isinstance(m, nn.Linear):
            if method in ('xavier_uniform', 'xavier_normal'):
                nn.init.xavier_uniform_(m.weight)
            else:
                nn.init.normal_(m.weight, 0, 0.01)
            nn.init.constant_(m.bias, 0)
        elif isinstance(m, nn.LSTM):
            for name, param in m.named_parameters():
                if 'weight_ih' in name:
                    nn.init.xavier_uniform_(param.data)
                elif 'weight_hh' in name:
                    nn.init.orthogonal_(param.data)
                elif 'bias' in name:
                    param.data.fill_(0)
    return network


def count_parameters(network):
    return sum(p.numel() for p in network.parameters() if p.requires_grad)


def plot_grad_flow(network):
    """
    Plots the gradients flowing through different layers in the net during training.
    Can be used for checking for possible gradient vanishing / exploding problems.
    Call after loss.backwards().
    """
    ave_grads = []
    max_grads = []
    layers = []
    for n, p in network.named_parameters():
        if p.requires_grad and ('bias' not in n) and p.grad is not None:
            layers.append(n)
            ave_grads.append(p.grad.abs().mean().cpu())
            max_grads.append(p.grad.abs().max().cpu())
    plt.bar(np.arange(len(max_grads)), max_grads, alpha=0.1, lw=1, color='c')
    plt.bar(np.arange(len(max_grads)), ave_grads, alpha=0.1, lw=1, color='b')
    plt.hlines(0, 0, len(ave_grads) + 1, lw=2, color='k')
    plt.xticks(range(0, len(ave_grads), 1), layers, rotation='vertical')
    plt.xlim(left=0, right=len(ave_grads))
    plt.ylim(bottom=-0.001, top=0.02)
    plt.xlabel('Layers')
    plt.ylabel('average gradient')
    plt.title('Gradient flow')
    plt.grid(True)
    plt.legend([Line2D([0], [0], color='c', lw=4),
                Line2D([0], [0], color='b', lw=4),
                Line2D([0], [0], color='k', lw=4)], ['max-gradient', 'mean-gradient', 'zero-gradient'])
    plt.show()
