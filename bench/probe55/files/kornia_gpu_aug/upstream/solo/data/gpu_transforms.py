# Copyright 2023 solo-learn development team.
#
# Permission is hereby granted, free of charge, to any person obtaining a copy of
# this software and associated documentation files (the "Software"), to deal in
# the Software without restriction, including without limitation the rights to use,
# copy, modify, merge, publish, distribute, sublicense, and/or sell copies of the
# Software, and to permit persons to whom the Software is furnished to do so,
# subject to the following conditions:
#
# The above copyright notice and this permission notice shall be included in all copies
# or substantial portions of the Software.

"""Batch-level SSL augmentations that run on the accelerator after the host->device copy.

The CPU workers only decode + random-resized-crop to a fixed size and emit uint8 tensors;
everything photometric (colour jitter, grayscale, blur, solarization) and the flips run here,
on whole batches, with Kornia (or torchvision.transforms.v2 when --gpu_aug_backend=tv2).
"""

from typing import List, Optional, Sequence

import kornia.augmentation as K
import torch
import torch.nn as nn
from torchvision.transforms import v2

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


class KorniaViewPipeline(nn.Module):
    """One augmented view (BYOL/SimCLR style) of a uint8 NCHW batch."""

    def __init__(
        self,
        crop_size: int = 224,
        brightness: float = 0.4,
        contrast: float = 0.4,
        saturation: float = 0.2,
        hue: float = 0.1,
        color_jitter_prob: float = 0.8,
        gray_scale_prob: float = 0.2,
        horizontal_flip_prob: float = 0.5,
        gaussian_prob: float = 1.0,
        solarization_prob: float = 0.0,
        mean: Sequence[float] = IMAGENET_MEAN,
        std: Sequence[float] = IMAGENET_STD,
        device: str = "cuda",
    ):
        super().__init__()
        self.crop_size = crop_size
        self.augment = K.AugmentationSequential(
            K.RandomHorizontalFlip(p=horizontal_flip_prob),
            K.ColorJitter(brightness, contrast, saturation, hue, p=color_jitter_prob),
            K.RandomGrayscale(p=gray_scale_prob),
            K.RandomGaussianBlur((23, 23), (0.1, 2.0), p=gaussian_prob),
            K.RandomSolarize(thresholds=0.0, additions=0.0, p=solarization_prob),
            data_keys=["input"],
            same_on_batch=False,
        )
        self.register_buffer("mean", torch.tensor(mean, device=device).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor(std, device=device).view(1, 3, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Colour ops are numerically fragile in half precision (hue rotation, rgb<->hsv), so
        # always run the photometric part in fp32 even when the training step is under autocast.
        with torch.cuda.amp.autocast(enabled=False):
            x = x.float().div_(255.0)
            x = self.augment(x)
            x = (x - self.mean) / self.std
        if x.is_cuda:
            x = x.contiguous(memory_format=torch.channels_last)
        return x


class TV2ViewPipeline(nn.Module):
    """Same view, built from torchvision.transforms.v2 (works on batched tensors on any device)."""

    def __init__(self, crop_size: int = 224, color_jitter_prob: float = 0.8, gray_scale_prob: float = 0.2,
                 horizontal_flip_prob: float = 0.5, mean=IMAGENET_MEAN, std=IMAGENET_STD):
        super().__init__()
        self.transform = v2.Compose([
            v2.RandomHorizontalFlip(p=horizontal_flip_prob),
            v2.RandomApply([v2.ColorJitter(0.4, 0.4, 0.2, 0.1)], p=color_jitter_prob),
            v2.RandomGrayscale(p=gray_scale_prob),
            v2.ToDtype(torch.float32, scale=True),
            v2.Normalize(mean=mean, std=std),
        ])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.transform(x)


class MultiViewGPUAugment(nn.Module):
    """Produces `num_large_crops` augmented views per batch (asymmetric BYOL params supported)."""

    def __init__(self, view_cfgs: List[dict], backend: str = "kornia"):
        super().__init__()
        views = []
        for cfg in view_cfgs:
            if backend == "kornia":
                views.append(KorniaViewPipeline(**cfg))
            elif backend == "tv2":
                cfg = {k: v for k, v in cfg.items() if k in ("crop_size", "color_jitter_prob",
                                                                 "gray_scale_prob", "horizontal_flip_prob")}
                views.append(TV2ViewPipeline(**cfg))
            else:
                raise ValueError(f"unknown gpu augmentation backend {backend}")
        self.views = nn.ModuleList(views)

    @torch.no_grad()
    def forward(self, x: torch.Tensor) -> List[torch.Tensor]:
        return [view(x) for view in self.views]


def build_gpu_augment(cfg, device: Optional[torch.device] = None) -> MultiViewGPUAugment:
    """Build from the `augmentations` section of the Hydra config."""
    view_cfgs = []
    for aug in cfg.augmentations:
        for _ in range(aug.num_crops):
            view_cfgs.append(
                dict(
                    crop_size=aug.crop_size,
                    brightness=aug.rrc.get("brightness", 0.4) if "rrc" in aug else 0.4,
                    color_jitter_prob=aug.color_jitter.prob,
                    gray_scale_prob=aug.grayscale.prob,
                    horizontal_flip_prob=aug.horizontal_flip.prob,
                    gaussian_prob=aug.gaussian_blur.prob,
                    solarization_prob=aug.solarization.prob,
                )
            )
    module = MultiViewGPUAugment(view_cfgs, backend=cfg.get("gpu_aug_backend", "kornia"))
    if device is not None:
        module = module.to(device)
    return module


class GPUAugmentCallbackMixin:
    """Mixed into the LightningModule: augments right after Lightning moved the batch."""

    gpu_augment: Optional[MultiViewGPUAugment] = None

    def on_after_batch_transfer(self, batch, dataloader_idx: int):
        if self.gpu_augment is None or not self.training:
            return batch
        indexes, x, targets = batch
        views = self.gpu_augment(x)
        return indexes, views, targets


def benchmark(batch_size: int = 256, iters: int = 50):
    """python -m solo.data.gpu_transforms  -> images/s of the default two-view pipeline."""
    import time

    aug = MultiViewGPUAugment([{}, {"gaussian_prob": 0.1, "solarization_prob": 0.2}]).cuda()
    x = torch.randint(0, 256, (batch_size, 3, 224, 224), dtype=torch.uint8, device="cuda")
    for _ in range(5):
        aug(x)
    torch.cuda.synchronize()  # warm-up done
    t0 = time.perf_counter()
    for _ in range(iters):
        aug(x)
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    print(f"{batch_size * iters / dt:.0f} images/s ({len(aug.views)} views)")


if __name__ == "__main__":
    benchmark()
