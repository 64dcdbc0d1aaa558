"""Whole-slide image tiling and stain normalisation for MIL pathology models.

Reading uses cuCIM's CuImage (GPUDirect-capable, multithreaded), tissue detection and
Macenko normalisation run on the GPU with cupy / cucim.skimage, and tiles are handed to the
feature extractor as torch tensors without a host round-trip (DLPack).
"""
import argparse
import json
import logging
import os
from pathlib import Path
from typing import Iterator, List, Tuple

import numpy as np
import torch
import torch.nn as nn
import torchvision.transforms.functional as TF

import cupy as cp
from cucim import CuImage
from cucim.skimage.color import rgb2gray, rgb2hed
from cucim.skimage.filters import threshold_otsu
from cucim.skimage.morphology import remove_small_objects, binary_dilation, disk

log = logging.getLogger("tile_wsi")


def tissue_mask(thumbnail: cp.ndarray, min_size: int = 256) -> cp.ndarray:
    gray = rgb2gray(thumbnail)
    thresh = threshold_otsu(gray)
    mask = gray < thresh
    mask = remove_small_objects(mask, min_size=min_size)
    return binary_dilation(mask, disk(2))


def grid_coords(mask: np.ndarray, downsample: float, tile: int, min_tissue: float) -> List[Tuple[int, int]]:
    coords = []
    step = max(1, int(round(tile / downsample)))
    h, w = mask.shape
    for y in range(0, h - step + 1, step):
        for x in range(0, w - step + 1, step):
            frac = mask[y:y + step, x:x + step].mean()
            if frac >= min_tissue:
                coords.append((int(x * downsample), int(y * downsample)))
    return coords


class MacenkoNormalizer:
    """Macenko stain normalisation; fitted once on a reference tile, applied to every tile on the GPU."""

    def __init__(self, io_=240, alpha=1, beta=0.15):
        self.io = io_
        self.alpha = alpha
        self.beta = beta
        self.he_ref = cp.array([[0.5626, 0.2159], [0.7201, 0.8012], [0.4062, 0.5581]])
        self.max_c_ref = cp.array([1.9705, 1.0308])

    def _od(self, img):
        img = img.reshape((-1, 3)).astype(cp.float32)
        return -cp.log((img + 1) / self.io)

    def __call__(self, img: cp.ndarray) -> cp.ndarray:
        h, w, _ = img.shape
        od = self._od(img)
        od_hat = od[~cp.any(od < self.beta, axis=1)]
        if od_hat.shape[0] < 10:
            return img
        _, eigvecs = cp.linalg.eigh(cp.cov(od_hat.T))
        t_hat = od_hat @ eigvecs[:, 1:3]
        phi = cp.arctan2(t_hat[:, 1], t_hat[:, 0])
        min_phi = cp.percentile(phi, self.alpha)
        max_phi = cp.percentile(phi, 100 - self.alpha)
        v_min = eigvecs[:, 1:3] @ cp.array([cp.cos(min_phi), cp.sin(min_phi)])
        v_max = eigvecs[:, 1:3] @ cp.array([cp.cos(max_phi), cp.sin(max_phi)])
        if v_min[0] > v_max[0]:
            he = cp.array((v_min, v_max)).T
        else:
            he = cp.array((v_max, v_min)).T
        y = od.T
        c = cp.linalg.lstsq(he, y, rcond=None)[0]
        max_c = cp.array([cp.percentile(c[0, :], 99), cp.percentile(c[1, :], 99)])
        c *= (self.max_c_ref / max_c)[:, None]
        out = self.io * cp.exp(-self.he_ref @ c)
        out = cp.clip(out, 0, 255).T.reshape((h, w, 3)).astype(cp.uint8)
        return out


def iter_tiles(slide_path: str, tile: int = 256, level: int = 0, min_tissue: float = 0.5,
               batch: int = 64) -> Iterator[Tuple[torch.Tensor, List[Tuple[int, int]]]]:
    img = CuImage(slide_path)
    dims = img.resolutions["level_dimensions"]
    thumb_level = img.resolutions["level_count"] - 1
    thumb = img.read_region(location=(0, 0), size=dims[thumb_level], level=thumb_level, device="cuda")
    thumb = cp.asarray(thumb)[..., :3]
    downsample = img.resolutions["level_downsamples"][thumb_level]
    mask = cp.asnumpy(tissue_mask(thumb))
    coords = grid_coords(mask, downsample, tile, min_tissue)
    log.info("%s: %d tissue tiles", os.path.basename(slide_path), len(coords))

    normalizer = MacenkoNormalizer()
    for start in range(0, len(coords), batch):
        chunk = coords[start:start + batch]
        regions = img.read_region(chunk, (tile, tile), level, num_workers=8, device="cuda")
        tiles = []
        for region in regions:
            arr = cp.asarray(region)[..., :3]
            arr = normalizer(arr)
            tiles.append(torch.from_dlpack(arr.toDlpack()))
        yield torch.stack(tiles).permute(0, 3, 1, 2).contiguous(), chunk


class FeatureExtractor(nn.Module):

    def __init__(self, backbone: nn.Module, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225)):
        super().__init__()
        self.backbone = backbone
        self.register_buffer("mean", torch.tensor(mean).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor(std).view(1, 3, 1, 1))

    @torch.no_grad()
    def forward(self, tiles_uint8: torch.Tensor) -> torch.Tensor:
        x = tiles_uint8.float().div_(255.0)
        x = TF.resize(x, [224, 224], antialias=True)
        x = (x - self.mean) / self.std
        return self.backbone(x)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--slides", type=str, required=True, help="directory of .svs / .tiff slides")
    p.add_argument("--out", type=str, required=True)
    p.add_argument("--tile", type=int, default=256)
    p.add_argument("--level", type=int, default=0)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--backbone", type=str, default="resnet50_trunc")
    args = p.parse_args()

    logging.basicConfig(level=logging.INFO)
    device = torch.device("cuda")
    cp.cuda.Device(0).use()

    from models import build_backbone
    model = FeatureExtractor(build_backbone(args.backbone)).to(device).eval().half()

    os.makedirs(args.out, exist_ok=True)
    for slide in sorted(Path(args.slides).glob("*.svs")):
        feats, all_coords = [], []
        for tiles, coords in iter_tiles(str(slide), args.tile, args.level, batch=args.batch):
            with torch.autocast("cuda", dtype=torch.float16):
                f = model(tiles.to(device, non_blocking=True))
            feats.append(f.float().cpu())
            all_coords.extend(coords)
        feats = torch.cat(feats) if feats else torch.empty(0, 1024)
        torch.save({"features": feats, "coords": torch.tensor(all_coords)}, os.path.join(args.out, slide.stem + ".pt"))
        log.info("%s -> %s", slide.name, tuple(feats.shape))
        cp.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
