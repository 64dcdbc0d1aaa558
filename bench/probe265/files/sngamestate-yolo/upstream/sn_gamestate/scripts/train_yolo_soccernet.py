"""Fine-tune the YOLOv8 player/ball/referee detector on SoccerNet-GSR (and SoccerNet-Tracking) frames.

    python scripts/train_yolo_soccernet.py --data data/yolo/soccernet_gsr.yaml --model yolov8x6.pt \
        --epochs 50 --imgsz 1280 --batch 8 --gpus 0,1

Writes the weights to runs/detect/<name>/weights/best.pt; point
`modules.bbox_detector.cfg.path_to_checkpoint` in soccernet.yaml at it afterwards.
"""
import argparse
import json
import os
import shutil
from pathlib import Path

import cv2
import numpy as np
import pandas as pd
import torch
from tqdm import tqdm
from ultralytics import YOLO

CLASSES = {"player": 0, "goalkeeper": 1, "referee": 2, "ball": 3}


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", type=str, default="data/yolo/soccernet_gsr.yaml")
    p.add_argument("--gsr_root", type=str, default="data/SoccerNetGS")
    p.add_argument("--model", type=str, default="yolov8x6.pt")
    p.add_argument("--epochs", type=int, default=50)
    p.add_argument("--imgsz", type=int, default=1280)
    p.add_argument("--batch", type=int, default=8, help="batch size per GPU")
    p.add_argument("--gpus", type=str, default="0", help="comma separated GPU ids, e.g. 0,1,2,3")
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--name", type=str, default="yolov8x6_gsr")
    p.add_argument("--convert", action="store_true", help="convert GSR json labels to YOLO txt first")
    p.add_argument("--val_video", type=str, default=None, help="run a qualitative prediction on this clip")
    return p.parse_args()


def convert_gsr_to_yolo(gsr_root, out_root, splits=("train", "valid")):
    """SoccerNet-GSR Labels-GameState.json -> one YOLO txt per frame (normalised cx, cy, w, h)."""
    out_root = Path(out_root)
    for split in splits:
        (out_root / "images" / split).mkdir(parents=True, exist_ok=True)
        (out_root / "labels" / split).mkdir(parents=True, exist_ok=True)
        seqs = sorted((Path(gsr_root) / split).glob("SNGS-*"))
        for seq in tqdm(seqs, desc=f"convert {split}"):
            with open(seq / "Labels-GameState.json") as f:
                gs = json.load(f)
            images = {img["image_id"]: img for img in gs["images"]}
            per_image = {}
            for ann in gs["annotations"]:
                if ann.get("supercategory") != "object":
                    continue
                role = ann["attributes"]["role"]
                if role not in CLASSES:
                    continue
                per_image.setdefault(ann["image_id"], []).append((CLASSES[role], ann["bbox_image"]))
            for image_id, img in images.items():
                W, H = img["width"], img["height"]
                src = seq / "img1" / img["file_name"]
                stem = f"{seq.name}_{Path(img['file_name']).stem}"
                dst = out_root / "images" / split / f"{stem}.jpg"
                if not dst.exists():
                    os.symlink(src.resolve(), dst)
                lines = []
                for cls, bb in per_image.get(image_id, []):
                    cx = (bb["x"] + bb["w"] / 2) / W
                    cy = (bb["y"] + bb["h"] / 2) / H
                    lines.append(f"{cls} {cx:.6f} {cy:.6f} {bb['w'] / W:.6f} {bb['h'] / H:.6f}")
                with open(out_root / "labels" / split / f"{stem}.txt", "w") as f:
                    f.write("\n".join(lines))


def main():
    args = parse_args()
    if args.convert:
        convert_gsr_to_yolo(args.gsr_root, Path(args.data).parent)

    gpu_ids = [int(g) for g in args.gpus.split(",") if g != ""]
    n_gpus = len(gpu_ids)
    assert n_gpus <= torch.cuda.device_count(), \
        f"asked for {n_gpus} GPUs, only {torch.cuda.device_count()} visible"

    model = YOLO(args.model)
    # ultralytics launches its own DDP workers (torch.distributed.run) when several devices are given
    results = model.train(
        data=args.data,
        epochs=args.epochs,
        imgsz=args.imgsz,
        batch=args.batch * n_gpus,
        device=gpu_ids if n_gpus > 1 else gpu_ids[0],
        workers=args.workers,
        name=args.name,
        amp=True,
        cos_lr=True,
        close_mosaic=10,
        mosaic=1.0,
        degrees=0.0,
        fliplr=0.5,
        plots=True,
    )
    best = Path(results.save_dir) / "weights" / "best.pt"
    print(f"best weights: {best}")

    metrics = YOLO(best).val(data=args.data, imgsz=args.imgsz, batch=args.batch, device=0, half=True)
    print(f"mAP50-95 {metrics.box.map:.4f}  mAP50 {metrics.box.map50:.4f}")
    for name, cls in CLASSES.items():
        print(f"  {name:<11} AP50-95 {metrics.box.maps[cls]:.4f}")

    if args.val_video is not None:
        det = YOLO(best)
        cap = cv2.VideoCapture(args.val_video)
        fps = cap.get(cv2.CAP_PROP_FPS)
        W = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH))
        H = int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
        out = cv2.VideoWriter(str(Path(results.save_dir) / "val_video.mp4"),
                              cv2.VideoWriter_fourcc(*"mp4v"), fps, (W, H))
        while True:
            ok, frame = cap.read()
            if not ok:
                break
            pred = det.predict(frame, imgsz=args.imgsz, conf=0.25, device=0, half=True, verbose=False)[0]
            out.write(pred.plot())
        cap.release()
        out.release()


if __name__ == "__main__":
    main()
