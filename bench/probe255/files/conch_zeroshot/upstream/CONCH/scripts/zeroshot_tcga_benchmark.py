"""
Zero-shot slide classification with CONCH (MI-Zero style top-k pooling) on TCGA subtyping
tasks, plus throughput / memory numbers for the image tower.

    CUDA_VISIBLE_DEVICES=0 python scripts/zeroshot_tcga_benchmark.py \
        --task nsclc --feat_dir /data/tcga_nsclc/conch_patches --batch_size 512
"""
import argparse
import json
import os
import time

import numpy as np
import pandas as pd
import pynvml
import torch
import torch.nn.functional as F
from PIL import Image
from sklearn.metrics import balanced_accuracy_score, roc_auc_score
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm

from conch.open_clip_custom import create_model_from_pretrained, get_tokenizer, tokenize

PROMPTS = {
    "nsclc": {
        "LUAD": ["lung adenocarcinoma", "adenocarcinoma of the lung", "LUAD"],
        "LUSC": ["lung squamous cell carcinoma", "squamous cell carcinoma of the lung", "LUSC"],
    },
    "rcc": {
        "CCRCC": ["clear cell renal cell carcinoma", "renal cell carcinoma, clear cell type", "ccRCC"],
        "PRCC": ["papillary renal cell carcinoma", "renal cell carcinoma, papillary type", "pRCC"],
        "CHRCC": ["chromophobe renal cell carcinoma", "renal cell carcinoma, chromophobe type", "chRCC"],
    },
}
TEMPLATES = [
    "CLASSNAME.",
    "an image of CLASSNAME.",
    "a histopathology image of CLASSNAME.",
    "an H&E stained image of CLASSNAME.",
    "CLASSNAME, H&E stain.",
]


class PatchFolder(Dataset):
    """All 448x448 patches of one slide, stored as PNGs in <feat_dir>/<slide_id>/."""

    def __init__(self, root, transform):
        self.paths = sorted(os.path.join(root, f) for f in os.listdir(root) if f.endswith(".png"))
        self.transform = transform

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, idx):
        return self.transform(Image.open(self.paths[idx]).convert("RGB"))


def gpu_mem_used_mb(device_index=0):
    handle = pynvml.nvmlDeviceGetHandleByIndex(device_index)
    return pynvml.nvmlDeviceGetMemoryInfo(handle).used / 1024 ** 2


@torch.no_grad()
def build_classifier(model, tokenizer, task, device):
    weights = []
    for classname, synonyms in PROMPTS[task].items():
        texts = [t.replace("CLASSNAME", s) for s in synonyms for t in TEMPLATES]
        tokens = tokenize(texts=texts, tokenizer=tokenizer).to(device)
        emb = model.encode_text(tokens)
        emb = F.normalize(emb, dim=-1).mean(dim=0)
        weights.append(F.normalize(emb, dim=-1))
    return torch.stack(weights, dim=1)  # [D, C]


@torch.no_grad()
def score_slide(model, loader, classifier, device, topk=50):
    logits = []
    for imgs in loader:
        imgs = imgs.to(device, non_blocking=True)
        with torch.cuda.amp.autocast():
            torch.cuda.nvtx.range_push("encode_image")
            img_emb = model.encode_image(imgs, proj_contrast=True, normalize=True)
            torch.cuda.nvtx.range_pop()
        logits.append((img_emb.float() @ classifier).cpu())
    logits = torch.cat(logits, dim=0)  # [N_patches, C]
    k = min(topk, logits.shape[0])
    return logits.topk(k, dim=0).values.mean(dim=0)  # MI-Zero top-k mean pooling


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", choices=list(PROMPTS), default="nsclc")
    parser.add_argument("--feat_dir", required=True)
    parser.add_argument("--csv", default=None, help="slide_id,label csv (defaults to <feat_dir>/labels.csv)")
    parser.add_argument("--checkpoint", default="checkpoints/conch/pytorch_model.bin")
    parser.add_argument("--batch_size", type=int, default=512)
    parser.add_argument("--num_workers", type=int, default=8)
    parser.add_argument("--topk", type=int, default=50)
    parser.add_argument("--out", default="results/zeroshot")
    args = parser.parse_args()

    torch.backends.cuda.matmul.allow_tf32 = True
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    pynvml.nvmlInit()

    model, preprocess = create_model_from_pretrained("conch_ViT-B-16", checkpoint_path=args.checkpoint, device=device)
    model.eval()
    tokenizer = get_tokenizer()
    classifier = build_classifier(model, tokenizer, args.task, device)

    df = pd.read_csv(args.csv or os.path.join(args.feat_dir, "labels.csv"))
    class_names = list(PROMPTS[args.task])
    label_map = {c: i for i, c in enumerate(class_names)}

    scores, labels, n_patches = [], [], 0
    torch.cuda.reset_peak_memory_stats()
    t0 = time.time()
    for slide_id, label in tqdm(zip(df.slide_id, df.label), total=len(df)):
        ds = PatchFolder(os.path.join(args.feat_dir, slide_id), preprocess)
        loader = DataLoader(ds, batch_size=args.batch_size, num_workers=args.num_workers, pin_memory=True)
        scores.append(score_slide(model, loader, classifier, device, topk=args.topk))
        labels.append(label_map[label])
        n_patches += len(ds)
    torch.cuda.synchronize()
    elapsed = time.time() - t0

    scores = torch.stack(scores)
    probs = scores.softmax(dim=1).numpy()
    preds = probs.argmax(axis=1)
    labels = np.array(labels)
    if len(class_names) == 2:
        auc = roc_auc_score(labels, probs[:, 1])
    else:
        auc = roc_auc_score(labels, probs, multi_class="ovr")

    results = {
        "task": args.task,
        "balanced_acc": float(balanced_accuracy_score(labels, preds)),
        "auroc": float(auc),
        "n_slides": int(len(labels)),
        "patches_per_s": n_patches / elapsed,
        "peak_alloc_mb": torch.cuda.max_memory_allocated() / 1024 ** 2,
        "device_mem_used_mb": gpu_mem_used_mb(device.index or 0),
        "device_name": torch.cuda.get_device_name(device),
    }
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"{args.task}.json"), "w") as f:
        json.dump(results, f, indent=2)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
