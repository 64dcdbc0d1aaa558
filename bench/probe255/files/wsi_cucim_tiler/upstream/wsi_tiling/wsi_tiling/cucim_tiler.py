"""
GPU-accelerated tiling of whole-slide images with cuCIM.

Pipeline per slide
  1. read a low-resolution thumbnail and build a tissue mask (Otsu on saturation),
     on the GPU with cucim.skimage when CuPy is available, else with scikit-image;
  2. keep the grid tiles whose tissue fraction exceeds --min_tissue;
  3. read the kept tiles in batches (cuCIM's multi-threaded reader, optional nvJPEG decode),
  4. Macenko stain-normalise them in torch and write uint8 tiles + coords to one .h5 per slide.

Example
    python -m wsi_tiling.cucim_tiler --slides /data/camelyon16/*.tif --out /data/c16_tiles \
        --tile 256 --level 0 --batch 128 --device cuda:0
"""
import argparse
import glob
import logging
import math
import os
import time

import h5py
import numpy as np
import torch
from cucim import CuImage
from skimage import morphology
from skimage.color import rgb2hsv
from skimage.filters import threshold_otsu

try:
    import cupy as cp
    from cucim.skimage import morphology as cu_morphology
    from cucim.skimage.color import rgb2hsv as cu_rgb2hsv
    from cucim.skimage.filters import threshold_otsu as cu_threshold_otsu
    HAS_CUPY = True
except ImportError:  # no CuPy (pip install wsi-tiling without the [gpu] extra)
    cp = None
    HAS_CUPY = False

logger = logging.getLogger("wsi_tiling")

# reference H&E stain matrix / max concentrations (Macenko et al. 2009, as used in staintools)
HE_REF = torch.tensor([[0.5626, 0.2159], [0.7201, 0.8012], [0.4062, 0.5581]])
MAX_C_REF = torch.tensor([1.9705, 1.0308])


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--slides", nargs="+", required=True, help="slide paths or globs")
    p.add_argument("--out", required=True)
    p.add_argument("--tile", type=int, default=256)
    p.add_argument("--level", type=int, default=0)
    p.add_argument("--thumb_level", type=int, default=-1, help="pyramid level for the tissue mask (-1: lowest)")
    p.add_argument("--min_tissue", type=float, default=0.5)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--num_workers", type=int, default=8, help="cuCIM reader threads")
    p.add_argument("--decode_device", default="cuda", choices=["cpu", "cuda"],
                   help="where cuCIM decodes JPEG-compressed tiles ('cuda' = nvJPEG)")
    p.add_argument("--device", default="cuda:0", help="torch device for stain normalisation")
    p.add_argument("--no_norm", action="store_true", help="skip Macenko normalisation")
    return p.parse_args()


# ----------------------------------------------------------------------------- tissue mask
def tissue_mask(thumb: np.ndarray, use_gpu: bool) -> np.ndarray:
    """Boolean mask of tissue pixels for an RGB uint8 thumbnail."""
    if use_gpu:
        img = cp.asarray(thumb)
        sat = cu_rgb2hsv(img)[..., 1]
        mask = sat > cu_threshold_otsu(sat)
        mask = cu_morphology.remove_small_objects(mask, min_size=64)
        mask = cu_morphology.binary_closing(mask, cu_morphology.disk(3))
        return cp.asnumpy(mask)
    sat = rgb2hsv(thumb)[..., 1]
    mask = sat > threshold_otsu(sat)
    mask = morphology.remove_small_objects(mask, min_size=64)
    return morphology.binary_closing(mask, morphology.disk(3))


def grid_coords(slide: CuImage, mask: np.ndarray, level: int, tile: int, min_tissue: float):
    """Top-left level-0 coordinates of grid tiles (at `level`) whose tissue fraction >= min_tissue."""
    W, H = slide.resolutions["level_dimensions"][level]
    ds_level = slide.resolutions["level_downsamples"][level]
    mh, mw = mask.shape
    sx, sy = mw / W, mh / H
    coords = []
    for y in range(0, H - tile + 1, tile):
        for x in range(0, W - tile + 1, tile):
            m = mask[int(y * sy): max(int((y + tile) * sy), int(y * sy) + 1),
                     int(x * sx): max(int((x + tile) * sx), int(x * sx) + 1)]
            if m.size and m.mean() >= min_tissue:
                coords.append((int(x * ds_level), int(y * ds_level)))
    return np.asarray(coords, dtype=np.int64).reshape(-1, 2)


# ----------------------------------------------------------------------------- stain normalisation
def _od(tiles: torch.Tensor, Io: float = 240.0) -> torch.Tensor:
    return -torch.log((tiles.float() + 1.0) / Io)


