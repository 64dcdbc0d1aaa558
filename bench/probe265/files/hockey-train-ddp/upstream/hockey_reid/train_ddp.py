"""Distributed training of the hockey player re-identification model.

ViT-S/16 backbone (ImageNet-21k init) + BNNeck, trained with ID cross-entropy
(label smoothing) and batch-hard triplet loss on jersey-cropped player tracklets
from the NHL broadcast dataset. One process per GPU:

    torchrun --nproc_per_node=4 train_ddp.py --data_root /data/hockey_reid --amp

Evaluation (mAP / rank-1 on the query/gallery split of the held-out games) runs on
rank 0 after gathering the embeddings of every rank.
"""
import argparse
import datetime
import math
import os
import random
import time
from collections import defaultdict

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from torch.utils.tensorboard import SummaryWriter
import torchvision.transforms as T
from PIL import Image

import timm

try:
    from flash_attn import flash_attn_func
    HAS_FLASH_ATTN = True
except ImportError:
    HAS_FLASH_ATTN = False

try:
    from apex.optimizers import FusedAdam
except ImportError:
    FusedAdam = None


# ----------------------------------------------------------------------------------------
# distributed helpers
# ----------------------------------------------------------------------------------------
def init_distributed(args):
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        args.rank = int(os.environ["RANK"])
        args.world_size = int(os.environ["WORLD_SIZE"])
        args.local_rank = int(os.environ["LOCAL_RANK"])
    else:
        args.rank, args.world_size, args.local_rank = 0, 1, 0
    args.distributed = args.world_size > 1

    torch.cuda.set_device(args.local_rank)
    args.device = torch.device("cuda", args.local_rank)
    if args.distributed:
        dist.init_process_group(backend="nccl", init_method="env://",
                                timeout=datetime.timedelta(minutes=30))
        dist.barrier(device_ids=[args.local_rank])


def is_main(args):
    return args.rank == 0


def all_gather_tensor(t, args):
    if not args.distributed:
        return t
    out = [torch.zeros_like(t) for _ in range(args.world_size)]
    dist.all_gather(out, t)
    return torch.cat(out, dim=0)


def seed_everything(seed, rank):
    seed = seed + rank
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)


# ----------------------------------------------------------------------------------------
# data
# ----------------------------------------------------------------------------------------
class HockeyReID(Dataset):
    """<root>/<split>/<game_id>/<player_id>/<track_id>_<frame>.jpg"""

    def __init__(self, root, split, transform):
        self.transform = transform
        self.samples = []
        pids = set()
        split_dir = os.path.join(root, split)
        for game in sorted(os.listdir(split_dir)):
            for pid in sorted(os.listdir(os.path.join(split_dir, game))):
                for f in sorted(os.listdir(os.path.join(split_dir, game, pid))):
                    if f.endswith(".jpg"):
                        key = f"{game}_{pid}"
                        pids.add(key)
                        cam = int(f.split("_")[0]) % 8  # track id as "camera" for cross-track matching
                        self.samples.append((os.path.join(split_dir, game, pid, f), key, cam))
        self.pid2label = {p: i for i, p in enumerate(sorted(pids))}
        self.num_classes = len(self.pid2label)

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, idx):
        path, pid, cam = self.samples[idx]
        img = Image.open(path).convert("RGB")
        return self.transform(img), self.pid2label[pid], cam


class DataPrefetcher:
    """Overlap host->device copies with compute using a side CUDA stream."""

    def __init__(self, loader, device):
        self.loader = iter(loader)
        self.device = device
        self.stream = torch.cuda.Stream()
        self.preload()

    def preload(self):
        try:
            self.next_imgs, self.next_pids, self.next_cams = next(self.loader)
        except StopIteration:
            self.next_imgs = None
            return
        with torch.cuda.stream(self.stream):
            self.next_imgs = self.next_imgs.cuda(non_blocking=True)
            self.next_pids = self.next_pids.to(self.device, non_blocking=True)

    def next(self):
        torch.cuda.current_stream().wait_stream(self.stream)
        imgs, pids, cams = self.next_imgs, self.next_pids, self.next_cams
        if imgs is not None:
            imgs.record_stream(torch.cuda.current_stream())
            pids.record_stream(torch.cuda.current_stream())
        self.preload()
        return imgs, pids, cams


