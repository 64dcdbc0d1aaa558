#!/usr/bin/env python
# coding: utf-8
# Exported from notebook: "[Train] effnet-b3 | 5 folds | AMP" (Kaggle, GPU P100 / T4 x2 accelerator)

# In[1]:


# !pip install -q timm==0.9.12 albumentations==1.3.1
import os
import gc
import time
import random
import warnings

import cv2
import numpy as np
import pandas as pd
import timm
import torch
import torch.nn as nn
import albumentations as A
from albumentations.pytorch import ToTensorV2
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedGroupKFold
from torch.utils.data import DataLoader, Dataset

warnings.filterwarnings("ignore")


# In[2]:


class CFG:
    seed = 42
    model_name = "tf_efficientnet_b3_ns"
    img_size = 384
    epochs = 8
    batch_size = 32
    lr = 2e-4
    weight_decay = 1e-6
    n_folds = 5
    num_workers = 4
    apex = True  # use mixed precision
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data_dir = "/kaggle/input/isic-2024-challenge"


def seed_everything(seed):
    random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


seed_everything(CFG.seed)
print("Using device:", CFG.device, "| GPUs:", torch.cuda.device_count())


# In[3]:


train_tf = A.Compose([
    A.RandomResizedCrop(CFG.img_size, CFG.img_size, scale=(0.6, 1.0)),
    A.HorizontalFlip(), A.VerticalFlip(), A.ColorJitter(0.2, 0.2, 0.2, 0.05),
    A.Normalize(), ToTensorV2(),
])
valid_tf = A.Compose([A.Resize(CFG.img_size, CFG.img_size), A.Normalize(), ToTensorV2()])


class ISICDataset(Dataset):
    def __init__(self, df, transforms):
        self.paths = df["path"].values
        self.targets = df["target"].values
        self.transforms = transforms

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        img = cv2.cvtColor(cv2.imread(self.paths[i]), cv2.COLOR_BGR2RGB)
        return self.transforms(image=img)["image"], torch.tensor(self.targets[i], dtype=torch.float32)


# In[4]:


def train_one_epoch(model, loader, optimizer, scheduler, scaler):
    model.train()
    losses = []
    criterion = nn.BCEWithLogitsLoss()
    for images, targets in loader:
        images = images.to(CFG.device, non_blocking=True)
        targets = targets.to(CFG.device, non_blocking=True)
        optimizer.zero_grad()
        with torch.cuda.amp.autocast(enabled=CFG.apex):
            loss = criterion(model(images).squeeze(1), targets)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        losses.append(loss.item())
    return float(np.mean(losses))


@torch.no_grad()
def valid_one_epoch(model, loader):
    model.eval()
    preds, ys = [], []
    for images, targets in loader:
        with torch.cuda.amp.autocast(enabled=CFG.apex, dtype=torch.float16):
            out = model(images.cuda()).squeeze(1).sigmoid()
        preds.append(out.float().cpu().numpy())
        ys.append(targets.numpy())
    return np.concatenate(ys), np.concatenate(preds)


# In[5]:


df = pd.read_csv(f"{CFG.data_dir}/train-metadata.csv")
df["path"] = CFG.data_dir + "/train-image/image/" + df["isic_id"] + ".jpg"
sgkf = StratifiedGroupKFold(n_splits=CFG.n_folds, shuffle=True, random_state=CFG.seed)
for fold, (_, va) in enumerate(sgkf.split(df, df["target"], df["patient_id"])):
    df.loc[va, "fold"] = fold

oof = np.zeros(len(df))
for fold in range(CFG.n_folds):
    t0 = time.time()
    tr_df, va_df = df[df.fold != fold], df[df.fold == fold]
    train_loader = DataLoader(ISICDataset(tr_df, train_tf), batch_size=CFG.batch_size, shuffle=True,
                              num_workers=CFG.num_workers, pin_memory=True, drop_last=True)
    valid_loader = DataLoader(ISICDataset(va_df, valid_tf), batch_size=CFG.batch_size * 2, shuffle=False,
                              num_workers=CFG.num_workers, pin_memory=True)

    model = timm.create_model(CFG.model_name, pretrained=True, num_classes=1)
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    model.to(CFG.device)
    model = model.to(memory_format=torch.channels_last)

    optimizer = torch.optim.AdamW(model.parameters(), lr=CFG.lr, weight_decay=CFG.weight_decay)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=CFG.lr, total_steps=CFG.epochs * len(train_loader))
    scaler = torch.cuda.amp.GradScaler(enabled=CFG.apex)

    best = 0.0
    for epoch in range(CFG.epochs):
        loss = train_one_epoch(model, train_loader, optimizer, scheduler, scaler)
        y, p = valid_one_epoch(model, valid_loader)
        auc = roc_auc_score(y, p)
        print(f"fold {fold} epoch {epoch} loss {loss:.4f} auc {auc:.4f} ({time.time() - t0:.0f}s)")
        if auc > best:
            best = auc
            oof[va_df.index] = p
            torch.save(model.state_dict(), f"fold{fold}_best.pth")

    del model, optimizer, scaler
    torch.cuda.empty_cache()
    gc.collect()

print("OOF AUC:", roc_auc_score(df["target"], oof))
