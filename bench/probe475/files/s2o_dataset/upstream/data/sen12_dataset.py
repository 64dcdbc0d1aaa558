"""Paired Sentinel-1 / Sentinel-2 dataset (SEN1-2, Schmitt et al. 2018).

Directory layout expected under --dataroot:
    ROIs1158_spring/s1_1/ROIs1158_spring_s1_1_p30.png
    ROIs1158_spring/s2_1/ROIs1158_spring_s2_1_p30.png
For SEN12MS the GeoTIFF variant is read with rasterio (two SAR bands in dB).
"""
import glob
import os
import random

import numpy as np
import torch
import torchvision.transforms.functional as TF
from PIL import Image

from data.base_dataset import BaseDataset

try:
    import rasterio
except ImportError:  # png-only SEN1-2 does not need it
    rasterio = None

SEASONS = ['spring', 'summer', 'fall', 'winter']


class Sen12Dataset(BaseDataset):
    """A dataset of co-registered SAR/optical patches."""

    @staticmethod
    def modify_commandline_options(parser, is_train):
        parser.add_argument('--s2_bands', type=str, default='4,3,2', help='Sentinel-2 bands for the optical target (1-based)')
        parser.add_argument('--use_tif', action='store_true', help='read SEN12MS GeoTIFFs instead of SEN1-2 pngs')
        return parser

    def __init__(self, opt):
        BaseDataset.__init__(self, opt)
        seasons = SEASONS if opt.season == 'all' else [opt.season]
        ext = 'tif' if opt.use_tif else 'png'
        self.s1_paths = []
        for season in seasons:
            pattern = os.path.join(opt.dataroot, opt.phase, f'*{season}*', 's1_*', f'*.{ext}')
            self.s1_paths += sorted(glob.glob(pattern))
        self.s1_paths = self.s1_paths[:int(min(opt.max_dataset_size, len(self.s1_paths)))]
        self.s2_bands = [int(b) for b in opt.s2_bands.split(',')]
        self.db_min, self.db_max = opt.sar_db_range
        assert len(self.s1_paths) > 0, f'no SAR patches found under {opt.dataroot}'

    @staticmethod
    def _s2_path(s1_path):
        return s1_path.replace('/s1_', '/s2_').replace('_s1_', '_s2_')

    def _read_sar(self, path):
        if path.endswith('.tif'):
            with rasterio.open(path) as src:
                sar = src.read().astype(np.float32)  # (2, H, W) in dB
        else:
            img = np.array(Image.open(path)).astype(np.float32)
            if img.ndim == 2:
                img = np.stack([img, img], 0)
            sar = img / 255.0 * (self.db_max - self.db_min) + self.db_min
        sar = np.nan_to_num(sar, nan=self.db_min)
        sar = np.clip(sar, self.db_min, self.db_max)
        sar = (sar - self.db_min) / (self.db_max - self.db_min)
        return torch.from_numpy(sar * 2.0 - 1.0)

    def _read_opt(self, path):
        if path.endswith('.tif'):
            with rasterio.open(path) as src:
                opt = src.read(self.s2_bands).astype(np.float32)
            opt = np.clip(opt, 0, 3000) / 3000.0
        else:
            opt = np.array(Image.open(path).convert('RGB')).astype(np.float32).transpose(2, 0, 1) / 255.0
        return torch.from_numpy(opt * 2.0 - 1.0)

    def __getitem__(self, index):
        s1_path = self.s1_paths[index]
        s2_path = self._s2_path(s1_path)
        A = self._read_sar(s1_path)
        B = self._read_opt(s2_path)

        if self.opt.isTrain and self.opt.preprocess != 'none':
            size = self.opt.crop_size
            _, h, w = A.shape
            if h > size and w > size:
                y = random.randint(0, h - size)
                x = random.randint(0, w - size)
                A = A[:, y:y + size, x:x + size]
                B = B[:, y:y + size, x:x + size]
            if not self.opt.no_flip and random.random() < 0.5:
                A = TF.hflip(A)
                B = TF.hflip(B)

        return {'A': A, 'B': B, 'A_paths': s1_path, 'B_paths': s2_path}

    def __len__(self):
        return len(self.s1_paths)
