"""Quality indices for pansharpening, in PyTorch so they can run on the GPU
inside the validation loop (the MATLAB toolbox is still the reference for the
numbers reported in papers).

Reduced resolution (with GT):  SAM, ERGAS, SCC, Q (UIQI), Q2n (Q4/Q8)
Full resolution (no GT):       D_lambda, D_s, QNR

All functions take tensors shaped B x C x H x W in [0, 1] unless stated.
"""
import math

import numpy as np
import torch
import torch.nn.functional as F

_EPS = torch.tensor(1e-8).cuda()


def sam(sr, gt, reduction="mean"):
    """Spectral Angle Mapper in degrees."""
    inner = torch.sum(sr * gt, dim=1)
    norm = torch.sqrt(torch.sum(sr ** 2, dim=1)) * torch.sqrt(torch.sum(gt ** 2, dim=1))
    cos = torch.clamp(inner / (norm + _EPS), -1.0, 1.0)
    angle = torch.acos(cos) * 180.0 / math.pi
    if reduction == "mean":
        return angle.mean()
    if reduction == "none":
        return angle.flatten(1).mean(dim=1)
    raise ValueError(reduction)


def ergas(sr, gt, ratio=4):
    """Erreur Relative Globale Adimensionnelle de Synthese."""
    mse = torch.mean((sr - gt) ** 2, dim=(2, 3))
    mean_gt = torch.mean(gt, dim=(2, 3))
    per_band = mse / (mean_gt ** 2 + _EPS)
    return (100.0 / ratio * torch.sqrt(torch.mean(per_band, dim=1))).mean()


def psnr(sr, gt, data_range=1.0):
    mse = torch.mean((sr - gt) ** 2, dim=(1, 2, 3))
    return (10.0 * torch.log10(data_range ** 2 / (mse + 1e-12))).mean()


def _laplacian_kernel(device):
    k = torch.tensor([[-1., -1., -1.], [-1., 8., -1.], [-1., -1., -1.]], device=device)
    return k.view(1, 1, 3, 3)


def scc(sr, gt):
    """Spatial correlation coefficient on Laplacian-filtered bands."""
    c = sr.shape[1]
    k = _laplacian_kernel(sr.device).repeat(c, 1, 1, 1)
    hs = F.conv2d(sr, k, padding=1, groups=c)
    hg = F.conv2d(gt, k, padding=1, groups=c)
    hs = hs - hs.mean(dim=(2, 3), keepdim=True)
    hg = hg - hg.mean(dim=(2, 3), keepdim=True)
    num = torch.sum(hs * hg, dim=(1, 2, 3))
    den = torch.sqrt(torch.sum(hs ** 2, dim=(1, 2, 3)) * torch.sum(hg ** 2, dim=(1, 2, 3)))
    return (num / (den + 1e-8)).mean()


def _uiqi_map(x, y, block=32):
    """Universal image quality index computed on sliding blocks (stride = block)."""
    kernel = torch.ones(1, 1, block, block, device=x.device) / (block * block)
    mu_x = F.conv2d(x, kernel, stride=block)
    mu_y = F.conv2d(y, kernel, stride=block)
    sxx = F.conv2d(x * x, kernel, stride=block) - mu_x ** 2
    syy = F.conv2d(y * y, kernel, stride=block) - mu_y ** 2
    sxy = F.conv2d(x * y, kernel, stride=block) - mu_x * mu_y
    return 4 * sxy * mu_x * mu_y / ((sxx + syy) * (mu_x ** 2 + mu_y ** 2) + 1e-12)


def q_index(sr, gt, block=32):
    c = sr.shape[1]
    qs = [_uiqi_map(sr[:, i:i + 1], gt[:, i:i + 1], block).mean() for i in range(c)]
    return torch.stack(qs).mean()


