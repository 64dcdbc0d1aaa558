import os

import albumentations as A
import cv2
import numpy as np
import torch
from albumentations.pytorch import ToTensorV2
from torch.utils.data import Dataset

LABELS = ['complex', 'frog_eye_leaf_spot', 'healthy', 'powdery_mildew', 'rust', 'scab']

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


def get_transforms(cfg, phase):
    size = cfg.data.image_size
    if phase == 'train':
        aug = cfg.augment
        return A.Compose([
            A.RandomResizedCrop(size, size, scale=(0.7, 1.0)),
            A.HorizontalFlip(p=aug.hflip),
            A.VerticalFlip(p=aug.vflip),
            A.ShiftScaleRotate(shift_limit=0.1, scale_limit=0.1, rotate_limit=30, p=aug.shift_scale_rotate),
            A.HueSaturationValue(hue_shift_limit=10, sat_shift_limit=20, val_shift_limit=10, p=0.3),
            A.RandomBrightnessContrast(brightness_limit=0.15, contrast_limit=0.15, p=aug.brightness_contrast),
            A.CoarseDropout(max_holes=8, max_height=size // 16, max_width=size // 16, p=aug.coarse_dropout),
            A.Normalize(mean=MEAN, std=STD),
            ToTensorV2(),
        ])
    return A.Compose([
        A.Resize(size, size),
        A.Normalize(mean=MEAN, std=STD),
        ToTensorV2(),
    ])


class PlantDataset(Dataset):
    """Training images with multi-hot targets (one column per label in the folds csv)."""

    def __init__(self, df, image_dir, transforms=None):
        self.df = df
        self.image_dir = image_dir
        self.transforms = transforms
        self.targets = df[LABELS].values.astype(np.float32)

    def __len__(self):
        return len(self.df)

    def __getitem__(self, idx):
        path = os.path.join(self.image_dir, self.df.image.iloc[idx])
        image = cv2.imread(path)
        image = cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
        if self.transforms is not None:
            image = self.transforms(image=image)['image']
        return image, torch.from_numpy(self.targets[idx])


class PlantTestDataset(Dataset):
    def __init__(self, files, image_dir, transforms=None):
        self.files = files
        self.image_dir = image_dir
        self.transforms = transforms

    def __len__(self):
        return len(self.files)

    def __getitem__(self, idx):
        image = cv2.imread(os.path.join(self.image_dir, self.files[idx]))
        image = cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
        if self.transforms is not None:
            image = self.transforms(image=image)['image']
        return image
