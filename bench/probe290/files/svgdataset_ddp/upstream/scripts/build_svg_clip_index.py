"""Rasterize an SVG icon collection with diffvg and build a CLIP index of it.

Used to pick initialisation SVGs / retrieval targets for the text-to-SVG runs.
Every rank rasterizes its shard on its own GPU, embeds it with CLIP and the
embeddings are gathered on rank 0 and written as one .npz.

    torchrun --nproc_per_node 8 scripts/build_svg_clip_index.py \
        --svg_dir data/icons --out data/icons_clip_vitb32.npz
"""
import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader
from torch.utils.data.distributed import DistributedSampler

import clip
import pydiffvg

os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--svg_dir", type=str, required=True)
    parser.add_argument("--out", type=str, required=True)
    parser.add_argument("--clip_model", type=str, default="ViT-B/32")
    parser.add_argument("--render_size", type=int, default=224)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--num_workers", type=int, default=8)
    parser.add_argument("--max_files", type=int, default=-1)
    parser.add_argument("--fp16", action="store_true", help="autocast the CLIP forward")
    return parser.parse_args()


class SVGFileDataset(Dataset):
    """Returns file paths only: diffvg scenes are not picklable, so the rasterization
    happens in the main process on the GPU."""

    def __init__(self, svg_dir, max_files=-1):
        self.files = sorted(str(p) for p in Path(svg_dir).rglob("*.svg"))
        if max_files > 0:
            self.files = self.files[:max_files]

    def __len__(self):
        return len(self.files)

    def __getitem__(self, idx):
        return idx, self.files[idx]


def rasterize(svg_path, size, device):
    canvas_width, canvas_height, shapes, shape_groups = pydiffvg.svg_to_scene(svg_path)
    scale = size / max(canvas_width, canvas_height)
    for shape in shapes:
        if hasattr(shape, "points"):
            shape.points = shape.points * scale
        if hasattr(shape, "stroke_width"):
            shape.stroke_width = shape.stroke_width * scale
    scene_args = pydiffvg.RenderFunction.serialize_scene(size, size, shapes, shape_groups)
    img = pydiffvg.RenderFunction.apply(size, size, 2, 2, 0, None, *scene_args)
    # white background
    img = img[:, :, 3:4] * img[:, :, :3] + torch.ones(size, size, 3, device=device) * (1 - img[:, :, 3:4])
    return img.permute(2, 0, 1)  # CHW


def setup_distributed():
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    if world_size > 1:
        dist.init_process_group(backend="nccl", init_method="env://")
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    return local_rank, world_size, device


def is_main():
    return not dist.is_initialized() or dist.get_rank() == 0


def main():
    args = parse_args()
    local_rank, world_size, device = setup_distributed()

    torch.backends.cuda.matmul.allow_tf32 = True

    # diffvg on the same GPU as CLIP
    pydiffvg.set_use_gpu(True)
    pydiffvg.set_device(device)
    pydiffvg.set_print_timing(False)

    model, preprocess = clip.load(args.clip_model, device=device, jit=False)
    model.eval()
    clip_mean = torch.tensor([0.48145466, 0.4578275, 0.40821073], device=device).view(1, 3, 1, 1)
    clip_std = torch.tensor([0.26862954, 0.26130258, 0.27577711], device=device).view(1, 3, 1, 1)

    dataset = SVGFileDataset(args.svg_dir, args.max_files)
    sampler = DistributedSampler(dataset, shuffle=False) if world_size > 1 else None
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler,
                        num_workers=args.num_workers, pin_memory=True)

    if is_main():
        print(f"{len(dataset)} svg files, {world_size} rank(s), clip={args.clip_model}")

    indices, embeddings, failed = [], [], []
    start = time.time()
    for step, (idx, paths) in enumerate(loader):
        imgs, ok_idx = [], []
        for i, p in zip(idx.tolist(), paths):
            try:
                imgs.append(rasterize(p, args.render_size, device))
                ok_idx.append(i)
            except Exception as e:  # malformed svg, unsupported element, ...
                failed.append((i, repr(e)))
        if not imgs:
            continue
        x = torch.stack(imgs)
        x = F.interpolate(x, size=224, mode="bicubic", align_corners=False)
        x = (x - clip_mean) / clip_std
        with torch.no_grad():
            with torch.cuda.amp.autocast(enabled=args.fp16):
                feats = model.encode_image(x)
        feats = F.normalize(feats.float(), dim=-1)
        indices.append(torch.tensor(ok_idx, device=device))
        embeddings.append(feats)
        if is_main() and step % 20 == 0:
            torch.cuda.synchronize()
            print(f"[{step}/{len(loader)}] {time.time() - start:.1f}s, "
                  f"mem {torch.cuda.max_memory_allocated() / 2 ** 30:.2f}GiB")

    indices = torch.cat(indices) if indices else torch.empty(0, dtype=torch.long, device=device)
    embeddings = torch.cat(embeddings) if embeddings else torch.empty(0, model.visual.output_dim, device=device)

    if world_size > 1:
        # NCCL can only move tensors that live on the GPU; the gloo fallback wants them on the CPU
        gather_device = device if dist.get_backend() == "nccl" else torch.device("cpu")
        counts = [torch.zeros(1, dtype=torch.long, device=gather_device) for _ in range(world_size)]
        dist.all_gather(counts, torch.tensor([indices.numel()], device=gather_device))
        max_count = int(max(c.item() for c in counts))
        pad = max_count - indices.numel()
        idx_pad = F.pad(indices, (0, pad), value=-1).to(gather_device)
        emb_pad = F.pad(embeddings, (0, 0, 0, pad)).to(gather_device)
        all_idx = [torch.empty_like(idx_pad) for _ in range(world_size)]
        all_emb = [torch.empty_like(emb_pad) for _ in range(world_size)]
        dist.all_gather(all_idx, idx_pad)
        dist.all_gather(all_emb, emb_pad)
        all_failed = [None] * world_size
        dist.all_gather_object(all_failed, failed)
        indices = torch.cat(all_idx)
        embeddings = torch.cat(all_emb)
        keep = indices >= 0
        indices, embeddings = indices[keep], embeddings[keep]
        failed = [f for part in all_failed for f in part]

    if is_main():
        order = torch.argsort(indices)
        indices = indices[order].cpu().numpy()
        embeddings = embeddings[order].cpu().numpy().astype(np.float16)
        files = [dataset.files[i] for i in indices]
        np.savez(args.out, embeddings=embeddings, files=np.array(files))
        with open(os.path.splitext(args.out)[0] + "_failed.json", "w") as f:
            json.dump([{"file": dataset.files[i], "error": err} for i, err in failed], f, indent=1)
        print(f"wrote {len(files)} embeddings to {args.out} ({len(failed)} failed) "
              f"in {time.time() - start:.1f}s")

    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
