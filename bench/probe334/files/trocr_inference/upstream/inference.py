"""
Batch inference with a fine-tuned TrOCR checkpoint.

    python inference.py --model runs/trocr-base-iam --images data/IAM/test/*.png \
        --batch_size 32 --half --out predictions.tsv

The model is loaded with ``device_map`` so that large checkpoints
(trocr-large-handwritten, ~560M params) are placed directly on the GPU
without first materialising them on the CPU.
"""

import argparse
import csv
import glob
import os
import time

import torch
from PIL import Image
from transformers import TrOCRProcessor, VisionEncoderDecoderModel


def chunks(seq, n):
    for i in range(0, len(seq), n):
        yield seq[i : i + n]


def load_model(path, half=False, device_index=0):
    dtype = torch.float16 if half else torch.float32
    if torch.cuda.is_available():
        model = VisionEncoderDecoderModel.from_pretrained(
            path,
            torch_dtype=dtype,
            device_map={"": f"cuda:{device_index}"},
            low_cpu_mem_usage=True,
        )
    else:
        # fp16 matmuls are not supported well on CPU
        model = VisionEncoderDecoderModel.from_pretrained(path, torch_dtype=torch.float32)
    model.eval()
    return model


@torch.inference_mode()
def recognise(model, processor, images, num_beams=4, max_new_tokens=64):
    pixel_values = processor(images=images, return_tensors="pt").pixel_values
    pixel_values = pixel_values.to(model.device, dtype=model.dtype)
    generated_ids = model.generate(
        pixel_values,
        num_beams=num_beams,
        max_new_tokens=max_new_tokens,
        early_stopping=True,
        output_scores=True,
        return_dict_in_generate=True,
    )
    texts = processor.batch_decode(generated_ids.sequences, skip_special_tokens=True)
    if num_beams > 1 and generated_ids.sequences_scores is not None:
        scores = generated_ids.sequences_scores.exp().tolist()
    else:
        scores = [float("nan")] * len(texts)
    return texts, scores


def benchmark(model, processor, image, warmup=3, iters=20):
    """Rough latency numbers for one line image."""
    for _ in range(warmup):
        recognise(model, processor, [image])
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        recognise(model, processor, [image])
    end.record()
    torch.cuda.synchronize()  # wait for the last generate() before reading the events
    return start.elapsed_time(end) / iters


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--processor", default=None)
    parser.add_argument("--images", nargs="+", required=True)
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--num_beams", type=int, default=4)
    parser.add_argument("--half", action="store_true", help="fp16 weights (GPU only)")
    parser.add_argument("--device", type=int, default=0, help="CUDA device index")
    parser.add_argument("--benchmark", action="store_true")
    parser.add_argument("--out", default="predictions.tsv")
    args = parser.parse_args()

    files = []
    for pattern in args.images:
        files.extend(sorted(glob.glob(pattern)))
    if not files:
        raise SystemExit("no images matched")

    processor = TrOCRProcessor.from_pretrained(args.processor or args.model)
    model = load_model(args.model, half=args.half, device_index=args.device)
    print(f"Loaded {args.model} on {model.device} ({model.dtype})")

    if args.benchmark:
        ms = benchmark(model, processor, Image.open(files[0]).convert("RGB"))
        print(f"latency: {ms:.1f} ms / line (beams={args.num_beams})")
        return

    t0 = time.time()
    with open(args.out, "w", newline="") as f:
        writer = csv.writer(f, delimiter="\t")
        for batch in chunks(files, args.batch_size):
            images = [Image.open(p).convert("RGB") for p in batch]
            texts, scores = recognise(model, processor, images, num_beams=args.num_beams)
            for p, t, s in zip(batch, texts, scores):
                writer.writerow([os.path.basename(p), t, f"{s:.4f}"])
    dt = time.time() - t0
    print(f"{len(files)} lines in {dt:.1f}s ({len(files) / dt:.1f} lines/s)")


if __name__ == "__main__":
    main()
