#!/usr/bin/env python
# coding: utf-8
# # Shopee - Price Match Guarantee: image + title embeddings, RAPIDS kNN, union of matches
# RAPIDS (cuDF / cuML / CuPy) keeps the 70k x 70k similarity work on the GPU so the whole
# kernel fits in the 9h limit with room for a second image model.

import gc
import math
import os
import sys

sys.path.append('../input/timm-pytorch-image-models/pytorch-image-models-master')

import cudf
import cuml
import cupy
import numpy as np
import pandas as pd
import timm
import torch
import torch.nn as nn
import torch.nn.functional as F
import albumentations
from albumentations.pytorch.transforms import ToTensorV2
from cuml.feature_extraction.text import TfidfVectorizer
from cuml.neighbors import NearestNeighbors
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm

print('RAPIDS', cuml.__version__)

COMPUTE_CV = len(pd.read_csv('../input/shopee-product-matching/test.csv')) <= 3
IMG_SIZE = 512
BATCH_SIZE = 16
MODEL_NAME = 'eca_nfnet_l0'
MODEL_PATH = '../input/shopee-arcface-nfnet-l0/arcface_512x512_nfnet_l0_epoch10.pt'
IMG_THR = 0.36
TXT_THR = 0.75
CHUNK = 1024 * 4
DEVICE = torch.device('cuda')


def read_dataset():
    if COMPUTE_CV:
        df = pd.read_csv('../input/shopee-product-matching/train.csv')
        tmp = df.groupby('label_group').posting_id.agg('unique').to_dict()
        df['target'] = df.label_group.map(tmp)
        img_dir = '../input/shopee-product-matching/train_images/'
    else:
        df = pd.read_csv('../input/shopee-product-matching/test.csv')
        img_dir = '../input/shopee-product-matching/test_images/'
    df_cu = cudf.DataFrame(df)
    image_paths = img_dir + df['image']
    return df, df_cu, image_paths


def f1_score(y_true, y_pred):
    y_true = y_true.apply(lambda x: set(x.split()))
    y_pred = y_pred.apply(lambda x: set(x.split()))
    intersection = np.array([len(x[0] & x[1]) for x in zip(y_true, y_pred)])
    len_y_pred = y_pred.apply(lambda x: len(x)).values
    len_y_true = y_true.apply(lambda x: len(x)).values
    return 2 * intersection / (len_y_pred + len_y_true)


class ShopeeDataset(Dataset):
    def __init__(self, image_paths, transforms=None):
        self.image_paths = image_paths
        self.augmentations = transforms

    def __len__(self):
        return self.image_paths.shape[0]

    def __getitem__(self, index):
        import cv2
        image = cv2.imread(self.image_paths[index])
        image = cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
        if self.augmentations:
            image = self.augmentations(image=image)['image']
        return image, torch.tensor(1)


def get_test_transforms():
    return albumentations.Compose([
        albumentations.Resize(IMG_SIZE, IMG_SIZE, always_apply=True),
        albumentations.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
        ToTensorV2(p=1.0),
    ])


class ArcMarginProduct(nn.Module):
    def __init__(self, in_features, out_features, scale=30.0, margin=0.50, easy_margin=False, ls_eps=0.0):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.scale = scale
        self.margin = margin
        self.ls_eps = ls_eps
        self.weight = nn.Parameter(torch.FloatTensor(out_features, in_features))
        nn.init.xavier_uniform_(self.weight)
        self.easy_margin = easy_margin
        self.cos_m = math.cos(margin)
        self.sin_m = math.sin(margin)
        self.th = math.cos(math.pi - margin)
        self.mm = math.sin(math.pi - margin) * margin

    def forward(self, input, label):
        cosine = F.linear(F.normalize(input), F.normalize(self.weight))
        sine = torch.sqrt(1.0 - torch.pow(cosine, 2))
        phi = cosine * self.cos_m - sine * self.sin_m
        if self.easy_margin:
            phi = torch.where(cosine > 0, phi, cosine)
        else:
            phi = torch.where(cosine > self.th, phi, cosine - self.mm)
        one_hot = torch.zeros(cosine.size(), device=input.device)
        one_hot.scatter_(1, label.view(-1, 1).long(), 1)
        if self.ls_eps > 0:
            one_hot = (1 - self.ls_eps) * one_hot + self.ls_eps / self.out_features
        output = (one_hot * phi) + ((1.0 - one_hot) * cosine)
        return output * self.scale


