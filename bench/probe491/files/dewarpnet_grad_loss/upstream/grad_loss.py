import torch
import torch.nn as nn
import torch.nn.functional as F
import numpy as np


class Gradloss(nn.Module):
    """Penalise the difference of local gradients (Sobel-free: average-pooled
    finite differences) between predicted and ground-truth world coordinates."""

    def __init__(self, window_size=3, padding=1):
        super(Gradloss, self).__init__()
        self.window_size = window_size
        self.padding = padding
        self.l1 = nn.L1Loss()

    def _pooled_grad(self, t):
        # t: [n, c, h, w]
        avg = F.avg_pool2d(t, kernel_size=self.window_size, stride=1, padding=self.padding)
        gx = avg[:, :, :, 1:] - avg[:, :, :, :-1]
        gy = avg[:, :, 1:, :] - avg[:, :, :-1, :]
        return gx, gy

    def forward(self, output, target):
        # both in [n, c, h, w]; background pixels are 0 in the target
        mask = (target.abs().sum(dim=1, keepdim=True) > 0).float()
        ogx, ogy = self._pooled_grad(output * mask)
        tgx, tgy = self._pooled_grad(target)
        loss = self.l1(ogx, tgx) + self.l1(ogy, tgy)
        return loss


class Gradloss2(nn.Module):
    """Second-order variant kept for the ablation table."""

    def __init__(self):
        super(Gradloss2, self).__init__()

    def forward(self, output, target):
        def lap(t):
            k = t.new_tensor([[0., 1., 0.], [1., -4., 1.], [0., 1., 0.]]).view(1, 1, 3, 3)
            k = k.repeat(t.shape[1], 1, 1, 1)
            return F.conv2d(t, k, padding=1, groups=t.shape[1])
        return torch.mean(torch.abs(lap(output) - lap(target)))
