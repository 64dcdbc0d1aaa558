"""Fine-tune BEATs on a species classification set with DistributedDataParallel.

Launch with torchrun (see scripts/run_finetune.sh). Each process drives one GPU.
The BEATs_iter3_plus_AS2M checkpoint is loaded on CPU, a linear head is added
and the whole encoder is fine-tuned with bf16 autocast.
"""
import argparse
import json
import math
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from BEATs import BEATs, BEATsConfig
from beans.datasets import ClassificationDataset

os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")


class BEATsSpeciesClassifier(nn.Module):
    def __init__(self, checkpoint_path, num_classes, freeze_encoder=False):
        super().__init__()
        checkpoint = torch.load(checkpoint_path, map_location="cpu")
        cfg = BEATsConfig(checkpoint["cfg"])
        cfg.finetuned_model = False
        self.encoder = BEATs(cfg)
        self.encoder.load_state_dict(checkpoint["model"], strict=False)
        if freeze_encoder:
            self.encoder.requires_grad_(False)
        self.head = nn.Linear(cfg.encoder_embed_dim, num_classes)

    def forward(self, wav, padding_mask=None):
        feats, padding_mask = self.encoder.extract_features(wav, padding_mask=padding_mask)
        if padding_mask is not None and padding_mask.any():
            keep = (~padding_mask).unsqueeze(-1).to(feats.dtype)
            pooled = (feats * keep).sum(dim=1) / keep.sum(dim=1).clamp(min=1.0)
        else:
            pooled = feats.mean(dim=1)
        return self.head(pooled)


def setup_distributed():
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return dist.get_rank(), dist.get_world_size(), local_rank


def cosine_lr(step, total, base_lr, warmup):
    if step < warmup:
        return base_lr * step / max(1, warmup)
    progress = (step - warmup) / max(1, total - warmup)
    return base_lr * 0.5 * (1 + math.cos(math.pi * progress))


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct = torch.zeros(1, device=device)
    total = torch.zeros(1, device=device)
    for wav, label in loader:
        wav = wav.to(device, non_blocking=True)
        label = label.to(device, non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            logits = model(wav)
        correct += (logits.argmax(dim=-1) == label).sum()
        total += label.numel()
    dist.all_reduce(correct)
    dist.all_reduce(total)
    model.train()
    return (correct / total.clamp(min=1)).item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--beats-ckpt", required=True)
    parser.add_argument("--train-meta", required=True)
    parser.add_argument("--valid-meta", required=True)
    parser.add_argument("--labels", required=True, help="json list of species labels")
    parser.add_argument("--out-dir", default="runs/beats_species")
    parser.add_argument("--batch-size", type=int, default=16, help="per-GPU batch size")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--warmup-steps", type=int, default=500)
    parser.add_argument("--num-workers", type=int, default=6)
    parser.add_argument("--freeze-encoder", action="store_true")
    args = parser.parse_args()

    rank, world_size, local_rank = setup_distributed()
    device = torch.device(f"cuda:{local_rank}")
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True

    with open(args.labels) as f:
        labels = json.load(f)

    train_set = ClassificationDataset(metadata_path=args.train_meta, num_labels=len(labels), labels=labels,
                                      unknown_label=None, sample_rate=16000, max_duration=10,
                                      feature_type="waveform")
    valid_set = ClassificationDataset(metadata_path=args.valid_meta, num_labels=len(labels), labels=labels,
                                      unknown_label=None, sample_rate=16000, max_duration=10,
                                      feature_type="waveform")
    train_sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank, shuffle=True)
    valid_sampler = DistributedSampler(valid_set, num_replicas=world_size, rank=rank, shuffle=False)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=train_sampler,
                              num_workers=args.num_workers, pin_memory=True, drop_last=True)
    valid_loader = DataLoader(valid_set, batch_size=args.batch_size, sampler=valid_sampler,
                              num_workers=args.num_workers, pin_memory=True)

    model = BEATsSpeciesClassifier(args.beats_ckpt, len(labels), args.freeze_encoder).cuda()
    model = DDP(model, device_ids=[local_rank], output_device=local_rank,
                find_unused_parameters=args.freeze_encoder)

    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.ndim == 1 or name.endswith(".bias") else decay).append(p)
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=args.lr, fused=True)

    total_steps = args.epochs * len(train_loader)
    step = 0
    best_acc = 0.0
    if rank == 0:
        os.makedirs(args.out_dir, exist_ok=True)
        print(f"world_size={world_size}, steps/epoch={len(train_loader)}, device={torch.cuda.get_device_name(local_rank)}")

    for epoch in range(args.epochs):
        train_sampler.set_epoch(epoch)
        torch.cuda.reset_peak_memory_stats()
        torch.cuda.synchronize(device)
        t0 = time.time()
        for wav, label in train_loader:
            wav = wav.to(device, non_blocking=True)
            label = label.to(device, non_blocking=True)
            for g in optimizer.param_groups:
                g["lr"] = cosine_lr(step, total_steps, args.lr, args.warmup_steps)

            with torch.cuda.amp.autocast(dtype=torch.bfloat16):
                logits = model(wav)
                loss = F.cross_entropy(logits.float(), label)

            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            step += 1

            if rank == 0 and step % 50 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} lr {optimizer.param_groups[0]['lr']:.2e}")

        torch.cuda.synchronize()
        epoch_time = time.time() - t0
        acc = evaluate(model, valid_loader, device)
        if rank == 0:
            peak_gb = torch.cuda.max_memory_allocated(device) / 2 ** 30
            print(f"epoch {epoch}: valid acc {acc:.4f}, {epoch_time:.1f}s, peak mem {peak_gb:.1f} GB")
            if acc > best_acc:
                best_acc = acc
                torch.save({"model": model.module.state_dict(), "labels": labels, "epoch": epoch},
                           os.path.join(args.out_dir, "best.pt"))
        dist.barrier()

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
