"""Video-text dataset with decord (optionally GPU-decoding) and a PyAV fallback."""
import os
import random
from typing import Optional

import av
import numpy as np
import pandas as pd
import torch
import torchvision.transforms as T
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

try:
    import decord
    from decord import VideoReader, cpu, gpu

    decord.bridge.set_bridge("torch")
    HAS_DECORD = True
except ImportError:
    HAS_DECORD = False

IMG_EXTS = (".jpg", ".jpeg", ".png", ".webp")


def read_video_pyav(path: str, num_frames: int, frame_interval: int):
    """Decode with PyAV on the CPU; returns uint8 tensor [T, H, W, C]."""
    frames = []
    with av.open(path) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        for frame in container.decode(stream):
            frames.append(frame.to_ndarray(format="rgb24"))
    total = len(frames)
    need = (num_frames - 1) * frame_interval + 1
    start = random.randint(0, max(0, total - need))
    idx = [min(start + i * frame_interval, total - 1) for i in range(num_frames)]
    return torch.from_numpy(np.stack([frames[i] for i in idx]))


class VideoTextDataset(Dataset):
    def __init__(self, csv_path: str, num_frames: int = 16, frame_interval: int = 3, image_size=(256, 256),
                 decode_on_gpu: bool = False, local_rank: int = 0):
        self.data = pd.read_csv(csv_path)
        self.num_frames = num_frames
        self.frame_interval = frame_interval
        self.image_size = image_size
        self.decode_on_gpu = decode_on_gpu and HAS_DECORD
        self.local_rank = local_rank
        self.transform = T.Compose([
            T.Resize(min(image_size), antialias=True),
            T.CenterCrop(image_size),
            T.Normalize(mean=[0.5, 0.5, 0.5], std=[0.5, 0.5, 0.5], inplace=True),
        ])

    def __len__(self):
        return len(self.data)

    def _read_decord(self, path):
        # GPU decoding needs decord built with -DUSE_CUDA=ON (NVDEC)
        ctx = gpu(self.local_rank) if self.decode_on_gpu else cpu(0)
        vr = VideoReader(path, ctx=ctx, num_threads=2)
        total = len(vr)
        need = (self.num_frames - 1) * self.frame_interval + 1
        start = random.randint(0, max(0, total - need))
        idx = [min(start + i * self.frame_interval, total - 1) for i in range(self.num_frames)]
        video = vr.get_batch(idx)  # [T, H, W, C] uint8, on ctx
        fps = vr.get_avg_fps()
        del vr
        return video, fps

    def __getitem__(self, index):
        row = self.data.iloc[index]
        path = row["path"]
        if path.lower().endswith(IMG_EXTS):
            image = T.functional.pil_to_tensor(T.functional.to_pil_image(np.array(av.open(path).decode(video=0).__next__().to_image())))
            video = image.unsqueeze(0).repeat(self.num_frames, 1, 1, 1).permute(0, 2, 3, 1)
            fps = 24.0
        elif HAS_DECORD:
            video, fps = self._read_decord(path)
        else:
            video = read_video_pyav(path, self.num_frames, self.frame_interval)
            fps = 24.0
        video = video.permute(0, 3, 1, 2).float() / 255.0  # T C H W
        video = self.transform(video)
        video = video.permute(1, 0, 2, 3)  # C T H W
        if video.is_cuda:
            video = video.cpu()  # workers must return host tensors
        return {"video": video, "text": row["text"], "fps": fps, "num_frames": self.num_frames}


def build_dataloader(dataset, batch_size, num_workers=8, seed=42, rank=0, world_size=1, decode_on_gpu=False):
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=seed)
    if decode_on_gpu:
        # CUDA contexts cannot be forked: decode in the main process
        num_workers = 0
    return DataLoader(
        dataset,
        batch_size=batch_size,
        sampler=sampler,
        num_workers=num_workers,
        pin_memory=True,
        pin_memory_device="cuda" if torch.cuda.is_available() else "",
        drop_last=True,
        persistent_workers=num_workers > 0,
        prefetch_factor=2 if num_workers > 0 else None,
    )


def to_device(batch, device: Optional[torch.device] = None):
    device = device or torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
    out = {}
    for k, v in batch.items():
        out[k] = v.to(device, non_blocking=True) if isinstance(v, torch.Tensor) else v
    return out
