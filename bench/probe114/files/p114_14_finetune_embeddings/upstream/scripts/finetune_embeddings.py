#!/usr/bin/env python
"""Fine-tune the retrieval embedder on synthetic (question, passage) pairs.

The pairs come from ``generate_qa_pairs.py`` (the local LLM writes questions for each chunk).
Training uses in-batch negatives (MultipleNegativesRankingLoss written out by hand so we can
use AMP and gradient accumulation). Single GPU by default; ``torchrun --nproc_per_node N``
works too.

    python scripts/finetune_embeddings.py --train data/qa_train.jsonl --val data/qa_val.jsonl \
        --model BAAI/bge-base-en-v1.5 --out models/bge-base-ft
"""
import argparse
import json
import math
import os
import random
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoModel, AutoTokenizer, get_linear_schedule_with_warmup


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--train", required=True)
    p.add_argument("--val", default=None)
    p.add_argument("--model", default="BAAI/bge-base-en-v1.5")
    p.add_argument("--out", required=True)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--grad-accum", type=int, default=1)
    p.add_argument("--lr", type=float, default=2e-5)
    p.add_argument("--warmup-ratio", type=float, default=0.1)
    p.add_argument("--max-len", type=int, default=256)
    p.add_argument("--temperature", type=float, default=0.02)
    p.add_argument("--fp16", action="store_true", help="mixed precision (use on pre-Ampere cards)")
    p.add_argument("--bf16", action="store_true", help="bfloat16 autocast (Ampere+)")
    p.add_argument("--num-workers", type=int, default=4)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--query-prefix", default="Represent this sentence for searching relevant passages: ")
    return p.parse_args()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def setup_distributed():
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if world_size > 1:
        dist.init_process_group(backend="nccl")
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    return world_size, local_rank, device


def is_main():
    return not dist.is_initialized() or dist.get_rank() == 0


class PairDataset(Dataset):
    def __init__(self, path, query_prefix):
        self.rows = []
        with open(path, encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                self.rows.append((query_prefix + r["question"], r["passage"]))

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return self.rows[i]


class Collator:
    def __init__(self, tokenizer, max_len):
        self.tok = tokenizer
        self.max_len = max_len

    def __call__(self, batch):
        qs, ps = zip(*batch)
        q = self.tok(list(qs), padding=True, truncation=True, max_length=self.max_len, return_tensors="pt")
        p = self.tok(list(ps), padding=True, truncation=True, max_length=self.max_len, return_tensors="pt")
        return q, p


def embed(model, enc):
    out = model(**enc).last_hidden_state[:, 0]  # CLS pooling, as bge does
    return F.normalize(out, dim=-1)


def in_batch_loss(q, p, temperature):
    scores = q @ p.T / temperature
    labels = torch.arange(q.size(0), device=q.device)
    return F.cross_entropy(scores, labels)


@torch.no_grad()
def evaluate(model, loader, device, amp_dtype):
    model.eval()
    hits, total = 0, 0
    for q, p in loader:
        q = {k: v.to(device, non_blocking=True) for k, v in q.items()}
        p = {k: v.to(device, non_blocking=True) for k, v in p.items()}
        with torch.autocast(device_type="cuda", enabled=amp_dtype is not None, dtype=amp_dtype or torch.float16):
            qe, pe = embed(model, q), embed(model, p)
        pred = (qe @ pe.T).argmax(dim=-1)
        hits += (pred == torch.arange(len(pred), device=device)).sum().item()
        total += len(pred)
    model.train()
    return hits / max(total, 1)


def main():
    args = parse_args()
    world_size, local_rank, device = setup_distributed()
    set_seed(args.seed + local_rank)

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModel.from_pretrained(args.model).to(device)
    model.gradient_checkpointing_enable()
    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank)

    train_ds = PairDataset(args.train, args.query_prefix)
    sampler = DistributedSampler(train_ds, shuffle=True) if world_size > 1 else None
    collate = Collator(tokenizer, args.max_len)
    train_loader = DataLoader(
        train_ds,
        batch_size=args.batch_size,
        shuffle=sampler is None,
        sampler=sampler,
        collate_fn=collate,
        num_workers=args.num_workers,
        pin_memory=True,
        drop_last=True,  # in-batch negatives want full batches
    )
    val_loader = None
    if args.val and is_main():
        val_loader = DataLoader(PairDataset(args.val, args.query_prefix), batch_size=64, collate_fn=collate)

    no_decay = ("bias", "LayerNorm.weight")
    params = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)], "weight_decay": 0.01},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(params, lr=args.lr, fused=torch.cuda.is_available())
    steps_per_epoch = math.ceil(len(train_loader) / args.grad_accum)
    total_steps = steps_per_epoch * args.epochs
    scheduler = get_linear_schedule_with_warmup(optimizer, int(total_steps * args.warmup_ratio), total_steps)

    amp_dtype = torch.bfloat16 if args.bf16 else (torch.float16 if args.fp16 else None)
    scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)

    step, t0 = 0, time.time()
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for i, (q, p) in enumerate(train_loader):
            q = {k: v.to(device, non_blocking=True) for k, v in q.items()}
            p = {k: v.to(device, non_blocking=True) for k, v in p.items()}
            with torch.cuda.amp.autocast(enabled=amp_dtype is not None, dtype=amp_dtype or torch.float16):
                loss = in_batch_loss(embed(model, q), embed(model, p), args.temperature) / args.grad_accum
            scaler.scale(loss).backward()
            if (i + 1) % args.grad_accum == 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad(set_to_none=True)
                scheduler.step()
                step += 1
                if step % 50 == 0 and is_main():
                    mem = torch.cuda.max_memory_allocated() / 2**30
                    print(
                        f"epoch {epoch} step {step}/{total_steps} loss {loss.item() * args.grad_accum:.4f} "
                        f"lr {scheduler.get_last_lr()[0]:.2e} mem {mem:.1f}G {time.time() - t0:.0f}s",
                        flush=True,
                    )
        if val_loader is not None:
            acc = evaluate(model.module if world_size > 1 else model, val_loader, device, amp_dtype)
            print(f"epoch {epoch}: val top-1 in-batch accuracy {acc:.3f}", flush=True)

    if is_main():
        os.makedirs(args.out, exist_ok=True)
        (model.module if world_size > 1 else model).save_pretrained(args.out)
        tokenizer.save_pretrained(args.out)
        print(f"saved to {args.out}")
    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
