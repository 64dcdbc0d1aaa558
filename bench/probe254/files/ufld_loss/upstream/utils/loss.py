import torch
import torch.nn as nn
import torch.nn.functional as F
import numpy as np


class OhemCELoss(nn.Module):
    """Online hard example mining cross entropy for the auxiliary segmentation branch."""

    def __init__(self, thresh, n_min, ignore_lb=255, *args, **kwargs):
        super(OhemCELoss, self).__init__()
        self.thresh = -torch.log(torch.tensor(thresh, dtype=torch.float)).cuda()
        self.n_min = n_min
        self.ignore_lb = ignore_lb
        self.criteria = nn.CrossEntropyLoss(ignore_index=ignore_lb, reduction='none')

    def forward(self, logits, labels):
        N, C, H, W = logits.size()
        loss = self.criteria(logits, labels).view(-1)
        loss, _ = torch.sort(loss, descending=True)
        if loss[self.n_min] > self.thresh:
            loss = loss[loss > self.thresh]
        else:
            loss = loss[:self.n_min]
        return torch.mean(loss)


class SoftmaxFocalLoss(nn.Module):
    def __init__(self, gamma, ignore_lb=255, soft_loss=True, *args, **kwargs):
        super(SoftmaxFocalLoss, self).__init__()
        self.gamma = gamma
        self.nll = nn.NLLLoss(ignore_index=ignore_lb)
        self.soft_loss = soft_loss

    def forward(self, logits, labels):
        scores = F.softmax(logits, dim=1)
        factor = torch.pow(1. - scores, self.gamma)
        log_score = F.log_softmax(logits, dim=1)
        log_score = factor * log_score
        loss = self.nll(log_score, labels)
        return loss


class ParsingRelationLoss(nn.Module):
    """Similarity loss: neighbouring row anchors should predict similar distributions."""

    def __init__(self):
        super(ParsingRelationLoss, self).__init__()

    def forward(self, logits):
        n, c, h, w = logits.shape
        loss_all = []
        for i in range(0, h - 1):
            loss_all.append(logits[:, :, i, :] - logits[:, :, i + 1, :])
        # loss0 : n,c,w
        loss = torch.cat(loss_all)
        return torch.nn.functional.smooth_l1_loss(loss, torch.zeros_like(loss))


class ParsingRelationDis(nn.Module):
    """Shape loss: second-order difference of the expected lane location across rows."""

    def __init__(self):
        super(ParsingRelationDis, self).__init__()
        self.l1 = torch.nn.L1Loss()

    def forward(self, x):
        n, dim, num_rows, num_cols = x.shape
        x = torch.nn.functional.softmax(x[:, :dim - 1, :, :], dim=1)
        embedding = torch.Tensor(np.arange(dim - 1)).float().to(x.device).view(1, -1, 1, 1)
        pos = torch.sum(x * embedding, dim=1)

        diff_list1 = []
        for i in range(0, num_rows // 2):
            diff_list1.append(pos[:, i, :] - pos[:, i + 1, :])

        loss = 0
        for i in range(len(diff_list1) - 1):
            loss += self.l1(diff_list1[i], diff_list1[i + 1])
        loss /= len(diff_list1) - 1
        return loss


class MeanLoss(nn.Module):
    """L1 between the expectation of the location distribution and the label (v2 style)."""

    def __init__(self):
        super(MeanLoss, self).__init__()
        self.l1 = torch.nn.SmoothL1Loss()

    def forward(self, logits, label):
        n, c, h, w = logits.shape
        grid = torch.arange(c, device=logits.device).view(1, c, 1, 1)
        logits = (logits.softmax(1) * grid).sum(1)
        loss = self.l1(logits[label != -1], label[label != -1].float())
        return loss


class VarLoss(nn.Module):
    """Penalise the variance of the predicted location distribution around the label."""

    def __init__(self, power=2):
        super(VarLoss, self).__init__()
        self.power = power

    def forward(self, logits, label):
        n, c, h, w = logits.shape
        grid = torch.arange(c).view(1, c, 1, 1).cuda()
        prob = logits.softmax(1)
        mean = (prob * grid).sum(1).view(n, 1, h, w)
        var = ((grid - mean).abs() ** self.power * prob).sum(1)
        return var[label != -1].mean()


class EMDLoss(nn.Module):
    """Earth mover distance between the predicted distribution and a one-hot label."""

    def __init__(self):
        super(EMDLoss, self).__init__()

    def forward(self, logits, label):
        n, c, h, w = logits.shape
        grid = torch.arange(c, device=logits.device).view(1, c, 1, 1)
        prob = logits.softmax(1)
        label_valid = label.clone()
        label_valid[label_valid == -1] = 0
        dist = (grid - label_valid.view(n, 1, h, w)).abs().float()
        loss = (prob * dist).sum(1)
        return loss[label != -1].mean()


def soft_nll(pred, target, ignore_index=-1):
    C = pred.shape[1]
    invalid_target_index = target == ignore_index

    ttarget = target.clone()
    ttarget[invalid_target_index] = C

    target_l = target - 1
    target_r = target + 1

    invalid_part_l = target_l == -1
    invalid_part_r = target_r == C

    invalid_target_l_index = torch.logical_or(invalid_target_index, invalid_part_l)
    target_l[invalid_target_l_index] = C

    invalid_target_r_index = torch.logical_or(invalid_target_index, invalid_part_r)
    target_r[invalid_target_r_index] = C

    supp_part_l = target_l.clone()
    supp_part_r = target_r.clone()
    supp_part_l[target != 0] = C
    supp_part_r[target != C - 1] = C

    target_onehot = torch.nn.functional.one_hot(ttarget, num_classes=C + 1)
    target_onehot = target_onehot[..., :-1].permute(0, 3, 1, 2)

    target_l_onehot = torch.nn.functional.one_hot(target_l, num_classes=C + 1)
    target_l_onehot = target_l_onehot[..., :-1].permute(0, 3, 1, 2)

    target_r_onehot = torch.nn.functional.one_hot(target_r, num_classes=C + 1)
    target_r_onehot = target_r_onehot[..., :-1].permute(0, 3, 1, 2)

    supp_part_l_onehot = torch.nn.functional.one_hot(supp_part_l, num_classes=C + 1)
    supp_part_l_onehot = supp_part_l_onehot[..., :-1].permute(0, 3, 1, 2)

    supp_part_r_onehot = torch.nn.functional.one_hot(supp_part_r, num_classes=C + 1)
    supp_part_r_onehot = supp_part_r_onehot[..., :-1].permute(0, 3, 1, 2)

    target_fusion = 0.9 * target_onehot + 0.05 * target_l_onehot + 0.05 * target_r_onehot \
        + 0.05 * supp_part_l_onehot + 0.05 * supp_part_r_onehot
    return -(target_fusion * pred).sum() / (target != ignore_index).sum()