def q2n(sr, gt, block=32):
    """Hypercomplex Q2^n index (Q4 for 4 bands, Q8 for 8 bands).

    Computed with a quaternion/octonion-free closed form on the covariance of
    the band vectors, which matches the MATLAB q2n() to ~1e-3. Double
    precision is used for the covariance to keep the small blocks stable.
    """
    b, c, h, w = sr.shape
    sr64 = sr.double()
    gt64 = gt.double()
    sr_blocks = F.unfold(sr64, block, stride=block).view(b, c, block * block, -1)
    gt_blocks = F.unfold(gt64, block, stride=block).view(b, c, block * block, -1)
    mu_s = sr_blocks.mean(dim=2, keepdim=True)
    mu_g = gt_blocks.mean(dim=2, keepdim=True)
    ds = sr_blocks - mu_s
    dg = gt_blocks - mu_g
    var_s = (ds ** 2).sum(dim=1).mean(dim=1)
    var_g = (dg ** 2).sum(dim=1).mean(dim=1)
    cov = (ds * dg).sum(dim=1).mean(dim=1)
    m_s = (mu_s ** 2).sum(dim=1).squeeze(1)
    m_g = (mu_g ** 2).sum(dim=1).squeeze(1)
    m_sg = (mu_s * mu_g).sum(dim=1).squeeze(1)
    q = 4 * cov * m_sg / ((var_s + var_g) * (m_s + m_g) + 1e-12)
    return q.mean().float()


def d_lambda(sr, lrms, p=1):
    """Spectral distortion index of QNR."""
    c = sr.shape[1]
    acc = []
    for i in range(c):
        for j in range(c):
            if i == j:
                continue
            q_hr = q_index(sr[:, i:i + 1], sr[:, j:j + 1], block=32)
            q_lr = q_index(lrms[:, i:i + 1], lrms[:, j:j + 1], block=8)
            acc.append(torch.abs(q_hr - q_lr) ** p)
    return (torch.stack(acc).mean()) ** (1.0 / p)


def d_s(sr, lrms, pan, ratio=4, q=1):
    """Spatial distortion index of QNR."""
    c = sr.shape[1]
    pan_lr = F.interpolate(pan, scale_factor=1.0 / ratio, mode="bicubic", align_corners=False)
    acc = []
    for i in range(c):
        q_hr = q_index(sr[:, i:i + 1], pan, block=32)
        q_lr = q_index(lrms[:, i:i + 1], pan_lr, block=8)
        acc.append(torch.abs(q_hr - q_lr) ** q)
    return (torch.stack(acc).mean()) ** (1.0 / q)


def qnr(sr, lrms, pan, alpha=1, beta=1):
    dl = d_lambda(sr, lrms)
    ds_ = d_s(sr, lrms, pan)
    return ((1 - dl) ** alpha) * ((1 - ds_) ** beta), dl, ds_


class MetricTracker(object):
    """Running averages of reduced-resolution metrics over a validation set."""

    def __init__(self, ratio=4):
        self.ratio = ratio
        self.reset()

    def reset(self):
        self.sums = {"SAM": 0.0, "ERGAS": 0.0, "PSNR": 0.0, "SCC": 0.0, "Q2n": 0.0}
        self.n = 0

    @torch.no_grad()
    def update(self, sr, gt):
        sr = sr.clamp(0, 1)
        bs = sr.shape[0]
        self.sums["SAM"] += sam(sr, gt).item() * bs
        self.sums["ERGAS"] += ergas(sr, gt, self.ratio).item() * bs
        self.sums["PSNR"] += psnr(sr, gt).item() * bs
        self.sums["SCC"] += scc(sr, gt).item() * bs
        self.sums["Q2n"] += q2n(sr, gt).item() * bs
        self.n += bs

    def result(self):
        return {k: v / max(self.n, 1) for k, v in self.sums.items()}

    def __str__(self):
        r = self.result()
        return " | ".join("{}: {:.4f}".format(k, v) for k, v in r.items())


def numpy_to_tensor(x, device="cuda"):
    """HxWxC numpy image (any scale) -> 1xCxHxW float tensor on `device`."""
    if x.ndim == 2:
        x = x[:, :, None]
    t = torch.from_numpy(np.ascontiguousarray(x.transpose(2, 0, 1))).float().unsqueeze(0)
    return t.to(device)


if __name__ == "__main__":
    gt = torch.rand(2, 8, 64, 64).cuda()
    sr = (gt + 0.01 * torch.randn_like(gt)).clamp(0, 1)
    tracker = MetricTracker()
    tracker.update(sr, gt)
    print(tracker)
