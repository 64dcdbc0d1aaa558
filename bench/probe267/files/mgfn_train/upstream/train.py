import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda.amp import GradScaler, autocast

import option

args = option.parse_args()

# created lazily so that importing this module does not touch the GPU
_scaler = None


def get_scaler(enabled):
    global _scaler
    if _scaler is None:
        _scaler = GradScaler(enabled=enabled)
    return _scaler


def sparsity(arr, batch_size, lamda2):
    loss = torch.mean(torch.norm(arr, dim=0))
    return lamda2 * loss


def smooth(arr, lamda1):
    arr2 = torch.zeros_like(arr)
    arr2[:-1] = arr[1:]
    arr2[-1] = arr[-1]

    loss = torch.sum((arr2 - arr) ** 2)

    return lamda1 * loss


class ContrastiveLoss(nn.Module):
    def __init__(self, margin=200.0):
        super(ContrastiveLoss, self).__init__()
        self.margin = margin

    def forward(self, output1, output2, label):
        euclidean_distance = F.pairwise_distance(output1, output2, keepdim=True)
        loss_contrastive = torch.mean((1 - label) * torch.pow(euclidean_distance, 2) +
                                      (label) * torch.pow(torch.clamp(self.margin - euclidean_distance, min=0.0), 2))
        return loss_contrastive


class mgfn_loss(torch.nn.Module):
    def __init__(self, alpha):
        super(mgfn_loss, self).__init__()
        self.alpha = alpha
        self.sigmoid = torch.nn.Sigmoid()
        self.criterion = torch.nn.BCELoss()
        self.contrastive = ContrastiveLoss()

    def forward(self, score_normal, score_abnormal, nlabel, alabel, nor_feamagnitude, abn_feamagnitude):
        label = torch.cat((nlabel, alabel), 0)
        score = torch.cat((score_normal, score_abnormal), 0)
        score = score.squeeze()
        label = label.cuda()
        seperate = len(abn_feamagnitude) / 2

        loss_cls = self.criterion(score, label)
        loss_con = self.contrastive(torch.norm(abn_feamagnitude, p=1, dim=2),
                                    torch.norm(nor_feamagnitude, p=1, dim=2),
                                    1)  # try tp separate normal and abnormal
        loss_con_n = self.contrastive(torch.norm(nor_feamagnitude[int(seperate):], p=1, dim=2),
                                      torch.norm(nor_feamagnitude[:int(seperate)], p=1, dim=2),
                                      0)  # try to cluster the same class
        loss_con_a = self.contrastive(torch.norm(abn_feamagnitude[int(seperate):], p=1, dim=2),
                                      torch.norm(abn_feamagnitude[:int(seperate)], p=1, dim=2),
                                      0)

        loss_total = loss_cls + 0.001 * (0.001 * loss_con + loss_con_a + loss_con_n)

        return loss_total


def train(nloader, aloader, model, batch_size, optimizer, device, iterator=0, use_amp=False):
    with torch.set_grad_enabled(True):
        model.train()
        scaler = get_scaler(use_amp)
        for step, ((ninput, nlabel), (ainput, alabel)) in enumerate(zip(nloader, aloader)):

            input = torch.cat((ninput, ainput), 0).to(device)

            with autocast(enabled=use_amp):
                score_abnormal, score_normal, abn_feamagnitude, nor_feamagnitude, scores = model(input)  # b*32  x 2048
                loss_criterion = mgfn_loss(0.0001)

            # the BCE terms are computed in fp32 outside autocast
            scores = scores.float().view(batch_size * 32 * 2, -1)
            scores = scores.squeeze()
            abn_scores = scores[batch_size * 32:]

            nlabel = nlabel[0:batch_size]
            alabel = alabel[0:batch_size]

            loss_sparse = sparsity(abn_scores, batch_size, 8e-3)
            loss_smooth = smooth(abn_scores, 8e-4)

            cost = loss_criterion(score_normal.float(), score_abnormal.float(), nlabel, alabel,
                                  nor_feamagnitude.float(), abn_feamagnitude.float()) + loss_smooth + loss_sparse

            optimizer.zero_grad()
            scaler.scale(cost).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
            scaler.step(optimizer)
            scaler.update()
            iterator += 1

        return cost, loss_smooth, loss_sparse
