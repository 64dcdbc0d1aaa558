import torch.nn.functional as F
import torch
from parse_config import ConfigParser
import torch.nn as nn
import math


def cross_entropy(output, target):
    return F.cross_entropy(output, target)


class elr_loss(nn.Module):
    def __init__(self, num_examp, num_classes=10, beta=0.3):
        super(elr_loss, self).__init__()
        self.num_classes = num_classes
        self.config = ConfigParser.get_instance()
        self.USE_CUDA = torch.cuda.is_available()
        self.target = torch.zeros(num_examp, self.num_classes).cuda() if self.USE_CUDA else torch.zeros(num_examp, self.num_classes)
        self.beta = beta

    def forward(self, index, output, label):
        r"""Early Learning Regularization.
         Args
         * `index` Training sample index, due to training set shuffling, index is used to track training examples in different iterations.
         * `output` Model's logits, same as PyTorch provided loss functions.
         * `label` Labels, same as PyTorch provided loss functions.
         """

        y_pred = F.softmax(output, dim=1)
        y_pred = torch.clamp(y_pred, 1e-4, 1.0 - 1e-4)
        y_pred_ = y_pred.data.detach()
        self.target[index] = self.beta * self.target[index] + (1 - self.beta) * ((y_pred_) / (y_pred_).sum(dim=1, keepdim=True))
        ce_loss = F.cross_entropy(output, label)
        elr_reg = ((1 - (self.target[index] * y_pred).sum(dim=1)).log()).mean()
        final_loss = ce_loss + self.config['train_loss']['args']['lambda'] * elr_reg
        return final_loss

    def update_hist(self, index, out_prob):
        # used during warm-up: only accumulate the temporal ensemble, no regularisation yet
        self.target[index] = self.beta * self.target[index] + (1 - self.beta) * out_prob


class GCELoss(nn.Module):
    """Generalized cross entropy (Zhang & Sabuncu, 2018)."""

    def __init__(self, num_examp=None, num_classes=10, q=0.7, beta=None):
        super(GCELoss, self).__init__()
        self.q = q
        self.num_classes = num_classes

    def forward(self, index, output, label):
        pred = F.softmax(output, dim=1)
        pred = torch.clamp(pred, min=1e-7, max=1.0)
        label_one_hot = F.one_hot(label, self.num_classes).float().to(pred.device)
        gce = (1. - torch.pow(torch.sum(label_one_hot * pred, dim=1), self.q)) / self.q
        return gce.mean()


class SCELoss(nn.Module):
    """Symmetric cross entropy (Wang et al., 2019)."""

    def __init__(self, num_examp=None, num_classes=10, alpha=0.1, beta=1.0):
        super(SCELoss, self).__init__()
        self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
        self.alpha = alpha
        self.beta = beta
        self.num_classes = num_classes
        self.cross_entropy = torch.nn.CrossEntropyLoss()

    def forward(self, index, pred, labels):
        # CCE
        ce = self.cross_entropy(pred, labels)

        # RCE
        pred = F.softmax(pred, dim=1)
        pred = torch.clamp(pred, min=1e-7, max=1.0)
        label_one_hot = torch.nn.functional.one_hot(labels, self.num_classes).float().to(self.device)
        label_one_hot = torch.clamp(label_one_hot, min=1e-4, max=1.0)
        rce = (-1 * torch.sum(pred * torch.log(label_one_hot), dim=1))

        # Loss
        loss = self.alpha * ce + self.beta * rce.mean()
        return loss


class NCEandRCE(nn.Module):
    """Active-passive loss: normalized CE + reverse CE (Ma et al., 2020)."""

    def __init__(self, num_examp=None, num_classes=10, alpha=1.0, beta=1.0):
        super(NCEandRCE, self).__init__()
        self.num_classes = num_classes
        self.alpha = alpha
        self.beta = beta

    def forward(self, index, pred, labels):
        log_prob = F.log_softmax(pred, dim=1)
        one_hot = F.one_hot(labels, self.num_classes).float()
        nce = -1 * torch.sum(one_hot * log_prob, dim=1) / (-log_prob.sum(dim=1))

        prob = torch.clamp(log_prob.exp(), min=1e-7, max=1.0)
        one_hot_c = torch.clamp(one_hot, min=1e-4, max=1.0)
        rce = -1 * torch.sum(prob * torch.log(one_hot_c), dim=1)
        return self.alpha * nce.mean() + self.beta * rce.mean()


class MAELoss(nn.Module):
    def __init__(self, num_examp=None, num_classes=10, scale=2.0):
        super(MAELoss, self).__init__()
        self.num_classes = num_classes
        self.scale = scale

    def forward(self, index, pred, labels):
        pred = F.softmax(pred, dim=1)
        label_one_hot = F.one_hot(labels, self.num_classes).float()
        loss = 1. - torch.sum(label_one_hot * pred, dim=1)
        return self.scale * loss.mean()
