"""Tiled prediction for CARE-style restoration networks (3-D light-sheet / confocal volumes).

Volumes are usually far larger than device memory (e.g. 2048 x 2048 x 500 planes), so prediction
runs on overlapping tiles.  The number of tiles is estimated from the free device memory and
increased automatically when the device runs out of memory.
"""
import math
import warnings
from itertools import product

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from .utils import normalize_percentile, axes_check_and_normalize, move_image_axes
from .tiling import tile_iterator_1d, Tile


class CAREPredictor:
    def __init__(self, model, axes="ZYX", n_depth=2, device=None, half=True):
        self.model = model
        self.axes = axes_check_and_normalize(axes)
        self.n_depth = n_depth
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)
        self.model.to(self.device).eval()
        self.half = half and self.device.type == "cuda"
        if self.half:
            self.model.half()

    @property
    def _axis_div_by(self):
        # each down-sampling level halves the spatial axes
        return {a: 2 ** self.n_depth for a in "ZYX" if a in self.axes}

    def _estimate_n_tiles(self, shape, channels_out=1):
        """Guess how many tiles are needed from the free memory on the device."""
        if self.device.type != "cuda":
            return [1] * len(shape)
        free, _ = torch.cuda.mem_get_info(self.device)
        bytes_per_voxel = (2 if self.half else 4) * (channels_out + 1) * 48  # ~48x for activations
        n_total = max(1, math.ceil(np.prod(shape) * bytes_per_voxel / (0.7 * free)))
        n_tiles = [1] * len(shape)
        # split the largest axes first
        while np.prod(n_tiles) < n_total:
            i = int(np.argmax([s / n for s, n in zip(shape, n_tiles)]))
            n_tiles[i] *= 2
        return n_tiles

    @torch.no_grad()
    def _predict_tile(self, x):
        t = torch.from_numpy(np.ascontiguousarray(x))[None, None].to(self.device, non_blocking=True)
        t = t.half() if self.half else t.float()
        y = self.model(t)
        return y[0].float().cpu().numpy()

    def predict(self, img, n_tiles=None, normalizer=(1, 99.8), overlap=0.125, max_retries=6):
        """Predict the restored image, splitting into tiles if needed."""
        x = img.astype(np.float32, copy=False)
        if normalizer is not None:
            x = normalize_percentile(x, *normalizer)
        spatial = x.shape
        if n_tiles is None:
            n_tiles = self._estimate_n_tiles(spatial)

        for attempt in range(max_retries):
            try:
                return self._predict_tiled(x, n_tiles, overlap)
            except torch.cuda.OutOfMemoryError:
                torch.cuda.empty_cache()
            except RuntimeError as err:
                if "CUDA out of memory" not in str(err):
                    raise
                torch.cuda.empty_cache()  # release fragments before retrying
            i = int(np.argmax([s / n for s, n in zip(spatial, n_tiles)]))
            n_tiles = list(n_tiles)
            n_tiles[i] *= 2
            warnings.warn(f"out of memory, retrying with n_tiles={tuple(n_tiles)}")
        raise MemoryError(f"could not predict even with n_tiles={tuple(n_tiles)}")

    def _predict_tiled(self, x, n_tiles, overlap):
        out = np.zeros(x.shape, dtype=np.float32)
        div_by = [self._axis_div_by.get(a, 1) for a in self.axes]
        block_sizes = [max(d, int(math.ceil(s / n / d)) * d) for s, n, d in zip(x.shape, n_tiles, div_by)]
        pads = [int(round(b * overlap / d)) * d for b, d in zip(block_sizes, div_by)]
        tiles_per_axis = [list(tile_iterator_1d(s, b, p, d))
                          for s, b, p, d in zip(x.shape, block_sizes, pads, div_by)]
        total = int(np.prod([len(t) for t in tiles_per_axis]))
        for tiles in tqdm(product(*tiles_per_axis), total=total, disable=total == 1):
            src = tuple(t.read for t in tiles)
            crop = tuple(t.crop for t in tiles)
            dst = tuple(t.write for t in tiles)
            y = self._predict_tile(x[src])
            out[dst] = y[0][crop] if y.ndim == x.ndim + 1 else y[crop]
        return out


def predict_probabilistic(model, img, n_samples=16, device="cuda", n_tiles=None):
    """Sample-based uncertainty for a probabilistic CARE model (mean, std per voxel)."""
    pred = CAREPredictor(model, device=device)
    mean = np.zeros(img.shape, np.float32)
    sq = np.zeros(img.shape, np.float32)
    model.train()  # enable dropout at test time
    for _ in range(n_samples):
        y = pred.predict(img, n_tiles=n_tiles)
        mean += y
        sq += y ** 2
    mean /= n_samples
    std = np.sqrt(np.maximum(sq / n_samples - mean ** 2, 0))
    model.eval()
    return mean, std


def upsample_isotropic(model, stack, factor, device=None, n_tiles=None):
    """Isotropic restoration: upsample along Z (trilinear), then restore YX-rotated views and average."""
    pred = CAREPredictor(model, axes="ZYX", device=device)
    t = torch.from_numpy(stack[None, None].astype(np.float32))
    if pred.device.type == "cuda":
        t = t.pin_memory()
    t = t.to(pred.device)
    up = F.interpolate(t, scale_factor=(factor, 1, 1), mode="trilinear", align_corners=False)
    up = up[0, 0].cpu().numpy()
    a = pred.predict(up, n_tiles=n_tiles)
    b = pred.predict(np.swapaxes(up, 0, 1), n_tiles=n_tiles)
    return 0.5 * (a + np.swapaxes(b, 0, 1))
