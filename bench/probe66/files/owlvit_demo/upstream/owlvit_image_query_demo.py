"""OWL-ViT / OWLv2 zero-shot and image-conditioned detection demo (HF transformers).

Usage:
    python owlvit_image_query_demo.py --image street.jpg --queries "a bus" "a traffic light"
    python owlvit_image_query_demo.py --image street.jpg --query-image bus_crop.jpg --v2
"""
import argparse
import os

import numpy as np
import torch
from PIL import Image, ImageDraw
from transformers import Owlv2ForObjectDetection, Owlv2Processor, OwlViTForObjectDetection, OwlViTProcessor

MODEL_IDS = {
    "v1": "google/owlvit-base-patch32",
    "v1-large": "google/owlvit-large-patch14",
    "v2": "google/owlv2-base-patch16-ensemble",
    "v2-large": "google/owlv2-large-patch14-ensemble",
}


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--image", required=True)
    p.add_argument("--queries", nargs="*", default=[])
    p.add_argument("--query-image", default=None)
    p.add_argument("--v2", action="store_true")
    p.add_argument("--large", action="store_true")
    p.add_argument("--threshold", type=float, default=0.1)
    p.add_argument("--nms", type=float, default=0.3)
    p.add_argument("--fp16", action="store_true", help="run the ViT in half precision on the GPU")
    p.add_argument("--gpu", type=int, default=0)
    p.add_argument("--out", default="owl_out.jpg")
    return p.parse_args()


def load(args):
    key = ("v2" if args.v2 else "v1") + ("-large" if args.large else "")
    model_id = MODEL_IDS[key]
    if args.v2:
        processor = Owlv2Processor.from_pretrained(model_id)
        model = Owlv2ForObjectDetection.from_pretrained(model_id)
    else:
        processor = OwlViTProcessor.from_pretrained(model_id)
        model = OwlViTForObjectDetection.from_pretrained(model_id)
    return processor, model.eval()


def draw(image, boxes, scores, labels, names):
    canvas = image.copy()
    d = ImageDraw.Draw(canvas)
    for box, score, label in zip(boxes, scores, labels):
        x0, y0, x1, y1 = [float(v) for v in box]
        d.rectangle([x0, y0, x1, y1], outline=(255, 64, 0), width=3)
        d.text((x0 + 3, y0 + 3), f"{names[label]} {score:.2f}", fill=(255, 255, 255))
    return canvas


def main():
    args = parse_args()
    if torch.cuda.is_available():
        device = torch.device(f"cuda:{args.gpu}")
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    dtype = torch.float16 if (args.fp16 and device.type == "cuda") else torch.float32

    processor, model = load(args)
    model = model.to(device=device, dtype=dtype)

    image = Image.open(args.image).convert("RGB")
    # OWLv2 pads to a square; boxes are relative to the padded image
    size = max(image.size)
    target_sizes = torch.tensor([[size, size]] if args.v2 else [image.size[::-1]], device=device)

    with torch.no_grad(), torch.cuda.amp.autocast(enabled=args.fp16):
        if args.query_image is None:
            inputs = processor(text=[args.queries], images=image, return_tensors="pt").to(device)
            inputs["pixel_values"] = inputs["pixel_values"].to(dtype)
            outputs = model(**inputs)
            results = processor.post_process_object_detection(
                outputs=outputs, threshold=args.threshold, target_sizes=target_sizes
            )[0]
            names = args.queries
        else:
            query = Image.open(args.query_image).convert("RGB")
            inputs = processor(images=image, query_images=query, return_tensors="pt").to(device)
            inputs["pixel_values"] = inputs["pixel_values"].to(dtype)
            inputs["query_pixel_values"] = inputs["query_pixel_values"].to(dtype)
            outputs = model.image_guided_detection(**inputs)
            results = processor.post_process_image_guided_detection(
                outputs=outputs, threshold=args.threshold, nms_threshold=args.nms, target_sizes=target_sizes
            )[0]
            results["labels"] = torch.zeros_like(results["scores"], dtype=torch.long)
            names = [os.path.basename(args.query_image)]

    torch.cuda.synchronize()
    boxes = results["boxes"].float().cpu().numpy()
    scores = results["scores"].float().cpu().numpy()
    labels = results["labels"].cpu().numpy().astype(np.int64)
    print(f"{len(boxes)} detections above {args.threshold}")
    for b, s, l in zip(boxes, scores, labels):
        print(f"  {names[l]:<24s} {s:.3f} {np.round(b, 1).tolist()}")
    draw(image, boxes, scores, labels, names).save(args.out)
    if torch.cuda.is_available():  # memory report
        print(f"peak memory: {torch.cuda.max_memory_allocated(device) / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
