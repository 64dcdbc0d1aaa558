# YOLOv5 🚀 by Ultralytics, GPL-3.0 license
"""
Dataloaders and dataset utils (orchard fork: adds tiled loading of high-resolution orchard images)
"""

import contextlib
import glob
import hashlib
import math
import os
import random
from itertools import repeat
from multiprocessing.pool import Pool, ThreadPool
from pathlib import Path

import cv2
import numpy as np
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset, dataloader, distributed
from tqdm import tqdm

from utils.augmentations import Albumentations, augment_hsv, letterbox, random_perspective
from utils.general import LOGGER, NUM_THREADS, TQDM_BAR_FORMAT, xywhn2xyxy, xyxy2xywhn
from utils.torch_utils import torch_distributed_zero_first

# Parameters
HELP_URL = 'See https://github.com/ultralytics/yolov5/wiki/Train-Custom-Data'
IMG_FORMATS = 'bmp', 'dng', 'jpeg', 'jpg', 'mpo', 'png', 'tif', 'tiff', 'webp', 'pfm'  # include image suffixes
LOCAL_RANK = int(os.getenv('LOCAL_RANK', -1))  # https://pytorch.org/docs/stable/elastic/run.html
RANK = int(os.getenv('RANK', -1))
PIN_MEMORY = str(os.getenv('PIN_MEMORY', True)).lower() == 'true'  # global pin_memory for dataloaders


def get_hash(paths):
    # Returns a single hash value of a list of paths (files or dirs)
    size = sum(os.path.getsize(p) for p in paths if os.path.exists(p))  # sizes
    h = hashlib.md5(str(size).encode())  # hash sizes
    h.update(''.join(paths).encode())  # hash paths
    return h.hexdigest()  # return hash


def seed_worker(worker_id):
    # Set dataloader worker seed https://pytorch.org/docs/stable/notes/randomness.html#dataloader
    worker_seed = torch.initial_seed() % 2 ** 32
    np.random.seed(worker_seed)
    random.seed(worker_seed)