def macenko_normalize(tiles: torch.Tensor, alpha: float = 1.0, beta: float = 0.15, Io: float = 240.0) -> torch.Tensor:
    """Batch Macenko normalisation. tiles: [B, H, W, 3] uint8 on any device -> same shape/dtype."""
    B, H, W, _ = tiles.shape
    od = _od(tiles, Io).reshape(B, -1, 3)
    out = torch.empty_like(tiles)
    he_ref, maxc_ref = HE_REF.to(tiles.device), MAX_C_REF.to(tiles.device)
    for b in range(B):
        od_b = od[b]
        keep = (od_b > beta).all(dim=1)
        od_hat = od_b[keep]
        if od_hat.shape[0] < 100:  # (almost) no stain: leave tile untouched
            out[b] = tiles[b]
            continue
        cov = torch.cov(od_hat.T)
        _, eigvecs = torch.linalg.eigh(cov)
        plane = eigvecs[:, 1:3]
        proj = od_hat @ plane
        phi = torch.atan2(proj[:, 1], proj[:, 0])
        min_phi = torch.quantile(phi, alpha / 100.0)
        max_phi = torch.quantile(phi, 1 - alpha / 100.0)
        v1 = plane @ torch.stack([torch.cos(min_phi), torch.sin(min_phi)])
        v2 = plane @ torch.stack([torch.cos(max_phi), torch.sin(max_phi)])
        he = torch.stack([v1, v2], dim=1) if v1[0] > v2[0] else torch.stack([v2, v1], dim=1)
        conc = torch.linalg.lstsq(he, od_b.T).solution  # [2, H*W]
        max_c = torch.quantile(conc, 0.99, dim=1)
        conc = conc * (maxc_ref / max_c).unsqueeze(1)
        img = Io * torch.exp(-(he_ref @ conc))
        out[b] = img.T.reshape(H, W, 3).clamp(0, 255).to(torch.uint8)
    return out


# ----------------------------------------------------------------------------- main loop
def _sync(device: torch.device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def tile_slide(path: str, args, device: torch.device):
    slide_id = os.path.splitext(os.path.basename(path))[0]
    out_path = os.path.join(args.out, slide_id + ".h5")
    if os.path.isfile(out_path):
        logger.info("%s exists, skipping", out_path)
        return

    slide = CuImage(path)
    n_levels = slide.resolutions["level_count"]
    thumb_level = n_levels - 1 if args.thumb_level < 0 else args.thumb_level
    thumb = np.asarray(slide.read_region(location=(0, 0), size=slide.resolutions["level_dimensions"][thumb_level],
                                         level=thumb_level))[..., :3]
    use_gpu_mask = HAS_CUPY and torch.cuda.is_available()
    mask = tissue_mask(thumb, use_gpu=use_gpu_mask)
    coords = grid_coords(slide, mask, args.level, args.tile, args.min_tissue)
    logger.info("%s: %d tissue tiles at level %d", slide_id, len(coords), args.level)
    if len(coords) == 0:
        return

    t0 = time.time()
    with h5py.File(out_path, "w") as f:
        dset = f.create_dataset("tiles", shape=(len(coords), args.tile, args.tile, 3), dtype=np.uint8,
                                chunks=(1, args.tile, args.tile, 3), compression="lzf")
        f.create_dataset("coords", data=coords)
        f["coords"].attrs["level"] = args.level
        f["coords"].attrs["tile_size"] = args.tile
        for start in range(0, len(coords), args.batch):
            locs = [tuple(c) for c in coords[start:start + args.batch]]
            region = slide.read_region(locs, (args.tile, args.tile), args.level,
                                       num_workers=args.num_workers, device=args.decode_device)
            if args.decode_device == "cuda":
                batch = torch.from_dlpack(cp.asarray(region))
            else:
                batch = torch.from_numpy(np.asarray(region))
            batch = batch[..., :3].reshape(len(locs), args.tile, args.tile, 3).to(device, non_blocking=True)
            if not args.no_norm:
                batch = macenko_normalize(batch)
            dset[start:start + len(locs)] = batch.cpu().numpy()
    _sync(device)
    dt = time.time() - t0
    logger.info("%s: wrote %d tiles in %.1fs (%.0f tiles/s)", slide_id, len(coords), dt, len(coords) / max(dt, 1e-6))


def main():
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.backends.cudnn.benchmark = True
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda requested but no CUDA device is visible")

    paths = sorted({p for pattern in args.slides for p in glob.glob(pattern)})
    logger.info("tiling %d slides -> %s (device=%s, decode=%s)", len(paths), args.out, device, args.decode_device)
    for path in paths:
        try:
            tile_slide(path, args, device)
        except Exception as e:  # keep going; one corrupt slide should not kill a 400-slide run
            logger.exception("failed on %s: %s", path, e)


if __name__ == "__main__":
    main()
