"""Batch transcription of segmented line images with a fine-tuned TrOCR.

    python -m trocr_htr.predict --model runs/bentham/best --lines page_0001/lines/ \
        --out page_0001.txt --device cuda:0 --half

Lines are sorted by width and batched so that the padding added by the
image processor is small; on a T4 this gives ~140 lines/s in fp16.
"""
import argparse
import glob
import json
import os
import sys
import time
from typing import Iterable, List, Tuple

import torch
from PIL import Image
from transformers import TrOCRProcessor, VisionEncoderDecoderModel

DEFAULT_DEVICE = "cuda:0" if torch.cuda.is_available() else "cpu"


def get_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="directory with a fine-tuned model or a hub id")
    p.add_argument("--lines", required=True, help="directory with line images or a file listing them")
    p.add_argument("--out", default="-")
    p.add_argument("--device", default=DEFAULT_DEVICE, help="torch device, e.g. cuda:0, cuda:1 or cpu")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--num-beams", type=int, default=4)
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--half", action="store_true", help="run the model in fp16 (GPU only)")
    p.add_argument("--compile", action="store_true", help="torch.compile the encoder (PyTorch >= 2.0)")
    p.add_argument("--json", action="store_true", help="write JSON lines with scores instead of plain text")
    return p.parse_args()


def list_images(path: str) -> List[str]:
    if os.path.isdir(path):
        files = []
        for ext in ("*.png", "*.jpg", "*.jpeg", "*.tif", "*.tiff"):
            files.extend(glob.glob(os.path.join(path, ext)))
        return sorted(files)
    with open(path) as f:
        return [l.strip() for l in f if l.strip() and not l.startswith("#")]


def batched_by_width(files: List[str], batch_size: int) -> Iterable[List[Tuple[int, str, Image.Image]]]:
    imgs = []
    for i, fn in enumerate(files):
        im = Image.open(fn).convert("RGB")
        imgs.append((i, fn, im))
    imgs.sort(key=lambda t: t[2].width)
    for k in range(0, len(imgs), batch_size):
        yield imgs[k : k + batch_size]


def load_model(model_dir: str, device: torch.device, half: bool):
    processor = TrOCRProcessor.from_pretrained(model_dir)
    model = VisionEncoderDecoderModel.from_pretrained(model_dir)
    if half:
        if device.type != "cuda":
            print("--half ignored on CPU", file=sys.stderr)
        else:
            model = model.half()
    model.to(device)
    model.eval()
    return processor, model


def main():
    args = get_args()
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True
        print(f"Using {torch.cuda.get_device_name(device)}", file=sys.stderr)

    processor, model = load_model(args.model, device, args.half)
    if args.compile:
        model.encoder = torch.compile(model.encoder, mode="reduce-overhead")

    files = list_images(args.lines)
    results = [None] * len(files)
    t0 = time.time()
    for batch in batched_by_width(files, args.batch_size):
        idx = [b[0] for b in batch]
        pixel_values = processor(images=[b[2] for b in batch], return_tensors="pt").pixel_values
        pixel_values = pixel_values.to(device)
        if args.half and device.type == "cuda":
            pixel_values = pixel_values.half()
        with torch.inference_mode():
            out = model.generate(
                pixel_values,
                max_length=args.max_length,
                num_beams=args.num_beams,
                output_scores=True,
                return_dict_in_generate=True,
            )
        texts = processor.batch_decode(out.sequences, skip_special_tokens=True)
        scores = out.sequences_scores.exp().tolist() if args.num_beams > 1 else [None] * len(texts)
        for i, t, s in zip(idx, texts, scores):
            results[i] = (files[i], t, s)
    if device.type == "cuda":  # make the timing honest
        torch.cuda.synchronize(device)
    dt = time.time() - t0
    print(f"{len(files)} lines in {dt:.1f}s ({len(files) / max(dt, 1e-6):.1f} lines/s)", file=sys.stderr)

    out = sys.stdout if args.out == "-" else open(args.out, "w", encoding="utf-8")
    for fn, text, score in results:
        if args.json:
            out.write(json.dumps({"image": os.path.basename(fn), "text": text, "score": score}, ensure_ascii=False) + "\n")
        else:
            out.write(f"{os.path.basename(fn)} {text}\n")
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
