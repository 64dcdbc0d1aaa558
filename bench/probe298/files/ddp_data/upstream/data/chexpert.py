"""CheXpert-v1.0 dataset, transforms and a CUDA-stream prefetcher.

Label policy for the 14 observations (columns 5.. of train.csv):
    1 = positive, 0 = negative, -1 = uncertain, blank = not mentioned (-> 0)
Uncertain labels are mapped according to ``uncertainty``:
    U-Ones   : -1 -> 1
    U-Zeros  : -1 -> 0
    U-Ignore : -1 kept, masked out in the loss (see train.masked_bce)
"""
import os

import cv2
import numpy as np
import pandas as pd
import torch
from torch.utils.data import Dataset

import albumentations as A

CHEXPERT_ALL_TASKS = [
    'No Finding', 'Enlarged Cardiomediastinum', 'Cardiomegaly', 'Lung Opacity', 'Lung Lesion', 'Edema',
    'Consolidation', 'Pneumonia', 'Atelectasis', 'Pneumothorax', 'Pleural Effusion', 'Pleural Other',
    'Fracture', 'Support Devices',
]
CHEXPERT_COMPETITION_TASKS = ['Atelectasis', 'Cardiomegaly', 'Consolidation', 'Edema', 'Pleural Effusion']

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def _fix_path(data_dir, rel_path):
    # train.csv paths start with "CheXpert-v1.0/train/..." (or "-small"); make them relative to data_dir
    parts = rel_path.split('/')
    if parts[0].startswith('CheXpert-v1.0'):
        parts = parts[1:]
    return os.path.join(data_dir, *parts)


class CheXpertDataset(Dataset):
    def __init__(self, data_dir, split='train', transform=None, uncertainty='U-Ones', frontal_only=False,
                 tasks=CHEXPERT_COMPETITION_TASKS, grayscale=False):
        csv_path = os.path.join(data_dir, '{}.csv'.format(split))
        df = pd.read_csv(csv_path)
        if frontal_only:
            df = df[df['Frontal/Lateral'] == 'Frontal'].reset_index(drop=True)
        self.data_dir = data_dir
        self.transform = transform
        self.tasks = list(tasks)
        self.grayscale = grayscale
        self.paths = [_fix_path(data_dir, p) for p in df['Path'].tolist()]

        labels = df[self.tasks].fillna(0.0).values.astype(np.float32)
        if uncertainty == 'U-Ones':
            labels[labels == -1] = 1.0
        elif uncertainty == 'U-Zeros':
            labels[labels == -1] = 0.0
        elif uncertainty == 'U-Ignore':
            pass
        else:
            raise ValueError('unknown uncertainty policy {}'.format(uncertainty))
        self.labels = labels
        self.patients = df['Path'].str.extract(r'(patient\d+)')[0].tolist()

    def __len__(self):
        return len(self.paths)

    def _load(self, path):
        img = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
        if img is None:
            raise FileNotFoundError(path)
        if not self.grayscale:
            img = cv2.cvtColor(img, cv2.COLOR_GRAY2RGB)
        return img

    def __getitem__(self, idx):
        img = self._load(self.paths[idx])
        if self.transform is not None:
            img = self.transform(image=img)['image']
        if img.ndim == 2:
            img = img[None]
        else:
            img = img.transpose(2, 0, 1)
        return torch.from_numpy(np.ascontiguousarray(img)), torch.from_numpy(self.labels[idx])

    @property
    def pos_weight(self):
        valid = self.labels >= 0
        pos = ((self.labels == 1) & valid).sum(0).clip(min=1)
        neg = ((self.labels == 0) & valid).sum(0)
        return (neg / pos).astype(np.float32)

    def class_prevalence(self):
        valid = self.labels >= 0
        return {t: float(((self.labels[:, i] == 1) & valid[:, i]).sum() / max(valid[:, i].sum(), 1))
                for i, t in enumerate(self.tasks)}


