#!/usr/bin/env python3
"""
Private fine-tuning of BERT-base on GLUE/SST-2 with Opacus.

Only the top encoder layers, the pooler and the classifier are trained (the rest is
frozen), which keeps per-sample gradient memory manageable on a single 16-24 GB GPU.
Physical batches are split with BatchMemoryManager so the logical (privacy) batch
size can be much larger than what fits on the device.
"""

import argparse
import logging
import math
import os
import random
import time

import numpy as np
import torch
from datasets import load_dataset
from opacus import PrivacyEngine
from opacus.utils.batch_memory_manager import BatchMemoryManager
from torch.utils.data import DataLoader
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification, DataCollatorWithPadding

logger = logging.getLogger("dp_bert_sst2")
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name", default="bert-base-cased")
    p.add_argument("--max_seq_len", type=int, default=128)
    p.add_argument("--logical_batch_size", type=int, default=1024)
    p.add_argument("--max_physical_batch_size", type=int, default=64)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--epsilon", type=float, default=8.0)
    p.add_argument("--delta", type=float, default=None)
    p.add_argument("--max_grad_norm", type=float, default=0.1)
    p.add_argument("--trainable_layers", type=int, default=2, help="number of top encoder layers left trainable")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--num_workers", type=int, default=4)
    p.add_argument("--output_dir", default="./out_dp_bert")
    p.add_argument("--gpu", type=int, default=0, help="index of the GPU to use")
    return p.parse_args()


def set_seed(seed: int):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def freeze_bottom_layers(model: BertForSequenceClassification, trainable_layers: int):
    trainable = [model.bert.pooler, model.classifier]
    n_layers = model.config.num_hidden_layers
    trainable += [model.bert.encoder.layer[i] for i in range(n_layers - trainable_layers, n_layers)]

    for p in model.parameters():
        p.requires_grad = False
    for module in trainable:
        for p in module.parameters():
            p.requires_grad = True

    n_train = sum(p.numel() for p in model.parameters() if p.requires_grad)
    n_total = sum(p.numel() for p in model.parameters())
    logger.info(f"Trainable parameters: {n_train:,} / {n_total:,}")


def build_loaders(args, tokenizer):
    raw = load_dataset("glue", "sst2")

    def tok(batch):
        return tokenizer(batch["sentence"], truncation=True, max_length=args.max_seq_len)

    enc = raw.map(tok, batched=True, remove_columns=["sentence", "idx"])
    enc = enc.rename_column("label", "labels")
    collator = DataCollatorWithPadding(tokenizer, padding="max_length", max_length=args.max_seq_len)

    train_loader = DataLoader(
        enc["train"],
        batch_size=args.logical_batch_size,
        shuffle=True,
        collate_fn=collator,
        num_workers=args.num_workers,
        pin_memory=True,
    )
    eval_loader = DataLoader(
        enc["validation"],
        batch_size=args.max_physical_batch_size,
        collate_fn=collator,
        num_workers=args.num_workers,
    )
    return train_loader, eval_loader


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct, total, losses = 0, 0, []
    for batch in loader:
        batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
        out = model(**batch)
        losses.append(out.loss.item())
        preds = out.logits.argmax(-1)
        correct += (preds == batch["labels"]).sum().item()
        total += batch["labels"].numel()
    model.train()
    return float(np.mean(losses)), correct / total


def main():
    args = parse_args()
    set_seed(args.seed)

    device = torch.device(f"cuda:{args.gpu}")
    torch.cuda.set_device(device)

    tokenizer = AutoTokenizer.from_pretrained(args.model_name)
    config = BertConfig.from_pretrained(args.model_name, num_labels=2)
    model = BertForSequenceClassification.from_pretrained(args.model_name, config=config)
    freeze_bottom_layers(model, args.trainable_layers)
    model = model.to(device)

    train_loader, eval_loader = build_loaders(args, tokenizer)
    delta = args.delta or 1.0 / len(train_loader.dataset)

    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=args.lr, eps=1e-8)

    privacy_engine = PrivacyEngine(accountant="prv")
    model, optimizer, train_loader = privacy_engine.make_private_with_epsilon(
        module=model,
        optimizer=optimizer,
        data_loader=train_loader,
        target_delta=delta,
        target_epsilon=args.epsilon,
        epochs=args.epochs,
        max_grad_norm=args.max_grad_norm,
        poisson_sampling=True,
    )
    logger.info(f"Noise multiplier: {optimizer.noise_multiplier:.3f}, delta={delta:.2e}")

    step = 0
    for epoch in range(1, args.epochs + 1):
        t0 = time.time()
        losses = []
        model.train()
        with BatchMemoryManager(
            data_loader=train_loader,
            max_physical_batch_size=args.max_physical_batch_size,
            optimizer=optimizer,
        ) as memory_safe_loader:
            for batch in memory_safe_loader:
                batch = {k: v.to(device) for k, v in batch.items()}
                optimizer.zero_grad(set_to_none=True)
                out = model(**batch)
                out.loss.backward()
                optimizer.step()
                losses.append(out.loss.item())

                if not optimizer._is_last_step_skipped:
                    step += 1
                    if step % 20 == 0:
                        eps = privacy_engine.get_epsilon(delta)
                        mem_gb = torch.cuda.max_memory_allocated(device) / 2**30
                        logger.info(
                            f"epoch {epoch} step {step} loss {np.mean(losses[-20:]):.4f} "
                            f"eps {eps:.2f} peak_mem {mem_gb:.1f}GB"
                        )

        torch.cuda.empty_cache()
        eval_loss, eval_acc = evaluate(model, eval_loader, device)
        logger.info(
            f"epoch {epoch} done in {time.time() - t0:.0f}s | eval loss {eval_loss:.4f} acc {eval_acc:.4f} "
            f"| eps {privacy_engine.get_epsilon(delta):.2f}"
        )

    os.makedirs(args.output_dir, exist_ok=True)
    model._module.save_pretrained(args.output_dir)
    tokenizer.save_pretrained(args.output_dir)


if __name__ == "__main__":
    main()
