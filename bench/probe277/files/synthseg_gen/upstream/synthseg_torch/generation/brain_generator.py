"""On-the-fly synthetic brain MRI generator (SynthSeg-style domain randomisation).

Given a 3D label map, every call produces a new (image, labels) pair:
  1. random affine + non-linear (SVF, scaling-and-squaring) deformation of the labels
  2. per-label intensities from a randomly parameterised GMM
  3. smooth multiplicative bias field
  4. random resolution: blur with a Gaussian matching a random slice thickness,
     downsample, then resample back to 1mm
  5. gamma augmentation + min/max normalisation

Everything runs on the GPU; a single 160^3 sample takes ~15 ms on a V100,
so the generator is used directly inside the training loop instead of a
DataLoader with workers.
"""
import glob
import math
import os

import nibabel as nib
import numpy as np
import torch
import torch.nn.functional as F


def load_label_maps(path_label_maps):
    if os.path.isdir(path_label_maps):
        files = sorted(glob.glob(os.path.join(path_label_maps, "*.nii.gz")))
    else:
        files = [path_label_maps]
    assert len(files) > 0, f"no label maps found in {path_label_maps}"
    return files


def gaussian_kernel_1d(sigma, truncate=3.0, device=None):
    """normalised 1D Gaussian; sigma in voxels (float tensor or python float)"""
    sigma = float(sigma)
    if sigma < 1e-3:
        return torch.ones(1, device=device)
    radius = int(math.ceil(truncate * sigma))
    x = torch.arange(-radius, radius + 1, dtype=torch.float32, device=device)
    k = torch.exp(-0.5 * (x / sigma) ** 2)
    return k / k.sum()


def blur3d(vol, sigmas):
    """separable Gaussian blur of a [B, C, D, H, W] volume with per-axis sigmas"""
    for axis, s in enumerate(sigmas):
        k = gaussian_kernel_1d(s, device=vol.device)
        if k.numel() == 1:
            continue
        shape = [1, 1, 1, 1, 1]
        shape[2 + axis] = k.numel()
        k = k.view(*shape).repeat(vol.shape[1], 1, 1, 1, 1)
        pad = [0, 0, 0, 0, 0, 0]
        pad[2 * (2 - axis)] = pad[2 * (2 - axis) + 1] = k.shape[2 + axis] // 2
        vol = F.conv3d(F.pad(vol, pad, mode="replicate"), k, groups=vol.shape[1])
    return vol


