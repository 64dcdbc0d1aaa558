"""
Data-loading helpers for video pre-training: a pinned-memory DataLoader factory, a side-stream
prefetcher that overlaps H2D copies with compute, and GPU-side normalisation of uint8 clips.
"""
import math
import os
from typing import Iterator, Optional, Tuple

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


def seed_worker(worker_id: int) -> None:
    worker_seed = torch.initial_seed() % 2**32
    np.random.seed(worker_seed)


def build_loader(dataset, batch_size: int, num_workers: int = 10, shuffle: bool = True,
                 drop_last: bool = True, persistent: bool = True) -> DataLoader:
    if dist.is_available() and dist.is_initialized():
        sampler = DistributedSampler(dataset, num_replicas=dist.get_world_size(), rank=dist.get_rank(),
                                     shuffle=shuffle, drop_last=drop_last)
        shuffle = False
    else:
        sampler = None
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=shuffle,
        sampler=sampler,
        num_workers=num_workers,
        pin_memory=True,
        pin_memory_device="cuda",
        drop_last=drop_last,
        worker_init_fn=seed_worker,
        persistent_workers=persistent and num_workers > 0,
        prefetch_factor=4 if num_workers > 0 else None,
    )


class CUDAPrefetcher:
    """Wraps a loader; next() returns a batch whose H2D copy was issued one step earlier on a side stream."""

    def __init__(self, loader: DataLoader, device: torch.device, normalize: bool = True):
        self.loader = loader
        self.device = device
        self.normalize = normalize
        self.stream = torch.cuda.Stream(device=device)
        self.mean = torch.tensor(MEAN, device=device).view(1, 3, 1, 1, 1) * 255
        self.std = torch.tensor(STD, device=device).view(1, 3, 1, 1, 1) * 255
        self._iter: Optional[Iterator] = None
        self._next = None

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        self._iter = iter(self.loader)
        self._preload()
        return self

    def _preload(self):
        try:
            videos, masks = next(self._iter)
        except StopIteration:
            self._next = None
            return
        with torch.cuda.stream(self.stream):
            videos = videos.to(self.device, non_blocking=True)
            masks = masks.to(self.device, non_blocking=True).flatten(1).to(torch.bool)
            if self.normalize:
                # uint8 [B, C, T, H, W] -> float, normalised on the device
                videos = (videos.float() - self.mean) / self.std
        self._next = (videos, masks)

    def __next__(self) -> Tuple[torch.Tensor, torch.Tensor]:
        torch.cuda.current_stream(self.device).wait_stream(self.stream)
        batch = self._next
        if batch is None:
            raise StopIteration
        for t in batch:
            t.record_stream(torch.cuda.current_stream(self.device))
        self._preload()
        return batch


def pinned_buffer(shape, dtype=torch.uint8) -> torch.Tensor:
    """Host staging buffer reused by the decoder threads."""
    return torch.empty(shape, dtype=dtype).pin_memory()


def tube_mask(batch: int, num_frames: int, patch_hw: Tuple[int, int], ratio: float, device) -> torch.Tensor:
    """VideoMAE tube masking generated directly on the device (same mask for every frame pair)."""
    h, w = patch_hw
    per_frame = h * w
    num_masked = int(math.ceil(per_frame * ratio))
    noise = torch.rand(batch, per_frame, device=device)
    ids = noise.argsort(dim=1)
    mask = torch.zeros(batch, per_frame, dtype=torch.bool, device=device)
    mask.scatter_(1, ids[:, :num_masked], True)
    return mask.repeat(1, num_frames // 2)


def estimate_throughput(loader: DataLoader, steps: int = 50) -> float:
    """Clips/s delivered to the GPU, for choosing num_workers."""
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
    pf = CUDAPrefetcher(loader, device)
    it = iter(pf)
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    n = 0
    for _ in range(steps):
        try:
            videos, _ = next(it)
        except StopIteration:
            break
        n += videos.shape[0]
    end.record()
    end.synchronize()
    return n / (start.elapsed_time(end) / 1e3)
