# -*- coding: utf-8 -*-
"""
DocUNet loss (Sec. 3.2 of the paper).

    L = 1/n * sum |y_i - y*_i|  -  lambda / n * |sum (y_i - y*_i)|

The second term makes the loss partially shift invariant: a prediction that is
off by a constant offset is penalised less than one with structural errors.
Pixels that fall on the background (target == -1 in both channels) only get a
hinge term pushing the prediction below zero.
"""
import torch
import torch.nn as nn
from torch.autograd import Variable


class DocUNetLoss(nn.Module):
    def __init__(self, lam=0.1, background_value=-1.0):
        super(DocUNetLoss, self).__init__()
        self.lam = lam
        self.background_value = background_value
        self.zero = Variable(torch.zeros(1)).cuda()

    def forward(self, pred, target):
        # foreground mask: pixels that belong to the paper
        fg = (target[:, 0:1] != self.background_value).float()
        n_fg = fg.sum().clamp(min=1.0)

        diff = (pred - target) * fg
        l1 = diff.abs().sum() / (2.0 * n_fg)
        shift = diff.sum().abs() / (2.0 * n_fg)
        fg_loss = l1 - self.lam * shift

        # background: predicted value should be negative
        bg = 1.0 - fg
        bg_loss = torch.max(pred * bg, self.zero.expand_as(pred)).sum() / bg.sum().clamp(min=1.0)

        return fg_loss + bg_loss, l1


class MSEGradLoss(nn.Module):
    """Alternative loss used in some ablations: MSE + finite-difference gradient term."""

    def __init__(self, w_grad=0.5):
        super(MSEGradLoss, self).__init__()
        self.w_grad = w_grad
        self.mse = nn.MSELoss()

    @staticmethod
    def _grad(x):
        gx = x[:, :, :, 1:] - x[:, :, :, :-1]
        gy = x[:, :, 1:, :] - x[:, :, :-1, :]
        return gx, gy

    def forward(self, pred, target):
        pgx, pgy = self._grad(pred)
        tgx, tgy = self._grad(target)
        grad = (pgx - tgx).abs().mean() + (pgy - tgy).abs().mean()
        mse = self.mse(pred, target)
        return mse + self.w_grad * grad, mse
