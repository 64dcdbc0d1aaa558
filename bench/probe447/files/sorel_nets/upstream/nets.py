# Copyright 2020, Sophos Limited. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License").

import torch
from torch import nn
import torch.nn.functional as F
from collections import defaultdict

import config


class PENetwork(nn.Module):
    """
    This is a simple network loosely based on the one used in ALOHA: Auxiliary Loss Optimization for Hypothesis Augmentation (https://arxiv.org/abs/1903.05700)

    Note that it uses fewer (and smaller) layers, as well as a single layer for all tag predictions, performance will suffer accordingly.
    """

    def __init__(self, use_malware=True, use_counts=True, use_tags=True, n_tags=None, feature_dimension=1024,
                 layer_sizes=None):
        self.use_malware = use_malware
        self.use_counts = use_counts
        self.use_tags = use_tags
        self.n_tags = n_tags
        if self.use_tags and self.n_tags is None:
            raise ValueError("n_tags was None but we're trying to predict tags. Please include n_tags")
        super(PENetwork, self).__init__()
        p = 0.05
        layers = []
        if layer_sizes is None:
            layer_sizes = [512, 512, 128]
        for i, ls in enumerate(layer_sizes):
            if i == 0:
                layers.append(nn.Linear(feature_dimension, ls))
            else:
                layers.append(nn.Linear(layer_sizes[i - 1], ls))
            layers.append(nn.LayerNorm(ls))
            layers.append(nn.ELU())
            layers.append(nn.Dropout(p))
        self.model_base = nn.Sequential(*tuple(layers))
        self.malware_head = nn.Sequential(nn.Linear(layer_sizes[-1], 1),
                                          nn.Sigmoid())
        self.count_head = nn.Linear(layer_sizes[-1], 1)
        self.sigmoid = nn.Sigmoid()
        self.tag_head = nn.Sequential(nn.Linear(layer_sizes[-1], 64),
                                      nn.ELU(),
                                      nn.Linear(64, 64),
                                      nn.ELU(),
                                      nn.Linear(64, n_tags),
                                      nn.Sigmoid())

    def forward(self, data):
        rv = {}
        base_result = self.model_base.forward(data)
        if self.use_malware:
            rv['malware'] = self.malware_head(base_result)
        if self.use_counts:
            rv['count'] = self.count_head(base_result)
        if self.use_tags:
            rv['tags'] = self.tag_head(base_result)
        return rv


def compute_loss(predictions, labels, loss_wts={'malware': 1.0, 'count': 0.1, 'tags': 1.0}):
    """
    Compute losses for a malware feed-forward neural network (optionally with SMART tags
    and vendor detection count auxiliary losses).

    :param predictions: a dictionary of results from a PENetwork model
    :param labels: a dictionary of labels
    :param loss_wts: weights to assign to each head of the network (if it exists); defaults to
        values used in the ALOHA paper (1.0 for malware, 0.1 for count and each tag)
    """
    loss_dict = {'total': 0.}
    if 'malware' in labels:
        malware_labels = labels['malware'].float().to(config.device)
        malware_loss = F.binary_cross_entropy(predictions['malware'].reshape(malware_labels.shape), malware_labels)
        weight = loss_wts['malware'] if 'malware' in loss_wts else 1.0
        loss_dict['malware'] = deepcopy_item(malware_loss)
        loss_dict['total'] += malware_loss * weight
    if 'count' in labels:
        count_labels = labels['count'].float().to(config.device)
        count_loss = torch.nn.PoissonNLLLoss()(predictions['count'].reshape(count_labels.shape), count_labels)
        weight = loss_wts['count'] if 'count' in loss_wts else 1.0
        loss_dict['count'] = deepcopy_item(count_loss)
        loss_dict['total'] += count_loss * weight
    if 'tags' in labels:
        tag_labels = labels['tags'].float().to(config.device)
        tags_loss = F.binary_cross_entropy(predictions['tags'], tag_labels)
        weight = loss_wts['tags'] if 'tags' in loss_wts else 1.0
        loss_dict['tags'] = deepcopy_item(tags_loss)
        loss_dict['total'] += tags_loss * weight
    return loss_dict


def deepcopy_item(t):
    return t.detach().cpu().item()