def create_dataloader(path,
                      imgsz,
                      batch_size,
                      stride,
                      single_cls=False,
                      hyp=None,
                      augment=False,
                      cache=False,
                      pad=0.0,
                      rect=False,
                      rank=-1,
                      workers=8,
                      image_weights=False,
                      quad=False,
                      prefix='',
                      shuffle=False,
                      tile=0):
    if rect and shuffle:
        LOGGER.warning('WARNING ⚠️ --rect is incompatible with DataLoader shuffle, setting shuffle=False')
        shuffle = False
    with torch_distributed_zero_first(rank):  # init dataset *.cache only once if DDP
        dataset = LoadImagesAndLabels(
            path,
            imgsz,
            batch_size,
            augment=augment,  # augmentation
            hyp=hyp,  # hyperparameters
            rect=rect,  # rectangular batches
            cache_images=cache,
            single_cls=single_cls,
            stride=int(stride),
            pad=pad,
            image_weights=image_weights,
            prefix=prefix,
            tile=tile)

    batch_size = min(batch_size, len(dataset))
    nd = torch.cuda.device_count()  # number of CUDA devices
    nw = min([os.cpu_count() // max(nd, 1), batch_size if batch_size > 1 else 0, workers])  # number of workers
    sampler = None if rank == -1 else distributed.DistributedSampler(dataset, shuffle=shuffle)
    loader = DataLoader if image_weights else InfiniteDataLoader  # only DataLoader allows for attribute updates
    generator = torch.Generator()
    generator.manual_seed(6148914691236517205 + RANK)
    return loader(dataset,
                  batch_size=batch_size,
                  shuffle=shuffle and sampler is None,
                  num_workers=nw,
                  sampler=sampler,
                  pin_memory=PIN_MEMORY,
                  collate_fn=LoadImagesAndLabels.collate_fn4 if quad else LoadImagesAndLabels.collate_fn,
                  worker_init_fn=seed_worker,
                  generator=generator), dataset


class InfiniteDataLoader(dataloader.DataLoader):
    """ Dataloader that reuses workers

    Uses same syntax as vanilla DataLoader
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        object.__setattr__(self, 'batch_sampler', _RepeatSampler(self.batch_sampler))
        self.iterator = super().__iter__()

    def __len__(self):
        return len(self.batch_sampler.sampler)

    def __iter__(self):
        for _ in range(len(self)):
            yield next(self.iterator)


class _RepeatSampler:
    """ Sampler that repeats forever

    Args:
        sampler (Sampler)
    """

    def __init__(self, sampler):
        self.sampler = sampler

    def __iter__(self):
        while True:
            yield from iter(self.sampler)


def img2label_paths(img_paths):
    # Define label paths as a function of image paths
    sa, sb = f'{os.sep}images{os.sep}', f'{os.sep}labels{os.sep}'  # /images/, /labels/ substrings
    return [sb.join(x.rsplit(sa, 1)).rsplit('.', 1)[0] + '.txt' for x in img_paths]


def tile_image(im, labels, tile, overlap=0.2):
    """Splits a large orchard image into overlapping square tiles.

    labels are normalized xywh (class first); boxes cut by a tile border are kept if at
    least 40% of their area falls inside the tile.
    """
    h, w = im.shape[:2]
    step = int(tile * (1 - overlap))
    out = []
    for y0 in range(0, max(h - tile, 0) + 1, step):
        for x0 in range(0, max(w - tile, 0) + 1, step):
            crop = im[y0:y0 + tile, x0:x0 + tile]
            if len(labels):
                xyxy = xywhn2xyxy(labels[:, 1:], w, h)
                inter = np.clip(xyxy, [x0, y0, x0, y0], [x0 + tile, y0 + tile, x0 + tile, y0 + tile])
                keep = (np.prod(inter[:, 2:] - inter[:, :2], 1) /
                        np.maximum(np.prod(xyxy[:, 2:] - xyxy[:, :2], 1), 1e-6)) > 0.4
                boxes = inter[keep] - [x0, y0, x0, y0]
                lb = np.concatenate((labels[keep, :1], xyxy2xywhn(boxes, crop.shape[1], crop.shape[0])), 1)
            else:
                lb = np.zeros((0, 5), dtype=np.float32)
            out.append((crop, lb))
    return out


class LoadImagesAndLabels(Dataset):
    # YOLOv5 train_loader/val_loader, loads images and labels for training and validation
    cache_version = 0.6  # dataset labels *.cache version

    def __init__(self, path, img_size=640, batch_size=16, augment=False, hyp=None, rect=False, image_weights=False,
                 cache_images=False, single_cls=False, stride=32, pad=0.0, min_items=0, prefix='', tile=0):
        self.img_size = img_size
        self.augment = augment
        self.hyp = hyp
        self.image_weights = image_weights
        self.rect = False if image_weights else rect
        self.mosaic = self.augment and not self.rect  # load 4 images at a time into a mosaic (only during training)
        self.mosaic_border = [-img_size // 2, -img_size // 2]
        self.stride = stride
        self.path = path
        self.tile = tile
        self.albumentations = Albumentations(size=img_size) if augment else None
        p = Path(path)
        self.im_files = sorted(x for x in glob.glob(str(p / '**' / '*.*'), recursive=True)
                               if x.split('.')[-1].lower() in IMG_FORMATS)
        assert self.im_files, f'{prefix}No images found in {path}. {HELP_URL}'
        self.label_files = img2label_paths(self.im_files)
        self.labels = [np.loadtxt(f, ndmin=2).astype(np.float32) if os.path.exists(f) else np.zeros((0, 5), np.float32)
                       for f in self.label_files]
        self.indices = range(len(self.im_files))

    def __len__(self):
        return len(self.im_files)

    def __getitem__(self, index):
        index = self.indices[index]
        im = cv2.imread(self.im_files[index])
        labels = self.labels[index].copy()
        if self.tile:
            tiles = tile_image(im, labels, self.tile)
            im, labels = random.choice(tiles) if self.augment else tiles[0]
        im, ratio, pad = letterbox(im, self.img_size, auto=False, scaleup=self.augment)
        if self.augment:
            augment_hsv(im, hgain=self.hyp['hsv_h'], sgain=self.hyp['hsv_s'], vgain=self.hyp['hsv_v'])
            if random.random() < self.hyp['fliplr']:
                im = np.fliplr(im)
                if len(labels):
                    labels[:, 1] = 1 - labels[:, 1]
        nl = len(labels)
        labels_out = torch.zeros((nl, 6))
        if nl:
            labels_out[:, 1:] = torch.from_numpy(labels)
        im = im.transpose((2, 0, 1))[::-1]  # HWC to CHW, BGR to RGB
        im = np.ascontiguousarray(im)
        return torch.from_numpy(im), labels_out, self.im_files[index], None

    @staticmethod
    def collate_fn(batch):
        im, label, path, shapes = zip(*batch)  # transposed
        for i, lb in enumerate(label):
            lb[:, 0] = i  # add target image index for build_targets()
        return torch.stack(im, 0), torch.cat(label, 0), path, shapes

    @staticmethod
    def collate_fn4(batch):
        im, label, path, shapes = zip(*batch)  # transposed
        n = len(shapes) // 4
        im4, label4, path4, shapes4 = [], [], path[:n], shapes[:n]
        for i in range(n):  # zidane torch.zeros(16,3,720,1280)  # BCHW
            i *= 4
            im4.append(torch.cat((torch.cat((im[i], im[i + 1]), 1), torch.cat((im[i + 2], im[i + 3]), 1)), 2))
            label4.append(torch.cat((label[i], label[i + 1], label[i + 2], label[i + 3]), 0))
        for i, lb in enumerate(label4):
            lb[:, 0] = i  # add target image index for build_targets()
        return torch.stack(im4, 0), torch.cat(label4, 0), path4, shapes4
