"""
Multi-GPU training of a DINOv2 + SALAD-style aggregator on GSV-Cities with
DistributedDataParallel. Launch with torchrun, one process per GPU:

    torchrun --nproc_per_node=4 train_ddp.py --batch_size 60 --epochs 4

Validation (Pitts30k-val / MSLS-val recall@K) runs on every rank for feature
extraction; descriptors are gathered and rank 0 does the kNN search.
"""
import argparse
import inspect
import math
import os
import time
from datetime import timedelta

import faiss
import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from pytorch_metric_learning import losses, miners
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from dataloaders.gsv_cities import GSVCitiesDataset
from dataloaders.val import get_val_dataset
from models.vpr_net import VPRNet

# surface NCCL errors as exceptions instead of hanging until the timeout
os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")


def get_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backbone", default="dinov2_vitb14")
    p.add_argument("--num_trainable_blocks", type=int, default=4)
    p.add_argument("--num_clusters", type=int, default=64)
    p.add_argument("--cluster_dim", type=int, default=128)
    p.add_argument("--token_dim", type=int, default=256)
    p.add_argument("--image_size", type=int, nargs=2, default=[224, 224])
    p.add_argument("--batch_size", type=int, default=60, help="places per GPU")
    p.add_argument("--img_per_place", type=int, default=4)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=6e-5)
    p.add_argument("--wd", type=float, default=9.5e-9)
    p.add_argument("--warmup_steps", type=int, default=300)
    p.add_argument("--amp", action="store_true", help="mixed precision (bf16 where the GPU supports it)")
    p.add_argument("--num_workers", type=int, default=10)
    p.add_argument("--val_sets", nargs="+", default=["pitts30k_val", "msls_val"])
    p.add_argument("--out_dir", default="./logs/ddp")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def setup_distributed(args):
    args.rank = int(os.environ.get("RANK", 0))
    args.world_size = int(os.environ.get("WORLD_SIZE", 1))
    args.local_rank = int(os.environ.get("LOCAL_RANK", 0))
    args.distributed = args.world_size > 1

    torch.cuda.set_device(args.local_rank)
    if args.distributed:
        dist.init_process_group(backend="nccl", init_method="env://",
                                world_size=args.world_size, rank=args.rank,
                                timeout=timedelta(minutes=60))
        dist.barrier(device_ids=[args.local_rank])
    return torch.device("cuda", args.local_rank)


def is_main(args):
    return args.rank == 0


def log(args, *msg):
    if is_main(args):
        print(time.strftime("%H:%M:%S"), *msg, flush=True)


def build_optimizer(args, model, device):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.ndim < 2 or "bias" in name or "norm" in name else decay).append(p)
    groups = [{"params": decay, "weight_decay": args.wd}, {"params": no_decay, "weight_decay": 0.0}]
    # the fused AdamW kernel is only worth it (and only available for a long time) on CUDA
    use_fused = "fused" in inspect.signature(torch.optim.AdamW).parameters and device.type == "cuda"
    log(args, f"AdamW fused={use_fused}")
    return torch.optim.AdamW(groups, lr=args.lr, fused=use_fused)


def lr_at(step, total_steps, args):
    if step < args.warmup_steps:
        return args.lr * (step + 1) / args.warmup_steps
    progress = (step - args.warmup_steps) / max(1, total_steps - args.warmup_steps)
    return args.lr * 0.5 * (1.0 + math.cos(math.pi * progress))


@torch.no_grad()
def gather_descriptors(local_desc, local_idx, world_size):
    """All-gather variable-length (descriptor, index) chunks from every rank.
    NCCL can only communicate CUDA tensors, gloo works on the host copies."""
    if dist.get_backend() == "nccl":
        local_desc, local_idx = local_desc.cuda(), local_idx.cuda()
    n = torch.tensor([local_desc.shape[0]], device=local_desc.device)
    sizes = [torch.zeros_like(n) for _ in range(world_size)]
    dist.all_gather(sizes, n)
    max_n = int(max(s.item() for s in sizes))
    pad = max_n - local_desc.shape[0]
    local_desc = F.pad(local_desc, (0, 0, 0, pad))
    local_idx = F.pad(local_idx, (0, pad), value=-1)
    all_desc = [torch.zeros_like(local_desc) for _ in range(world_size)]
    all_idx = [torch.zeros_like(local_idx) for _ in range(world_size)]
    dist.all_gather(all_desc, local_desc)
    dist.all_gather(all_idx, local_idx)
    desc = torch.cat(all_desc).cpu()
    idx = torch.cat(all_idx).cpu()
    keep = idx >= 0
    order = torch.argsort(idx[keep])
    return desc[keep][order]


