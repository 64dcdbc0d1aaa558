#!/usr/bin/env python
"""Distributed image-generation evaluation with torchmetrics.

Computes FID / KID / IS / LPIPS-diversity / CLIPScore for a folder of generated
samples against a folder of reference images.  Every rank processes a shard and
torchmetrics all-reduces the metric states in ``compute()``.

    torchrun --nproc_per_node=8 scripts/eval_torchmetrics.py \
        --real data/coco2014_val_30k --fake outputs/sd15_cfg7.5 --captions data/captions_30k.json

Single GPU:

    python scripts/eval_torchmetrics.py --real ... --fake ... --device cuda:0
"""
import argparse
import json
import os
import time
from pathlib import Path

import torch
import torch.distributed as dist
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from torchvision import transforms

from torchmetrics.image.fid import FrechetInceptionDistance
from torchmetrics.image.inception import InceptionScore
from torchmetrics.image.kid import KernelInceptionDistance
from torchmetrics.image.lpip import LearnedPerceptualImagePatchSimilarity
from torchmetrics.multimodal.clip_score import CLIPScore

IMG_EXTS = {".png", ".jpg", ".jpeg", ".webp"}


class ImageFolder(Dataset):
    def __init__(self, root, size=299, captions=None):
        self.files = sorted(p for p in Path(root).rglob("*") if p.suffix.lower() in IMG_EXTS)
        self.tf = transforms.Compose([
            transforms.Resize(size, interpolation=transforms.InterpolationMode.BICUBIC),
            transforms.CenterCrop(size),
            transforms.PILToTensor(),  # uint8, what torchmetrics' FID expects by default
        ])
        self.captions = captions

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        img = Image.open(self.files[i]).convert("RGB")
        cap = ""
        if self.captions is not None:
            cap = self.captions.get(self.files[i].stem, "")
        return self.tf(img), cap


def setup_distributed(args):
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        rank = int(os.environ["RANK"])
        world_size = int(os.environ["WORLD_SIZE"])
        local_rank = int(os.environ.get("LOCAL_RANK", 0))
        torch.cuda.set_device(local_rank)
        dist.init_process_group(backend="nccl", init_method="env://")
        device = torch.device("cuda", local_rank)
    else:
        rank, world_size, local_rank = 0, 1, 0
        device = torch.device(args.device)
    return rank, world_size, device


def make_loader(ds, args, world_size, rank):
    sampler = DistributedSampler(ds, num_replicas=world_size, rank=rank, shuffle=False) if world_size > 1 else None
    return DataLoader(ds, batch_size=args.batch_size, sampler=sampler, shuffle=False,
                      num_workers=args.workers, pin_memory=True, drop_last=False)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--real", required=True)
    p.add_argument("--fake", required=True)
    p.add_argument("--captions", default=None, help="json {image_stem: caption} for CLIPScore")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--device", default="cuda")
    p.add_argument("--clip-model", default="openai/clip-vit-large-patch14")
    p.add_argument("--no-lpips", action="store_true")
    p.add_argument("--out", default="metrics.json")
    args = p.parse_args()

    rank, world_size, device = setup_distributed(args)
    is_main = rank == 0

    # keep fp32 exact; TF32 changes FID in the 2nd decimal on A100
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    captions = None
    if args.captions:
        with open(args.captions) as f:
            captions = json.load(f)

    fid = FrechetInceptionDistance(feature=2048, reset_real_features=False).to(device)
    kid = KernelInceptionDistance(subset_size=1000).to(device)
    isc = InceptionScore().to(device)
    clip_score = CLIPScore(model_name_or_path=args.clip_model).to("cuda") if captions else None
    lpips = None
    if not args.no_lpips:
        lpips = LearnedPerceptualImagePatchSimilarity(net_type="alex", normalize=True).cuda()

    real_loader = make_loader(ImageFolder(args.real), args, world_size, rank)
    fake_loader = make_loader(ImageFolder(args.fake, captions=captions), args, world_size, rank)

    torch.cuda.synchronize()
    t0 = time.time()
    with torch.inference_mode():
        for imgs, _ in real_loader:
            imgs = imgs.to(device, non_blocking=True)
            fid.update(imgs, real=True)
            kid.update(imgs, real=True)

        prev = None
        for imgs, caps in fake_loader:
            imgs = imgs.to(device, non_blocking=True)
            fid.update(imgs, real=False)
            kid.update(imgs, real=False)
            isc.update(imgs)
            if clip_score is not None:
                clip_score.update(imgs, list(caps))
            if lpips is not None:
                x = imgs.float() / 255.0
                if prev is not None and prev.shape == x.shape:
                    lpips.update(x, prev)
                prev = x
    torch.cuda.synchronize(device)

    results = {
        "fid": fid.compute().item(),
        "kid_mean": kid.compute()[0].item(),
        "kid_std": kid.compute()[1].item(),
        "is_mean": isc.compute()[0].item(),
        "is_std": isc.compute()[1].item(),
    }
    if clip_score is not None:
        results["clip_score"] = clip_score.compute().item()
    if lpips is not None:
        results["lpips_diversity"] = lpips.compute().item()
    results["eval_seconds"] = time.time() - t0
    results["gpu"] = torch.cuda.get_device_name(device)
    results["peak_mem_gb"] = torch.cuda.max_memory_allocated(device) / 1e9

    if is_main:
        print(json.dumps(results, indent=2))
        with open(args.out, "w") as f:
            json.dump(results, f, indent=2)

    if world_size > 1:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
