"""
On-the-fly synthesis of training pairs for SynthMorph (PyTorch port).

Everything here runs on the GPU: label maps are drawn from smoothed noise, deformed with random
stationary velocity fields, and turned into images with a per-label Gaussian mixture, a bias
field and blurring. Generating on the device avoids shipping 3D volumes over PCIe every step.

Reference:
    SynthMorph: learning contrast-invariant registration without acquired images
    M Hoffmann, B Billot, DN Greve, JE Iglesias, B Fischl, AV Dalca
    IEEE Transactions on Medical Imaging (TMI), 41 (3), 543-558, 2022
"""

import math
from typing import Sequence, Optional

import numpy as np
import torch
import torch.nn.functional as F

from .layers import SpatialTransformer, VecInt


def _gaussian_kernel_1d(sigma, device, dtype=torch.float32, truncate=3.0):
    if sigma <= 0:
        return torch.ones(1, device=device, dtype=dtype)
    radius = max(1, int(math.ceil(truncate * sigma)))
    x = torch.arange(-radius, radius + 1, device=device, dtype=dtype)
    k = torch.exp(-0.5 * (x / sigma) ** 2)
    return k / k.sum()


def gaussian_blur(x, sigmas):
    """Separable Gaussian blur of a [B, C, *spatial] tensor. `sigmas` has one value per axis."""
    ndim = x.dim() - 2
    conv = getattr(F, 'conv%dd' % ndim)
    channels = x.shape[1]
    for axis, sigma in enumerate(sigmas):
        k = _gaussian_kernel_1d(float(sigma), device=x.device, dtype=x.dtype)
        shape = [1] * ndim
        shape[axis] = k.numel()
        weight = k.reshape(1, 1, *shape).repeat(channels, 1, *([1] * ndim))
        pad = [0] * (2 * ndim)
        pad[2 * (ndim - 1 - axis)] = k.numel() // 2
        pad[2 * (ndim - 1 - axis) + 1] = k.numel() // 2
        x = conv(F.pad(x, pad, mode='replicate'), weight, groups=channels)
    return x


def draw_perlin(out_shape: Sequence[int], scales: Sequence[float], max_std: float = 1.0,
                batch_size: int = 1, device='cuda', generator: Optional[torch.Generator] = None):
    """
    Smooth noise as a sum of upsampled Gaussian noise at several scales.

    Parameters:
        out_shape: spatial output shape, without batch or channel axes.
        scales: list of downsampling factors (>= 1) at which noise is drawn.
        max_std: maximum standard deviation of the noise at each scale.
        device: torch device on which the noise is generated (default: first GPU).
    """
    out_shape = list(out_shape)
    ndim = len(out_shape)
    mode = 'trilinear' if ndim == 3 else 'bilinear'
    out = torch.zeros(batch_size, 1, *out_shape, device=device)
    for scale in scales:
        sample_shape = [max(1, int(math.ceil(s / scale))) for s in out_shape]
        std = torch.rand(batch_size, 1, *([1] * ndim), device=device, generator=generator) * max_std
        gauss = torch.randn(batch_size, 1, *sample_shape, device=device, generator=generator) * std
        if scale > 1:
            gauss = F.interpolate(gauss, size=out_shape, mode=mode, align_corners=True)
        out = out + gauss
    return out


def random_svf(in_shape, int_steps=5, scales=(16, 32, 64), max_std=3.0, batch_size=1, device='cuda'):
    """Random diffeomorphic displacement from an integrated smooth velocity field."""
    ndim = len(in_shape)
    fields = [draw_perlin(in_shape, scales, max_std, batch_size, device=device) for _ in range(ndim)]
    svf = torch.cat(fields, dim=1)
    integrate = VecInt(in_shape, int_steps).to(svf.device)
    return integrate(svf)


def labels_from_noise(in_shape, num_labels=26, scales=(8, 16, 32, 64), batch_size=1, device=None):
    """
    Label map made by taking the argmax over `num_labels` smooth noise channels, then warping it
    with a random deformation so that the label boundaries are not axis-aligned blobs.
    """
    if device is None:
        device = torch.device('cuda', torch.cuda.current_device())
    noise = torch.cat([draw_perlin(in_shape, scales, 1.0, batch_size, device=device)
                       for _ in range(num_labels)], dim=1)
    labels = torch.argmax(noise, dim=1, keepdim=True)
    disp = random_svf(in_shape, batch_size=batch_size, device=device)
    warp = SpatialTransformer(in_shape, mode='nearest').to(device)
    return warp(labels.float(), disp).long()


