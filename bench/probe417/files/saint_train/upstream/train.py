"""Train SAINT+ on Riiid! with DistributedDataParallel.

    torchrun --nproc_per_node 4 train.py --data data/groups.pkl --amp
"""
import argparse
import logging
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from sklearn.metrics import roc_auc_score
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from saint_plus.dataset import RiiidTrainDataset, RiiidValidDataset, collate, load_groups, split_users
from saint_plus.model import build_model
from saint_plus.utils import AverageMeter, Timer, log_device, memory_report, save_checkpoint, seed_everything

logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
logger = logging.getLogger("saint_plus")

torch.backends.cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = True


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/groups.pkl")
    p.add_argument("--out", default="checkpoints")
    p.add_argument("--n_questions", type=int, default=13523)
    p.add_argument("--n_parts", type=int, default=7)
    p.add_argument("--seq_len", type=int, default=100)
    p.add_argument("--d_model", type=int, default=256)
    p.add_argument("--n_heads", type=int, default=8)
    p.add_argument("--n_layers", type=int, default=2)
    p.add_argument("--d_ff", type=int, default=1024)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--learned_pos", action="store_true", default=True)
    p.add_argument("--batch_size", type=int, default=256, help="per-GPU batch size")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--warmup", type=int, default=4000)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--amp", action="store_true", help="mixed precision (fp16) training")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--valid_frac", type=float, default=0.025)
    p.add_argument("--log_every", type=int, default=200)
    return p.parse_args()


def setup_distributed():
    if "RANK" not in os.environ:
        return 0, 0, 1
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")
    dist.barrier()
    return rank, local_rank, world_size


def noam_lambda(warmup, d_model):
    def fn(step):
        step = max(step, 1)
        return (d_model ** -0.5) * min(step ** -0.5, step * warmup ** -1.5) / (d_model ** -0.5 * warmup ** -0.5)
    return fn


def to_device(batch, device):
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}


@torch.no_grad()
def validate(model, loader, device, amp):
    model.eval()
    preds, labels = [], []
    for batch in loader:
        batch = to_device(batch, device)
        with torch.cuda.amp.autocast(enabled=amp):
            logits = model(batch["question_ids"], batch["part_ids"], batch["prior_responses"],
                           batch["prior_elapsed"], batch["lag_minutes"])
        # leaderboard metric: only the last position of every window
        preds.append(torch.sigmoid(logits[:, -1].float()).cpu())
        labels.append(batch["labels"][:, -1].cpu())
    preds = torch.cat(preds).numpy()
    labels = torch.cat(labels).numpy()
    model.train()
    return roc_auc_score(labels, preds)


def gather_scalar(value, device, world_size):
    if world_size == 1:
        return value
    t = torch.tensor([value], dtype=torch.float32, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t.item() / world_size


def main():
    args = get_args()
    rank, local_rank, world_size = setup_distributed()
    device = torch.device(f"cuda:{local_rank}")
    is_main = rank == 0
    seed_everything(args.seed + rank)
    if is_main:
        log_device(rank)
        os.makedirs(args.out, exist_ok=True)

    groups = load_groups(args.data)
    train_groups, valid_groups = split_users(groups, args.valid_frac, seed=args.seed)
    train_ds = RiiidTrainDataset(train_groups, seq_len=args.seq_len)
    valid_ds = RiiidValidDataset(valid_groups, seq_len=args.seq_len)
    logger.info(f"train users {len(train_ds)}, valid users {len(valid_ds)}")

    train_sampler = DistributedSampler(train_ds, shuffle=True) if world_size > 1 else None
    train_loader = DataLoader(
        train_ds, batch_size=args.batch_size, shuffle=train_sampler is None, sampler=train_sampler,
        num_workers=args.workers, pin_memory=True, drop_last=True, collate_fn=collate,
        persistent_workers=args.workers > 0,
    )
    valid_loader = DataLoader(
        valid_ds, batch_size=args.batch_size * 2, shuffle=False, num_workers=args.workers // 2,
        pin_memory=True, collate_fn=collate,
    )

    model = build_model(args).to(device)
    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank, find_unused_parameters=False)

    criterion = nn.BCEWithLogitsLoss(reduction="none")
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.999), eps=1e-8)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, noam_lambda(args.warmup, args.d_model))
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    best_auc, step = 0.0, 0
    for epoch in range(args.epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        loss_meter = AverageMeter()
        t_epoch = time.time()
        for batch in train_loader:
            batch = to_device(batch, device)
            optimizer.zero_grad(set_to_none=True)
            with torch.cuda.amp.autocast(enabled=args.amp):
                logits = model(batch["question_ids"], batch["part_ids"], batch["prior_responses"],
                               batch["prior_elapsed"], batch["lag_minutes"])
                loss = criterion(logits.float(), batch["labels"])
                loss = (loss * batch["label_mask"]).sum() / batch["label_mask"].sum().clamp(min=1)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            step += 1
            loss_meter.update(loss.item(), batch["question_ids"].size(0))

            if is_main and step % args.log_every == 0:
                logger.info(f"epoch {epoch} step {step} loss {loss_meter.avg:.4f} lr {scheduler.get_last_lr()[0]:.2e}")

        if is_main:
            memory_report(f"epoch {epoch}")
        with Timer() as t:
            auc = validate(model.module if world_size > 1 else model, valid_loader, device, args.amp)
        auc = gather_scalar(auc, device, world_size)
        train_loss = gather_scalar(loss_meter.avg, device, world_size)
        if is_main:
            logger.info(f"epoch {epoch} train_loss {train_loss:.4f} valid_auc {auc:.5f} "
                        f"(valid {t.elapsed:.1f}s, epoch {time.time() - t_epoch:.0f}s)")
            if auc > best_auc:
                best_auc = auc
                save_checkpoint(os.path.join(args.out, "best.pt"),
                                model.module if world_size > 1 else model, optimizer, scaler, epoch, best_auc)
                logger.info(f"new best {best_auc:.5f}")
        torch.cuda.synchronize()

    if world_size > 1:
        dist.barrier()
        dist.destroy_process_group()
    if is_main:
        logger.info(f"done, best valid auc {best_auc:.5f}")


if __name__ == "__main__":
    main()