def build_transforms(img_size, normalize_on_gpu=False):
    """Albumentations pipelines. With ``normalize_on_gpu`` the tensors stay uint8 and the
    prefetcher below does the float conversion + normalisation on the GPU."""
    norm = [] if normalize_on_gpu else [A.Normalize(mean=IMAGENET_MEAN, std=IMAGENET_STD)]
    train_tf = A.Compose([
        A.LongestMaxSize(max_size=img_size),
        A.PadIfNeeded(min_height=img_size, min_width=img_size, border_mode=cv2.BORDER_CONSTANT, value=0),
        A.ShiftScaleRotate(shift_limit=0.05, scale_limit=0.1, rotate_limit=10, border_mode=cv2.BORDER_CONSTANT,
                           value=0, p=0.7),
        A.RandomBrightnessContrast(brightness_limit=0.1, contrast_limit=0.1, p=0.5),
        A.CLAHE(clip_limit=2.0, p=0.2),
    ] + norm)
    val_tf = A.Compose([
        A.LongestMaxSize(max_size=img_size),
        A.PadIfNeeded(min_height=img_size, min_width=img_size, border_mode=cv2.BORDER_CONSTANT, value=0),
    ] + norm)
    return train_tf, val_tf


class CudaPrefetcher(object):
    """Overlap host->device copies with compute (from the NVIDIA apex ImageNet example).

    Wraps a DataLoader whose batches are uint8 NCHW images; returns normalised float
    batches already on the current GPU. Use together with build_transforms(normalize_on_gpu=True).
    """

    def __init__(self, loader, mean=IMAGENET_MEAN, std=IMAGENET_STD, fp16=False):
        self.loader = loader
        self.fp16 = fp16
        self.stream = torch.cuda.Stream()
        self.mean = torch.tensor([m * 255 for m in mean]).cuda().view(1, 3, 1, 1)
        self.std = torch.tensor([s * 255 for s in std]).cuda().view(1, 3, 1, 1)
        if fp16:
            self.mean = self.mean.half()
            self.std = self.std.half()

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        self._iter = iter(self.loader)
        self.preload()
        return self

    def preload(self):
        try:
            self.next_input, self.next_target = next(self._iter)
        except StopIteration:
            self.next_input = None
            self.next_target = None
            return
        with torch.cuda.stream(self.stream):
            self.next_input = self.next_input.cuda(non_blocking=True)
            self.next_target = self.next_target.cuda(non_blocking=True)
            if self.fp16:
                self.next_input = self.next_input.half()
            else:
                self.next_input = self.next_input.float()
            self.next_input = self.next_input.sub_(self.mean).div_(self.std)

    def __next__(self):
        torch.cuda.current_stream().wait_stream(self.stream)
        inp = self.next_input
        target = self.next_target
        if inp is None:
            raise StopIteration
        inp.record_stream(torch.cuda.current_stream())
        target.record_stream(torch.cuda.current_stream())
        self.preload()
        return inp, target


def patient_split(dataset, val_fraction=0.1, seed=0):
    """Split indices of a CheXpertDataset by patient so no patient is in both splits."""
    rng = np.random.RandomState(seed)
    patients = sorted(set(dataset.patients))
    rng.shuffle(patients)
    n_val = max(1, int(len(patients) * val_fraction))
    val_p = set(patients[:n_val])
    train_idx = [i for i, p in enumerate(dataset.patients) if p not in val_p]
    val_idx = [i for i, p in enumerate(dataset.patients) if p in val_p]
    return train_idx, val_idx


def collate_uint8(batch):
    """Stack uint8 images without converting to float (keeps the H2D copy 4x smaller)."""
    imgs = torch.stack([b[0] for b in batch])
    targets = torch.stack([b[1] for b in batch])
    return imgs, targets


if __name__ == '__main__':
    import argparse
    import time

    p = argparse.ArgumentParser(description='Quick loader throughput check')
    p.add_argument('--data-dir', default='/datasets/CheXpert-v1.0')
    p.add_argument('--img-size', type=int, default=320)
    p.add_argument('--workers', type=int, default=8)
    p.add_argument('--batch-size', type=int, default=64)
    p.add_argument('--gpu-prefetch', action='store_true')
    a = p.parse_args()

    train_tf, _ = build_transforms(a.img_size, normalize_on_gpu=a.gpu_prefetch)
    ds = CheXpertDataset(a.data_dir, 'train', transform=train_tf)
    print(len(ds), 'images;', ds.class_prevalence())
    dl = torch.utils.data.DataLoader(ds, batch_size=a.batch_size, num_workers=a.workers, shuffle=True,
                                     pin_memory=True, drop_last=True,
                                     collate_fn=collate_uint8 if a.gpu_prefetch else None)
    it = CudaPrefetcher(dl) if a.gpu_prefetch else dl
    t0 = time.time()
    for i, (x, y) in enumerate(it):
        if i == 100:
            break
    dt = time.time() - t0
    print('{:.1f} img/s'.format(100 * a.batch_size / dt))
