import math
import torch
import torch.nn.functional as F


class AverageMeter(object):
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0.0
        self.avg = 0.0
        self.sum = 0.0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / max(self.count, 1)


def _gaussian_window(window_size, sigma, channel, device, dtype):
    coords = torch.arange(window_size, dtype=dtype, device=device) - window_size // 2
    g = torch.exp(-(coords ** 2) / (2 * sigma ** 2))
    g = (g / g.sum()).unsqueeze(1)
    window = g.mm(g.t()).unsqueeze(0).unsqueeze(0)
    return window.expand(channel, 1, window_size, window_size).contiguous()


def compute_ssim(img1, img2, data_range, window_size=11, sigma=1.5):
    channel = img1.size(1)
    window = _gaussian_window(window_size, sigma, channel, img1.device, img1.dtype)
    pad = window_size // 2
    mu1 = F.conv2d(img1, window, padding=pad, groups=channel)
    mu2 = F.conv2d(img2, window, padding=pad, groups=channel)
    mu1_sq, mu2_sq, mu1_mu2 = mu1 * mu1, mu2 * mu2, mu1 * mu2
    sigma1_sq = F.conv2d(img1 * img1, window, padding=pad, groups=channel) - mu1_sq
    sigma2_sq = F.conv2d(img2 * img2, window, padding=pad, groups=channel) - mu2_sq
    sigma12 = F.conv2d(img1 * img2, window, padding=pad, groups=channel) - mu1_mu2
    C1 = (0.01 * data_range) ** 2
    C2 = (0.03 * data_range) ** 2
    ssim_map = ((2 * mu1_mu2 + C1) * (2 * sigma12 + C2)) / ((mu1_sq + mu2_sq + C1) * (sigma1_sq + sigma2_sq + C2))
    return ssim_map.mean().item()


def compute_psnr(img1, img2, data_range):
    mse = F.mse_loss(img1, img2).item()
    if mse == 0:
        return float('inf')
    return 10 * math.log10(data_range ** 2 / mse)


def compute_rmse(img1, img2):
    return torch.sqrt(F.mse_loss(img1, img2)).item()


@torch.no_grad()
def compute_measure(pred, target, data_range):
    # evaluate in float64 for stable statistics over the full test set
    pred = pred.double()
    target = target.double()
    return compute_psnr(pred, target, data_range), compute_ssim(pred, target, data_range), compute_rmse(pred, target)
