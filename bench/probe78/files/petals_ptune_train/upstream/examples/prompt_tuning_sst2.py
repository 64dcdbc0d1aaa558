"""
Prompt-tuning a distributed BLOOM for SST-2 sentiment classification.

Only the trainable prompts (and the classification head) live on this machine; the transformer blocks run on
remote Petals servers. Mixed precision keeps the local part cheap.

    python prompt_tuning_sst2.py --tuning-mode deep_ptune --num-prefix-tokens 8
"""
import argparse
import os
import random

import numpy as np
import torch
import torch.nn.functional as F
import wandb
from datasets import load_dataset
from torch.optim import AdamW
from torch.utils.data import DataLoader
from tqdm import tqdm
from transformers import BloomTokenizerFast, get_scheduler

from petals import DistributedBloomForSequenceClassification

MODEL_NAME = "bigscience/bloom-7b1-petals"
DEVICE = 'cuda'
SEED = 42
MODEL_MAX_LENGTH = 64


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", type=str, default=MODEL_NAME)
    parser.add_argument("--tuning-mode", type=str, default="ptune", choices=["ptune", "deep_ptune"])
    parser.add_argument("--num-prefix-tokens", type=int, default=16)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--weight-decay", type=float, default=0.0)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--num-workers", type=int, default=4)
    parser.add_argument("--initial-peers", type=str, nargs="*", default=None)
    parser.add_argument("--wandb-project", type=str, default="bloom-sst-2")
    return parser.parse_args()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def build_dataloaders(tokenizer, batch_size, num_workers):
    dataset = load_dataset("glue", "sst2")

    def preprocess_function(examples):
        return tokenizer(examples["sentence"], padding="max_length", truncation=True)

    tokenized = dataset.map(preprocess_function, batched=True)
    tokenized = tokenized.remove_columns(["sentence", "idx", "attention_mask"])
    tokenized = tokenized.rename_column("label", "labels")
    tokenized.set_format("torch")

    train_dataset = tokenized["train"].shuffle(seed=SEED)
    valid_dataset = tokenized["validation"].shuffle(seed=SEED)
    train_dataloader = DataLoader(
        train_dataset,
        shuffle=True,
        batch_size=batch_size,
        drop_last=True,
        num_workers=num_workers,
        pin_memory=True,
        pin_memory_device="cuda",
    )
    valid_dataloader = DataLoader(valid_dataset, batch_size=batch_size, num_workers=num_workers, pin_memory=True)
    return train_dataloader, valid_dataloader


@torch.no_grad()
def evaluate(model, dataloader):
    model.eval()
    correct, total = 0, 0
    for batch in dataloader:
        batch = {k: v.to(DEVICE, non_blocking=True) for k, v in batch.items()}
        with torch.autocast("cuda", dtype=torch.float16):
            logits = model(input_ids=batch["input_ids"]).logits
        predictions = logits.argmax(dim=-1)
        correct += (predictions == batch["labels"]).sum().item()
        total += batch["labels"].numel()
    model.train()
    return correct / max(total, 1)


def main():
    args = parse_args()
    set_seed(SEED)

    tokenizer = BloomTokenizerFast.from_pretrained(args.model)
    tokenizer.padding_side = "right"
    tokenizer.model_max_length = MODEL_MAX_LENGTH

    model = DistributedBloomForSequenceClassification.from_pretrained(
        args.model,
        pre_seq_len=args.num_prefix_tokens,
        tuning_mode=args.tuning_mode,
        initial_peers=args.initial_peers,
    ).float().to(DEVICE)
    model.config.pad_token_id = tokenizer.pad_token_id

    for n, p in model.named_parameters():
        if p.requires_grad:
            print(n, p.requires_grad, p.device)

    train_dataloader, valid_dataloader = build_dataloaders(tokenizer, args.batch_size, args.num_workers)

    optimizer = AdamW([p for p in model.parameters() if p.requires_grad], lr=args.lr,
                      weight_decay=args.weight_decay)
    lr_scheduler = get_scheduler(
        name="linear", optimizer=optimizer, num_warmup_steps=0,
        num_training_steps=len(train_dataloader) * args.epochs,
    )
    scaler = torch.cuda.amp.GradScaler()

    wandb.init(
        project=args.wandb_project,
        config={
            "num_epochs": args.epochs,
            "num_samples": len(train_dataloader.dataset),
            "batch_size": args.batch_size,
            "learning_rate": args.lr,
            "weight_decay": args.weight_decay,
            "num_prefix_tokens": args.num_prefix_tokens,
            "model_name": args.model,
            "seed": SEED,
        },
    )

    step = 0
    for epoch in range(args.epochs):
        for batch in tqdm(train_dataloader, desc=f"epoch {epoch}"):
            batch = {k: v.to(DEVICE, non_blocking=True) for k, v in batch.items()}

            model.train()
            with torch.autocast(device_type="cuda", dtype=torch.float16):
                outputs = model(**batch)
                loss = outputs.loss
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            lr_scheduler.step()
            optimizer.zero_grad(set_to_none=True)

            wandb.log({"Train Loss": loss.item(), "lr": lr_scheduler.get_last_lr()[0]}, step=step)
            step += 1

        accuracy = evaluate(model, valid_dataloader)
        wandb.log({"Valid Accuracy": accuracy}, step=step)
        print(f"epoch {epoch}: valid accuracy {accuracy:.4f}")

    os.makedirs("checkpoints", exist_ok=True)
    trainable = {n: p.detach().cpu() for n, p in model.named_parameters() if p.requires_grad}
    torch.save(trainable, os.path.join("checkpoints", f"sst2_{args.tuning_mode}_prompts.pt"))


if __name__ == "__main__":
    main()
