"""
Train a Math-Shepherd style process reward model.

The PRM is a causal LM. At every step tag "ки" we read the logits of the two candidate tokens
"+" and "-" and train a 2-way softmax on them with the automatically annotated step label
(hard: 0/1, soft: the fraction of successful rollouts). Nothing else in the sequence is supervised.

Launch with torchrun, one process per GPU (see scripts/train_prm.sh).
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
from transformers import AutoModelForCausalLM, AutoTokenizer, get_cosine_schedule_with_warmup

STEP_TAG = "ки"
GOOD_TOKEN, BAD_TOKEN = "+", "-"

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name_or_path", type=str, default="mistralai/Mistral-7B-v0.1")
    p.add_argument("--train_file", type=str, required=True)
    p.add_argument("--eval_file", type=str, default=None)
    p.add_argument("--output_dir", type=str, required=True)
    p.add_argument("--max_length", type=int, default=1024)
    p.add_argument("--per_device_batch_size", type=int, default=4)
    p.add_argument("--grad_accum", type=int, default=4)
    p.add_argument("--lr", type=float, default=2e-6)
    p.add_argument("--weight_decay", type=float, default=0.0)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--warmup_ratio", type=float, default=0.03)
    p.add_argument("--soft_label", action="store_true")
    p.add_argument("--gradient_checkpointing", action="store_true")
    p.add_argument("--num_workers", type=int, default=4)
    p.add_argument("--log_every", type=int, default=10)
    p.add_argument("--save_every", type=int, default=1000)
    p.add_argument("--seed", type=int, default=42)
    return p.parse_args()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


class StepLabelDataset(Dataset):
    """Reads the math-shepherd jsonl: `input` has step tags, `label` has +/- in their place."""

    def __init__(self, path, tokenizer, max_length, soft_label=False):
        self.items = []
        self.tok = tokenizer
        self.max_length = max_length
        self.soft = soft_label
        self.step_tag_id = tokenizer.encode(f" {STEP_TAG}", add_special_tokens=False)[-1]
        with open(path) as f:
            for line in f:
                self.items.append(json.loads(line))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        ex = self.items[idx]
        ids = self.tok.encode(ex["input"], add_special_tokens=True)[: self.max_length]
        tag_pos = [i for i, t in enumerate(ids) if t == self.step_tag_id]
        if self.soft and "soft_labels" in ex:
            targets = [float(x) for x in ex["soft_labels"]]
        else:
            marks = [ch for ch in ex["label"].split() if ch in (GOOD_TOKEN, BAD_TOKEN)]
            targets = [1.0 if m == GOOD_TOKEN else 0.0 for m in marks]
        n = min(len(tag_pos), len(targets))
        return {
            "input_ids": torch.tensor(ids, dtype=torch.long),
            "tag_pos": torch.tensor(tag_pos[:n], dtype=torch.long),
            "targets": torch.tensor(targets[:n], dtype=torch.float),
        }


def collate(batch, pad_id):
    max_len = max(b["input_ids"].numel() for b in batch)
    input_ids = torch.full((len(batch), max_len), pad_id, dtype=torch.long)
    attn = torch.zeros((len(batch), max_len), dtype=torch.long)
    rows, cols, targets = [], [], []
    for i, b in enumerate(batch):
        n = b["input_ids"].numel()
        input_ids[i, :n] = b["input_ids"]
        attn[i, :n] = 1
        rows.append(torch.full_like(b["tag_pos"], i))
        cols.append(b["tag_pos"])
        targets.append(b["targets"])
    return {
        "input_ids": input_ids,
        "attention_mask": attn,
        "rows": torch.cat(rows),
        "cols": torch.cat(cols),
        "targets": torch.cat(targets),
    }


def prm_loss(logits, rows, cols, targets, cand_ids):
    step_logits = logits[rows, cols][:, cand_ids]  # [num_steps, 2] -> (+, -)
    logp = F.log_softmax(step_logits.float(), dim=-1)
    # soft cross entropy: target distribution (p, 1 - p)
    loss = -(targets * logp[:, 0] + (1 - targets) * logp[:, 1]).mean()
    with torch.no_grad():
        acc = ((logp[:, 0].exp() > 0.5).float() == (targets > 0.5).float()).float().mean()
    return loss, acc


@torch.no_grad()
def evaluate(model, loader, cand_ids, device):
    model.eval()
    tot_loss, tot_acc, n = 0.0, 0.0, 0
    for batch in loader:
        batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
        with torch.cuda.amp.autocast(enabled=True, dtype=torch.bfloat16):
            logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        loss, acc = prm_loss(logits, batch["rows"], batch["cols"], batch["targets"], cand_ids)
        tot_loss += loss.item()
        tot_acc += acc.item()
        n += 1
    stats = torch.tensor([tot_loss, tot_acc, n], device=device)
    dist.all_reduce(stats)
    model.train()
    return (stats[0] / stats[2]).item(), (stats[1] / stats[2]).item()


def main():
    args = parse_args()
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(local_rank)
    device = torch.device(f"cuda:{local_rank}")
    set_seed(args.seed + rank)
    is_main = rank == 0

    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
    tokenizer.pad_token_id = 0
    cand_ids = tokenizer.encode(f"{GOOD_TOKEN} {BAD_TOKEN}", add_special_tokens=False)[1:]  # [648, 387] for mistral
    if is_main:
        print(f"candidate token ids (+, -): {cand_ids}")

    model = AutoModelForCausalLM.from_pretrained(
        args.model_name_or_path,
        torch_dtype=torch.bfloat16,
        attn_implementation="flash_attention_2",
    )
    if args.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    model.to(device)
    model = DDP(model, device_ids=[local_rank], output_device=local_rank, find_unused_parameters=False)

    train_ds = StepLabelDataset(args.train_file, tokenizer, args.max_length, args.soft_label)
    sampler = DistributedSampler(train_ds, num_replicas=world, rank=rank, shuffle=True, seed=args.seed)
    loader = DataLoader(
        train_ds,
        batch_size=args.per_device_batch_size,
        sampler=sampler,
        num_workers=args.num_workers,
        pin_memory=True,
        collate_fn=lambda b: collate(b, tokenizer.pad_token_id),
        drop_last=True,
    )
    eval_loader = None
    if args.eval_file:
        eval_ds = StepLabelDataset(args.eval_file, tokenizer, args.max_length, args.soft_label)
        eval_loader = DataLoader(
            eval_ds,
            batch_size=args.per_device_batch_size,
            sampler=DistributedSampler(eval_ds, num_replicas=world, rank=rank, shuffle=False),
            num_workers=2, pin_memory=True,
            collate_fn=lambda b: collate(b, tokenizer.pad_token_id),
        )

    no_decay = ["bias", "norm"]
    groups = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
         "weight_decay": args.weight_decay},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
         "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, 0.95), fused=True)
    steps_per_epoch = len(loader) // args.grad_accum
    total_steps = steps_per_epoch * args.epochs
    scheduler = get_cosine_schedule_with_warmup(optimizer, int(args.warmup_ratio * total_steps), total_steps)

    step, t0 = 0, time.time()
    model.train()
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for it, batch in enumerate(loader):
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            sync = (it + 1) % args.grad_accum == 0
            ctx = model.no_sync() if not sync else torch.enable_grad()
            with ctx:
                with torch.cuda.amp.autocast(dtype=torch.bfloat16):
                    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
                loss, acc = prm_loss(logits, batch["rows"], batch["cols"], batch["targets"], cand_ids)
                (loss / args.grad_accum).backward()
            if not sync:
                continue
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1

            if is_main and step % args.log_every == 0:
                elapsed = time.time() - t0
                mem = torch.cuda.max_memory_allocated() / 2**30
                print(
                    f"epoch {epoch} step {step}/{total_steps} loss {loss.item():.4f} step_acc {acc.item():.3f} "
                    f"lr {scheduler.get_last_lr()[0]:.2e} {elapsed / args.log_every:.2f}s/it peak_mem {mem:.1f}GB",
                    flush=True,
                )
                t0 = time.time()
            if eval_loader is not None and step % args.save_every == 0:
                ev_loss, ev_acc = evaluate(model, eval_loader, cand_ids, device)
                if is_main:
                    print(f"[eval] step {step} loss {ev_loss:.4f} step_acc {ev_acc:.3f}", flush=True)
            if is_main and step % args.save_every == 0:
                save_dir = os.path.join(args.output_dir, f"checkpoint-{step}")
                model.module.save_pretrained(save_dir, safe_serialization=True)
                tokenizer.save_pretrained(save_dir)

    if is_main:
        model.module.save_pretrained(args.output_dir, safe_serialization=True)
        tokenizer.save_pretrained(args.output_dir)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