def labels_to_image(labels, num_labels, mean_range=(25, 225), std_range=(5, 25), blur_max=1.0,
                    bias_std=0.3, bias_scales=(40,), gamma_std=0.25, zero_background=0.2):
    """
    Synthesize a grayscale image from a label map with a random Gaussian mixture.

    The label map must already live on the target device; all random draws happen there.
    """
    device = labels.device
    batch_size = labels.shape[0]
    in_shape = labels.shape[2:]
    ndim = len(in_shape)

    means = torch.empty(batch_size, num_labels, device=device).uniform_(*mean_range)
    stds = torch.empty(batch_size, num_labels, device=device).uniform_(*std_range)
    if zero_background > 0:
        drop = torch.rand(batch_size, device=device) < zero_background
        means[drop, 0] = 0
        stds[drop, 0] = 0

    onehot = F.one_hot(labels[:, 0], num_labels).movedim(-1, 1).float()
    mean_img = torch.einsum('bk...,bk->b...', onehot, means).unsqueeze(1)
    std_img = torch.einsum('bk...,bk->b...', onehot, stds).unsqueeze(1)
    image = mean_img + std_img * torch.randn_like(mean_img)

    # blur with a random kernel width per axis
    sigmas = (torch.rand(ndim) * blur_max).tolist()
    image = gaussian_blur(image, sigmas)

    # multiplicative bias field
    bias = draw_perlin(in_shape, bias_scales, bias_std, batch_size, device=device)
    image = image * torch.exp(bias)

    # min-max normalize, then random gamma
    flat = image.reshape(batch_size, -1)
    lo = flat.min(dim=1).values.reshape(batch_size, *([1] * (ndim + 1)))
    hi = flat.max(dim=1).values.reshape(batch_size, *([1] * (ndim + 1)))
    image = (image - lo) / (hi - lo + 1e-6)
    gamma = torch.exp(torch.randn(batch_size, device=device) * gamma_std)
    image = image.clamp(min=0).pow(gamma.reshape(batch_size, *([1] * (ndim + 1))))
    return image


class SynthPairGenerator:
    """
    Infinite generator of (moving image, fixed image, moving labels, fixed labels) batches.

    Usage:
        gen = SynthPairGenerator((160, 160, 192), num_labels=26)
        for step, (mov, fix, mov_lab, fix_lab) in zip(range(n), gen):
            ...
    """

    def __init__(self, in_shape, num_labels=26, batch_size=1, same_labels=False, seed=None,
                 device='cuda:0'):
        self.in_shape = tuple(in_shape)
        self.num_labels = num_labels
        self.batch_size = batch_size
        self.same_labels = same_labels
        self.device = torch.device(device)
        if seed is not None:
            torch.manual_seed(seed)
            np.random.seed(seed)

    def __iter__(self):
        return self

    def __next__(self):
        with torch.no_grad():
            fix_lab = labels_from_noise(self.in_shape, self.num_labels, batch_size=self.batch_size,
                                        device=self.device)
            if self.same_labels:
                disp = random_svf(self.in_shape, batch_size=self.batch_size, device=self.device)
                warp = SpatialTransformer(self.in_shape, mode='nearest').to(self.device)
                mov_lab = warp(fix_lab.float(), disp).long()
            else:
                mov_lab = labels_from_noise(self.in_shape, self.num_labels, batch_size=self.batch_size,
                                            device=self.device)
            fix = labels_to_image(fix_lab, self.num_labels)
            mov = labels_to_image(mov_lab, self.num_labels)
        return mov, fix, mov_lab, fix_lab


def sample_label_subset(labels, num_out, num_labels):
    """Randomly merge/keep labels so the Dice loss sees a random subset of structures."""
    keep = torch.randperm(num_labels, device=labels.device)[:num_out]
    lut = torch.zeros(num_labels, dtype=torch.long, device=labels.device)
    lut[keep] = torch.arange(1, num_out + 1, device=labels.device)
    return lut[labels]


def to_onehot(labels, num_classes):
    return F.one_hot(labels[:, 0], num_classes).movedim(-1, 1).float()
