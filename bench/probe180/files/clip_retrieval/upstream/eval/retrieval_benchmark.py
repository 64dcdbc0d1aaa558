"""Zero-shot image-text retrieval benchmark (Flickr30k / MSCOCO 5k) for open_clip checkpoints.

Example:
    python eval/retrieval_benchmark.py --dataset flickr30k --root /data/flickr30k \
        --models ViT-B-32:laion2b_s34b_b79k ViT-L-14:openai --amp --output results/flickr.jsonl

    # sharded over 8 GPUs (each rank encodes a slice, rank 0 scores)
    torchrun --nproc_per_node 8 eval/retrieval_benchmark.py --distributed ...
"""
import argparse
import json
import logging
import os
import time
from contextlib import suppress

import torch
import torch.distributed as dist
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from tqdm import tqdm

import open_clip


class RetrievalDataset(Dataset):
    """Karpathy-split style json: [{"image": "xxx.jpg", "caption": ["...", "...", ...]}, ...]"""

    def __init__(self, root, ann_file, transform):
        with open(ann_file) as f:
            self.ann = json.load(f)
        self.root = root
        self.transform = transform
        self.texts = []
        self.img2txt = {}
        self.txt2img = {}
        txt_id = 0
        for img_id, a in enumerate(self.ann):
            self.img2txt[img_id] = []
            for cap in a["caption"]:
                self.texts.append(cap)
                self.img2txt[img_id].append(txt_id)
                self.txt2img[txt_id] = img_id
                txt_id += 1

    def __len__(self):
        return len(self.ann)

    def __getitem__(self, idx):
        path = os.path.join(self.root, self.ann[idx]["image"])
        return self.transform(Image.open(path).convert("RGB")), idx


ANN_FILES = {
    "flickr30k": "annotations/flickr30k_test_karpathy.json",
    "mscoco": "annotations/coco_karpathy_test.json",
}


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--dataset", choices=list(ANN_FILES), default="flickr30k")
    p.add_argument("--root", required=True)
    p.add_argument("--models", nargs="+", required=True, help="list of arch:pretrained pairs")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--amp", action="store_true", help="fp16 autocast for the encoders")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--distributed", action="store_true")
    p.add_argument("--output", default=None, help="append one json line per model")
    p.add_argument("--recall-k", type=int, nargs="+", default=[1, 5, 10])
    return p.parse_args()


def init_distributed(args):
    if not args.distributed:
        args.rank, args.world_size, args.local_rank = 0, 1, 0
        return
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    dist.init_process_group(backend=backend)
    args.rank = dist.get_rank()
    args.world_size = dist.get_world_size()
    args.local_rank = int(os.environ.get("LOCAL_RANK", 0))
    args.device = f"cuda:{args.local_rank}"


def all_gather_cat(x, args):
    if args.world_size == 1:
        return x
    out = [torch.zeros_like(x) for _ in range(args.world_size)]
    dist.all_gather(out, x)
    return torch.cat(out)


@torch.no_grad()
def encode(model, tokenizer, dataset, args):
    device = torch.device(args.device)
    autocast = torch.cuda.amp.autocast if args.amp else suppress
    sampler = DistributedSampler(dataset, shuffle=False) if args.distributed else None
    loader = DataLoader(
        dataset,
        batch_size=args.batch_size,
        sampler=sampler,
        num_workers=args.workers,
        pin_memory=torch.cuda.is_available(),
    )

    img_feats, img_ids = [], []
    for images, idx in tqdm(loader, disable=args.rank != 0, desc="images"):
        images = images.to(device, non_blocking=True)
        with autocast():
            f = model.encode_image(images)
        img_feats.append(F.normalize(f.float(), dim=-1))
        img_ids.append(idx.to(device))
    img_feats = all_gather_cat(torch.cat(img_feats), args)
    img_ids = all_gather_cat(torch.cat(img_ids), args)
    # DistributedSampler pads; restore dataset order and drop duplicates
    order = torch.argsort(img_ids)
    img_feats, img_ids = img_feats[order], img_ids[order]
    keep = torch.ones_like(img_ids, dtype=torch.bool)
    keep[1:] = img_ids[1:] != img_ids[:-1]
    img_feats = img_feats[keep]

    txt_feats = []
    texts = dataset.texts
    for i in tqdm(range(0, len(texts), args.batch_size), disable=args.rank != 0, desc="texts"):
        tokens = tokenizer(texts[i:i + args.batch_size]).to(device)
        with autocast():
            f = model.encode_text(tokens)
        txt_feats.append(F.normalize(f.float(), dim=-1))
    txt_feats = torch.cat(txt_feats)
    return img_feats, txt_feats


def recall_at_k(img_feats, txt_feats, dataset, ks):
    sims = img_feats @ txt_feats.t()  # [n_img, n_txt]
    metrics = {}

    # image -> text: hit if any of the gt captions is in the top-k
    topk = sims.topk(max(ks), dim=1).indices.cpu()
    for k in ks:
        hits = 0
        for img_id in range(sims.size(0)):
            gt = set(dataset.img2txt[img_id])
            hits += int(any(t.item() in gt for t in topk[img_id, :k]))
        metrics[f"image_retrieval_R@{k}"] = 100.0 * hits / sims.size(0)

    # text -> image
    topk = sims.t().topk(max(ks), dim=1).indices.cpu()
    for k in ks:
        hits = 0
        for txt_id in range(sims.size(1)):
            hits += int(dataset.txt2img[txt_id] in topk[txt_id, :k].tolist())
        metrics[f"text_retrieval_R@{k}"] = 100.0 * hits / sims.size(1)
    metrics["mean_recall"] = sum(v for k, v in metrics.items() if "R@" in k) / (2 * len(ks))
    return metrics


def run_one(arch, pretrained, args):
    model, _, preprocess = open_clip.create_model_and_transforms(arch, pretrained=pretrained, device=args.device)
    model.eval()
    if torch.cuda.device_count() > 1 and not args.distributed: model = torch.nn.DataParallel(model)
    tokenizer = open_clip.get_tokenizer(arch)
    dataset = RetrievalDataset(args.root, os.path.join(args.root, ANN_FILES[args.dataset]), preprocess)

    start = time.time()
    base = model.module if isinstance(model, torch.nn.DataParallel) else model
    img_feats, txt_feats = encode(base, tokenizer, dataset, args)
    torch.cuda.synchronize()
    elapsed = time.time() - start

    result = {"model": arch, "pretrained": pretrained, "dataset": args.dataset, "encode_seconds": round(elapsed, 1)}
    if args.rank == 0:
        result.update(recall_at_k(img_feats, txt_feats, dataset, args.recall_k))
    del model, base, img_feats, txt_feats
    torch.cuda.empty_cache()
    return result


def main():
    args = parse_args()
    init_distributed(args)
    logging.basicConfig(level=logging.INFO if args.rank == 0 else logging.WARNING)
    if args.rank == 0:
        logging.info(f"device={args.device} world_size={args.world_size} amp={args.amp}")

    for spec in args.models:
        arch, _, pretrained = spec.partition(":")
        result = run_one(arch, pretrained or None, args)
        if args.rank == 0:
            logging.info(json.dumps(result))
            if args.output:
                os.makedirs(os.path.dirname(args.output) or ".", exist_ok=True)
                with open(args.output, "a") as f:
                    f.write(json.dumps(result) + "\n")

    if args.distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
