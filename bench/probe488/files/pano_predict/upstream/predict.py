"""Run the trained Mask R-CNN on a folder of panoramic radiographs and write
one JSON per image with FDI-numbered tooth polygons (+ an overlay PNG)."""
import argparse
import json
import os
from pathlib import Path

import cv2
import numpy as np
import torch
import torchvision.transforms.functional as TF
from PIL import Image

from datasets.panoramic import NUM_CLASSES, LABEL_TO_FDI
from train import get_model

PALETTE = np.random.RandomState(3).randint(0, 255, size=(NUM_CLASSES, 3))


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--weights", required=True)
    p.add_argument("--input", required=True, help="folder with .png/.jpg panoramic images")
    p.add_argument("--output", default="predictions")
    p.add_argument("--score-thr", type=float, default=0.5)
    p.add_argument("--mask-thr", type=float, default=0.5)
    p.add_argument("--half", action="store_true", help="fp16 inference (GPU only)")
    return p.parse_args()


def mask_to_polygon(mask):
    contours, _ = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return []
    c = max(contours, key=cv2.contourArea)
    return c.reshape(-1, 2).tolist()


def draw(img, result):
    overlay = np.array(img).copy()
    for m, label in zip(result["masks"], result["labels"]):
        color = PALETTE[label]
        overlay[m > 0] = (0.5 * overlay[m > 0] + 0.5 * color).astype(np.uint8)
    return overlay


def main():
    args = parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    ckpt = torch.load(args.weights, map_location=device)
    train_args = ckpt["args"]
    train_args.pretrained = False
    model = get_model(NUM_CLASSES, train_args)
    model.load_state_dict(ckpt["model"])
    model.to(device).eval()
    if args.half and device.type == "cuda":
        model.half()

    out_dir = Path(args.output)
    out_dir.mkdir(parents=True, exist_ok=True)
    files = sorted(p for p in Path(args.input).iterdir() if p.suffix.lower() in (".png", ".jpg", ".jpeg"))

    starter, ender = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    timings = []
    for f in files:
        img = Image.open(f).convert("RGB")
        x = TF.to_tensor(img).to(device)
        if next(model.parameters()).dtype == torch.float16:
            x = x.half()

        with torch.no_grad():
            starter.record()
            out = model([x])[0]
            ender.record()
            torch.cuda.synchronize()
            timings.append(starter.elapsed_time(ender))

        keep = out["scores"] >= args.score_thr
        masks = (out["masks"][keep, 0] >= args.mask_thr).cpu().numpy()
        labels = out["labels"][keep].cpu().numpy()
        scores = out["scores"][keep].cpu().numpy()

        teeth = []
        for m, l, s in zip(masks, labels, scores):
            teeth.append({"fdi": int(LABEL_TO_FDI[int(l)]), "score": float(s), "polygon": mask_to_polygon(m)})
        with open(out_dir / f"{f.stem}.json", "w") as fp:
            json.dump({"image": f.name, "teeth": teeth}, fp)
        Image.fromarray(draw(img, {"masks": masks, "labels": labels})).save(out_dir / f"{f.stem}_overlay.png")

    if timings:
        print(f"{len(files)} images, mean model time {np.mean(timings):.1f} ms on {device}")


if __name__ == "__main__":
    main()
