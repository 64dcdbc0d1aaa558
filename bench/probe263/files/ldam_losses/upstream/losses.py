import math
import torch
import torch.nn as nn
import torch.nn.functional as F
import numpy as np


def focal_loss(input_values, gamma):
    """Computes the focal loss"""
    p = torch.exp(-input_values)
    loss = (1 - p) ** gamma * input_values
    return loss.mean()


class FocalLoss(nn.Module):
    def __init__(self, weight=None, gamma=0.):
        super(FocalLoss, self).__init__()
        assert gamma >= 0
        self.gamma = gamma
        self.weight = weight

    def forward(self, input, target):
        return focal_loss(F.cross_entropy(input, target, reduction='none', weight=self.weight), self.gamma)


class LDAMLoss(nn.Module):

    def __init__(self, cls_num_list, max_m=0.5, weight=None, s=30):
        super(LDAMLoss, self).__init__()
        m_list = 1.0 / np.sqrt(np.sqrt(cls_num_list))
        m_list = m_list * (max_m / np.max(m_list))
        m_list = torch.cuda.FloatTensor(m_list)
        self.m_list = m_list
        assert s > 0
        self.s = s
        self.weight = weight

    def forward(self, x, target):
        index = torch.zeros_like(x, dtype=torch.uint8)
        index.scatter_(1, target.data.view(-1, 1), 1)

        index_float = index.type(torch.cuda.FloatTensor)
        batch_m = torch.matmul(self.m_list[None, :], index_float.transpose(0, 1))
        batch_m = batch_m.view((-1, 1))
        x_m = x - batch_m

        output = torch.where(index, x_m, x)
        return F.cross_entropy(self.s * output, target, weight=self.weight)


class CBLoss(nn.Module):
    """Class-balanced loss (Cui et al. 2019) on top of softmax / sigmoid / focal.

    The per-class weights are computed once on the host and moved to the GPU
    lazily in forward() so the module can be built before the device is known.
    """

    def __init__(self, cls_num_list, beta=0.9999, gamma=0.5, loss_type='softmax'):
        super(CBLoss, self).__init__()
        effective_num = 1.0 - np.power(beta, cls_num_list)
        weights = (1.0 - beta) / np.array(effective_num)
        weights = weights / np.sum(weights) * len(cls_num_list)
        self.register_buffer('weights', torch.tensor(weights, dtype=torch.float))
        self.num_classes = len(cls_num_list)
        self.gamma = gamma
        self.loss_type = loss_type

    def forward(self, logits, labels):
        labels_one_hot = F.one_hot(labels, self.num_classes).float()
        weights = self.weights.to(logits.device)
        weights = weights.unsqueeze(0).repeat(labels_one_hot.shape[0], 1) * labels_one_hot
        weights = weights.sum(1).unsqueeze(1).repeat(1, self.num_classes)

        if self.loss_type == 'sigmoid':
            return F.binary_cross_entropy_with_logits(logits, labels_one_hot, weight=weights)
        if self.loss_type == 'focal':
            bce = F.binary_cross_entropy_with_logits(logits, labels_one_hot, reduction='none')
            if self.gamma == 0.0:
                modulator = 1.0
            else:
                modulator = torch.exp(-self.gamma * labels_one_hot * logits
                                      - self.gamma * torch.log1p(torch.exp(-1.0 * logits)))
            loss = modulator * bce
            weighted = weights * loss
            return torch.sum(weighted) / torch.sum(labels_one_hot)
        pred = logits.softmax(dim=1)
        return F.binary_cross_entropy(pred, labels_one_hot, weight=weights)
