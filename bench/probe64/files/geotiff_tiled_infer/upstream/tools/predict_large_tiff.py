#!/usr/bin/env python
"""Sliding-window inference over a large GeoTIFF (e.g. a full Sentinel-2 or NAIP scene).

Reads the scene window by window with rasterio, batches the tiles onto the GPU, blends the
overlapping logits with a cosine window and writes a tiled, compressed GeoTIFF of class ids.

    python tools/predict_large_tiff.py --input scene.tif --output pred.tif \
        --checkpoint unet_landcover.ckpt --tile 1024 --overlap 128 --batch-size 8
"""
import argparse
import math
import time

import numpy as np
import rasterio
import torch
import torch.nn.functional as F
from rasterio.windows import Window
from tqdm import tqdm

from torchgeo.trainers import SemanticSegmentationTask


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--input", required=True)
    p.add_argument("--output", required=True)
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--tile", type=int, default=1024)
    p.add_argument("--overlap", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--bands", type=int, nargs="+", default=[1, 2, 3, 4])
    p.add_argument("--fp16", action="store_true", help="run the network under autocast")
    p.add_argument("--gpu", type=int, default=0)
    p.add_argument("--compile", action="store_true")
    return p.parse_args()


def cosine_window(size: int) -> torch.Tensor:
    ramp = torch.hann_window(size, periodic=False)
    w = torch.outer(ramp, ramp)
    return w.clamp_min(1e-3)


def iter_windows(height, width, tile, stride):
    rows = list(range(0, max(height - tile, 0) + 1, stride))
    cols = list(range(0, max(width - tile, 0) + 1, stride))
    if rows[-1] + tile < height:
        rows.append(height - tile)
    if cols[-1] + tile < width:
        cols.append(width - tile)
    for r in rows:
        for c in cols:
            yield Window(c, r, min(tile, width - c), min(tile, height - r))


def normalise(arr: np.ndarray, nodata) -> np.ndarray:
    arr = arr.astype(np.float32)
    if nodata is not None:
        arr[arr == nodata] = 0
    # Sentinel-2 L2A reflectance is scaled by 10000
    return np.clip(arr / 10000.0, 0.0, 1.0)


def load_model(path, device):
    task = SemanticSegmentationTask.load_from_checkpoint(path, map_location="cpu")
    model = task.model.eval()
    model = model.cuda(device)
    return model


def main():
    args = parse_args()
    torch.backends.cudnn.benchmark = True
    device = torch.device(f"cuda:{args.gpu}")
    torch.cuda.set_device(device)

    model = load_model(args.checkpoint, args.gpu)
    if args.compile:
        model = torch.compile(model, mode="max-autotune")

    stride = args.tile - args.overlap
    weight = cosine_window(args.tile).to(device)

    with rasterio.open(args.input) as src:
        profile = src.profile.copy()
        H, W = src.height, src.width
        n_classes = model.segmentation_head[0].out_channels
        logits_sum = torch.zeros((n_classes, H, W), dtype=torch.float32, pin_memory=True)
        weight_sum = torch.zeros((H, W), dtype=torch.float32)

        windows = list(iter_windows(H, W, args.tile, stride))
        n_batches = math.ceil(len(windows) / args.batch_size)
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()

        for b in tqdm(range(n_batches), desc="tiles"):
            batch_windows = windows[b * args.batch_size:(b + 1) * args.batch_size]
            tiles = []
            for win in batch_windows:
                arr = src.read(args.bands, window=win, boundless=True, fill_value=0)
                arr = normalise(arr, src.nodata)
                t = torch.from_numpy(arr)
                pad_h, pad_w = args.tile - t.shape[1], args.tile - t.shape[2]
                if pad_h or pad_w:
                    t = F.pad(t, (0, pad_w, 0, pad_h), mode="reflect")
                tiles.append(t)
            x = torch.stack(tiles).pin_memory().cuda(non_blocking=True)

            with torch.no_grad(), torch.cuda.amp.autocast(enabled=args.fp16):
                out = model(x).float().softmax(dim=1)
            out = out * weight

            out = out.cpu()
            for k, win in enumerate(batch_windows):
                r, c = win.row_off, win.col_off
                h, w = win.height, win.width
                logits_sum[:, r:r + h, c:c + w] += out[k, :, :h, :w]
                weight_sum[r:r + h, c:c + w] += weight[:h, :w].cpu()

        end.record()
        torch.cuda.synchronize()
        print(f"inference: {start.elapsed_time(end) / 1000:.1f}s for {len(windows)} tiles")
        print(f"peak memory: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")

        pred = (logits_sum / weight_sum.clamp_min(1e-6)).argmax(dim=0).numpy().astype(np.uint8)

    profile.update(
        driver="GTiff", count=1, dtype="uint8", nodata=255,
        tiled=True, blockxsize=512, blockysize=512, compress="deflate",
    )
    with rasterio.open(args.output, "w", **profile) as dst:
        dst.write(pred, 1)
    print("wrote", args.output)


if __name__ == "__main__":
    t0 = time.time()
    main()
    print(f"total: {time.time() - t0:.1f}s")
