"""
Zero-shot species / taxon classification of camera-trap crops with BioCLIP.

Builds text embeddings for a list of taxa (optionally at a given taxonomic rank,
using the "a photo of Kingdom Phylum Class Order Family Genus species" template
that BioCLIP was trained with) and scores every image against them.

    python scripts/zero_shot_classify.py \
        --images /data/crops/ --taxa data/serengeti_taxa.csv \
        --rank species --out preds.csv --batch-size 256

Requires a CUDA GPU for reasonable throughput (about 900 img/s on an A100 in fp16).
"""

import argparse
import csv
import logging
import os
import time

import numpy as np
import open_clip
import torch
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
logger = logging.getLogger("bioclip-zeroshot")

MODEL_STR = "hf-hub:imageomics/bioclip"
TOKENIZER_STR = "ViT-B-16"

RANKS = ("kingdom", "phylum", "class", "order", "family", "genus", "species")

OPENAI_TEMPLATES = [
    lambda c: f"a bad photo of {c}.",
    lambda c: f"a photo of many {c}.",
    lambda c: f"a photo of the hard to see {c}.",
    lambda c: f"a low resolution photo of the {c}.",
    lambda c: f"a cropped photo of the {c}.",
    lambda c: f"a photo of a {c}.",
    lambda c: f"a close-up photo of a {c}.",
    lambda c: f"a camera trap photo of a {c}.",
    lambda c: f"a bright photo of a {c}.",
    lambda c: f"a dark photo of the {c}.",
    lambda c: f"a blurry photo of a {c}.",
]


class ImageListDataset(Dataset):
    def __init__(self, root, transform):
        exts = (".jpg", ".jpeg", ".png", ".JPG", ".JPEG")
        self.paths = []
        for dirpath, _, files in os.walk(root):
            for f in sorted(files):
                if f.endswith(exts):
                    self.paths.append(os.path.join(dirpath, f))
        self.transform = transform

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, idx):
        path = self.paths[idx]
        try:
            img = Image.open(path).convert("RGB")
        except OSError:
            logger.warning("Could not read %s, using a black image", path)
            img = Image.new("RGB", (224, 224))
        return self.transform(img), path


def read_taxa(path, rank):
    """Read a CSV with one column per rank; return (display_names, text_names) at `rank`."""
    upto = RANKS.index(rank) + 1
    names, texts = [], []
    seen = set()
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            parts = [row[r].strip() for r in RANKS[:upto] if row.get(r)]
            key = " ".join(parts)
            if not parts or key in seen:
                continue
            seen.add(key)
            names.append(parts[-1] if rank != "species" else f"{parts[-2]} {parts[-1]}")
            common = row.get("common_name", "").strip()
            texts.append(f"{key} with common name {common}" if common else key)
    return names, texts


@torch.no_grad()
def build_text_classifier(model, tokenizer, texts, device, batch=64):
    """Average the prompt-ensemble text features for each taxon."""
    all_features = []
    for i in tqdm(range(0, len(texts), batch), desc="text"):
        chunk = texts[i:i + batch]
        prompts = [t(c) for c in chunk for t in OPENAI_TEMPLATES]
        tokens = tokenizer(prompts).cuda()
        with torch.cuda.amp.autocast():
            feats = model.encode_text(tokens)
        feats = F.normalize(feats, dim=-1)
        feats = feats.view(len(chunk), len(OPENAI_TEMPLATES), -1).mean(dim=1)
        feats = F.normalize(feats, dim=-1)
        all_features.append(feats)
    return torch.cat(all_features, dim=0).T.contiguous()  # [D, n_taxa]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--images", required=True, help="folder of (cropped) images")
    p.add_argument("--taxa", required=True, help="CSV with kingdom..species (+ common_name) columns")
    p.add_argument("--rank", default="species", choices=RANKS)
    p.add_argument("--out", default="bioclip_preds.csv")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--topk", type=int, default=5)
    p.add_argument("--compile", action="store_true", help="torch.compile the image tower")
    p.add_argument("--fp32", action="store_true", help="disable fp16 autocast for the image tower")
    return p.parse_args()


def main():
    args = parse_args()

    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    model, _, preprocess_val = open_clip.create_model_and_transforms(MODEL_STR)
    tokenizer = open_clip.get_tokenizer(TOKENIZER_STR)
    model = model.to("cuda")
    model.eval()
    logger.info("Loaded %s on %s", MODEL_STR, torch.cuda.get_device_name())

    if args.compile:
        model.visual = torch.compile(model.visual, mode="max-autotune")

    names, texts = read_taxa(args.taxa, args.rank)
    logger.info("%d taxa at rank %s", len(names), args.rank)
    txt_clf = build_text_classifier(model, tokenizer, texts, device="cuda")

    dataset = ImageListDataset(args.images, preprocess_val)
    loader = DataLoader(dataset, batch_size=args.batch_size, num_workers=args.workers,
                        pin_memory=True, shuffle=False)
    logger.info("%d images", len(dataset))

    logit_scale = model.logit_scale.exp()
    rows = []
    t0 = time.time()
    for images, paths in tqdm(loader, desc="images"):
        images = images.cuda(non_blocking=True)
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16, enabled=not args.fp32):
            img_feats = F.normalize(model.encode_image(images), dim=-1)
            logits = logit_scale * img_feats @ txt_clf
        probs = logits.float().softmax(dim=-1)
        top_p, top_i = probs.topk(min(args.topk, probs.shape[1]), dim=-1)
        for path, ps, idxs in zip(paths, top_p.cpu().numpy(), top_i.cpu().numpy()):
            row = {"path": path}
            for k, (p_, i_) in enumerate(zip(ps, idxs)):
                row[f"top{k + 1}"] = names[i_]
                row[f"p{k + 1}"] = f"{p_:.4f}"
            rows.append(row)
    torch.cuda.synchronize()
    elapsed = time.time() - t0
    logger.info("Classified %d images in %.1fs (%.1f img/s), peak mem %.2f GB",
                len(rows), elapsed, len(rows) / max(elapsed, 1e-6),
                torch.cuda.max_memory_allocated() / 1e9)

    fieldnames = ["path"] + [f for k in range(args.topk) for f in (f"top{k + 1}", f"p{k + 1}")]
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fieldnames)
        w.writeheader()
        w.writerows(rows)
    logger.info("Wrote %s", args.out)


if __name__ == "__main__":
    main()
