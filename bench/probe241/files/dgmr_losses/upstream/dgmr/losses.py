"""Losses used to train DGMR and a few radar-specific auxiliary losses."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda.amp import custom_fwd


def loss_hinge_disc(score_generated, score_real):
    """Discriminator hinge loss."""
    l1 = F.relu(1.0 - score_real)
    loss = torch.mean(l1)
    l2 = F.relu(1.0 + score_generated)
    loss += torch.mean(l2)
    return loss


def loss_hinge_gen(score_generated):
    """Generator hinge loss."""
    loss = -torch.mean(score_generated)
    return loss


@custom_fwd(cast_inputs=torch.float32)
def grid_cell_regularizer(generated_samples, batch_targets):
    """Grid cell regularizer.

    Args:
      generated_samples: Tensor of size [n_samples, batch_size, 18, 256, 256, 1].
      batch_targets: Tensor of size [batch_size, 18, 256, 256, 1].

    Returns:
      loss: A tensor of shape [batch_size].
    """
    gen_mean = torch.mean(generated_samples, dim=0)
    weights = torch.clip(batch_targets, 0.0, 24.0)
    loss = torch.mean(torch.abs(gen_mean - batch_targets) * weights)
    return loss


class SSIMLoss(nn.Module):
    """1 - SSIM on each frame, averaged over time. Inputs in [0, 1]."""

    def __init__(self, window_size: int = 11, sigma: float = 1.5, channels: int = 1):
        super().__init__()
        self.window_size = window_size
        self.channels = channels
        gauss = torch.tensor([np.exp(-(x - window_size // 2) ** 2 / float(2 * sigma ** 2))
                              for x in range(window_size)], dtype=torch.float32)
        gauss = gauss / gauss.sum()
        window_2d = gauss[:, None] @ gauss[None, :]
        self.register_buffer("window", window_2d.expand(channels, 1, window_size, window_size).contiguous())

    def forward(self, pred, target):
        # (B, T, C, H, W) -> (B*T, C, H, W)
        b, t = pred.shape[:2]
        pred = pred.flatten(0, 1)
        target = target.flatten(0, 1)
        pad = self.window_size // 2
        mu1 = F.conv2d(pred, self.window, padding=pad, groups=self.channels)
        mu2 = F.conv2d(target, self.window, padding=pad, groups=self.channels)
        mu1_sq, mu2_sq, mu1_mu2 = mu1.pow(2), mu2.pow(2), mu1 * mu2
        sigma1_sq = F.conv2d(pred * pred, self.window, padding=pad, groups=self.channels) - mu1_sq
        sigma2_sq = F.conv2d(target * target, self.window, padding=pad, groups=self.channels) - mu2_sq
        sigma12 = F.conv2d(pred * target, self.window, padding=pad, groups=self.channels) - mu1_mu2
        c1, c2 = 0.01 ** 2, 0.03 ** 2
        ssim_map = ((2 * mu1_mu2 + c1) * (2 * sigma12 + c2)) / ((mu1_sq + mu2_sq + c1) * (sigma1_sq + sigma2_sq + c2))
        return 1.0 - ssim_map.view(b, t, -1).mean()


class WeightedMSEMAE(nn.Module):
    """Balanced MSE + MAE (Shi et al., 2017): heavier weights for heavier rain."""

    def __init__(self, thresholds=(0.5, 2.0, 5.0, 10.0, 30.0), weights=(1.0, 2.0, 5.0, 10.0, 30.0),
                 mse_weight=1.0, mae_weight=1.0, normalize=True):
        super().__init__()
        self.register_buffer("thresholds", torch.tensor(thresholds, dtype=torch.float32))
        self.balancing_weights = (1.0,) + tuple(weights)
        self.mse_weight = mse_weight
        self.mae_weight = mae_weight
        self.normalize = normalize

    def forward(self, pred, target, mask=None):
        w = torch.ones_like(pred) * self.balancing_weights[0]
        for i, threshold in enumerate(self.thresholds):
            w = w + (self.balancing_weights[i + 1] - self.balancing_weights[i]) * (target >= threshold).float()
        if mask is not None:
            w = w * mask.float()
        mse = torch.sum(w * (pred - target) ** 2, dim=(2, 3, 4))
        mae = torch.sum(w * torch.abs(pred - target), dim=(2, 3, 4))
        if self.normalize:
            n = float(np.prod(pred.shape[2:]))
            mse, mae = mse / n, mae / n
        return self.mse_weight * mse.mean() + self.mae_weight * mae.mean()