class BrainGenerator:
    def __init__(self,
                 labels_dir,
                 generation_labels=None,
                 output_labels=None,
                 target_shape=(160, 160, 160),
                 prior_means=(0, 225),
                 prior_stds=(0, 25),
                 scaling_bounds=0.2,
                 rotation_bounds=15,
                 shearing_bounds=0.012,
                 translation_bounds=False,
                 nonlin_std=4.0,
                 nonlin_scale=0.04,
                 bias_field_std=0.7,
                 bias_scale=0.025,
                 randomise_res=True,
                 max_res_iso=4.0,
                 max_res_aniso=8.0,
                 gamma_std=0.5,
                 device=None):
        self.label_files = load_label_maps(labels_dir)
        self.target_shape = tuple(target_shape)
        self.prior_means = prior_means
        self.prior_stds = prior_stds
        self.scaling_bounds = scaling_bounds
        self.rotation_bounds = rotation_bounds
        self.shearing_bounds = shearing_bounds
        self.translation_bounds = translation_bounds
        self.nonlin_std = nonlin_std
        self.nonlin_scale = nonlin_scale
        self.bias_field_std = bias_field_std
        self.bias_scale = bias_scale
        self.randomise_res = randomise_res
        self.max_res_iso = max_res_iso
        self.max_res_aniso = max_res_aniso
        self.gamma_std = gamma_std

        if device is None:
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.device = device

        # label values present in the training maps (FreeSurfer LUT)
        if generation_labels is None:
            generation_labels = np.unique(nib.load(self.label_files[0]).get_fdata().astype(np.int32))
        self.generation_labels = torch.as_tensor(np.asarray(generation_labels), dtype=torch.long)
        self.n_labels = len(self.generation_labels)
        if output_labels is None:
            output_labels = generation_labels
        lut = torch.zeros(int(max(generation_labels)) + 1, dtype=torch.long)
        for i, (g, o) in enumerate(zip(generation_labels, output_labels)):
            lut[int(g)] = int(o)
        self.lut = lut.to(self.device)

        # cache the label maps on the GPU (they are small: uint8, ~4 MB each)
        self.label_cache = {}

    # ------------------------------------------------------------------ io
    def _load_labels(self, idx):
        if idx not in self.label_cache:
            lab = nib.load(self.label_files[idx]).get_fdata().astype(np.int16)
            lab = torch.from_numpy(lab).cuda()
            self.label_cache[idx] = lab
        return self.label_cache[idx]

    # ----------------------------------------------------------- geometry
    def _random_affine(self, batch_size):
        dev = self.device
        rot = (torch.rand(batch_size, 3, device=dev) * 2 - 1) * math.radians(self.rotation_bounds)
        scl = 1 + (torch.rand(batch_size, 3, device=dev) * 2 - 1) * self.scaling_bounds
        shr = (torch.rand(batch_size, 6, device=dev) * 2 - 1) * self.shearing_bounds
        A = torch.eye(4, device=dev).repeat(batch_size, 1, 1)
        cx, cy, cz = torch.cos(rot).unbind(1)
        sx, sy, sz = torch.sin(rot).unbind(1)
        Rx = torch.eye(3, device=dev).repeat(batch_size, 1, 1)
        Rx[:, 1, 1], Rx[:, 1, 2], Rx[:, 2, 1], Rx[:, 2, 2] = cx, -sx, sx, cx
        Ry = torch.eye(3, device=dev).repeat(batch_size, 1, 1)
        Ry[:, 0, 0], Ry[:, 0, 2], Ry[:, 2, 0], Ry[:, 2, 2] = cy, sy, -sy, cy
        Rz = torch.eye(3, device=dev).repeat(batch_size, 1, 1)
        Rz[:, 0, 0], Rz[:, 0, 1], Rz[:, 1, 0], Rz[:, 1, 1] = cz, -sz, sz, cz
        S = torch.diag_embed(scl)
        Sh = torch.eye(3, device=dev).repeat(batch_size, 1, 1)
        Sh[:, 0, 1], Sh[:, 0, 2], Sh[:, 1, 0], Sh[:, 1, 2], Sh[:, 2, 0], Sh[:, 2, 1] = shr.unbind(1)
        A[:, :3, :3] = Rz @ Ry @ Rx @ Sh @ S
        if self.translation_bounds:
            A[:, :3, 3] = (torch.rand(batch_size, 3, device=dev) * 2 - 1) * self.translation_bounds
        return A[:, :3, :]

    def _random_svf_field(self, batch_size):
        """smooth stationary velocity field integrated by scaling and squaring"""
        small = [max(2, int(round(s * self.nonlin_scale))) for s in self.target_shape]
        std = torch.rand(batch_size, 1, 1, 1, 1, device=self.device) * self.nonlin_std
        svf = torch.randn(batch_size, 3, *small, device=self.device) * std
        svf = F.interpolate(svf, size=self.target_shape, mode="trilinear", align_corners=True)
        # voxel units -> normalised [-1, 1] grid units
        scale = torch.tensor([2.0 / (s - 1) for s in self.target_shape[::-1]], device=self.device)
        svf = svf.permute(0, 2, 3, 4, 1) * scale
        n_steps = 7
        disp = svf / (2 ** n_steps)
        grid0 = F.affine_grid(torch.eye(3, 4, device=self.device).unsqueeze(0).repeat(batch_size, 1, 1),
                              (batch_size, 1) + self.target_shape, align_corners=True)
        for _ in range(n_steps):
            disp = disp + F.grid_sample(disp.permute(0, 4, 1, 2, 3), grid0 + disp,
                                        mode="bilinear", padding_mode="border",
                                        align_corners=True).permute(0, 2, 3, 4, 1)
        return grid0, disp

    def _deform_labels(self, labels):
        B = labels.shape[0]
        theta = self._random_affine(B)
        grid = F.affine_grid(theta, (B, 1) + self.target_shape, align_corners=True)
        _, disp = self._random_svf_field(B)
        grid = grid + disp
        lab = F.grid_sample(labels.float(), grid, mode="nearest", padding_mode="zeros", align_corners=True)
        return lab.long()

    # --------------------------------------------------------- intensities
    def _sample_gmm(self, labels):
        B = labels.shape[0]
        n = int(self.lut.numel())
        means = torch.cuda.FloatTensor(B, n).uniform_(*self.prior_means)
        stds = torch.cuda.FloatTensor(B, n).uniform_(*self.prior_stds)
        idx = labels.clamp(0, n - 1).squeeze(1)
        mu = torch.gather(means, 1, idx.view(B, -1)).view_as(idx)
        sd = torch.gather(stds, 1, idx.view(B, -1)).view_as(idx)
        img = mu + sd * torch.randn_like(mu)
        return img.unsqueeze(1).clamp_(min=0)

    def _bias_field(self, img):
        B = img.shape[0]
        small = [max(2, int(round(s * self.bias_scale))) for s in self.target_shape]
        std = torch.rand(B, 1, 1, 1, 1, device=img.device) * self.bias_field_std
        field = torch.randn(B, 1, *small, device=img.device) * std
        field = F.interpolate(field, size=self.target_shape, mode="trilinear", align_corners=True)
        return img * torch.exp(field)

    def _random_resolution(self, img):
        if not self.randomise_res:
            return img
        B = img.shape[0]
        out = []
        for b in range(B):
            if np.random.rand() < 0.5:
                res = np.full(3, np.random.uniform(1.0, self.max_res_iso))
            else:
                res = np.ones(3)
                res[np.random.randint(3)] = np.random.uniform(1.0, self.max_res_aniso)
            sig = 0.75 * res * (res > 1)
            x = blur3d(img[b:b + 1], sig)
            low = [max(8, int(round(s / r))) for s, r in zip(self.target_shape, res)]
            x = F.interpolate(x, size=low, mode="trilinear", align_corners=True)
            x = F.interpolate(x, size=self.target_shape, mode="trilinear", align_corners=True)
            out.append(x)
        return torch.cat(out, 0)

    def _normalise_and_gamma(self, img):
        B = img.shape[0]
        flat = img.view(B, -1)
        mn = flat.min(1, keepdim=True)[0].view(B, 1, 1, 1, 1)
        mx = flat.max(1, keepdim=True)[0].view(B, 1, 1, 1, 1)
        img = (img - mn) / (mx - mn + 1e-6)
        gamma = torch.exp(torch.randn(B, 1, 1, 1, 1, device=img.device) * self.gamma_std)
        return img.clamp(0, 1) ** gamma

    # ---------------------------------------------------------------- api
    @torch.no_grad()
    def generate_batch(self, batch_size=1):
        idx = np.random.randint(len(self.label_files), size=batch_size)
        labs = []
        for i in idx:
            lab = self._load_labels(int(i))
            lab = self._crop_or_pad(lab)
            labs.append(lab[None, None])
        labels = torch.cat(labs, 0)
        labels = self._deform_labels(labels)
        img = self._sample_gmm(labels)
        img = self._bias_field(img)
        img = self._random_resolution(img)
        img = self._normalise_and_gamma(img)
        seg = self.lut[labels.clamp(0, self.lut.numel() - 1)]
        return img, seg

    def _crop_or_pad(self, lab):
        out = torch.zeros(self.target_shape, dtype=lab.dtype, device=lab.device)
        src, dst = [], []
        for s, t in zip(lab.shape, self.target_shape):
            if s >= t:
                o = (s - t) // 2
                src.append(slice(o, o + t))
                dst.append(slice(0, t))
            else:
                o = (t - s) // 2
                src.append(slice(0, s))
                dst.append(slice(o, o + s))
        out[tuple(dst)] = lab[tuple(src)]
        return out


if __name__ == "__main__":
    gen = BrainGenerator("./data/training_label_maps")
    _ = gen.generate_batch(1)  # warm-up (cuDNN autotune, label cache)
    torch.cuda.synchronize(gen.device)
    import time
    t0 = time.time()
    for _ in range(10):
        im, lab = gen.generate_batch(2)
    torch.cuda.synchronize()
    print(im.shape, lab.shape, f"{(time.time() - t0) / 10 * 1000:.1f} ms/batch")