# ----------------------------------------------------------------------------------------
# model
# ----------------------------------------------------------------------------------------
class FlashSelfAttention(nn.Module):
    """Drop-in for timm's Attention that calls FlashAttention-2 when it is installed."""

    def __init__(self, attn):
        super().__init__()
        self.num_heads = attn.num_heads
        self.head_dim = attn.head_dim
        self.scale = attn.scale
        self.qkv = attn.qkv
        self.proj = attn.proj
        self.attn_drop_p = attn.attn_drop.p
        self.proj_drop = attn.proj_drop

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim)
        if HAS_FLASH_ATTN and x.dtype in (torch.float16, torch.bfloat16):
            q, k, v = qkv.unbind(2)  # (B, N, H, D)
            out = flash_attn_func(q, k, v, dropout_p=self.attn_drop_p if self.training else 0.0,
                                  softmax_scale=self.scale)
            out = out.reshape(B, N, C)
        else:
            q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # (B, H, N, D)
            out = F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop_p if self.training else 0.0)
            out = out.transpose(1, 2).reshape(B, N, C)
        return self.proj_drop(self.proj(out))


class ReIDNet(nn.Module):
    def __init__(self, num_classes, backbone="vit_small_patch16_224.augreg_in21k", img_size=(256, 128),
                 drop_path=0.1):
        super().__init__()
        self.backbone = timm.create_model(backbone, pretrained=True, num_classes=0, img_size=img_size,
                                          drop_path_rate=drop_path)
        for blk in self.backbone.blocks:
            blk.attn = FlashSelfAttention(blk.attn)
        dim = self.backbone.num_features
        self.bnneck = nn.BatchNorm1d(dim)
        self.bnneck.bias.requires_grad_(False)
        self.classifier = nn.Linear(dim, num_classes, bias=False)
        nn.init.normal_(self.classifier.weight, std=0.001)

    def forward(self, x):
        feat = self.backbone(x)
        feat_bn = self.bnneck(feat)
        if not self.training:
            return feat_bn
        return self.classifier(feat_bn), feat


def batch_hard_triplet(feats, pids, margin=0.3):
    dist_mat = torch.cdist(feats, feats)
    same = pids.unsqueeze(0) == pids.unsqueeze(1)
    hardest_pos = (dist_mat * same.float()).max(dim=1).values
    hardest_neg = (dist_mat + 1e5 * same.float()).min(dim=1).values
    return F.relu(hardest_pos - hardest_neg + margin).mean()


# ----------------------------------------------------------------------------------------
# train / eval
# ----------------------------------------------------------------------------------------
def train_one_epoch(model, loader, optimizer, scaler, scheduler, epoch, args, writer):
    model.train()
    if args.distributed:
        loader.sampler.set_epoch(epoch)
    prefetcher = DataPrefetcher(loader, args.device)
    imgs, pids, _ = prefetcher.next()
    step, t0 = 0, time.time()
    meters = defaultdict(float)
    while imgs is not None:
        if args.profile and step == 20:
            torch.cuda.nvtx.range_push(f"train_step_{step}")
        with torch.autocast(device_type="cuda", dtype=args.amp_dtype, enabled=args.amp):
            logits, feats = model(imgs)
            loss_id = F.cross_entropy(logits, pids, label_smoothing=0.1)
            loss_tri = batch_hard_triplet(feats.float(), pids)
            loss = loss_id + loss_tri
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        if args.profile and step == 20:
            torch.cuda.nvtx.range_pop()

        meters["loss_id"] += loss_id.item()
        meters["loss_tri"] += loss_tri.item()
        step += 1
        if step % args.log_every == 0 and is_main(args):
            it_s = args.log_every / (time.time() - t0)
            print(f"ep {epoch} it {step}/{len(loader)} id {meters['loss_id'] / step:.3f} "
                  f"tri {meters['loss_tri'] / step:.3f} lr {scheduler.get_last_lr()[0]:.2e} "
                  f"{it_s * args.batch_size * args.world_size:.0f} img/s "
                  f"mem {torch.cuda.max_memory_allocated(args.device) / 2 ** 30:.1f}G")
            t0 = time.time()
        imgs, pids, _ = prefetcher.next()
    if writer is not None:
        writer.add_scalar("train/loss_id", meters["loss_id"] / max(step, 1), epoch)
        writer.add_scalar("train/loss_tri", meters["loss_tri"] / max(step, 1), epoch)


