# Copyright (c) Malong Technologies Co., Ltd.
# All rights reserved.
#
# Contact: github@malong.com
#
# This source code is licensed under the LICENSE file in the root directory of this source tree.

import torch
from torch import nn

from ret_benchmark.losses.registry import LOSS


@LOSS.register('ms_loss')
class MultiSimilarityLoss(nn.Module):
    def __init__(self, cfg):
        super(MultiSimilarityLoss, self).__init__()
        self.thresh = 0.5
        self.margin = 0.1

        self.scale_pos = cfg.LOSSES.MULTI_SIMILARITY_LOSS.SCALE_POS
        self.scale_neg = cfg.LOSSES.MULTI_SIMILARITY_LOSS.SCALE_NEG

    def forward(self, feats, labels):
        assert feats.size(0) == labels.size(0), \
            f"feats.size(0): {feats.size(0)} is not equal to labels.size(0): {labels.size(0)}"
        batch_size = feats.size(0)
        sim_mat = torch.matmul(feats, torch.t(feats))

        epsilon = 1e-5
        loss = list()

        for i in range(batch_size):
            pos_pair_ = sim_mat[i][labels == labels[i]]
            pos_pair_ = pos_pair_[pos_pair_ < 1 - epsilon]
            neg_pair_ = sim_mat[i][labels != labels[i]]

            neg_pair = neg_pair_[neg_pair_ + self.margin > min(pos_pair_)]
            pos_pair = pos_pair_[pos_pair_ - self.margin < max(neg_pair_)]

            if len(neg_pair) < 1 or len(pos_pair) < 1:
                continue

            # weighting step
            pos_loss = 1.0 / self.scale_pos * torch.log(
                1 + torch.sum(torch.exp(-self.scale_pos * (pos_pair - self.thresh))))
            neg_loss = 1.0 / self.scale_neg * torch.log(
                1 + torch.sum(torch.exp(self.scale_neg * (neg_pair - self.thresh))))
            loss.append(pos_loss + neg_loss)

        if len(loss) == 0:
            return torch.zeros([], requires_grad=True).cuda()

        loss = sum(loss) / batch_size
        return loss


@LOSS.register('contrastive_loss')
class ContrastiveLoss(nn.Module):
    def __init__(self, cfg):
        super(ContrastiveLoss, self).__init__()
        self.margin = 0.5

    def forward(self, inputs_col, targets_col, inputs_row=None, target_row=None):
        if inputs_row is None:
            inputs_row, target_row = inputs_col, targets_col
        n = inputs_col.size(0)
        # Compute similarity matrix
        sim_mat = torch.matmul(inputs_col, inputs_row.t())
        epsilon = 1e-5
        loss = list()

        neg_count = list()
        for i in range(n):
            pos_pair_ = torch.masked_select(sim_mat[i], targets_col[i] == target_row)
            pos_pair_ = torch.masked_select(pos_pair_, pos_pair_ < 1 - epsilon)
            neg_pair_ = torch.masked_select(sim_mat[i], targets_col[i] != target_row)

            neg_pair = torch.masked_select(neg_pair_, neg_pair_ > self.margin)

            pos_loss = torch.sum(-pos_pair_ + 1)
            if len(neg_pair) > 0:
                neg_loss = torch.sum(neg_pair)
                neg_count.append(len(neg_pair))
            else:
                neg_loss = 0

            loss.append(pos_loss + neg_loss)

        loss = sum(loss) / n
        return loss


@LOSS.register('margin_loss')
class MarginLoss(nn.Module):
    """Margin-based loss (Wu et al. 2017) with a learnable per-class beta."""

    def __init__(self, cfg, nb_classes=100, beta_init=1.2, margin=0.2):
        super(MarginLoss, self).__init__()
        self.margin = margin
        self.beta = nn.Parameter(torch.ones(nb_classes) * beta_init)

    def forward(self, feats, labels):
        d = torch.cdist(feats, feats)
        same = labels.unsqueeze(0) == labels.unsqueeze(1)
        eye = torch.eye(feats.size(0), dtype=torch.bool, device=feats.device)
        pos_mask = same & ~eye
        neg_mask = ~same
        beta = self.beta[labels].unsqueeze(1)
        pos_loss = torch.clamp(d - beta + self.margin, min=0) * pos_mask
        neg_loss = torch.clamp(beta - d + self.margin, min=0) * neg_mask
        n_active = ((pos_loss > 0) | (neg_loss > 0)).sum().clamp(min=1)
        return (pos_loss.sum() + neg_loss.sum()) / n_active