@torch.no_grad()
def validate(args, model, device, val_name, amp_dtype):
    ds = get_val_dataset(val_name, image_size=args.image_size)
    sampler = DistributedSampler(ds, shuffle=False) if args.distributed else None
    dl = DataLoader(ds, batch_size=64, sampler=sampler, num_workers=args.num_workers, pin_memory=True)
    model.eval()
    descs, idxs = [], []
    for images, indices in dl:
        with torch.autocast("cuda", dtype=amp_dtype, enabled=args.amp):
            d = model(images.to(device, non_blocking=True))
        # keep the descriptors on the host, MSLS-val has ~20k images x 8448 dims
        descs.append(d.float().cpu())
        idxs.append(indices)
    local_desc = torch.cat(descs)
    local_idx = torch.cat(idxs)
    if args.distributed:
        all_desc = gather_descriptors(local_desc, local_idx, args.world_size)
    else:
        all_desc = local_desc

    recalls = None
    if is_main(args):
        all_desc = all_desc.numpy().astype("float32")
        db, qu = all_desc[:ds.num_references], all_desc[ds.num_references:]
        index = faiss.IndexFlatIP(db.shape[1])
        res = faiss.StandardGpuResources()
        index = faiss.index_cpu_to_gpu(res, args.local_rank, index)
        index.add(db)
        _, preds = index.search(qu, 20)
        gt = ds.get_positives()
        ks = [1, 5, 10, 20]
        hits = np.zeros(len(ks))
        for q, p in enumerate(preds):
            for i, k in enumerate(ks):
                if np.any(np.isin(p[:k], gt[q])):
                    hits[i:] += 1
                    break
        recalls = dict(zip(ks, 100.0 * hits / len(preds)))
        log(args, f"[{val_name}] " + "  ".join(f"R@{k}: {v:.2f}" for k, v in recalls.items()))
    model.train()
    return recalls


def main():
    args = get_args()
    device = setup_distributed(args)
    torch.manual_seed(args.seed + args.rank)
    np.random.seed(args.seed + args.rank)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    os.makedirs(args.out_dir, exist_ok=True)

    amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    log(args, f"world_size={args.world_size} amp={args.amp} dtype={amp_dtype}")

    model = VPRNet(backbone=args.backbone, num_trainable_blocks=args.num_trainable_blocks,
                   num_clusters=args.num_clusters, cluster_dim=args.cluster_dim, token_dim=args.token_dim)
    model = model.to(device)
    if args.distributed:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = DDP(model, device_ids=[args.local_rank], output_device=args.local_rank,
                    find_unused_parameters=False)
    raw_model = model.module if args.distributed else model

    train_ds = GSVCitiesDataset(img_per_place=args.img_per_place, image_size=args.image_size)
    sampler = DistributedSampler(train_ds, shuffle=True, seed=args.seed) if args.distributed else None
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, sampler=sampler, shuffle=sampler is None,
                          num_workers=args.num_workers, pin_memory=True, drop_last=True,
                          persistent_workers=True)

    optimizer = build_optimizer(args, raw_model, device)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp and amp_dtype == torch.float16)
    loss_fn = losses.MultiSimilarityLoss(alpha=1.0, beta=50, base=0.0)
    miner = miners.MultiSimilarityMiner(epsilon=0.1)

    total_steps = args.epochs * len(train_dl)
    step = 0
    best_r1 = 0.0
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        model.train()
        t0 = time.time()
        for places, labels in train_dl:
            b, n, c, h, w = places.shape
            images = places.view(b * n, c, h, w).to(device, non_blocking=True)
            labels = labels.view(-1).to(device, non_blocking=True)
            for g in optimizer.param_groups:
                g["lr"] = lr_at(step, total_steps, args)

            with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=args.amp):
                desc = model(images)
            desc = desc.float()
            pairs = miner(desc, labels)
            loss = loss_fn(desc, labels, pairs)

            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()

            if step % 50 == 0:
                log(args, f"ep {epoch} step {step}/{total_steps} loss {loss.item():.4f} "
                          f"lr {optimizer.param_groups[0]['lr']:.2e} "
                          f"mem {torch.cuda.max_memory_allocated() / 2**30:.1f}G")
            step += 1

        log(args, f"epoch {epoch} done in {time.time() - t0:.0f}s")
        r1 = None
        for val_name in args.val_sets:
            recalls = validate(args, model, device, val_name, amp_dtype)
            if recalls is not None and val_name == args.val_sets[0]:
                r1 = recalls[1]
        if is_main(args):
            torch.save({"epoch": epoch, "state_dict": raw_model.state_dict(), "args": vars(args)},
                       os.path.join(args.out_dir, "last.pth"))
            if r1 is not None and r1 > best_r1:
                best_r1 = r1
                torch.save(raw_model.state_dict(), os.path.join(args.out_dir, "best.pth"))
        if args.distributed:
            dist.barrier()

    if args.distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
