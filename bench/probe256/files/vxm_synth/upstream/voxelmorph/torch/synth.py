"""
On-the-fly image synthesis for SynthMorph-style training (PyTorch port).

Label maps are drawn from smooth random noise, then converted into images with random
Gaussian-mixture intensities, a multiplicative bias field, blurring and gamma augmentation.
Everything runs on the accelerator: generating 160^3 volumes on the CPU is the main
bottleneck otherwise (see the SynthMorph paper, Hoffmann et al. 2022, Sec. 3.4).
"""

import math

import numpy as np
import torch
import torch.nn.functional as F


def _gaussian_kernel_1d(sigma, truncate=3.0, dtype=torch.float32, device=None):
    radius = max(int(math.ceil(truncate * sigma)), 1)
    x = torch.arange(-radius, radius + 1, dtype=dtype, device=device)
    k = torch.exp(-0.5 * (x / sigma) ** 2)
    return k / k.sum()


def gaussian_blur(x, sigmas):
    """Separable Gaussian blur of a [B, C, *spatial] tensor, one sigma per axis."""
    ndims = x.ndim - 2
    conv = getattr(F, 'conv%dd' % ndims)
    channels = x.shape[1]
    for axis, sigma in enumerate(sigmas):
        if sigma <= 0:
            continue
        k = _gaussian_kernel_1d(float(sigma), dtype=x.dtype, device=x.device)
        shape = [1] * ndims
        shape[axis] = -1
        k = k.view(1, 1, *shape).repeat(channels, 1, *([1] * ndims))
        pad = [0] * (2 * ndims)
        pad[2 * (ndims - 1 - axis)] = k.shape[2 + axis] // 2
        pad[2 * (ndims - 1 - axis) + 1] = k.shape[2 + axis] // 2
        x = conv(F.pad(x, pad, mode='replicate'), k, groups=channels)
    return x


def draw_perlin(out_shape, scales, min_std=0, max_std=1, dtype=torch.float32, device='cuda'):
    """
    Sum of upsampled Gaussian noise at several scales (approximate Perlin noise).

    out_shape: spatial shape plus a trailing feature count, e.g. (160, 160, 192, 26).
    scales:    list of integer downsampling factors.
    """
    out_shape = tuple(out_shape)
    spatial, feats = out_shape[:-1], out_shape[-1]
    ndims = len(spatial)
    mode = 'trilinear' if ndims == 3 else 'bilinear'
    out = torch.zeros((1, feats, *spatial), dtype=dtype, device=device)
    for scale in np.atleast_1d(scales):
        sub = [max(int(math.ceil(s / scale)), 1) for s in spatial]
        std = float(np.random.uniform(min_std, max_std))
        grid = torch.randn((1, feats, *sub), dtype=dtype, device=device) * std
        if any(s != t for s, t in zip(sub, spatial)):
            grid = F.interpolate(grid, size=spatial, mode=mode, align_corners=True)
        out = out + grid
    return out


class LabelMapGenerator:
    """
    Random label maps: argmax over a stack of smoothly warped noise images.
    """

    def __init__(self, in_shape, num_labels=26, label_scales=(32, 64), warp_std=3.0,
                 warp_scales=(8, 16, 32), device=None):
        self.in_shape = tuple(in_shape)
        self.num_labels = num_labels
        self.label_scales = label_scales
        self.warp_std = warp_std
        self.warp_scales = warp_scales
        self.device = device if device is not None else \
            torch.device('cuda' if torch.cuda.is_available() else 'cpu')
        ndims = len(self.in_shape)
        vectors = [torch.arange(0, s, dtype=torch.float32) for s in self.in_shape]
        grid = torch.stack(torch.meshgrid(vectors, indexing='ij'))[None]
        self.grid = grid.to(self.device)
        self.ndims = ndims

    def _random_warp(self, x):
        disp = draw_perlin((*self.in_shape, self.ndims), self.warp_scales,
                           max_std=self.warp_std, device=self.device)
        locs = self.grid + disp
        for i, s in enumerate(self.in_shape):
            locs[:, i] = 2 * (locs[:, i] / (s - 1) - 0.5)
        locs = locs.permute(0, *range(2, self.ndims + 2), 1)[..., list(reversed(range(self.ndims)))]
        return F.grid_sample(x, locs, mode='bilinear', align_corners=True)

    @torch.no_grad()
    def sample(self, batch_size=1):
        maps = []
        for _ in range(batch_size):
            noise = draw_perlin((*self.in_shape, self.num_labels), self.label_scales,
                                max_std=1.0, device=self.device)
            noise = self._random_warp(noise)
            maps.append(torch.argmax(noise, dim=1, keepdim=True))
        return torch.cat(maps, dim=0)


class LabelsToImage:
    """
    Convert integer label maps into synthetic grey-scale images.
    """

    def __init__(self, num_labels, mean_range=(0, 1), std_range=(0, 0.1),
                 bias_std=0.3, bias_scales=(40,), blur_std=1.0, gamma_std=0.25, zero_background=0.2):
        self.num_labels = num_labels
        self.mean_range = mean_range
        self.std_range = std_range
        self.bias_std = bias_std
        self.bias_scales = bias_scales
        self.blur_std = blur_std
        self.gamma_std = gamma_std
        self.zero_background = zero_background

    @torch.no_grad()
    def __call__(self, labels):
        device = labels.device
        batch = labels.shape[0]
        spatial = labels.shape[2:]
        images = []
        for b in range(batch):
            lab = labels[b:b + 1].long()
            means = torch.empty(self.num_labels, device=device).uniform_(*self.mean_range)
            stds = torch.empty(self.num_labels, device=device).uniform_(*self.std_range)
            if np.random.rand() < self.zero_background:
                means[0] = 0
                stds[0] = 0
            img = means[lab] + stds[lab] * torch.randn(lab.shape, device=device)

            sig = np.random.uniform(0, self.blur_std, size=len(spatial))
            img = gaussian_blur(img, sig)

            bias = draw_perlin((*spatial, 1), self.bias_scales, max_std=self.bias_std,
                               device=device)
            img = img * torch.exp(bias)

            img = img - img.amin()
            img = img / img.amax().clamp_min(1e-6)
            gamma = float(np.exp(np.random.normal(0, self.gamma_std)))
            img = img.clamp_min(0) ** gamma
            images.append(img)
        return torch.cat(images, dim=0)


def synth_pair_generator(in_shape, batch_size=1, num_labels=26, device=None, **kwargs):
    """
    Infinite generator of (moving, fixed, moving_labels, fixed_labels) tensors.
    """
    label_gen = LabelMapGenerator(in_shape, num_labels=num_labels, device=device)
    to_image = LabelsToImage(num_labels, **kwargs)
    while True:
        lab_a = label_gen.sample(batch_size)
        lab_b = label_gen.sample(batch_size)
        yield to_image(lab_a), to_image(lab_b), lab_a, lab_b


def one_hot(labels, num_labels):
    """[B, 1, *spatial] integer map -> [B, num_labels, *spatial] float one-hot."""
    oh = F.one_hot(labels.squeeze(1).long(), num_classes=num_labels)
    return oh.movedim(-1, 1).float()
