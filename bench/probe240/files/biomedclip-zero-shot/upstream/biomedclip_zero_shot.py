"""Zero-shot classification of biomedical images with BiomedCLIP (open_clip + HF hub).

Example:
    python biomedclip_zero_shot.py --image-dir example_data/biomed_image_classification_example_data \
        --out predictions.json --batch-size 32 --precision amp

The defaults reproduce the model-card example (9 labels, "this is a photo of" template,
context length 256). Runs on the first GPU if one is available.
"""
import argparse
import glob
import json
import logging
import os
import time

import numpy as np
import torch
from PIL import Image
from open_clip import create_model_from_pretrained, get_tokenizer

MODEL_ID = "hf-hub:microsoft/BiomedCLIP-PubMedBERT_256-vit_base_patch16_224"
TEMPLATE = "this is a photo of "
CONTEXT_LENGTH = 256

DEFAULT_LABELS = [
    "adenocarcinoma histopathology",
    "brain MRI",
    "covid line chart",
    "squamous cell carcinoma histopathology",
    "immunohistochemistry histopathology",
    "bone X-ray",
    "chest X-ray",
    "pie chart",
    "hematoxylin and eosin histopathology",
]

logger = logging.getLogger("biomedclip")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--image-dir", required=True, help="folder with .png/.jpg images")
    parser.add_argument("--labels", nargs="+", default=DEFAULT_LABELS)
    parser.add_argument("--template", default=TEMPLATE)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--precision", default="fp32", choices=["fp32", "fp16", "amp"],
                        help="fp16 casts the weights; amp keeps fp32 weights and autocasts the forward pass")
    parser.add_argument("--top-k", type=int, default=3)
    parser.add_argument("--out", default=None, help="write per-image predictions as json")
    parser.add_argument("--benchmark", action="store_true", help="report per-batch image-encoder latency")
    return parser.parse_args()


def load_biomedclip(device: str = "cuda", precision: str = "fp32"):
    """Load BiomedCLIP and its preprocessing transform straight onto `device`."""
    model, preprocess = create_model_from_pretrained(
        MODEL_ID,
        device=device,
        precision="fp16" if precision == "fp16" else "fp32",
    )
    tokenizer = get_tokenizer(MODEL_ID)
    model.eval()
    return model, preprocess, tokenizer


def list_images(image_dir):
    exts = ("*.png", "*.jpg", "*.jpeg", "*.tif")
    files = []
    for ext in exts:
        files.extend(glob.glob(os.path.join(image_dir, ext)))
    return sorted(files)


def batched(seq, n):
    for i in range(0, len(seq), n):
        yield seq[i:i + n]


@torch.no_grad()
def encode_labels(model, tokenizer, labels, template, device):
    texts = tokenizer([template + label for label in labels], context_length=CONTEXT_LENGTH).to(device)
    text_features = model.encode_text(texts)
    return text_features / text_features.norm(dim=-1, keepdim=True)


@torch.no_grad()
def classify(model, preprocess, text_features, files, args, device):
    results = {}
    timings = []
    amp_enabled = args.precision == "amp"
    model_dtype = next(model.parameters()).dtype
    for chunk in batched(files, args.batch_size):
        images = torch.stack([preprocess(Image.open(f).convert("RGB")) for f in chunk])
        images = images.to(device=device, dtype=model_dtype, non_blocking=True)

        if args.benchmark:
            starter, ender = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            starter.record()

        with torch.cuda.amp.autocast(enabled=amp_enabled):
            image_features = model.encode_image(images)
            image_features = image_features / image_features.norm(dim=-1, keepdim=True)
            logits = (model.logit_scale.exp() * image_features @ text_features.t().to(image_features.dtype))

        if args.benchmark:
            ender.record()
            torch.cuda.synchronize()
            timings.append(starter.elapsed_time(ender))

        probs = logits.float().softmax(dim=-1).cpu().numpy()
        for f, p in zip(chunk, probs):
            top = np.argsort(p)[::-1][:args.top_k]
            results[os.path.basename(f)] = [(args.labels[j], float(p[j])) for j in top]

    if timings:
        logger.info("image encoder: %.2f ms / batch (median over %d batches)", float(np.median(timings)), len(timings))
    return results


def main():
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    args = parse_args()

    device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
    logger.info("using device %s", device)
    if device.type == "cpu" and args.precision != "fp32":
        logger.warning("half precision requested on CPU, falling back to fp32")
        args.precision = "fp32"

    model, preprocess, tokenizer = load_biomedclip(str(device), args.precision)
    text_features = encode_labels(model, tokenizer, args.labels, args.template, device)

    files = list_images(args.image_dir)
    if not files:
        raise SystemExit(f"no images found in {args.image_dir}")
    t0 = time.time()
    results = classify(model, preprocess, text_features, files, args, device)
    logger.info("classified %d images in %.1fs", len(files), time.time() - t0)

    for name, top in results.items():
        print(name, " | ".join(f"{label}: {p:.3f}" for label, p in top))

    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
