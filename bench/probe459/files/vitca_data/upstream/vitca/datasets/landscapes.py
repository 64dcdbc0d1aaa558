"""Landscapes / CelebA / MNIST style image folders for ViTCA denoising."""
import glob
import os

import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
import torchvision.transforms as T


class ImageFolderFlat(Dataset):
    EXTS = ("*.jpg", "*.jpeg", "*.png")

    def __init__(self, root, split="train", size=64, val_frac=0.05):
        files = []
        for ext in self.EXTS:
            files += glob.glob(os.path.join(root, "**", ext), recursive=True)
        files = sorted(files)
        if not files:
            raise FileNotFoundError("no images under %s" % root)
        n_val = max(1, int(len(files) * val_frac))
        self.files = files[n_val:] if split == "train" else files[:n_val]
        aug = [T.RandomHorizontalFlip()] if split == "train" else []
        self.transform = T.Compose(
            [T.Resize(size), T.CenterCrop(size)] + aug + [T.ToTensor()]
        )

    def __len__(self):
        return len(self.files)

    def __getitem__(self, idx):
        img = Image.open(self.files[idx]).convert("RGB")
        return self.transform(img), 0


def build_loader(cfg, split="train", world_size=1, rank=0):
    ds = ImageFolderFlat(cfg.data.root, split=split, size=cfg.data.size)
    sampler = None
    if world_size > 1:
        sampler = DistributedSampler(ds, num_replicas=world_size, rank=rank, shuffle=(split == "train"))
    loader = DataLoader(
        ds,
        batch_size=cfg.data.batch_size if split == "train" else cfg.data.val_batch_size,
        shuffle=(sampler is None and split == "train"),
        sampler=sampler,
        num_workers=cfg.data.num_workers,
        pin_memory=True,
        drop_last=(split == "train"),
        persistent_workers=cfg.data.num_workers > 0,
    )
    return loader, sampler
