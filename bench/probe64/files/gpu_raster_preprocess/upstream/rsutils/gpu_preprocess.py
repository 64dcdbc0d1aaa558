"""GPU-side preprocessing of large multispectral rasters before tiling.

Percentile stretch, cloud masking from the Sentinel-2 SCL band and spectral indices are computed with
CuPy on the whole scene (much faster than numpy for 10980 x 10980 tiles), then handed to PyTorch without a
host round trip through DLPack.
"""
import logging
from typing import Dict, Optional, Sequence, Tuple

import numpy as np
import rasterio
import torch
from torch.utils.dlpack import from_dlpack, to_dlpack

try:
    import cupy as cp
    from cupyx.scipy import ndimage as cndi
except ImportError as e:  # pragma: no cover
    raise ImportError("gpu_preprocess needs cupy: pip install cupy-cuda12x") from e

log = logging.getLogger(__name__)

# Sentinel-2 L2A scene classification values treated as invalid
SCL_INVALID = (0, 1, 3, 8, 9, 10, 11)

_stretch_kernel = cp.ElementwiseKernel(
    "T x, float32 lo, float32 hi",
    "float32 y",
    "y = fminf(fmaxf(((float)x - lo) / (hi - lo + 1e-6f), 0.0f), 1.0f)",
    "percentile_stretch",
)

_ndi_kernel = cp.RawKernel(r'''
extern "C" __global__
void normalized_difference(const float* a, const float* b, float* out, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) {
        float s = a[i] + b[i];
        out[i] = s == 0.0f ? 0.0f : (a[i] - b[i]) / s;
    }
}
''', 'normalized_difference')


def read_scene(path: str, bands: Sequence[int]) -> Tuple[cp.ndarray, dict]:
    with rasterio.open(path) as src:
        arr = src.read(list(bands))
        profile = src.profile.copy()
    log.info("read %s %s", path, arr.shape)
    return cp.asarray(arr), profile


def cloud_mask(scl: cp.ndarray, dilate: int = 3) -> cp.ndarray:
    invalid = cp.isin(scl, cp.asarray(SCL_INVALID))
    if dilate > 0:
        invalid = cndi.binary_dilation(invalid, iterations=dilate)
    return ~invalid


def percentile_stretch(arr: cp.ndarray, valid: Optional[cp.ndarray] = None,
                       lo_pct: float = 2.0, hi_pct: float = 98.0) -> cp.ndarray:
    out = cp.empty(arr.shape, dtype=cp.float32)
    for b in range(arr.shape[0]):
        band = arr[b]
        samples = band[valid] if valid is not None else band.ravel()
        lo, hi = cp.percentile(samples, [lo_pct, hi_pct])
        out[b] = _stretch_kernel(band, cp.float32(lo), cp.float32(hi))
    return out


def normalized_difference(a: cp.ndarray, b: cp.ndarray) -> cp.ndarray:
    a = cp.ascontiguousarray(a, dtype=cp.float32)
    b = cp.ascontiguousarray(b, dtype=cp.float32)
    out = cp.empty_like(a)
    n = a.size
    threads = 256
    blocks = (n + threads - 1) // threads
    _ndi_kernel((blocks,), (threads,), (a, b, out, cp.int32(n)))
    return out


def add_indices(stack: cp.ndarray, band_index: Dict[str, int]) -> cp.ndarray:
    nir, red, green, swir = (stack[band_index[k]] for k in ("B08", "B04", "B03", "B11"))
    ndvi = normalized_difference(nir, red)
    ndwi = normalized_difference(green, nir)
    ndbi = normalized_difference(swir, nir)
    return cp.concatenate([stack, ndvi[None], ndwi[None], ndbi[None]], axis=0)


def to_torch(arr: cp.ndarray) -> torch.Tensor:
    """Zero-copy hand-off from CuPy to PyTorch on the same GPU."""
    return from_dlpack(arr.toDlpack())


def to_cupy(t: torch.Tensor) -> cp.ndarray:
    return cp.from_dlpack(to_dlpack(t.contiguous()))


def preprocess_scene(path: str, scl_path: Optional[str], bands: Sequence[int],
                     band_names: Sequence[str], device_id: int = 0) -> torch.Tensor:
    with cp.cuda.Device(device_id):
        stack, _ = read_scene(path, bands)
        valid = None
        if scl_path is not None:
            scl, _ = read_scene(scl_path, [1])
            valid = cloud_mask(scl[0])
        stretched = percentile_stretch(stack, valid)
        full = add_indices(stretched, {n: i for i, n in enumerate(band_names)})
        if valid is not None:
            full *= valid[None].astype(cp.float32)
        cp.cuda.Stream.null.synchronize()
        tensor = to_torch(full)
    mempool = cp.get_default_memory_pool()
    log.info("cupy pool: %.1f MiB used", mempool.used_bytes() / 2**20)
    mempool.free_all_blocks()
    return tensor


def tile_tensor(scene: torch.Tensor, tile: int = 512, stride: int = 448):
    """Yield (row, col, tile) crops of a (C, H, W) scene tensor that already lives on the GPU."""
    _, H, W = scene.shape
    for r in range(0, max(H - tile, 0) + 1, stride):
        for c in range(0, max(W - tile, 0) + 1, stride):
            yield r, c, scene[:, r:r + tile, c:c + tile]


if __name__ == "__main__":
    import argparse

    p = argparse.ArgumentParser()
    p.add_argument("scene")
    p.add_argument("--scl", default=None)
    p.add_argument("--gpu", type=int, default=0)
    a = p.parse_args()
    names = ["B02", "B03", "B04", "B08", "B11", "B12"]
    t = preprocess_scene(a.scene, a.scl, [1, 2, 3, 4, 5, 6], names, a.gpu)
    print(t.shape, t.device, float(t.mean()))
    n = sum(1 for _ in tile_tensor(t))
    print("tiles:", n)
    assert t.is_cuda
    print("memory allocated by torch:", torch.cuda.memory_allocated(a.gpu))
