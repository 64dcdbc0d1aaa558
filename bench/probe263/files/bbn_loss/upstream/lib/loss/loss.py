import torch
import torch.nn as nn
from torch.nn import functional as F
import numpy as np


class CrossEntropy(nn.Module):
    def __init__(self, para_dict=None):
        super(CrossEntropy, self).__init__()
        self.para_dict = para_dict
        self.num_class_list = para_dict["num_class_list"]
        self.device = para_dict["device"]
        self.weight_list = None
        cfg = para_dict["cfg"]
        self.drw_epoch = cfg.LOSS.CSCE.DRW_EPOCH if "CSCE" in cfg.LOSS.LOSS_TYPE else 0

    def forward(self, output, target):
        output = output
        loss = F.cross_entropy(output, target, weight=self.weight_list)
        return loss

    def reset_epoch(self, epoch):
        self.epoch = epoch


class CSCE(CrossEntropy):
    r"""Cost-sensitive cross entropy with deferred re-weighting (DRW).

    Until ``DRW_EPOCH`` the weights are all ones; afterwards they follow the
    class-balanced "effective number" of Cui et al.
    """

    def __init__(self, para_dict=None):
        super(CSCE, self).__init__(para_dict)
        cfg = para_dict["cfg"]
        scheduler = cfg.LOSS.CSCE.SCHEDULER
        self.step_epoch = cfg.LOSS.CSCE.DRW_EPOCH

        if scheduler == "drw":
            self.betas = [0, 0.999999]
        elif scheduler == "default":
            self.betas = [0.999999, 0.999999]
        self.weight = None

    def update_weight(self, beta):
        effective_num = 1.0 - np.power(beta, self.num_class_list)
        per_cls_weights = (1.0 - beta) / np.array(effective_num)
        per_cls_weights = per_cls_weights / np.sum(per_cls_weights) * len(self.num_class_list)
        self.weight = torch.FloatTensor(per_cls_weights).to(self.device)

    def reset_epoch(self, epoch):
        idx = (epoch - 1) // self.step_epoch
        beta = self.betas[idx]
        self.update_weight(beta)

    def forward(self, x, target, **kwargs):
        return F.cross_entropy(x, target, weight=self.weight)


# The LDAMLoss class is copied from the official PyTorch implementation in LDAM (https://github.com/kaidic/LDAM-DRW).
class LDAMLoss(CrossEntropy):

    def __init__(self, para_dict=None):
        super(LDAMLoss, self).__init__(para_dict)
        s = 30
        self.num_class_list = para_dict["num_class_list"]
        self.device = para_dict["device"]

        cfg = para_dict["cfg"]
        max_m = cfg.LOSS.LDAM.MAX_MARGIN
        m_list = 1.0 / np.sqrt(np.sqrt(self.num_class_list))
        m_list = m_list * (max_m / np.max(m_list))
        m_list = torch.FloatTensor(m_list).to(self.device)
        self.m_list = m_list
        assert s > 0

        self.s = s
        self.step_epoch = cfg.LOSS.LDAM.DRW_EPOCH
        self.weight = None

    def reset_epoch(self, epoch):
        idx = epoch // self.step_epoch
        betas = [0, 0.9999]
        effective_num = 1.0 - np.power(betas[idx], self.num_class_list)
        per_cls_weights = (1.0 - betas[idx]) / np.array(effective_num)
        per_cls_weights = per_cls_weights / np.sum(per_cls_weights) * len(self.num_class_list)
        self.weight = torch.FloatTensor(per_cls_weights).to(self.device)

    def forward(self, x, target):
        index = torch.zeros_like(x, dtype=torch.bool)
        index.scatter_(1, target.data.view(-1, 1), 1)

        index_float = index.type(torch.cuda.FloatTensor) if x.is_cuda else index.float()
        batch_m = torch.matmul(self.m_list[None, :], index_float.transpose(0, 1))
        batch_m = batch_m.view((-1, 1))
        x_m = x - batch_m

        output = torch.where(index, x_m, x)
        return F.cross_entropy(self.s * output, target, weight=self.weight)


class FocalLoss(CrossEntropy):
    def __init__(self, para_dict=None, gamma=2.0):
        super(FocalLoss, self).__init__(para_dict)
        self.gamma = gamma

    def forward(self, x, target):
        logp = F.cross_entropy(x, target, reduction="none", weight=self.weight_list)
        p = torch.exp(-logp)
        loss = (1 - p) ** self.gamma * logp
        return loss.mean()


class BalancedSoftmaxCE(CrossEntropy):
    r"""Balanced softmax (Ren et al. 2020): add log prior to the logits."""

    def __init__(self, para_dict=None):
        super(BalancedSoftmaxCE, self).__init__(para_dict)
        prior = torch.tensor(self.num_class_list, dtype=torch.float)
        self.log_prior = torch.log(prior / prior.sum()).unsqueeze(0)

    def forward(self, x, target):
        log_prior = self.log_prior.to(x.device)
        return F.cross_entropy(x + log_prior, target)
