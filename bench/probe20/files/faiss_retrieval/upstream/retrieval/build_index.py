"""
Build a FAISS index over CLIP / DINOv2 image embeddings and run k-NN image retrieval.

    python retrieval/build_index.py --images data/gallery --queries data/queries \
        --model ViT-L-14 --pretrained openai --index-type IVF4096,PQ64 --use-gpu
"""
import argparse
import glob
import json
import logging
import os
import time

import faiss
import numpy as np
import open_clip
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset

logger = logging.getLogger("retrieval")


class ImageFolderFlat(Dataset):
    def __init__(self, root, transform):
        exts = ("*.jpg", "*.jpeg", "*.png", "*.webp")
        self.paths = sorted(p for e in exts for p in glob.glob(os.path.join(root, "**", e), recursive=True))
        self.transform = transform

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, idx):
        img = Image.open(self.paths[idx]).convert("RGB")
        return self.transform(img), idx


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--images", required=True)
    p.add_argument("--queries", required=True)
    p.add_argument("--model", default="ViT-L-14")
    p.add_argument("--pretrained", default="openai")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--index-type", default="Flat", help="faiss index_factory string, e.g. IVF4096,PQ64")
    p.add_argument("--nprobe", type=int, default=32)
    p.add_argument("--topk", type=int, default=10)
    p.add_argument("--use-gpu", action="store_true", help="move the FAISS index to all visible GPUs")
    p.add_argument("--fp16", action="store_true", help="encode images under fp16 autocast")
    p.add_argument("--out", default="retrieval_results.json")
    return p.parse_args()


@torch.no_grad()
def encode(model, loader, device, fp16=False):
    feats = []
    for images, _ in loader:
        images = images.cuda(non_blocking=True)
        with torch.cuda.amp.autocast(enabled=fp16):
            f = model.encode_image(images)
        f = f / f.norm(dim=-1, keepdim=True)
        feats.append(f.float().cpu().numpy())
    return np.concatenate(feats, axis=0).astype("float32")


def build_index(xb, index_type, use_gpu):
    d = xb.shape[1]
    index = faiss.index_factory(d, index_type, faiss.METRIC_INNER_PRODUCT)
    ngpu = faiss.get_num_gpus()
    if use_gpu and ngpu > 0:
        logger.info(f"moving index to {ngpu} GPU(s)")
        co = faiss.GpuMultipleClonerOptions()
        co.useFloat16 = True
        co.shard = True
        index = faiss.index_cpu_to_all_gpus(index, co=co, ngpu=ngpu)
    elif use_gpu:
        logger.warning("--use-gpu given but faiss sees no GPU; using the CPU index")
    if not index.is_trained:
        t0 = time.time()
        index.train(xb)
        logger.info(f"trained {index_type} in {time.time() - t0:.1f}s")
    index.add(xb)
    return index


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO)
    device = torch.device("cuda")

    model, _, preprocess = open_clip.create_model_and_transforms(args.model, pretrained=args.pretrained)
    model = model.cuda().eval()

    gallery = ImageFolderFlat(args.images, preprocess)
    queries = ImageFolderFlat(args.queries, preprocess)
    g_loader = DataLoader(gallery, batch_size=args.batch_size, num_workers=args.workers, pin_memory=True)
    q_loader = DataLoader(queries, batch_size=args.batch_size, num_workers=args.workers, pin_memory=True)

    t0 = time.time()
    xb = encode(model, g_loader, device, fp16=args.fp16)
    xq = encode(model, q_loader, device, fp16=args.fp16)
    logger.info(f"encoded {len(xb)} gallery / {len(xq)} query images in {time.time() - t0:.1f}s "
                f"(peak {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB)")
    del model
    torch.cuda.empty_cache()

    index = build_index(xb, args.index_type, args.use_gpu)
    if hasattr(index, "nprobe"):
        index.nprobe = args.nprobe
    else:
        try:
            faiss.ParameterSpace().set_index_parameter(index, "nprobe", args.nprobe)
        except RuntimeError:
            pass

    scores, ids = index.search(xq, args.topk)
    results = []
    for qi in range(len(xq)):
        results.append({
            "query": queries.paths[qi],
            "neighbors": [gallery.paths[j] for j in ids[qi] if j >= 0],
            "scores": [float(s) for s in scores[qi]],
        })
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    logger.info(f"wrote {len(results)} results to {args.out}")


if __name__ == "__main__":
    main()
