"""HuBMAP inference kernel: sliding-window prediction over whole-slide TIFFs.

Reads each test image with rasterio window by window, predicts 1024px tiles (downscaled x4)
with a 5-fold ensemble and 8-way dihedral TTA, stitches the probability map on the device
and writes RLE-encoded masks.
"""
import gc
import glob
import os
import sys

import cv2
import numpy as np
import pandas as pd
import rasterio
from rasterio.windows import Window
import torch
import torch.nn.functional as F

sys.path.append("../input/segmentation-models-pytorch-offline/segmentation_models.pytorch-master")
import segmentation_models_pytorch as smp  # noqa: E402

DATA = "../input/hubmap-kidney-segmentation/test"
MODELS = sorted(glob.glob("../input/hubmap-unet-b5-5fold/fold*/best.pth"))
TILE = 1024
REDUCE = 4
OVERLAP = 256
THR = 0.4
BATCH = 8
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
identity = rasterio.Affine(1, 0, 0, 0, 1, 0)
MEAN = np.array([0.65459856, 0.48386562, 0.69428385])
STD = np.array([0.15167958, 0.23584107, 0.13146145])


def make_grid(shape, window=TILE, min_overlap=OVERLAP):
    x, y = shape
    nx = x // (window - min_overlap) + 1
    x1 = np.linspace(0, x, num=nx, endpoint=False, dtype=np.int64)
    x1[-1] = x - window
    x2 = (x1 + window).clip(0, x)
    ny = y // (window - min_overlap) + 1
    y1 = np.linspace(0, y, num=ny, endpoint=False, dtype=np.int64)
    y1[-1] = y - window
    y2 = (y1 + window).clip(0, y)
    slices = np.zeros((nx, ny, 4), dtype=np.int64)
    for i in range(nx):
        for j in range(ny):
            slices[i, j] = x1[i], x2[i], y1[j], y2[j]
    return slices.reshape(nx * ny, 4)


def rle_encode_less_memory(img):
    pixels = img.T.flatten()
    pixels[0] = 0
    pixels[-1] = 0
    runs = np.where(pixels[1:] != pixels[:-1])[0] + 2
    runs[1::2] -= runs[::2]
    return " ".join(str(x) for x in runs)


def load_models():
    models = []
    for path in MODELS:
        model = smp.Unet(encoder_name="efficientnet-b5", encoder_weights=None, classes=1,
                         decoder_attention_type="scse")
        state = torch.load(path, map_location=lambda storage, loc: storage.cuda())
        model.load_state_dict(state)
        model.eval().half()
        models.append(model.to(DEVICE))
    return models


def dihedral(x, k):
    if k >= 4:
        x = x.flip(-1)
    return torch.rot90(x, k % 4, dims=(-2, -1))


def undo_dihedral(x, k):
    x = torch.rot90(x, -(k % 4), dims=(-2, -1))
    if k >= 4:
        x = x.flip(-1)
    return x


@torch.no_grad()
def predict_batch(models, batch, n_tta=8):
    probs = 0
    for model in models:
        for k in range(n_tta):
            logits = model(dihedral(batch, k))
            probs = probs + undo_dihedral(torch.sigmoid(logits.float()), k)
    return probs / (len(models) * n_tta)


def read_tile(dataset, layers, x1, x2, y1, y2):
    if dataset.count == 3:
        img = dataset.read([1, 2, 3], window=Window.from_slices((x1, x2), (y1, y2)))
    else:
        img = np.zeros((3, x2 - x1, y2 - y1), dtype=np.uint8)
        for i, layer in enumerate(layers):
            img[i] = layer.read(1, window=Window.from_slices((x1, x2), (y1, y2)))
    return np.moveaxis(img, 0, -1)


def predict_image(models, path):
    with rasterio.open(path, transform=identity, num_threads="all_cpus") as dataset:
        h, w = dataset.shape
        layers = []
        if dataset.count != 3:
            layers = [rasterio.open(sub) for _, sub in enumerate(dataset.subdatasets)]
        preds = torch.zeros((h // REDUCE, w // REDUCE), dtype=torch.float16, device="cuda")
        counts = torch.zeros_like(preds)
        slices = make_grid((h, w))
        tiles, coords = [], []
        for (x1, x2, y1, y2) in slices:
            img = read_tile(dataset, layers, x1, x2, y1, y2)
            if img.mean() < 5:  # background, skip
                continue
            img = cv2.resize(img, (TILE // REDUCE, TILE // REDUCE), interpolation=cv2.INTER_AREA)
            img = ((img / 255.0 - MEAN) / STD).transpose(2, 0, 1).astype(np.float32)
            tiles.append(img)
            coords.append((x1 // REDUCE, x2 // REDUCE, y1 // REDUCE, y2 // REDUCE))
            if len(tiles) == BATCH:
                flush(models, tiles, coords, preds, counts)
                tiles, coords = [], []
        if tiles:
            flush(models, tiles, coords, preds, counts)
        for layer in layers:
            layer.close()
    preds = preds / counts.clamp(min=1)
    mask = F.interpolate(preds[None, None].float(), size=(h, w), mode="bilinear", align_corners=False)
    mask = (mask[0, 0] > THR).to(torch.uint8).cpu().numpy()
    del preds, counts
    return mask


def flush(models, tiles, coords, preds, counts):
    batch = torch.from_numpy(np.stack(tiles)).to(DEVICE).half()
    probs = predict_batch(models, batch)
    for p, (x1, x2, y1, y2) in zip(probs, coords):
        preds[x1:x2, y1:y2] += p[0, : x2 - x1, : y2 - y1]
        counts[x1:x2, y1:y2] += 1


def main():
    models = load_models()
    names, rles = [], []
    for path in sorted(glob.glob(os.path.join(DATA, "*.tiff"))):
        idx = os.path.basename(path).split(".")[0]
        mask = predict_image(models, path)
        rles.append(rle_encode_less_memory(mask))
        names.append(idx)
        print(idx, mask.sum(), flush=True)
        del mask
        gc.collect()
        torch.cuda.empty_cache()
    pd.DataFrame({"id": names, "predicted": rles}).to_csv("submission.csv", index=False)


if __name__ == "__main__":
    main()
