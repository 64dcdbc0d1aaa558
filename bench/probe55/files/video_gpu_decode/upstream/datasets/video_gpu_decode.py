"""Clip sampling with hardware video decoding (NVDEC) for Kinetics/SSv2-style datasets.

Two decoders are supported:

* ``decord`` built with ``-DUSE_CUDA=ON``: ``VideoReader(ctx=gpu(i))`` returns frames already on the GPU
  (via DLPack when the torch bridge is enabled);
* ``torchvision`` with the ``cuda`` video backend (torchvision built against the Video Codec SDK).

The dataset returns *uint8 THWC clips on the GPU*; resizing/cropping/normalising is done per batch by
``ClipTransform`` on the same device, so the DataLoader must run with ``num_workers=0`` (CUDA contexts
cannot be shared with forked workers) and a ``ClipPrefetcher`` hides the decode latency instead.
"""
import os
import random
from typing import List, Optional, Sequence

import numpy as np
import torch
import torch.nn.functional as F
import torchvision
from torch.utils.data import Dataset

try:
    import decord
    from decord import VideoReader, cpu, gpu

    decord.bridge.set_bridge("torch")
except ImportError:  # pragma: no cover
    decord = None


def sample_indices(num_frames: int, clip_len: int, stride: int, train: bool) -> List[int]:
    span = clip_len * stride
    if num_frames <= span:
        idx = np.linspace(0, num_frames - 1, clip_len).round().astype(int)
        return idx.tolist()
    if train:
        start = random.randint(0, num_frames - span)
    else:
        start = (num_frames - span) // 2
    return list(range(start, start + span, stride))


class GPUVideoClips(Dataset):
    def __init__(
        self,
        annotation_file: str,
        root: str,
        clip_len: int = 16,
        stride: int = 4,
        train: bool = True,
        decoder: str = "decord",
        device_id: Optional[int] = None,
    ):
        self.root = root
        self.clip_len = clip_len
        self.stride = stride
        self.train = train
        self.decoder = decoder
        with open(annotation_file) as f:
            rows = [line.strip().rsplit(" ", 1) for line in f if line.strip()]
        self.samples = [(os.path.join(root, p), int(lbl)) for p, lbl in rows]
        if device_id is None:
            device_id = torch.cuda.current_device()
        self.device_id = device_id
        if decoder == "torchvision":
            torchvision.set_video_backend("cuda")
        elif decoder == "decord":
            assert decord is not None, "decord is required for decoder='decord'"
        else:
            raise ValueError(decoder)

    def __len__(self):
        return len(self.samples)

    def _decode_decord(self, path: str) -> torch.Tensor:
        vr = VideoReader(path, ctx=gpu(self.device_id), num_threads=1)
        idx = sample_indices(len(vr), self.clip_len, self.stride, self.train)
        frames = vr.get_batch(idx)  # (T, H, W, C) uint8, on the GPU through the torch bridge
        return frames

    def _decode_decord_cpu(self, path: str) -> torch.Tensor:
        vr = VideoReader(path, ctx=cpu(0), num_threads=2)
        idx = sample_indices(len(vr), self.clip_len, self.stride, self.train)
        return vr.get_batch(idx)

    def _decode_torchvision(self, path: str) -> torch.Tensor:
        reader = torchvision.io.VideoReader(path, "video", device=f"cuda:{self.device_id}")
        meta = reader.get_metadata()["video"]
        num_frames = int(meta["duration"][0] * meta["fps"][0])
        wanted = set(sample_indices(num_frames, self.clip_len, self.stride, self.train))
        frames = []
        for i, frame in enumerate(reader):
            if i in wanted:
                frames.append(frame["data"])  # (H, W, C) on the GPU
            if len(frames) == len(wanted):
                break
        while len(frames) < self.clip_len:
            frames.append(frames[-1])
        return torch.stack(frames)

    def __getitem__(self, index: int):
        path, label = self.samples[index]
        try:
            if self.decoder == "decord":
                clip = self._decode_decord(path)
            else:
                clip = self._decode_torchvision(path)
        except RuntimeError:
            # corrupt stream or unsupported codec on the hardware decoder: decode on the CPU
            clip = self._decode_decord_cpu(path).cuda(non_blocking=True)
        return clip, label


class ClipTransform(torch.nn.Module):
    """uint8 (B, T, H, W, C) -> normalised float (B, C, T, S, S) on the clip's device."""

    def __init__(self, size: int = 224, train: bool = True,
                 mean: Sequence[float] = (0.45, 0.45, 0.45), std: Sequence[float] = (0.225, 0.225, 0.225)):
        super().__init__()
        self.size = size
        self.train = train
        self.register_buffer("mean", torch.tensor(mean).view(1, 3, 1, 1, 1))
        self.register_buffer("std", torch.tensor(std).view(1, 3, 1, 1, 1))

    def forward(self, clips: torch.Tensor) -> torch.Tensor:
        b, t, h, w, c = clips.shape
        x = clips.permute(0, 1, 4, 2, 3).reshape(b * t, c, h, w).float().div_(255.0)
        short = min(h, w)
        scale = (self.size * (random.uniform(1.0, 1.25) if self.train else 1.14)) / short
        x = F.interpolate(x, scale_factor=scale, mode="bilinear", align_corners=False, antialias=True)
        _, _, nh, nw = x.shape
        if self.train:
            top, left = random.randint(0, nh - self.size), random.randint(0, nw - self.size)
        else:
            top, left = (nh - self.size) // 2, (nw - self.size) // 2
        x = x[:, :, top:top + self.size, left:left + self.size]
        if self.train and random.random() < 0.5:
            x = x.flip(-1)
        x = x.reshape(b, t, c, self.size, self.size).permute(0, 2, 1, 3, 4)
        return (x - self.mean) / self.std


def collate_clips(batch):
    clips, labels = zip(*batch)
    return torch.stack(clips), torch.tensor(labels, dtype=torch.long)


class ClipPrefetcher:
    """Decodes batch i+1 on a side stream while the model consumes batch i."""

    def __init__(self, loader, transform: ClipTransform):
        self.loader = loader
        self.transform = transform
        self.stream = torch.cuda.Stream()

    def __iter__(self):
        it = iter(self.loader)
        nxt = None
        with torch.cuda.stream(self.stream):
            try:
                clips, labels = next(it)
                nxt = (self.transform(clips), labels.cuda(non_blocking=True))
            except StopIteration:
                return
        while nxt is not None:
            torch.cuda.current_stream().wait_stream(self.stream)
            cur = nxt
            nxt = None
            with torch.cuda.stream(self.stream):  # transform the next batch
                try:
                    clips, labels = next(it)
                    nxt = (self.transform(clips), labels.cuda(non_blocking=True))  # next
                except StopIteration:
                    pass
            yield cur

    def __len__(self):
        return len(self.loader)
