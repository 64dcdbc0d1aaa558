"""Batch inference / latency benchmark for a checkpoint produced by ``imagenet.py``.

Usage::

    CUDA_VISIBLE_DEVICES=0 python predict_imagenet.py --ckpt lightning_logs/version_3/checkpoints/best.ckpt \
        --images ./samples --amp

    python predict_imagenet.py --ckpt best.ckpt --benchmark --batch-size 64
"""
import argparse
import json
import os
from pathlib import Path
from typing import List

import torch
import torchvision.transforms as T
from PIL import Image

from imagenet import ImageNetLightningModel

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".webp")


def get_device(prefer: str) -> torch.device:
    """Pick the accelerator for this process (one GPU per process when launched with torchrun)."""
    if prefer == "cuda" and torch.cuda.is_available():
        return torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
    return torch.device("cpu")


def load_model(ckpt_path: str, device: torch.device) -> ImageNetLightningModel:
    # checkpoints were written from rank 0 of a DDP run, tensors are tagged with cuda:0
    model = ImageNetLightningModel.load_from_checkpoint(ckpt_path, map_location="cuda:0", data_path="unused")
    model.eval()
    model.freeze()
    return model.to(device)


def list_images(root: str) -> List[Path]:
    return sorted(p for p in Path(root).rglob("*") if p.suffix.lower() in IMG_EXTENSIONS)


@torch.inference_mode()
def predict(model, paths: List[Path], batch_size: int, amp: bool, topk: int = 5):
    tfm = T.Compose([
        T.Resize(256),
        T.CenterCrop(224),
        T.ToTensor(),
        T.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
    ])
    results = []
    for i in range(0, len(paths), batch_size):
        chunk = paths[i : i + batch_size]
        batch = torch.stack([tfm(Image.open(p).convert("RGB")) for p in chunk]).pin_memory()
        batch = batch.cuda(non_blocking=True)
        with torch.cuda.amp.autocast(enabled=amp):
            logits = model(batch)
        probs = logits.float().softmax(dim=-1).cpu()
        top_p, top_i = probs.topk(topk, dim=-1)
        for path, p, idx in zip(chunk, top_p.tolist(), top_i.tolist()):
            results.append({"image": str(path), "top_classes": idx, "top_probs": [round(x, 4) for x in p]})
    return results


@torch.inference_mode()
def benchmark(model, device: torch.device, batch_size: int, iters: int = 50) -> float:
    x = torch.randn(batch_size, 3, 224, 224, device=device)
    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    for _ in range(5):
        model(x)
    torch.cuda.synchronize()  # drain warmup
    start_evt.record()
    for _ in range(iters):
        model(x)
    end_evt.record()
    torch.cuda.synchronize()
    ms = start_evt.elapsed_time(end_evt) / iters
    print(f"batch={batch_size}: {ms:.2f} ms/iter, {batch_size * 1000 / ms:.1f} img/s")
    return ms


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ckpt", required=True)
    parser.add_argument("--images", default=None, help="folder with images to classify")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--amp", action="store_true", help="run the forward pass under fp16 autocast")
    parser.add_argument("--benchmark", action="store_true")
    parser.add_argument("--out", default="predictions.json")
    args = parser.parse_args()

    device = get_device(args.device)
    model = load_model(args.ckpt, device)

    if args.benchmark:
        benchmark(model, device, args.batch_size)
        return

    paths = list_images(args.images)
    print(f"Classifying {len(paths)} images on {device}")
    results = predict(model, paths, args.batch_size, args.amp)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
    print(f"Wrote {len(results)} predictions to {args.out}")


if __name__ == "__main__":
    main()
