"""Shopee - Price Match Guarantee: inference kernel.

Image embeddings : EfficientNet-B3 + ArcMargin head (timm), trained in train_arcface.py
Text embeddings  : cuML TfidfVectorizer over titles + IndoBERT [CLS] embeddings
Matching         : cosine similarity in chunks on the GPU with CuPy, thresholded

The whole thing must finish inside the 2h GPU limit of the competition, so the
similarity search is chunked (CHUNK rows at a time) to stay under 16GB.
"""
import gc
import math
import os
import sys

import albumentations as A
import cv2
import numpy as np
import pandas as pd
import timm
import torch
import torch.nn as nn
import torch.nn.functional as F
from albumentations.pytorch.transforms import ToTensorV2
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm
from transformers import AutoModel, AutoTokenizer

import cudf
import cupy
import cuml
from cuml.feature_extraction.text import TfidfVectorizer

COMPUTE_CV = len(pd.read_csv("../input/shopee-product-matching/test.csv")) == 3


class CFG:
    img_size = 512
    batch_size = 16
    num_workers = 4
    seed = 42
    model_name = "efficientnet_b3"
    fc_dim = 512
    classes = 11014
    scale = 30
    margin = 0.5
    img_model_path = "../input/shopee-effnetb3-arcface/arcface_512x512_eff_b3.pt"
    bert_path = "../input/indobert-base-p1"
    text_model_path = "../input/shopee-indobert-arcface/bert_arcface.pt"
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    image_threshold = 0.36
    text_threshold = 0.75
    tfidf_threshold = 0.60
    chunk = 4096


def seed_torch(seed=42):
    import random

    random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


seed_torch(CFG.seed)


def read_dataset():
    if COMPUTE_CV:
        df = pd.read_csv("../input/shopee-product-matching/train.csv")
        df_cu = cudf.DataFrame(df)
        image_paths = "../input/shopee-product-matching/train_images/" + df["image"]
    else:
        df = pd.read_csv("../input/shopee-product-matching/test.csv")
        df_cu = cudf.from_pandas(df)
        image_paths = "../input/shopee-product-matching/test_images/" + df["image"]
    return df, df_cu, image_paths


def f1_score(y_true, y_pred):
    y_true = y_true.apply(lambda x: set(x.split()))
    y_pred = y_pred.apply(lambda x: set(x.split()))
    intersection = np.array([len(x[0] & x[1]) for x in zip(y_true, y_pred)])
    len_y_pred = y_pred.apply(lambda x: len(x)).values
    len_y_true = y_true.apply(lambda x: len(x)).values
    f1 = 2 * intersection / (len_y_pred + len_y_true)
    return f1


def get_test_transforms():
    return A.Compose(
        [
            A.Resize(CFG.img_size, CFG.img_size, always_apply=True),
            A.Normalize(),
            ToTensorV2(p=1.0),
        ]
    )


class ShopeeImageDataset(Dataset):
    def __init__(self, image_paths, transforms=None):
        self.image_paths = image_paths
        self.augmentations = transforms

    def __len__(self):
        return self.image_paths.shape[0]

    def __getitem__(self, index):
        image = cv2.imread(self.image_paths[index])
        image = cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
        if self.augmentations:
            image = self.augmentations(image=image)["image"]
        return image, torch.tensor(1)


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
        one_hot = torch.zeros(cosine.size(), device="cuda")
        one_hot.scatter_(1, label.view(-1, 1).long(), 1)
        if self.ls_eps > 0:
            one_hot = (1 - self.ls_eps) * one_hot + self.ls_eps / self.out_features
        output = (one_hot * phi) + ((1.0 - one_hot) * cosine)
        output *= self.scale
        return output, nn.CrossEntropyLoss()(output, label)


class ShopeeModel(nn.Module):
    def __init__(self, n_classes=CFG.classes, model_name=CFG.model_name, fc_dim=CFG.fc_dim, margin=CFG.margin,
                 scale=CFG.scale, use_fc=True, pretrained=False):
        super().__init__()
        print(f"Building Model Backbone for {model_name} model")
        self.backbone = timm.create_model(model_name, pretrained=pretrained)
        in_features = self.backbone.classifier.in_features
        self.backbone.classifier = nn.Identity()
        self.backbone.global_pool = nn.Identity()
        self.pooling = nn.AdaptiveAvgPool2d(1)
        self.use_fc = use_fc
        if use_fc:
            self.dropout = nn.Dropout(p=0.1)
            self.classifier = nn.Linear(in_features, fc_dim)
            self.bn = nn.BatchNorm1d(fc_dim)
            in_features = fc_dim
        self.final = ArcMarginProduct(in_features, n_classes, scale=scale, margin=margin)

    def forward(self, image, label):
        feature = self.extract_feat(image)
        return feature

    def extract_feat(self, x):
        batch_size = x.shape[0]
        x = self.backbone(x)
        x = self.pooling(x).view(batch_size, -1)
        if self.use_fc:
            x = self.dropout(x)
            x = self.classifier(x)
            x = self.bn(x)
        return x


