"""Classify a folder (or a list) of images with a trained vision_zoo checkpoint.

    python tools/predict.py configs/resnet50_8xb32_in1k.yaml work_dirs/resnet50/best.pth img1.jpg img2.jpg --topk 5
"""
import argparse
import glob
import json
import os

import torch
from PIL import Image
from torchvision import transforms

from vision_zoo.config import Config
from vision_zoo.models import build_model

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def parse_args():
    parser = argparse.ArgumentParser(description="vision_zoo image classification demo")
    parser.add_argument("config")
    parser.add_argument("checkpoint")
    parser.add_argument("inputs", nargs="+", help="image files or directories")
    parser.add_argument("--topk", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--fp16", action="store_true", help="autocast to float16 on the GPU")
    parser.add_argument("--cpu", action="store_true", help="force CPU inference")
    parser.add_argument("--labels", default="", help="json list with class names")
    parser.add_argument("--out", default="", help="write predictions as json lines")
    return parser.parse_args()


def list_images(inputs):
    files = []
    for item in inputs:
        if os.path.isdir(item):
            for ext in ("jpg", "jpeg", "png", "JPEG"):
                files.extend(sorted(glob.glob(os.path.join(item, f"*.{ext}"))))
        else:
            files.append(item)
    return files


def build_transform(cfg):
    return transforms.Compose(
        [
            transforms.Resize(cfg.data.val_resize_size),
            transforms.CenterCrop(cfg.data.val_crop_size),
            transforms.ToTensor(),
            transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD),
        ]
    )


def main():
    args = parse_args()
    cfg = Config.fromfile(args.config)
    device = torch.device("cuda:0" if torch.cuda.is_available() and not args.cpu else "cpu")

    model = build_model(cfg.model, num_classes=cfg.model.get("num_classes", 1000))
    ckpt = torch.load(args.checkpoint, map_location="cpu")
    state = ckpt["ema"] if "ema" in ckpt else ckpt["model"]
    state = {k.replace("module.", "", 1): v for k, v in state.items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing or unexpected:
        print(f"missing keys: {missing}\nunexpected keys: {unexpected}")
    model.to(device).eval()

    names = None
    if args.labels:
        with open(args.labels) as f:
            names = json.load(f)

    tf = build_transform(cfg)
    files = list_images(args.inputs)
    results = []
    use_amp = args.fp16 and device.type == "cuda"
    for i in range(0, len(files), args.batch_size):
        chunk = files[i : i + args.batch_size]
        batch = torch.stack([tf(Image.open(p).convert("RGB")) for p in chunk])
        batch = batch.to(device, non_blocking=True)
        with torch.inference_mode(), torch.autocast(device_type=device.type, dtype=torch.float16, enabled=use_amp):
            probs = model(batch).float().softmax(dim=1)
        scores, idx = probs.topk(args.topk, dim=1)
        for path, s, k in zip(chunk, scores.cpu().tolist(), idx.cpu().tolist()):
            labels = [names[j] if names else j for j in k]
            results.append({"file": path, "topk": list(zip(labels, [round(x, 4) for x in s]))})
            print(f"{path}: " + ", ".join(f"{l} ({p:.3f})" for l, p in zip(labels, s)))

    if torch.cuda.is_available(): torch.cuda.empty_cache()

    if args.out:
        with open(args.out, "w") as f:
            for r in results:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
