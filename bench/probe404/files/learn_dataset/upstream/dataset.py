import os
import glob
import numpy as np
import scipy.io as sio
import torch
from torch.utils.data import Dataset


class CTSliceDataset(Dataset):
    """Pairs of (low-dose / sparse-view projection, full-dose reference image).

    Every .mat file holds one slice: ``proj`` (views x dets, float32) and
    ``label`` (H x W, attenuation in 1/mm). Projections are simulated once
    with tools/simulate_lowdose.py so that training does not need the CT
    library on the data-loading workers.
    """

    def __init__(self, root, mode='train', views=64, full_views=1024, transform=None):
        super(CTSliceDataset, self).__init__()
        self.mode = mode
        self.views = views
        self.full_views = full_views
        self.transform = transform
        pattern = os.path.join(root, mode, '*.mat')
        self.files = sorted(glob.glob(pattern))
        if len(self.files) == 0:
            raise RuntimeError('no .mat files found under {}'.format(pattern))

    def __len__(self):
        return len(self.files)

    def _subsample(self, proj):
        if self.views == self.full_views:
            return proj
        step = self.full_views // self.views
        return proj[::step, :]

    def __getitem__(self, index):
        mat = sio.loadmat(self.files[index])
        proj = mat['proj'].astype(np.float32)
        label = mat['label'].astype(np.float32)
        proj = self._subsample(proj)
        if self.transform is not None:
            proj, label = self.transform(proj, label)
        proj = torch.from_numpy(np.ascontiguousarray(proj)).unsqueeze(0)
        label = torch.from_numpy(np.ascontiguousarray(label)).unsqueeze(0)
        return proj, label, os.path.basename(self.files[index])


class RandomFlip(object):
    """Horizontal flip of the image; the matching sinogram flip reverses the detector axis."""

    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, proj, label):
        if np.random.rand() < self.p:
            label = label[:, ::-1]
            proj = proj[:, ::-1]
        return proj, label


class ImagePatchDataset(Dataset):
    """Image-domain patches for pre-training the regularisation CNNs (no projections)."""

    def __init__(self, root, patch_size=64, patches_per_image=16, mode='train'):
        super(ImagePatchDataset, self).__init__()
        self.files = sorted(glob.glob(os.path.join(root, mode, '*.mat')))
        self.patch_size = patch_size
        self.patches_per_image = patches_per_image

    def __len__(self):
        return len(self.files) * self.patches_per_image

    def __getitem__(self, index):
        mat = sio.loadmat(self.files[index // self.patches_per_image])
        label = mat['label'].astype(np.float32)
        h, w = label.shape
        top = np.random.randint(0, h - self.patch_size + 1)
        left = np.random.randint(0, w - self.patch_size + 1)
        patch = label[top:top + self.patch_size, left:left + self.patch_size]
        noisy = patch + np.random.normal(0, 0.02 * patch.max(), patch.shape).astype(np.float32)
        return torch.from_numpy(noisy).unsqueeze(0), torch.from_numpy(patch).unsqueeze(0)


def geometry_from_args(args):
    return dict(views=args.views, dets=args.dets, width=args.width, height=args.height,
                dImg=args.dImg, dDet=args.dDet, Ang0=0, dAng=2 * np.pi / args.views,
                s2r=args.s2r, d2r=args.d2r, binshift=args.binshift, scan_type=0)