class ShopeeModel(nn.Module):
    def __init__(self, n_classes=11014, model_name=MODEL_NAME, fc_dim=512, margin=0.5, scale=30, pretrained=False):
        super().__init__()
        self.backbone = timm.create_model(model_name, pretrained=pretrained)
        in_features = self.backbone.head.fc.in_features
        self.backbone.head.fc = nn.Identity()
        self.backbone.head.global_pool = nn.Identity()
        self.pooling = nn.AdaptiveAvgPool2d(1)
        self.dropout = nn.Dropout(p=0.0)
        self.fc = nn.Linear(in_features, fc_dim)
        self.bn = nn.BatchNorm1d(fc_dim)
        self.final = ArcMarginProduct(fc_dim, n_classes, scale=scale, margin=margin)

    def extract_feat(self, x):
        batch_size = x.shape[0]
        x = self.backbone(x)
        x = self.pooling(x).view(batch_size, -1)
        x = self.dropout(x)
        x = self.fc(x)
        return self.bn(x)

    def forward(self, image, label):
        feature = self.extract_feat(image)
        return self.final(feature, label)


def get_image_embeddings(image_paths):
    model = ShopeeModel(pretrained=False).to(DEVICE)
    model.load_state_dict(torch.load(MODEL_PATH), strict=False)
    model.eval()
    loader = DataLoader(ShopeeDataset(image_paths, transforms=get_test_transforms()),
                        batch_size=BATCH_SIZE, pin_memory=True, drop_last=False, num_workers=4)
    embeds = []
    with torch.no_grad():
        for img, _ in tqdm(loader):
            img = img.cuda()
            feat = model.extract_feat(img)
            embeds.append(feat.detach().cpu().numpy())
    del model
    image_embeddings = np.concatenate(embeds)
    print(f'image embeddings shape {image_embeddings.shape}')
    del embeds
    gc.collect()
    torch.cuda.empty_cache()
    return image_embeddings


def get_image_neighbors(df, embeddings, KNN=50):
    model = NearestNeighbors(n_neighbors=KNN, metric='cosine')
    model.fit(embeddings)
    distances, indices = model.kneighbors(embeddings)
    predictions = []
    for k in tqdm(range(embeddings.shape[0])):
        idx = np.where(distances[k, ] < IMG_THR)[0]
        ids = indices[k, idx]
        predictions.append(df['posting_id'].iloc[ids].values)
    del model, distances, indices
    gc.collect()
    return predictions


def get_text_predictions(df, df_cu, max_features=25_000):
    model = TfidfVectorizer(stop_words='english', binary=True, max_features=max_features)
    text_embeddings = model.fit_transform(df_cu['title']).toarray()
    preds = []
    n_chunks = len(df) // CHUNK + 1
    for j in range(n_chunks):
        a = j * CHUNK
        b = min((j + 1) * CHUNK, len(df))
        if a >= b:
            break
        cts = cupy.matmul(text_embeddings, text_embeddings[a:b].T).T
        for k in range(b - a):
            idx = cupy.where(cts[k, ] > TXT_THR)[0]
            o = df.iloc[cupy.asnumpy(idx)].posting_id.values
            preds.append(o)
    del model, text_embeddings
    cupy.get_default_memory_pool().free_all_blocks()
    gc.collect()
    return preds


def search_image_threshold(df, distances, indices, grid=np.arange(0.20, 0.50, 0.02)):
    """CV only: pick the cosine-distance cut that maximises the mean F1 of the image matches."""
    best_thr, best_f1 = IMG_THR, -1.0
    target = df['target'].apply(lambda x: ' '.join(x))
    for thr in grid:
        preds = []
        for k in range(len(df)):
            ids = indices[k, np.where(distances[k, ] < thr)[0]]
            preds.append(' '.join(df['posting_id'].iloc[ids].values))
        f1 = f1_score(target, pd.Series(preds)).mean()
        print(f'image thr {thr:.2f}: F1 {f1:.4f}')
        if f1 > best_f1:
            best_thr, best_f1 = thr, f1
    return best_thr, best_f1


def min_two_matches(preds, distances, indices, df):
    """Every posting is guaranteed at least one other item in the group: add the nearest neighbour."""
    out = []
    for k, p in enumerate(preds):
        if len(p) < 2:
            p = df['posting_id'].iloc[indices[k, :2]].values
        out.append(p)
    return out


def combine_predictions(row):
    x = np.concatenate([row['image_predictions'], row['text_predictions']])
    return ' '.join(np.unique(x))


if __name__ == '__main__':
    df, df_cu, image_paths = read_dataset()
    image_embeddings = get_image_embeddings(image_paths.values)
    image_predictions = get_image_neighbors(df, image_embeddings, KNN=50 if len(df) > 3 else 3)
    text_predictions = get_text_predictions(df, df_cu, max_features=25_000)
    df['image_predictions'] = image_predictions
    df['text_predictions'] = text_predictions
    df['matches'] = df.apply(combine_predictions, axis=1)
    if COMPUTE_CV:
        df['f1'] = f1_score(df['target'].apply(lambda x: ' '.join(x)), df['matches'])
        print(f'CV score: {df.f1.mean():.4f}')
    df[['posting_id', 'matches']].to_csv('submission.csv', index=False)
