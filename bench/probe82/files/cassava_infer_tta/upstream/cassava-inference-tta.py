#!/usr/bin/env python
# coding: utf-8
# # Cassava Leaf Disease - inference kernel (5-fold x 2 archs, TTA)
# Internet is off in this competition: timm comes from an attached dataset.

import sys

sys.path.append('../input/pytorch-image-models/pytorch-image-models-master')

import os
import time
import random
from glob import glob

import cv2
import numpy as np
import pandas as pd
import timm
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader
from tqdm import tqdm
from albumentations import (
    Compose, Normalize, Resize, RandomResizedCrop, HorizontalFlip, VerticalFlip, Transpose,
    ShiftScaleRotate, HueSaturationValue, RandomBrightnessContrast, CenterCrop,
)
from albumentations.pytorch import ToTensorV2

CFG = {
    'seed': 719,
    'img_size': 512,
    'valid_bs': 32,
    'num_workers': 4,
    'tta': 3,
    'used_epochs': [6, 7, 8, 9],
    'weights': [1, 1, 1, 1],
    'archs': [
        ('tf_efficientnet_b4_ns', '../input/cassava-effb4-ns-5fold'),
        ('vit_base_patch16_384', '../input/cassava-vit-b16-5fold'),
    ],
    'arch_weights': [0.6, 0.4],
    'vote': False,
}

device = torch.device('cuda:0')


def seed_everything(seed):
    random.seed(seed)
    os.environ['PYTHONHASHSEED'] = str(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def get_img(path):
    im_bgr = cv2.imread(path)
    return im_bgr[:, :, ::-1]


class CassavaDataset(Dataset):
    def __init__(self, df, data_root, transforms=None):
        super().__init__()
        self.df = df.reset_index(drop=True).copy()
        self.transforms = transforms
        self.data_root = data_root

    def __len__(self):
        return self.df.shape[0]

    def __getitem__(self, index):
        img = get_img(f"{self.data_root}/{self.df.loc[index]['image_id']}")
        if self.transforms:
            img = self.transforms(image=img)['image']
        return img


def get_inference_transforms(size):
    return Compose([
        RandomResizedCrop(size, size),
        Transpose(p=0.5),
        HorizontalFlip(p=0.5),
        VerticalFlip(p=0.5),
        HueSaturationValue(hue_shift_limit=0.2, sat_shift_limit=0.2, val_shift_limit=0.2, p=0.5),
        RandomBrightnessContrast(brightness_limit=(-0.1, 0.1), contrast_limit=(-0.1, 0.1), p=0.5),
        Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225], max_pixel_value=255.0, p=1.0),
        ToTensorV2(p=1.0),
    ], p=1.)


class CassvaImgClassifier(nn.Module):
    def __init__(self, model_arch, n_class, pretrained=False):
        super().__init__()
        self.model = timm.create_model(model_arch, pretrained=pretrained)
        if hasattr(self.model, 'classifier'):
            n_features = self.model.classifier.in_features
            self.model.classifier = nn.Linear(n_features, n_class)
        else:
            n_features = self.model.head.in_features
            self.model.head = nn.Linear(n_features, n_class)

    def forward(self, x):
        return self.model(x)


def strip_prefix(state_dict, prefix='module.'):
    # checkpoints written from nn.DataParallel carry a "module." prefix
    return {k[len(prefix):] if k.startswith(prefix) else k: v for k, v in state_dict.items()}


def inference_one_epoch(model, data_loader, device):
    model.eval()
    image_preds_all = []
    pbar = tqdm(enumerate(data_loader), total=len(data_loader))
    for step, imgs in pbar:
        imgs = imgs.to(device).float()
        with torch.cuda.amp.autocast():
            image_preds = model(imgs)
        image_preds_all += [torch.softmax(image_preds.float(), 1).detach().cpu().numpy()]
    return np.concatenate(image_preds_all, axis=0)


def predict_arch(arch, weight_dir, test_df, data_root):
    size = 384 if 'vit' in arch else CFG['img_size']
    test_ds = CassavaDataset(test_df, data_root, transforms=get_inference_transforms(size))
    tst_loader = DataLoader(test_ds, batch_size=CFG['valid_bs'], num_workers=CFG['num_workers'],
                            shuffle=False, pin_memory=False)
    model = CassvaImgClassifier(arch, 5).to(device)
    fold_preds = []
    for fold in range(5):
        tst_preds = []
        for i, epoch in enumerate(CFG['used_epochs']):
            ckpt = f'{weight_dir}/{arch}_fold_{fold}_{epoch}'
            model.load_state_dict(strip_prefix(torch.load(ckpt)))
            with torch.no_grad():
                for _ in range(CFG['tta']):
                    tst_preds += [CFG['weights'][i] / sum(CFG['weights']) / CFG['tta'] *
                                  inference_one_epoch(model, tst_loader, device)]
        fold_preds.append(np.sum(tst_preds, axis=0))
    del model
    torch.cuda.empty_cache()
    return fold_preds


def majority_vote(fold_preds):
    """Hard vote over folds (used when CFG['vote'] is set)."""
    stacked = torch.from_numpy(np.stack(fold_preds)).to(device)
    labels = stacked.argmax(-1)
    voted = labels.mode(dim=0).values
    return voted.cpu().numpy()


if __name__ == '__main__':
    seed_everything(CFG['seed'])
    data_root = '../input/cassava-leaf-disease-classification/test_images/'
    test = pd.DataFrame()
    test['image_id'] = list(os.listdir(data_root))

    all_fold_preds = []
    blend = np.zeros((len(test), 5), dtype=np.float32)
    for (arch, weight_dir), w in zip(CFG['archs'], CFG['arch_weights']):
        t0 = time.time()
        fold_preds = predict_arch(arch, weight_dir, test, data_root)
        all_fold_preds += fold_preds
        blend += w * np.mean(fold_preds, axis=0)
        print(f'{arch}: {time.time() - t0:.1f}s')

    if CFG['vote']:
        test['label'] = majority_vote(all_fold_preds)
    else:
        test['label'] = np.argmax(blend, axis=1)
    test.to_csv('submission.csv', index=False)
    print(test.head())
