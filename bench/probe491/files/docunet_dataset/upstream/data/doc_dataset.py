# -*- coding: utf-8 -*-
"""
Synthetic distorted-document dataset.

Each sample directory contains
    <name>.jpg     distorted document rendered on a random background
    <name>.npy     float32 array (H, W, 2): for every pixel of the distorted
                   image, the (x, y) position in the flat document, or -1 for
                   background pixels.

The flow is normalised to [-1, 1] so it can be fed directly to grid_sample.
"""
import os
import glob
import random

import cv2
import numpy as np
import torch
from torch.utils.data import Dataset


IMG_MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
IMG_STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


def list_samples(root, split):
    split_file = os.path.join(root, '{}.txt'.format(split))
    if os.path.isfile(split_file):
        with open(split_file) as f:
            names = [line.strip() for line in f if line.strip()]
    else:
        names = sorted(os.path.splitext(os.path.basename(p))[0]
                       for p in glob.glob(os.path.join(root, 'img', '*.jpg')))
    return names


def color_jitter(img, brightness=0.2, contrast=0.2, saturation=0.2, hue=0.02):
    img = img.astype(np.float32)
    if brightness > 0:
        img *= 1.0 + random.uniform(-brightness, brightness)
    if contrast > 0:
        mean = img.mean()
        img = (img - mean) * (1.0 + random.uniform(-contrast, contrast)) + mean
    img = np.clip(img, 0, 255).astype(np.uint8)
    if saturation > 0 or hue > 0:
        hsv = cv2.cvtColor(img, cv2.COLOR_RGB2HSV).astype(np.float32)
        hsv[..., 1] *= 1.0 + random.uniform(-saturation, saturation)
        hsv[..., 0] = (hsv[..., 0] + random.uniform(-hue, hue) * 180) % 180
        hsv = np.clip(hsv, 0, 255).astype(np.uint8)
        img = cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB)
    return img


class SyntheticDocDataset(Dataset):
    def __init__(self, root, split='train', img_size=256, augment=False, flat_size=(1100, 850)):
        self.root = root
        self.split = split
        self.img_size = img_size
        self.augment = augment
        self.flat_h, self.flat_w = flat_size
        self.names = list_samples(root, split)
        if len(self.names) == 0:
            raise RuntimeError('no samples found under {}'.format(root))

    def __len__(self):
        return len(self.names)

    def _load(self, name):
        img = cv2.imread(os.path.join(self.root, 'img', name + '.jpg'))
        img = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
        flow = np.load(os.path.join(self.root, 'flow', name + '.npy')).astype(np.float32)
        return img, flow

    def _normalise_flow(self, flow):
        bg = flow[..., 0] < 0
        flow[..., 0] = flow[..., 0] / (self.flat_w - 1) * 2.0 - 1.0
        flow[..., 1] = flow[..., 1] / (self.flat_h - 1) * 2.0 - 1.0
        flow[bg] = -1.0
        return flow

    def _random_crop(self, img, flow):
        h, w = img.shape[:2]
        ys, xs = np.where(flow[..., 0] > -1)
        if len(ys) == 0:
            return img, flow
        y0, y1 = ys.min(), ys.max()
        x0, x1 = xs.min(), xs.max()
        pad = random.randint(0, 30)
        y0 = max(0, y0 - pad)
        x0 = max(0, x0 - pad)
        y1 = min(h, y1 + pad)
        x1 = min(w, x1 + pad)
        return img[y0:y1, x0:x1], flow[y0:y1, x0:x1]

    def __getitem__(self, idx):
        name = self.names[idx]
        img, flow = self._load(name)
        flow = self._normalise_flow(flow)
        if self.augment:
            img, flow = self._random_crop(img, flow)
            img = color_jitter(img)
            if random.random() < 0.5:
                img = cv2.GaussianBlur(img, (3, 3), 0)
        img = cv2.resize(img, (self.img_size, self.img_size), interpolation=cv2.INTER_AREA)
        flow = cv2.resize(flow, (self.img_size, self.img_size), interpolation=cv2.INTER_NEAREST)

        img = (img.astype(np.float32) / 255.0 - IMG_MEAN) / IMG_STD
        img = torch.from_numpy(img.transpose(2, 0, 1).copy())
        flow = torch.from_numpy(flow.transpose(2, 0, 1).copy())
        return img, flow


class RealDocDataset(Dataset):
    """Photographs without ground truth (e.g. the 130-image DocUNet benchmark)."""

    def __init__(self, root, img_size=256, exts=('.jpg', '.png', '.jpeg')):
        self.paths = sorted(p for p in glob.glob(os.path.join(root, '*'))
                            if os.path.splitext(p)[1].lower() in exts)
        self.img_size = img_size

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, idx):
        path = self.paths[idx]
        full = cv2.cvtColor(cv2.imread(path), cv2.COLOR_BGR2RGB)
        img = cv2.resize(full, (self.img_size, self.img_size), interpolation=cv2.INTER_AREA)
        img = (img.astype(np.float32) / 255.0 - IMG_MEAN) / IMG_STD
        img = torch.from_numpy(img.transpose(2, 0, 1).copy())
        full = torch.from_numpy(full.transpose(2, 0, 1).copy()).float() / 255.0
        return img, full, os.path.basename(path)
