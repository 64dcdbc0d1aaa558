"""Dump attribution maps for a whole ImageNet split with torchrun.

Each rank explains a shard of the dataset (DistributedSampler, no shuffling)
and writes ``attr_rank{r}.h5`` with one float16 map per image plus the
predicted / true labels; rank 0 merges the index files at the end. The maps
feed the Quantus faithfulness / localisation runs.

    torchrun --nproc_per_node=8 scripts/distributed_saliency.py \
        --method ig --arch resnet50 --data /datasets/imagenet/val --out /scratch/attr
"""
import argparse
import datetime
import json
import os
import time

import h5py
import numpy as np
import torch
import torch.distributed as dist
import torchvision
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets, transforms

from captum.attr import (GuidedBackprop, IntegratedGradients, LayerAttribution,
                         LayerGradCam, NoiseTunnel, Saliency)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--method", default="ig",
                   choices=["saliency", "ig", "smoothgrad", "guided_backprop", "gradcam"])
    p.add_argument("--arch", default="resnet50")
    p.add_argument("--data", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--steps", type=int, default=32, help="IG integration steps")
    p.add_argument("--internal-bs", type=int, default=256)
    p.add_argument("--nt-samples", type=int, default=16)
    p.add_argument("--amp", action="store_true")
    p.add_argument("--limit", type=int, default=0, help="only the first N images (debug)")
    p.add_argument("--log-every", type=int, default=20)
    return p.parse_args()


def setup_distributed():
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        rank = int(os.environ["RANK"])
        world_size = int(os.environ["WORLD_SIZE"])
        local_rank = int(os.environ["LOCAL_RANK"])
    else:
        rank, world_size, local_rank = 0, 1, 0
    torch.cuda.set_device(local_rank)
    if world_size > 1:
        dist.init_process_group(backend="nccl", init_method="env://",
                                timeout=datetime.timedelta(minutes=60))
        dist.barrier(device_ids=[local_rank])
    return rank, world_size, local_rank


def is_main(rank):
    return rank == 0


def build_model(arch, local_rank):
    model = getattr(torchvision.models, arch)(weights="DEFAULT")
    model = model.cuda(local_rank).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def gradcam_layer(model, arch):
    if arch.startswith("resnet"):
        return model.layer4
    if arch.startswith(("vgg", "densenet", "efficientnet", "convnext")):
        return model.features
    raise ValueError(f"no Grad-CAM layer known for {arch}")


def build_loader(root, batch_size, workers, world_size, rank, limit):
    tf = transforms.Compose([
        transforms.Resize(256),
        transforms.CenterCrop(224),
        transforms.ToTensor(),
        transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
    ])
    ds = datasets.ImageFolder(root, tf)
    if limit:
        ds = torch.utils.data.Subset(ds, list(range(min(limit, len(ds)))))
    sampler = DistributedSampler(ds, num_replicas=world_size, rank=rank, shuffle=False,
                                 drop_last=False)
    loader = DataLoader(ds, batch_size=batch_size, sampler=sampler, num_workers=workers,
                        pin_memory=True, persistent_workers=workers > 0)
    return ds, sampler, loader


def attribute_batch(method, model, arch, images, targets, args):
    if method == "saliency":
        return Saliency(model).attribute(images, target=targets, abs=True)
    if method == "ig":
        ig = IntegratedGradients(model)
        return ig.attribute(images, baselines=torch.zeros_like(images), target=targets,
                            n_steps=args.steps, internal_batch_size=args.internal_bs)
    if method == "smoothgrad":
        nt = NoiseTunnel(Saliency(model))
        return nt.attribute(images, target=targets, nt_type="smoothgrad",
                            nt_samples=args.nt_samples, nt_samples_batch_size=4, stdevs=0.15)
    if method == "guided_backprop":
        return GuidedBackprop(model).attribute(images, target=targets)
    if method == "gradcam":
        lgc = LayerGradCam(model, gradcam_layer(model, arch))
        attr = lgc.attribute(images, target=targets, relu_attributions=True)
        return LayerAttribution.interpolate(attr, images.shape[-2:], interpolate_mode="bilinear")
    raise ValueError(method)


def all_reduce_counts(values, device):
    # NCCL only reduces device tensors, gloo wants host tensors
    t = torch.tensor(values, dtype=torch.float32, device=device if dist.get_backend() == "nccl" else "cpu")
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t.tolist()


def main():
    args = parse_args()
    rank, world_size, local_rank = setup_distributed()
    device = torch.device("cuda", local_rank)

    os.makedirs(args.out, exist_ok=True)
    model = build_model(args.arch, local_rank)
    # Captum needs grads w.r.t. the input only
    if args.method in ("saliency", "ig", "smoothgrad", "guided_backprop"):
        for p in model.parameters():
            p.requires_grad_(False)

    ds, sampler, loader = build_loader(args.data, args.batch_size, args.workers,
                                       world_size, rank, args.limit)
    n_local = len(sampler)
    h5_path = os.path.join(args.out, f"attr_rank{rank}.h5")
    h5 = h5py.File(h5_path, "w")
    map_shape = (1, 224, 224) if args.method == "gradcam" else (224, 224)
    maps = h5.create_dataset("maps", shape=(n_local, *map_shape), dtype="float16",
                             chunks=(1, *map_shape), compression="lzf")
    h5_index = h5.create_dataset("index", shape=(n_local,), dtype="int64")
    h5_pred = h5.create_dataset("pred", shape=(n_local,), dtype="int64")
    h5_label = h5.create_dataset("label", shape=(n_local,), dtype="int64")

    indices = list(iter(sampler))
    offset = 0
    correct = 0
    t_start = time.time()
    for step, (images, labels) in enumerate(loader):
        images = images.cuda(non_blocking=True)
        labels = labels.cuda(non_blocking=True)
        with torch.no_grad():
            logits = model(images)
        preds = logits.argmax(dim=1)
        correct += (preds == labels).sum().item()

        with torch.autocast("cuda", dtype=torch.float16, enabled=args.amp):
            attr = attribute_batch(args.method, model, args.arch, images, preds, args)
        if args.method == "gradcam":
            attr = attr.float()
        else:
            attr = attr.float().abs().sum(dim=1)
        attr = attr / (attr.flatten(1).amax(dim=1).view(-1, *([1] * (attr.dim() - 1))) + 1e-12)

        b = images.shape[0]
        maps[offset:offset + b] = attr.cpu().numpy().astype(np.float16)
        h5_index[offset:offset + b] = indices[offset:offset + b]
        h5_pred[offset:offset + b] = preds.cpu().numpy()
        h5_label[offset:offset + b] = labels.cpu().numpy()
        offset += b

        if step % args.log_every == 0 and is_main(rank):
            elapsed = time.time() - t_start
            mem = torch.cuda.max_memory_allocated() / 2**20
            print(f"[{step}/{len(loader)}] {offset / elapsed:.1f} img/s per rank, "
                  f"peak {mem:.0f} MiB", flush=True)

    h5.close()

    totals = [offset, correct]
    if world_size > 1:
        totals = all_reduce_counts(totals, device)
        dist.barrier()
    if is_main(rank):
        n_total, n_correct = int(totals[0]), int(totals[1])
        summary = {
            "method": args.method, "arch": args.arch, "images": n_total,
            "top1": n_correct / max(1, n_total), "world_size": world_size,
            "files": [f"attr_rank{r}.h5" for r in range(world_size)],
            "seconds": time.time() - t_start,
        }
        with open(os.path.join(args.out, "summary.json"), "w") as f:
            json.dump(summary, f, indent=2)
        print(json.dumps(summary, indent=2))

    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
