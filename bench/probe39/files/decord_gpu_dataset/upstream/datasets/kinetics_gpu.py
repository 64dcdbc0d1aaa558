"""Kinetics / SSv2 clip datasets that decode on the GPU.

Videos are decoded with decord's NVDEC context and frame folders with nvJPEG
(torchvision.io.decode_jpeg on CUDA), so augmentation runs on device tensors and the
DataLoader must be created with num_workers=0 (CUDA cannot be re-initialised in
forked workers).
"""
import os
import random

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import Dataset
from torchvision.io import ImageReadMode, decode_jpeg, read_file

import decord
from decord import VideoReader, cpu, gpu

decord.bridge.set_bridge("torch")

_MEAN = (0.485, 0.456, 0.406)
_STD = (0.229, 0.224, 0.225)


def _read_anno(anno_path, data_path, sep=" "):
    samples, labels = [], []
    with open(anno_path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            path, label = line.rsplit(sep, 1)
            samples.append(os.path.join(data_path, path))
            labels.append(int(label))
    return samples, labels


class _DeviceClipMixin:
    """Augmentations on (T, H, W, C) uint8 clips that already live on the decode device."""

    def _normalize(self, buffer):
        # (T, H, W, C) uint8 -> (C, T, H, W) float
        buffer = buffer.permute(3, 0, 1, 2).float().div_(255.0)
        return (buffer - self.mean) / self.std

    def _short_side_resize(self, buffer, size):
        c, t, h, w = buffer.shape
        if h < w:
            new_h, new_w = size, int(w * size / h)
        else:
            new_h, new_w = int(h * size / w), size
        buffer = F.interpolate(buffer, size=(new_h, new_w), mode="bilinear", align_corners=False)
        return buffer

    def _random_crop_flip(self, buffer, crop_size):
        _, _, h, w = buffer.shape
        y0 = random.randint(0, h - crop_size)
        x0 = random.randint(0, w - crop_size)
        buffer = buffer[:, :, y0:y0 + crop_size, x0:x0 + crop_size]
        if random.random() < 0.5:
            buffer = buffer.flip(-1)
        return buffer

    def _center_crop(self, buffer, crop_size):
        _, _, h, w = buffer.shape
        y0 = (h - crop_size) // 2
        x0 = (w - crop_size) // 2
        return buffer[:, :, y0:y0 + crop_size, x0:x0 + crop_size]


class VideoClsDatasetGPU(Dataset, _DeviceClipMixin):
    """Load your own video classification dataset, decoding with NVDEC."""

    def __init__(self, anno_path, data_path="", mode="train", clip_len=16, frame_sample_rate=4,
                 crop_size=224, short_side_size=256, gpu_id=None):
        self.mode = mode
        self.clip_len = clip_len
        self.frame_sample_rate = frame_sample_rate
        self.crop_size = crop_size
        self.short_side_size = short_side_size
        self.samples, self.labels = _read_anno(anno_path, data_path)

        self.gpu_id = torch.cuda.current_device() if gpu_id is None else gpu_id
        self.device = torch.device("cuda", self.gpu_id)
        self.mean = torch.tensor(_MEAN, device=self.device).view(3, 1, 1, 1)
        self.std = torch.tensor(_STD, device=self.device).view(3, 1, 1, 1)

    def __len__(self):
        return len(self.samples)

    def _sample_indices(self, num_frames):
        converted_len = self.clip_len * self.frame_sample_rate
        if num_frames <= converted_len:
            index = np.linspace(0, num_frames - 1, num=self.clip_len).astype(np.int64)
            return index
        if self.mode == "train":
            end_idx = np.random.randint(converted_len, num_frames)
        else:
            end_idx = (num_frames + converted_len) // 2
        str_idx = end_idx - converted_len
        index = np.linspace(str_idx, end_idx, num=self.clip_len)
        return np.clip(index, str_idx, end_idx - 1).astype(np.int64)

    def loadvideo_decord(self, fname):
        if not os.path.exists(fname):
            return None
        # avoid hanging issue
        if os.path.getsize(fname) < 1 * 1024:
            print("SKIP: ", fname, " - ", os.path.getsize(fname))
            return None
        try:
            vr = VideoReader(fname, num_threads=1, ctx=gpu(self.gpu_id))
        except Exception:
            print("video cannot be loaded by decord: ", fname)
            return None
        all_index = self._sample_indices(len(vr))
        vr.seek(0)
        buffer = vr.get_batch(list(all_index))  # (T, H, W, C) uint8, already on the GPU
        return buffer

    def __getitem__(self, index):
        buffer = self.loadvideo_decord(self.samples[index])
        while buffer is None:
            index = np.random.randint(self.__len__())
            buffer = self.loadvideo_decord(self.samples[index])

        buffer = self._normalize(buffer)
        buffer = self._short_side_resize(buffer, self.short_side_size)
        if self.mode == "train":
            buffer = self._random_crop_flip(buffer, self.crop_size)
        else:
            buffer = self._center_crop(buffer, self.crop_size)
        return buffer, self.labels[index]


class FrameFolderDatasetGPU(Dataset, _DeviceClipMixin):
    """Something-Something style frame folders (img_00001.jpg ...) decoded with nvJPEG."""

    def __init__(self, anno_path, data_path="", mode="train", clip_len=16, crop_size=224,
                 short_side_size=256, filename_tmpl="img_{:05d}.jpg", gpu_id=None):
        self.mode = mode
        self.clip_len = clip_len
        self.crop_size = crop_size
        self.short_side_size = short_side_size
        self.filename_tmpl = filename_tmpl
        self.samples, self.labels = _read_anno(anno_path, data_path)
        self.device = gpu_id if gpu_id is not None else 0
        self.mean = torch.tensor(_MEAN).view(3, 1, 1, 1).to(self.device)
        self.std = torch.tensor(_STD).view(3, 1, 1, 1).to(self.device)

    def __len__(self):
        return len(self.samples)

    def _segment_indices(self, num_frames):
        seg_size = float(num_frames - 1) / self.clip_len
        if self.mode == "train":
            return [int(np.round(seg_size * i)) + random.randint(0, max(int(seg_size) - 1, 0))
                    for i in range(self.clip_len)]
        return [int(np.round(seg_size * (i + 0.5))) for i in range(self.clip_len)]

    def __getitem__(self, index):
        folder = self.samples[index]
        num_frames = len([f for f in os.listdir(folder) if f.endswith(".jpg")])
        idx = self._segment_indices(num_frames)
        datas = [read_file(os.path.join(folder, self.filename_tmpl.format(i + 1))) for i in idx]
        frames = decode_jpeg(datas, mode=ImageReadMode.RGB, device="cuda")  # list of (C, H, W)
        buffer = torch.stack(frames).permute(0, 2, 3, 1)  # (T, H, W, C)

        buffer = self._normalize(buffer)
        buffer = self._short_side_resize(buffer, self.short_side_size)
        if self.mode == "train":
            buffer = self._random_crop_flip(buffer, self.crop_size)
        else:
            buffer = self._center_crop(buffer, self.crop_size)
        return buffer, self.labels[index]


def build_gpu_loader(dataset, batch_size, shuffle=True):
    # Clips are produced on the GPU: keep everything in the main process.
    return torch.utils.data.DataLoader(
        dataset, batch_size=batch_size, shuffle=shuffle, num_workers=0, drop_last=shuffle
    )
