#!/usr/bin/env python
"""Batch inference with a fine-tuned TrOCR checkpoint.

    python inference.py --model runs/trocr-base-iam/best --images samples/lines --half
"""
import argparse
import csv
import os
import time

import torch
from torch.utils.data import DataLoader
from transformers import TrOCRProcessor, VisionEncoderDecoderModel

from src.dataset import LineImageFolder, collate_inference

DEVICE = "cuda:0" if torch.cuda.is_available() else "cpu"


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True, help="checkpoint directory or hub id")
    ap.add_argument("--processor", default=None, help="defaults to --model")
    ap.add_argument("--images", required=True, help="folder with one text line per image")
    ap.add_argument("--out", default="predictions.tsv")
    ap.add_argument("--batch_size", type=int, default=32)
    ap.add_argument("--num_beams", type=int, default=4)
    ap.add_argument("--max_length", type=int, default=128)
    ap.add_argument("--half", action="store_true", help="run the model in fp16 on the GPU")
    ap.add_argument("--benchmark", action="store_true", help="print per-batch GPU latency")
    return ap.parse_args()


def load(args):
    processor = TrOCRProcessor.from_pretrained(args.processor or args.model)
    model = VisionEncoderDecoderModel.from_pretrained(args.model)
    model.eval()
    model.to(DEVICE)
    if args.half and DEVICE != "cpu":
        model.half()
    return processor, model


@torch.inference_mode()
def run(args, processor, model):
    ds = LineImageFolder(args.images, processor)
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=False, num_workers=2,
                        collate_fn=collate_inference)
    rows = []
    latencies = []
    for batch in loader:
        pixel_values = batch["pixel_values"].to(DEVICE)
        if args.half and DEVICE != "cpu":
            pixel_values = pixel_values.half()
        if args.benchmark:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
        generated = model.generate(pixel_values, num_beams=args.num_beams,
                                   max_length=args.max_length)
        if args.benchmark:
            end.record()
            torch.cuda.synchronize()
            latencies.append(start.elapsed_time(end) / len(batch["path"]))
        texts = processor.batch_decode(generated, skip_special_tokens=True)
        rows.extend(zip(batch["path"], texts))
    return rows, latencies


def main():
    args = parse_args()
    t0 = time.time()
    processor, model = load(args)
    print(f"loaded {args.model} on {DEVICE} in {time.time() - t0:.1f}s")
    rows, latencies = run(args, processor, model)
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f, delimiter="\t")
        for path, text in rows:
            w.writerow([os.path.basename(path), text])
    print(f"wrote {len(rows)} predictions to {args.out}")
    if latencies:
        latencies.sort()
        print(f"latency per line: median {latencies[len(latencies) // 2]:.2f} ms, "
              f"p90 {latencies[int(len(latencies) * 0.9)]:.2f} ms")


if __name__ == "__main__":
    main()
