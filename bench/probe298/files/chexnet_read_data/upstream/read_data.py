# encoding: utf-8

"""
Read images and corresponding labels.

Each line of the image list file looks like
    00000001_000.png 0 1 0 0 0 0 0 0 0 0 0 0 0 0
i.e. an image name followed by the 14 binary disease labels. Images are loaded on the
CPU inside the DataLoader workers; the training/eval scripts move the batches to the GPU.
"""

import os

import torch
from torch.utils.data import Dataset
from PIL import Image


class ChestXrayDataSet(Dataset):
    def __init__(self, data_dir, image_list_file, transform=None):
        """
        Args:
            data_dir: path to image directory.
            image_list_file: path to the file containing images
                with corresponding labels.
            transform: optional transform to be applied on a sample.
        """
        image_names = []
        labels = []
        with open(image_list_file, "r") as f:
            for line in f:
                items = line.split()
                if not items:
                    continue
                image_name = items[0]
                label = items[1:]
                label = [int(i) for i in label]
                image_name = os.path.join(data_dir, image_name)
                image_names.append(image_name)
                labels.append(label)

        self.image_names = image_names
        self.labels = labels
        self.transform = transform

    def __getitem__(self, index):
        """
        Args:
            index: the index of item

        Returns:
            image and its labels
        """
        image_name = self.image_names[index]
        image = Image.open(image_name).convert('RGB')
        label = self.labels[index]
        if self.transform is not None:
            image = self.transform(image)
        return image, torch.FloatTensor(label)

    def __len__(self):
        return len(self.image_names)

    def pos_weights(self):
        """Per-class positive weights (neg/pos) for BCEWithLogitsLoss.

        Returned as a CPU tensor; callers move it to the same device as the logits.
        """
        labels = torch.tensor(self.labels, dtype=torch.float32)
        pos = labels.sum(0).clamp(min=1.0)
        neg = labels.shape[0] - pos
        return neg / pos


def split_by_patient(image_list_file, val_fraction=0.1, seed=0):
    """Split an image list into train/val by patient id (the prefix before '_')."""
    import random
    with open(image_list_file) as f:
        lines = [l.strip() for l in f if l.strip()]
    patients = sorted({l.split('_')[0] for l in lines})
    rng = random.Random(seed)
    rng.shuffle(patients)
    n_val = int(len(patients) * val_fraction)
    val_patients = set(patients[:n_val])
    train_lines = [l for l in lines if l.split('_')[0] not in val_patients]
    val_lines = [l for l in lines if l.split('_')[0] in val_patients]
    return train_lines, val_lines