def get_image_embeddings(image_paths):
    model = ShopeeModel(pretrained=False).to(CFG.device)
    model.load_state_dict(torch.load(CFG.img_model_path, map_location="cuda:0"))
    model.eval()

    image_dataset = ShopeeImageDataset(image_paths=image_paths, transforms=get_test_transforms())
    image_loader = DataLoader(
        image_dataset,
        batch_size=CFG.batch_size,
        pin_memory=True,
        drop_last=False,
        num_workers=CFG.num_workers,
    )
    embeds = []
    with torch.no_grad():
        for img, label in tqdm(image_loader):
            img = img.cuda(non_blocking=True)
            label = label.cuda()
            with torch.cuda.amp.autocast():
                feat = model(img, label)
            image_embeddings = feat.detach().float().cpu().numpy()
            embeds.append(image_embeddings)
    del model
    image_embeddings = np.concatenate(embeds)
    print(f"Our image embeddings shape is {image_embeddings.shape}")
    del embeds
    gc.collect()
    torch.cuda.empty_cache()
    return image_embeddings


class BertEncoder(nn.Module):
    def __init__(self, bert_path, fc_dim=768):
        super().__init__()
        self.bert = AutoModel.from_pretrained(bert_path)
        self.fc = nn.Linear(self.bert.config.hidden_size, fc_dim)

    def forward(self, input_ids, attention_mask):
        out = self.bert(input_ids=input_ids, attention_mask=attention_mask)
        cls = out.last_hidden_state[:, 0, :]
        return self.fc(cls)


def get_bert_embeddings(titles, max_len=64, bs=256):
    tokenizer = AutoTokenizer.from_pretrained(CFG.bert_path)
    model = BertEncoder(CFG.bert_path).cuda()
    state = torch.load(CFG.text_model_path, map_location="cpu")
    model.load_state_dict(state, strict=False)
    model.eval()
    out = []
    for i in tqdm(range(0, len(titles), bs)):
        batch = titles[i:i + bs].tolist()
        enc = tokenizer(batch, padding="max_length", truncation=True, max_length=max_len, return_tensors="pt")
        enc = {k: v.to(CFG.device) for k, v in enc.items()}
        with torch.no_grad(), torch.autocast(device_type="cuda", dtype=torch.float16):
            emb = model(enc["input_ids"], enc["attention_mask"])
        out.append(F.normalize(emb.float(), dim=1).cpu().numpy())
    del model
    torch.cuda.empty_cache()  # free the BERT weights before the similarity search
    return np.concatenate(out)


def chunked_neighbours(embeddings, df, threshold, name):
    """Cosine-similarity neighbours above `threshold`, CHUNK rows at a time, on the GPU."""
    embeddings = cupy.array(embeddings)
    embeddings = embeddings / cupy.linalg.norm(embeddings, axis=1, keepdims=True)
    preds = []
    n = embeddings.shape[0]
    for j in range((n + CFG.chunk - 1) // CFG.chunk):
        a = j * CFG.chunk
        b = min((j + 1) * CFG.chunk, n)
        cts = cupy.matmul(embeddings, embeddings[a:b].T).T
        for k in range(b - a):
            idx = cupy.where(cts[k, ] > threshold)[0]
            o = df.iloc[cupy.asnumpy(idx)].posting_id.values
            preds.append(o)
    print(f"{name}: done {n} rows")
    del embeddings
    return preds


def get_tfidf_predictions(df, df_cu, max_features=25000):
    model = TfidfVectorizer(stop_words="english", binary=True, max_features=max_features)
    text_embeddings = model.fit_transform(df_cu["title"]).toarray()
    preds = []
    CHUNK = 1024 * 4
    print("Finding similar titles...")
    CTS = len(df) // CHUNK
    if len(df) % CHUNK != 0:
        CTS += 1
    for j in range(CTS):
        a = j * CHUNK
        b = (j + 1) * CHUNK
        b = min(b, len(df))
        cts = cupy.matmul(text_embeddings, text_embeddings[a:b].T).T
        for k in range(b - a):
            IDX = cupy.where(cts[k, ] > CFG.tfidf_threshold)[0]
            o = df.iloc[cupy.asnumpy(IDX)].posting_id.values
            preds.append(o)
    del model, text_embeddings
    gc.collect()
    return preds


def combine_predictions(row):
    x = np.concatenate([row["image_predictions"], row["text_predictions"], row["bert_predictions"]])
    return " ".join(np.unique(x))


def main():
    df, df_cu, image_paths = read_dataset()
    print(f"rows: {len(df)}, running on {CFG.device}, cuML {cuml.__version__}")

    image_embeddings = get_image_embeddings(image_paths.values)
    image_predictions = chunked_neighbours(image_embeddings, df, CFG.image_threshold, "image")

    text_predictions = get_tfidf_predictions(df, df_cu)
    bert_embeddings = get_bert_embeddings(df["title"])
    bert_predictions = chunked_neighbours(bert_embeddings, df, CFG.text_threshold, "bert")

    df["image_predictions"] = image_predictions
    df["text_predictions"] = text_predictions
    df["bert_predictions"] = bert_predictions
    df["matches"] = df.apply(combine_predictions, axis=1)

    if COMPUTE_CV:
        tmp = df.groupby("label_group").posting_id.agg("unique").to_dict()
        df["target"] = df.label_group.map(tmp)
        df["target"] = df["target"].apply(lambda x: " ".join(x))
        df["f1"] = f1_score(df["target"], df["matches"])
        print(f"CV score for baseline = {df.f1.mean():.4f}")

    df[["posting_id", "matches"]].to_csv("submission.csv", index=False)


if __name__ == "__main__":
    sys.exit(main())
