#!/usr/bin/env python
# coding: utf-8

# # APTOS 2019 blindness detection - EfficientNet-B4 regression, apex O1
#
# Training kernel. Internet off: apex and efficientnet-pytorch come from attached datasets.

# In[1]:


get_ipython().system('pip install -q --no-cache-dir --global-option="--cpp_ext" --global-option="--cuda_ext" ../input/nvidia-apex/apex-master/')
get_ipython().system('pip install -q ../input/efficientnet-pytorch/efficientnet_pytorch-0.6.3/')


# In[2]:


import os
os.environ['CUDA_VISIBLE_DEVICES'] = '0'
import random
import time

import cv2
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader
from sklearn.model_selection import StratifiedKFold
from sklearn.metrics import cohen_kappa_score
import albumentations as A
from albumentations.pytorch import ToTensorV2
from efficientnet_pytorch import EfficientNet

from apex import amp
from apex.optimizers import FusedAdam


# In[3]:


SEED = 2019
IMG_SIZE = 380
BATCH_SIZE = 16
EPOCHS = 15
LR = 3e-4
FOLD = 0
device = torch.device('cuda')

def seed_everything(seed):
    random.seed(seed)
    os.environ['PYTHONHASHSEED'] = str(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False

seed_everything(SEED)


# In[4]:


df = pd.read_csv('../input/aptos2019-blindness-detection/train.csv')
skf = StratifiedKFold(n_splits=5, shuffle=True, random_state=SEED)
df['fold'] = -1
for i, (_, va) in enumerate(skf.split(df, df.diagnosis)):
    df.loc[va, 'fold'] = i

def crop_image_from_gray(img, tol=7):
    gray = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)
    mask = gray > tol
    if mask.sum() == 0:
        return img
    return img[np.ix_(mask.any(1), mask.any(0))]

class RetinopathyDataset(Dataset):
    def __init__(self, df, transform, root='../input/aptos2019-blindness-detection/train_images'):
        self.df = df.reset_index(drop=True)
        self.transform = transform
        self.root = root

    def __len__(self):
        return len(self.df)

    def __getitem__(self, idx):
        row = self.df.iloc[idx]
        img = cv2.imread(os.path.join(self.root, row.id_code + '.png'))
        img = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
        img = crop_image_from_gray(img)
        img = cv2.resize(img, (IMG_SIZE, IMG_SIZE))
        img = cv2.addWeighted(img, 4, cv2.GaussianBlur(img, (0, 0), IMG_SIZE / 10), -4, 128)
        img = self.transform(image=img)['image']
        return img, torch.tensor(row.diagnosis, dtype=torch.float32)


# In[5]:


train_tf = A.Compose([A.HorizontalFlip(), A.VerticalFlip(), A.Rotate(limit=180), A.RandomBrightnessContrast(),
                      A.Normalize(), ToTensorV2()])
valid_tf = A.Compose([A.Normalize(), ToTensorV2()])
train_loader = DataLoader(RetinopathyDataset(df[df.fold != FOLD], train_tf), batch_size=BATCH_SIZE,
                          shuffle=True, num_workers=4, pin_memory=True, drop_last=True)
valid_loader = DataLoader(RetinopathyDataset(df[df.fold == FOLD], valid_tf), batch_size=BATCH_SIZE * 2,
                          shuffle=False, num_workers=4, pin_memory=True)


# In[6]:


class Mish(nn.Module):
    def forward(self, x):
        return x * torch.tanh(F.softplus(x))

class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = EfficientNet.from_pretrained('efficientnet-b4',
            weights_path='../input/efficientnet-pytorch/efficientnet-b4-6ed6700e.pth')
        n = self.backbone._fc.in_features
        self.backbone._fc = nn.Identity()
        self.head = nn.Sequential(nn.Linear(n, 512), Mish(), nn.Dropout(0.3), nn.Linear(512, 1))

    def forward(self, x):
        return self.head(self.backbone(x)).squeeze(1)

model = Regressor()
model = model.cuda()
optimizer = FusedAdam(model.parameters(), lr=LR, weight_decay=1e-5)
model, optimizer = amp.initialize(model, optimizer, opt_level='O1', verbosity=0)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=EPOCHS, eta_min=1e-6)
criterion = nn.SmoothL1Loss()


# In[7]:


def to_grade(pred, thr=(0.5, 1.5, 2.5, 3.5)):
    return np.digitize(pred, thr)

best_kappa = -1
for epoch in range(EPOCHS):
    t0 = time.time()
    model.train()
    tr_loss = 0.0
    for images, labels in train_loader:
        images = images.to(device, non_blocking=True)
        labels = labels.cuda(non_blocking=True).float()
        optimizer.zero_grad()
        preds = model(images)
        loss = criterion(preds, labels)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        tr_loss += loss.item() * images.size(0)
    scheduler.step()

    model.eval()
    val_preds, val_true = [], []
    with torch.no_grad():
        for images, labels in valid_loader:
            images = images.to(device)
            preds = model(images) + model(images.flip(-1))
            val_preds.append((preds / 2).float().cpu().numpy())
            val_true.append(labels.numpy())
    val_preds = np.concatenate(val_preds)
    val_true = np.concatenate(val_true)
    kappa = cohen_kappa_score(to_grade(val_preds), val_true.astype(int), weights='quadratic')
    print(f'epoch {epoch:02d} | loss {tr_loss / len(train_loader.dataset):.4f} | qwk {kappa:.4f} | '
          f'{time.time() - t0:.0f}s | mem {torch.cuda.max_memory_allocated() / 2**30:.1f}G')
    if kappa > best_kappa:
        best_kappa = kappa
        torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict(), 'amp': amp.state_dict()},
                   f'effb4_fold{FOLD}.pth')


# In[8]:


print('best qwk', best_kappa)
get_ipython().system('ls -la *.pth')
