"""Tiled super-resolution with automatic tile sizing.

Large photos do not fit in VRAM when pushed through an ESRGAN/SwinIR/HAT-style network in one
piece. ``auto_split_upscale`` first estimates a tile size from the free memory of the card and
then keeps halving it every time the card runs out of memory, so the same call works on a 6 GB
laptop GPU and on an 80 GB A100.
"""
from __future__ import annotations

import gc
import math
from dataclasses import dataclass
from typing import Callable, Optional, Tuple

import numpy as np
import torch
import torch.nn.functional as F


@dataclass
class TileConfig:
    tile_size: Optional[int] = None  # None -> estimate from free memory
    overlap: int = 16
    min_tile: int = 64
    use_fp16: Optional[bool] = None  # None -> decide from the device


class TileTooSmallError(RuntimeError):
    pass


def _device_supports_fp16(device: torch.device) -> bool:
    if device.type != "cuda":
        return False
    props = torch.cuda.get_device_properties(device)
    # Pascal (sm_6x) has no fast fp16 path and GTX 16xx produce NaNs in some ESRGAN models.
    return props.major >= 7 and "GTX 16" not in props.name


def estimate_tile_size(model_bytes_per_pixel: float, device: torch.device, safety: float = 0.7) -> int:
    """Largest square tile whose activations fit in the free memory of ``device``."""
    if device.type == "cuda":
        free, _total = torch.cuda.mem_get_info(device)
    else:
        # CPU: assume 4 GiB is fine to use
        free = 4 * 1024**3
    pixels = free * safety / model_bytes_per_pixel
    side = int(math.sqrt(max(pixels, 1)))
    # keep tiles a multiple of 8 for window-attention models
    return max(64, side - side % 8)


def _pad_to_multiple(x: torch.Tensor, multiple: int) -> Tuple[torch.Tensor, int, int]:
    _, _, h, w = x.shape
    pad_h = (multiple - h % multiple) % multiple
    pad_w = (multiple - w % multiple) % multiple
    if pad_h or pad_w:
        x = F.pad(x, (0, pad_w, 0, pad_h), mode="reflect")
    return x, pad_h, pad_w


@torch.inference_mode()
def _upscale_tiles(
    model: Callable[[torch.Tensor], torch.Tensor],
    img: torch.Tensor,
    scale: int,
    tile: int,
    overlap: int,
) -> torch.Tensor:
    b, c, h, w = img.shape
    out = img.new_zeros((b, c, h * scale, w * scale))
    weight = img.new_zeros((b, 1, h * scale, w * scale))
    stride = max(tile - overlap, 1)
    ys = list(range(0, max(h - tile, 0), stride)) + [max(h - tile, 0)]
    xs = list(range(0, max(w - tile, 0), stride)) + [max(w - tile, 0)]
    for y in ys:
        for x in xs:
            patch = img[:, :, y:y + tile, x:x + tile]
            res = model(patch)
            out[:, :, y * scale:(y + tile) * scale, x * scale:(x + tile) * scale] += res
            weight[:, :, y * scale:(y + tile) * scale, x * scale:(x + tile) * scale] += 1
    return out / weight


def auto_split_upscale(
    model: torch.nn.Module,
    img: np.ndarray,
    scale: int,
    device: Optional[torch.device] = None,
    cfg: Optional[TileConfig] = None,
    bytes_per_pixel: float = 48_000.0,
    progress: Optional[Callable[[str], None]] = None,
) -> np.ndarray:
    """Upscale an HWC float32 image in [0, 1] and return an HWC float32 image."""
    cfg = cfg or TileConfig()
    if device is None:
        device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

    use_fp16 = cfg.use_fp16 if cfg.use_fp16 is not None else _device_supports_fp16(device)
    dtype = torch.float16 if use_fp16 else torch.float32
    model = model.to(device=device, dtype=dtype).eval()

    x = torch.from_numpy(np.ascontiguousarray(img.transpose(2, 0, 1))).unsqueeze(0)
    x = x.to(device=device, dtype=dtype, non_blocking=True)
    x, pad_h, pad_w = _pad_to_multiple(x, 8)

    tile = cfg.tile_size or estimate_tile_size(bytes_per_pixel * (2 if dtype == torch.float32 else 1), device)
    while True:
        try:
            if progress:
                progress(f"trying tile size {tile}")
            out = _upscale_tiles(model, x, scale, tile, cfg.overlap)
            break
        except torch.cuda.OutOfMemoryError:
            del_tile = tile
            tile = (tile // 2) - (tile // 2) % 8
            gc.collect()
            torch.cuda.empty_cache()
            if tile < cfg.min_tile:
                raise TileTooSmallError(f"out of memory even with {del_tile}px tiles")

    if pad_h or pad_w:
        out = out[:, :, : out.shape[2] - pad_h * scale, : out.shape[3] - pad_w * scale]
    out = out.float().clamp_(0, 1).squeeze(0).cpu().numpy().transpose(1, 2, 0)
    return out


def benchmark_tile_sizes(model, scale, device=None, sizes=(128, 256, 384, 512), reps=3):
    """Print the throughput of a few tile sizes (megapixels of output per second)."""
    if device is None:
        device = torch.device("cuda:0")
    model = model.to(device).eval()
    results = {}
    for s in sizes:
        x = torch.rand(1, 3, s, s, device=device)
        torch.cuda.synchronize(device)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch.inference_mode():
            model(x)  # warm-up, also lets cudnn.benchmark pick kernels
            start.record()
            for _ in range(reps):
                model(x)
            end.record()
        torch.cuda.synchronize(device)  # wait for the timed loop
        ms = start.elapsed_time(end) / reps
        mpix = (s * scale) ** 2 / 1e6
        results[s] = mpix / (ms / 1000.0)
        print(f"tile {s:4d}: {ms:8.2f} ms  {results[s]:6.2f} MP/s")
        del x
        torch.cuda.empty_cache()  # release the tile's activations
    return results
