"""IAM line dataset for TrOCR fine-tuning.

Expects the usual layout produced by `scripts/prepare_iam.py`:

    data/IAM/
        image/           a01-000u-00.png ...
        gt_test.txt      "<file name>\t<transcription>" per line
        train.tsv / validation.tsv / test.tsv
"""
import os
import random

import pandas as pd
import torch
from PIL import Image, ImageFilter, ImageOps
from torch.utils.data import Dataset


def load_iam_split(data_dir, split):
    path = os.path.join(data_dir, f"{split}.tsv")
    if not os.path.exists(path):
        raise FileNotFoundError(f"missing split file {path}; run scripts/prepare_iam.py first")
    df = pd.read_csv(path, sep="\t", header=None, names=["file_name", "text"],
                     quoting=3, keep_default_na=False)
    df["text"] = df["text"].astype(str).str.replace("|", " ", regex=False)
    df.reset_index(drop=True, inplace=True)
    return df


class RandomLineAugment:
    """Light-weight augmentation that keeps the line readable."""

    def __init__(self, p=0.5, max_rotate=2.0):
        self.p = p
        self.max_rotate = max_rotate

    def __call__(self, image):
        if random.random() < self.p:
            angle = random.uniform(-self.max_rotate, self.max_rotate)
            image = image.rotate(angle, expand=True, fillcolor=(255, 255, 255))
        if random.random() < self.p * 0.5:
            image = image.filter(ImageFilter.GaussianBlur(radius=random.uniform(0.1, 0.8)))
        if random.random() < self.p * 0.3:
            border = random.randint(2, 12)
            image = ImageOps.expand(image, border=border, fill=(255, 255, 255))
        return image


class IAMDataset(Dataset):
    def __init__(self, root_dir, df, processor, max_target_length=128, augment=False):
        self.root_dir = root_dir
        self.df = df
        self.processor = processor
        self.max_target_length = max_target_length
        self.augment = RandomLineAugment() if augment else None

    def __len__(self):
        return len(self.df)

    def _load_image(self, file_name):
        path = os.path.join(self.root_dir, "image", file_name)
        image = Image.open(path).convert("RGB")
        if self.augment is not None:
            image = self.augment(image)
        return image

    def __getitem__(self, idx):
        file_name = self.df["file_name"][idx]
        text = self.df["text"][idx]
        image = self._load_image(file_name)
        pixel_values = self.processor(image, return_tensors="pt").pixel_values
        labels = self.processor.tokenizer(
            text,
            padding="max_length",
            max_length=self.max_target_length,
            truncation=True,
        ).input_ids
        # important: make sure that PAD tokens are ignored by the loss function
        labels = [label if label != self.processor.tokenizer.pad_token_id else -100
                  for label in labels]
        return {"pixel_values": pixel_values.squeeze(), "labels": torch.tensor(labels)}


class LineImageFolder(Dataset):
    """Unlabelled line images for inference (one image per file)."""

    EXTS = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp")

    def __init__(self, folder, processor):
        self.files = sorted(
            os.path.join(folder, f) for f in os.listdir(folder)
            if f.lower().endswith(self.EXTS)
        )
        self.processor = processor

    def __len__(self):
        return len(self.files)

    def __getitem__(self, idx):
        image = Image.open(self.files[idx]).convert("RGB")
        pixel_values = self.processor(image, return_tensors="pt").pixel_values.squeeze(0)
        return {"pixel_values": pixel_values, "path": self.files[idx]}


def collate_inference(batch):
    return {
        "pixel_values": torch.stack([b["pixel_values"] for b in batch]),
        "path": [b["path"] for b in batch],
    }
