"""
Fine-tune a sequence classifier with DDP + mixed precision, then write the artefacts that
Transformer_handler_generalized.py expects inside the .mar:

    torchrun --nproc_per_node 8 finetune_and_trace.py --model_name bert-base-uncased \
        --train_file data/train.jsonl --save_mode torchscript

    torch-model-archiver --model-name BERTSeqClassification --version 1.0 \
        --serialized-file Transformer_model/traced_model.pt \
        --handler ./Transformer_handler_generalized.py \
        --extra-files "Transformer_model/config.json,./setup_config.json,./index_to_name.json"
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
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from transformers import (
    AutoConfig,
    AutoModelForSequenceClassification,
    AutoTokenizer,
    get_linear_schedule_with_warmup,
)

try:
    from apex.optimizers import FusedAdam
except ImportError:
    FusedAdam = None


class JsonlDataset(Dataset):
    def __init__(self, path, tokenizer, labels, max_length):
        self.rows = [json.loads(line) for line in open(path)]
        self.tok = tokenizer
        self.label2id = {l: i for i, l in enumerate(labels)}
        self.max_length = max_length

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, idx):
        row = self.rows[idx]
        enc = self.tok(
            row["text"],
            max_length=self.max_length,
            truncation=True,
            padding="max_length",
            return_tensors="pt",
        )
        return {
            "input_ids": enc["input_ids"][0],
            "attention_mask": enc["attention_mask"][0],
            "labels": torch.tensor(self.label2id[row["label"]]),
        }


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name", default="bert-base-uncased")
    p.add_argument("--train_file", required=True)
    p.add_argument("--eval_file", default=None)
    p.add_argument("--labels", default="Not Accepted,Accepted")
    p.add_argument("--max_length", type=int, default=150)
    p.add_argument("--batch_size", type=int, default=32)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--lr", type=float, default=3e-5)
    p.add_argument("--warmup_ratio", type=float, default=0.06)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--save_mode", default="torchscript", choices=["torchscript", "pretrained"])
    p.add_argument("--output_dir", default="Transformer_model")
    p.add_argument("--fp16", action="store_true", default=True)
    return p.parse_args()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def setup_distributed():
    if "RANK" not in os.environ:
        return 0, 0, 1
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")
    return rank, local_rank, world_size


@torch.no_grad()
def evaluate(model, loader, device, fp16):
    model.eval()
    correct = total = 0
    loss_sum = 0.0
    for batch in loader:
        batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
        with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=fp16):
            out = model(
                input_ids=batch["input_ids"],
                attention_mask=batch["attention_mask"],
                labels=batch["labels"],
            )
        loss_sum += out[0].float().item() * batch["labels"].numel()
        pred = out[1].argmax(-1)
        correct += (pred == batch["labels"]).sum().item()
        total += batch["labels"].numel()
    stats = torch.tensor([loss_sum, correct, total], dtype=torch.float64, device=device)
    if dist.is_initialized():
        dist.all_reduce(stats)
    loss_sum, correct, total = stats.tolist()
    model.train()
    return loss_sum / max(total, 1), correct / max(total, 1)


def main():
    args = parse_args()
    rank, local_rank, world_size = setup_distributed()
    set_seed(args.seed + rank)
    device = torch.device(f"cuda:{local_rank}")
    labels = args.labels.split(",")

    tokenizer = AutoTokenizer.from_pretrained(args.model_name)
    config = AutoConfig.from_pretrained(args.model_name, num_labels=len(labels), torchscript=True)
    model = AutoModelForSequenceClassification.from_pretrained(args.model_name, config=config)
    model.to(device)

    dataset = JsonlDataset(args.train_file, tokenizer, labels, args.max_length)
    sampler = DistributedSampler(dataset, shuffle=True) if world_size > 1 else None
    loader = DataLoader(
        dataset,
        batch_size=args.batch_size,
        sampler=sampler,
        shuffle=sampler is None,
        num_workers=4,
        pin_memory=True,
        drop_last=True,
    )

    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank)

    no_decay = ["bias", "LayerNorm.weight"]
    grouped = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
         "weight_decay": 0.01},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
         "weight_decay": 0.0},
    ]
    if FusedAdam is not None:
        optimizer = FusedAdam(grouped, lr=args.lr, adam_w_mode=True)
    else:
        optimizer = torch.optim.AdamW(grouped, lr=args.lr)

    eval_loader = None
    if args.eval_file:
        eval_set = JsonlDataset(args.eval_file, tokenizer, labels, args.max_length)
        eval_sampler = DistributedSampler(eval_set, shuffle=False) if world_size > 1 else None
        eval_loader = DataLoader(eval_set, batch_size=args.batch_size * 2, sampler=eval_sampler,
                                 num_workers=2, pin_memory=True)

    total_steps = args.epochs * len(loader)
    scheduler = get_linear_schedule_with_warmup(
        optimizer, int(args.warmup_ratio * total_steps), total_steps
    )
    scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)

    step = 0
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        model.train()
        t0 = time.time()
        for batch in loader:
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            optimizer.zero_grad(set_to_none=True)
            with torch.cuda.amp.autocast(enabled=args.fp16):
                outputs = model(
                    input_ids=batch["input_ids"],
                    attention_mask=batch["attention_mask"],
                    labels=batch["labels"],
                )
                loss = outputs[0]
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            step += 1
            if rank == 0 and step % 50 == 0:
                print(
                    f"epoch {epoch} step {step}/{total_steps} loss {loss.item():.4f} "
                    f"lr {scheduler.get_last_lr()[0]:.2e} "
                    f"{(time.time() - t0) / 50:.3f}s/it"
                )
                t0 = time.time()
        if eval_loader is not None:
            eval_loss, eval_acc = evaluate(model, eval_loader, device, args.fp16)
            if rank == 0:
                print(f"epoch {epoch} eval loss {eval_loss:.4f} acc {eval_acc:.4f}")

    if rank == 0:
        os.makedirs(args.output_dir, exist_ok=True)
        raw_model = model.module if hasattr(model, "module") else model
        raw_model.eval()
        if args.save_mode == "torchscript":
            dummy = tokenizer(
                "Bloomberg has decided to publish a new report on global economic situation.",
                max_length=args.max_length,
                padding="max_length",
                truncation=True,
                return_tensors="pt",
            )
            input_ids = dummy["input_ids"].cuda()
            attention_mask = dummy["attention_mask"].cuda()
            with torch.no_grad():
                traced = torch.jit.trace(raw_model, [input_ids, attention_mask])
            torch.jit.save(traced, os.path.join(args.output_dir, "traced_model.pt"))
        else:
            raw_model.save_pretrained(args.output_dir)
        tokenizer.save_pretrained(args.output_dir)
        config.save_pretrained(args.output_dir)
        with open("index_to_name.json", "w") as fp:
            json.dump({str(i): l for i, l in enumerate(labels)}, fp)
        with open("setup_config.json", "w") as fp:
            json.dump(
                {
                    "model_name": args.model_name,
                    "mode": "sequence_classification",
                    "do_lower_case": True,
                    "num_labels": str(len(labels)),
                    "save_mode": args.save_mode,
                    "max_length": str(args.max_length),
                    "captum_explanation": False,
                    "embedding_name": "bert",
                    "FasterTransformer": False,
                    "BetterTransformer": False,
                    "model_parallel": False,
                },
                fp,
                indent=2,
            )

    if world_size > 1:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
