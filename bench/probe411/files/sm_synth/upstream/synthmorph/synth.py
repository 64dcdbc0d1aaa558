"""On-the-fly synthesis of training pairs from label maps (SynthMorph).

Given a batch of integer label maps, draw a random smooth deformation, a
Gaussian-mixture intensity per label, a multiplicative bias field, blur and
noise, so that the registration network never sees a real acquisition.
All sampling happens on the training device; the random stream is owned by a
dedicated generator so that data synthesis stays reproducible independently
of dropout or other consumers of the global RNG."""

import math

import torch
import torch.nn.functional as F


class LabelSynth:
    def __init__(self, in_shape, num_labels, device, seed=0, warp_std=3.0, warp_res=(8, 16, 32),
                 bias_std=0.3, bias_res=40, blur_std=1.0, noise_std=0.1, zero_background=0.2):
        self.in_shape = tuple(in_shape)
        self.num_labels = num_labels
        self.device = device
        self.warp_std = warp_std
        self.warp_res = warp_res
        self.bias_std = bias_std
        self.bias_res = bias_res
        self.blur_std = blur_std
        self.noise_std = noise_std
        self.zero_background = zero_background

        # a CUDA generator: every draw below passes generator=self.gen and device=self.device
        self.gen = torch.Generator(device='cuda')
        self.gen.manual_seed(seed)

        grid = torch.stack(torch.meshgrid(*[torch.arange(s, dtype=torch.float32) for s in self.in_shape],
                                          indexing='ij'))
        self.grid = grid[None].to(device)

    # ---------------------------------------------------------------- helpers
    def _rand(self, *shape):
        return torch.rand(*shape, generator=self.gen, device=self.device)

    def _randn(self, *shape):
        return torch.randn(*shape, generator=self.gen, device=self.device)

    def _smooth_field(self, batch, channels, res, std):
        """Draw Gaussian noise at a coarse resolution and upsample it."""
        small = [max(1, math.ceil(s / res)) for s in self.in_shape]
        noise = self._randn(batch, channels, *small) * std * self._rand(batch, 1, 1, 1, 1)
        return F.interpolate(noise, size=self.in_shape, mode='trilinear', align_corners=True)

    def _warp(self, x, disp, mode):
        loc = self.grid + disp
        loc = torch.stack([2 * loc[:, i] / (s - 1) - 1 for i, s in enumerate(self.in_shape)], dim=-1)
        return F.grid_sample(x, loc.flip(-1), mode=mode, align_corners=True)

    def _integrate(self, vel, steps=5):
        disp = vel / 2 ** steps
        for _ in range(steps):
            disp = disp + self._warp(disp, disp, 'bilinear')
        return disp

    def _gaussian_blur(self, x, std):
        radius = max(1, int(3 * std))
        k = torch.arange(-radius, radius + 1, device=x.device, dtype=x.dtype)
        k = torch.exp(-k ** 2 / (2 * std ** 2))
        k = k / k.sum()
        for axis in range(3):
            shape = [1, 1, 1, 1, 1]
            shape[2 + axis] = k.numel()
            pad = [0, 0, 0, 0, 0, 0]
            pad[2 * (2 - axis)] = pad[2 * (2 - axis) + 1] = radius
            x = F.conv3d(F.pad(x, pad, mode='replicate'), k.view(shape))
        return x

    # ---------------------------------------------------------------- public
    def deform_labels(self, labels):
        """Warp integer label maps with a random diffeomorphism (nearest neighbour)."""
        b = labels.shape[0]
        vel = sum(self._smooth_field(b, 3, r, self.warp_std) for r in self.warp_res)
        disp = self._integrate(vel)
        out = self._warp(labels.float(), disp, 'nearest')
        return out.long()

    def labels_to_image(self, labels):
        """Gaussian mixture: one random mean/std per label, then bias, blur, noise, gamma."""
        b = labels.shape[0]
        means = self._rand(b, self.num_labels)
        stds = self._rand(b, self.num_labels) * 0.1
        if self.zero_background:
            keep = (self._rand(b, 1) > self.zero_background).float()
            means[:, :1] *= keep

        onehot = F.one_hot(labels[:, 0], self.num_labels).permute(0, 4, 1, 2, 3).float()
        mu = torch.einsum('bk,bkxyz->bxyz', means, onehot)[:, None]
        sd = torch.einsum('bk,bkxyz->bxyz', stds, onehot)[:, None]
        img = mu + sd * self._randn(*mu.shape)

        bias = torch.exp(self._smooth_field(b, 1, self.bias_res, self.bias_std))
        img = img * bias
        img = self._gaussian_blur(img, self.blur_std * float(self._rand(1)) + 0.5)
        img = img + self.noise_std * self._rand(b, 1, 1, 1, 1) * self._randn(*img.shape)

        img = img - img.amin(dim=(2, 3, 4), keepdim=True)
        img = img / img.amax(dim=(2, 3, 4), keepdim=True).clamp_min(1e-6)
        gamma = torch.exp(0.25 * self._randn(b, 1, 1, 1, 1))
        return img.clamp_min(0) ** gamma

    def __call__(self, labels_a, labels_b):
        """Return (moving image, fixed image, moving labels, fixed labels) for a batch."""
        la = self.deform_labels(labels_a)
        lb = self.deform_labels(labels_b)
        return self.labels_to_image(la), self.labels_to_image(lb), la, lb
