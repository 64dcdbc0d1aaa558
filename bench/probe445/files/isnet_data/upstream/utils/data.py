import os
import os.path as osp
import random

import cv2
import numpy as np
import torch
import torch.utils.data as Data
import torchvision.transforms as transforms
from PIL import Image, ImageOps, ImageFilter

__all__ = ['IRSTD1kDataset', 'SirstDataset']


def _edge_from_mask(mask_np):
    """Thin edge of the target mask, used as supervision for the shape stream."""
    mask_u8 = (mask_np > 0).astype(np.uint8) * 255
    edge = cv2.Canny(mask_u8, 0, 1)
    return (edge > 0).astype(np.float32)


def _grad_image(img_np):
    """Gradient magnitude of the grey image, fed to the TFD block."""
    grey = cv2.cvtColor(img_np, cv2.COLOR_RGB2GRAY).astype(np.float32)
    gx = cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3)
    mag = np.sqrt(gx ** 2 + gy ** 2)
    return mag / (mag.max() + 1e-6)


class IRSTD1kDataset(Data.Dataset):
    """
    Return: Single channel
    """
    def __init__(self, args, mode='train'):
        base_dir = args.dataset_dir

        if mode == 'train':
            txtfile = 'trainval.txt'
        elif mode == 'val':
            txtfile = 'test.txt'

        self.list_dir = osp.join(base_dir, txtfile)
        self.imgs_dir = osp.join(base_dir, 'images')
        self.label_dir = osp.join(base_dir, 'masks')

        self.names = []
        with open(self.list_dir, 'r') as f:
            self.names += [line.strip() for line in f.readlines()]

        self.mode = mode
        self.crop_size = args.crop_size
        self.base_size = args.base_size
        self.transform = transforms.Compose([
            transforms.ToTensor(),
            transforms.Normalize([.485, .456, .406], [.229, .224, .225]),
        ])

    def __getitem__(self, i):
        name = self.names[i]
        img_path = osp.join(self.imgs_dir, name + '.png')
        label_path = osp.join(self.label_dir, name + '.png')

        img = Image.open(img_path).convert('RGB')
        mask = Image.open(label_path).convert('L')

        if self.mode == 'train':
            img, mask = self._sync_transform(img, mask)
        elif self.mode == 'val':
            img, mask = self._testval_sync_transform(img, mask)
        else:
            raise ValueError("Unkown self.mode")

        img_np = np.array(img)
        mask_np = np.array(mask, dtype=np.float32)
        edge = _edge_from_mask(mask_np)
        grad = _grad_image(img_np)

        img = self.transform(img)
        mask = torch.from_numpy(np.expand_dims(mask_np, axis=0) / 255.0).float()
        edge = torch.from_numpy(np.expand_dims(edge, axis=0))
        grad = torch.from_numpy(np.expand_dims(grad, axis=0)).float()
        return img, mask, edge, grad

    def __len__(self):
        return len(self.names)

    def _sync_transform(self, img, mask):
        # random mirror
        if random.random() < 0.5:
            img = img.transpose(Image.FLIP_LEFT_RIGHT)
            mask = mask.transpose(Image.FLIP_LEFT_RIGHT)
        crop_size = self.crop_size
        # random scale (short edge)
        long_size = random.randint(int(self.base_size * 0.5), int(self.base_size * 2.0))
        w, h = img.size
        if h > w:
            oh = long_size
            ow = int(1.0 * w * long_size / h + 0.5)
            short_size = ow
        else:
            ow = long_size
            oh = int(1.0 * h * long_size / w + 0.5)
            short_size = oh
        img = img.resize((ow, oh), Image.BILINEAR)
        mask = mask.resize((ow, oh), Image.NEAREST)
        # pad crop
        if short_size < crop_size:
            padh = crop_size - oh if oh < crop_size else 0
            padw = crop_size - ow if ow < crop_size else 0
            img = ImageOps.expand(img, border=(0, 0, padw, padh), fill=0)
            mask = ImageOps.expand(mask, border=(0, 0, padw, padh), fill=0)
        # random crop crop_size
        w, h = img.size
        x1 = random.randint(0, w - crop_size)
        y1 = random.randint(0, h - crop_size)
        img = img.crop((x1, y1, x1 + crop_size, y1 + crop_size))
        mask = mask.crop((x1, y1, x1 + crop_size, y1 + crop_size))
        # gaussian blur as in PSP
        if random.random() < 0.5:
            img = img.filter(ImageFilter.GaussianBlur(radius=random.random()))
        return img, mask

    def _testval_sync_transform(self, img, mask):
        base_size = self.base_size
        img = img.resize((base_size, base_size), Image.BILINEAR)
        mask = mask.resize((base_size, base_size), Image.NEAREST)
        return img, mask


class SirstDataset(IRSTD1kDataset):
    """NUAA-SIRST in the same format (masks are stored as <name>_pixels0.png)."""
    def __getitem__(self, i):
        name = self.names[i]
        self_label = osp.join(self.label_dir, name + '_pixels0.png')
        if not osp.exists(self_label):
            return super(SirstDataset, self).__getitem__(i)
        img = Image.open(osp.join(self.imgs_dir, name + '.png')).convert('RGB')
        mask = Image.open(self_label).convert('L')
        if self.mode == 'train':
            img, mask = self._sync_transform(img, mask)
        else:
            img, mask = self._testval_sync_transform(img, mask)
        img_np = np.array(img)
        mask_np = np.array(mask, dtype=np.float32)
        edge = _edge_from_mask(mask_np)
        grad = _grad_image(img_np)
        img = self.transform(img)
        mask = torch.from_numpy(np.expand_dims(mask_np, axis=0) / 255.0).float()
        return img, mask, torch.from_numpy(edge[None]), torch.from_numpy(grad[None]).float()
