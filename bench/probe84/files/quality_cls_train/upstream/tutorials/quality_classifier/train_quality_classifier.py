"""
Fine-tune a DeBERTa-v3 quality classifier (Low / Medium / High) on human + LLM-annotated
web documents, the recipe behind nvidia/quality-classifier-deberta and the FineWeb-Edu
annotator models.

Launch (one node, 8 GPUs):
    torchrun --nproc_per_node 8 train_quality_classifier.py \
        --train data/quality/train.jsonl --val data/quality/val.jsonl --out runs/deberta-quality
"""

import argparse
import json
import math
import os
import random
import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from huggingface_hub import PyTorchModelHubMixin
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoConfig, AutoModel, AutoTokenizer, get_cosine_schedule_with_warmup

LABELS = ["Low", "Medium", "High"]


@dataclass
class TrainConfig:
    base_model: str = "microsoft/deberta-v3-base"
    max_len: int = 1024
    fc_dropout: float = 0.2
    lr: float = 2e-5
    head_lr: float = 1e-3
    weight_decay: float = 0.01
    epochs: int = 3
    batch_size: int = 16
    grad_accum: int = 2
    warmup_ratio: float = 0.06
    max_grad_norm: float = 1.0
    seed: int = 42


class QualityDataset(Dataset):
    def __init__(self, path: str, tokenizer, max_len: int):
        self.rows = []
        with open(path) as f:
            for line in f:
                ex = json.loads(line)
                self.rows.append((ex["text"], LABELS.index(ex["label"])))
        self.tokenizer = tokenizer
        self.max_len = max_len

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        text, label = self.rows[i]
        enc = self.tokenizer(text, truncation=True, max_length=self.max_len)
        return {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"], "label": label}


def collate(batch, pad_id):
    max_len = max(len(b["input_ids"]) for b in batch)
    ids = torch.full((len(batch), max_len), pad_id, dtype=torch.long)
    mask = torch.zeros((len(batch), max_len), dtype=torch.long)
    for i, b in enumerate(batch):
        n = len(b["input_ids"])
        ids[i, :n] = torch.tensor(b["input_ids"])
        mask[i, :n] = 1
    labels = torch.tensor([b["label"] for b in batch])
    return ids, mask, labels


class QualityModel(nn.Module, PyTorchModelHubMixin):
    def __init__(self, config: dict):
        super().__init__()
        self.model = AutoModel.from_pretrained(config["base_model"])
        self.dropout = nn.Dropout(config["fc_dropout"])
        self.fc = nn.Linear(self.model.config.hidden_size, len(config["id2label"]))

    def forward(self, input_ids, attention_mask):
        h = self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        return self.fc(self.dropout(h[:, 0, :]))


def setup_distributed():
    if "RANK" not in os.environ:
        return 0, 1, 0
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")
    return rank, world_size, local_rank


def seed_everything(seed: int):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


@torch.no_grad()
def evaluate(model, loader, device, amp_dtype):
    model.eval()
    correct = torch.zeros(1, device=device)
    total = torch.zeros(1, device=device)
    loss_sum = torch.zeros(1, device=device)
    for ids, mask, labels in loader:
        ids, mask, labels = ids.to(device), mask.to(device), labels.to(device)
        with torch.autocast("cuda", dtype=amp_dtype):
            logits = model(ids, mask)
        loss_sum += F.cross_entropy(logits.float(), labels, reduction="sum")
        correct += (logits.argmax(-1) == labels).sum()
        total += labels.numel()
    if dist.is_initialized():
        for t in (correct, total, loss_sum):
            dist.all_reduce(t)
    model.train()
    return (correct / total).item(), (loss_sum / total).item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--train", required=True)
    p.add_argument("--val", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--fp16", action="store_true", help="fp16 + GradScaler instead of bf16")
    p.add_argument("--fused-adam", action="store_true", help="use apex FusedAdam")
    args = p.parse_args()
    cfg = TrainConfig()

    rank, world_size, local_rank = setup_distributed()
    device = torch.device("cuda", local_rank)
    seed_everything(cfg.seed + rank)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    tokenizer = AutoTokenizer.from_pretrained(cfg.base_model)
    train_ds = QualityDataset(args.train, tokenizer, cfg.max_len)
    val_ds = QualityDataset(args.val, tokenizer, cfg.max_len)
    train_sampler = DistributedSampler(train_ds, shuffle=True) if world_size > 1 else None
    val_sampler = DistributedSampler(val_ds, shuffle=False) if world_size > 1 else None
    coll = lambda b: collate(b, tokenizer.pad_token_id)  # noqa: E731
    train_loader = DataLoader(train_ds, batch_size=cfg.batch_size, sampler=train_sampler, shuffle=train_sampler is None,
                              num_workers=8, pin_memory=True, collate_fn=coll, drop_last=True)
    val_loader = DataLoader(val_ds, batch_size=cfg.batch_size * 2, sampler=val_sampler, num_workers=4,
                            pin_memory=True, collate_fn=coll)

    model_cfg = {"base_model": cfg.base_model, "fc_dropout": cfg.fc_dropout,
                 "id2label": dict(enumerate(LABELS)), "label2id": {l: i for i, l in enumerate(LABELS)}}
    model = QualityModel(model_cfg).cuda()
    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], find_unused_parameters=False)

    backbone = [p_ for n, p_ in model.named_parameters() if "fc." not in n]
    head = [p_ for n, p_ in model.named_parameters() if "fc." in n]
    groups = [{"params": backbone, "lr": cfg.lr}, {"params": head, "lr": cfg.head_lr}]
    if args.fused_adam:
        from apex.optimizers import FusedAdam

        optimizer = FusedAdam(groups, lr=cfg.lr, weight_decay=cfg.weight_decay, adam_w_mode=True)
    else:
        optimizer = torch.optim.AdamW(groups, lr=cfg.lr, weight_decay=cfg.weight_decay, fused=True)

    steps_per_epoch = math.ceil(len(train_loader) / cfg.grad_accum)
    total_steps = steps_per_epoch * cfg.epochs
    scheduler = get_cosine_schedule_with_warmup(optimizer, int(cfg.warmup_ratio * total_steps), total_steps)

    amp_dtype = torch.float16 if args.fp16 else torch.bfloat16
    scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)

    step, best_acc, t0 = 0, 0.0, time.time()
    model.train()
    for epoch in range(cfg.epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        for it, (ids, mask, labels) in enumerate(train_loader):
            ids = ids.cuda(non_blocking=True)
            mask = mask.cuda(non_blocking=True)
            labels = labels.cuda(non_blocking=True)
            with torch.cuda.amp.autocast(dtype=amp_dtype):
                logits = model(ids, mask)
                loss = F.cross_entropy(logits.float(), labels) / cfg.grad_accum
            scaler.scale(loss).backward()
            if (it + 1) % cfg.grad_accum != 0:
                continue
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            scheduler.step()
            step += 1
            if step % 50 == 0 and rank == 0:
                mem = torch.cuda.max_memory_allocated() / 2**30
                print(f"epoch {epoch} step {step}/{total_steps} loss {loss.item() * cfg.grad_accum:.4f} "
                      f"lr {scheduler.get_last_lr()[0]:.2e} mem {mem:.1f}GiB {time.time() - t0:.0f}s", flush=True)

        acc, val_loss = evaluate(model, val_loader, device, amp_dtype)
        if rank == 0:
            print(f"epoch {epoch}: val acc {acc:.4f} val loss {val_loss:.4f}", flush=True)
            if acc > best_acc:
                best_acc = acc
                to_save = model.module if isinstance(model, DDP) else model
                to_save.save_pretrained(args.out, config=model_cfg)
                tokenizer.save_pretrained(args.out)

    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