@torch.no_grad()
def extract(model, loader, args):
    model.eval()
    feats, pids, cams = [], [], []
    for imgs, pid, cam in loader:
        imgs = imgs.to(args.device, non_blocking=True)
        with torch.autocast("cuda", dtype=args.amp_dtype, enabled=args.amp):
            f = model(imgs)
            f = f + model(torch.flip(imgs, dims=[3]))  # flip TTA
        feats.append(F.normalize(f.float(), dim=1))
        pids.append(pid.to(args.device))
        cams.append(cam.to(args.device))
    feats = all_gather_tensor(torch.cat(feats), args)
    pids = all_gather_tensor(torch.cat(pids), args)
    cams = all_gather_tensor(torch.cat(cams), args)
    return feats, pids, cams


def evaluate(qf, qp, qc, gf, gp, gc, max_rank=10):
    distmat = 1 - qf @ gf.t()
    indices = distmat.argsort(dim=1).cpu().numpy()
    qp, qc, gp, gc = qp.cpu().numpy(), qc.cpu().numpy(), gp.cpu().numpy(), gc.cpu().numpy()
    matches = (gp[indices] == qp[:, None]).astype(np.int32)
    all_cmc, all_ap = [], []
    for i in range(len(qp)):
        keep = ~((gp[indices[i]] == qp[i]) & (gc[indices[i]] == qc[i]))
        raw = matches[i][keep]
        if not raw.any():
            continue
        cmc = raw.cumsum()
        cmc[cmc > 1] = 1
        all_cmc.append(cmc[:max_rank])
        num_rel = raw.sum()
        tmp = raw.cumsum() / (np.arange(len(raw)) + 1.0)
        all_ap.append((tmp * raw).sum() / num_rel)
    return np.mean(all_ap), np.asarray(all_cmc).astype(np.float32).mean(0)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data_root", required=True)
    p.add_argument("--out", default="runs/hockey_vits16")
    p.add_argument("--epochs", type=int, default=60)
    p.add_argument("--batch_size", type=int, default=64, help="per GPU")
    p.add_argument("--lr", type=float, default=3.5e-4)
    p.add_argument("--wd", type=float, default=0.05)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--amp", action="store_true")
    p.add_argument("--fused_adam", action="store_true", help="apex FusedAdam (needs apex with --cuda_ext)")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--sync_bn", action="store_true")
    p.add_argument("--profile", action="store_true", help="emit NVTX ranges for nsys")
    p.add_argument("--log_every", type=int, default=50)
    p.add_argument("--eval_every", type=int, default=5)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()

    init_distributed(args)
    seed_everything(args.seed, args.rank)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True

    # bf16 autocast on Ampere+, fp16 (with loss scaling) on older cards
    major, _ = torch.cuda.get_device_capability(args.device)
    args.amp_dtype = torch.bfloat16 if major >= 8 else torch.float16

    train_tf = T.Compose([
        T.Resize((256, 128), interpolation=T.InterpolationMode.BICUBIC),
        T.RandomHorizontalFlip(),
        T.Pad(10), T.RandomCrop((256, 128)),
        T.ColorJitter(0.2, 0.2, 0.2, 0.0),
        T.ToTensor(),
        T.Normalize([0.5, 0.5, 0.5], [0.5, 0.5, 0.5]),
        T.RandomErasing(p=0.5, value="random"),
    ])
    test_tf = T.Compose([
        T.Resize((256, 128), interpolation=T.InterpolationMode.BICUBIC),
        T.ToTensor(),
        T.Normalize([0.5, 0.5, 0.5], [0.5, 0.5, 0.5]),
    ])
    train_set = HockeyReID(args.data_root, "train", train_tf)
    query_set = HockeyReID(args.data_root, "query", test_tf)
    gallery_set = HockeyReID(args.data_root, "gallery", test_tf)

    train_sampler = DistributedSampler(train_set, shuffle=True, drop_last=True) if args.distributed else None
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=train_sampler,
                              shuffle=train_sampler is None, num_workers=args.workers,
                              pin_memory=True, drop_last=True, persistent_workers=True)

    def eval_loader(ds):
        sampler = DistributedSampler(ds, shuffle=False) if args.distributed else None
        return DataLoader(ds, batch_size=256, sampler=sampler, num_workers=args.workers, pin_memory=True)

    query_loader, gallery_loader = eval_loader(query_set), eval_loader(gallery_set)

    model = ReIDNet(train_set.num_classes)
    if args.sync_bn and args.distributed:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = model.cuda(args.local_rank)
    if args.compile:
        model = torch.compile(model, mode="max-autotune")
    if args.distributed:
        model = DDP(model, device_ids=[args.local_rank], output_device=args.local_rank,
                    broadcast_buffers=False, find_unused_parameters=False)

    decay, no_decay = [], []
    for n, prm in model.named_parameters():
        if not prm.requires_grad:
            continue
        (no_decay if prm.ndim <= 1 or "pos_embed" in n or "cls_token" in n else decay).append(prm)
    param_groups = [{"params": decay, "weight_decay": args.wd}, {"params": no_decay, "weight_decay": 0.0}]
    if args.fused_adam and FusedAdam is not None:
        optimizer = FusedAdam(param_groups, lr=args.lr, adam_w_mode=True)
    else:
        optimizer = torch.optim.AdamW(param_groups, lr=args.lr, fused=True)

    total_steps = args.epochs * len(train_loader)
    warmup = 5 * len(train_loader)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: s / warmup if s < warmup else 0.5 * (1 + math.cos(math.pi * (s - warmup) / (total_steps - warmup))))
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp and args.amp_dtype == torch.float16)

    writer = SummaryWriter(args.out) if is_main(args) else None
    best_map = 0.0
    for epoch in range(args.epochs):
        train_one_epoch(model, train_loader, optimizer, scaler, scheduler, epoch, args, writer)

        if (epoch + 1) % args.eval_every == 0 or epoch + 1 == args.epochs:
            qf, qp, qc = extract(model, query_loader, args)
            gf, gp, gc = extract(model, gallery_loader, args)
            if is_main(args):
                mAP, cmc = evaluate(qf, qp, qc, gf, gp, gc)
                print(f"[eval] epoch {epoch} mAP {mAP:.4f} R1 {cmc[0]:.4f} R5 {cmc[4]:.4f}")
                writer.add_scalar("val/mAP", mAP, epoch)
                writer.add_scalar("val/rank1", cmc[0], epoch)
                state = (model.module if args.distributed else model).state_dict()
                torch.save({"epoch": epoch, "model": state, "mAP": mAP}, os.path.join(args.out, "last.pth"))
                if mAP > best_map:
                    best_map = mAP
                    torch.save({"epoch": epoch, "model": state, "mAP": mAP}, os.path.join(args.out, "best.pth"))
            torch.cuda.empty_cache()
        if args.distributed:
            dist.barrier()

    if args.distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
