#!/usr/bin/env python
# Supervised fine-tuning for Yi / Baichuan2 base models with DeepSpeed ZeRO-3.
# Usage: deepspeed --hostfile hostfile finetune/sft_zero3.py --model_name_or_path 01-ai/Yi-6B ...
import argparse
import json
import math
import os
import time

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

import deepspeed
from deepspeed.ops.adam import FusedAdam, DeepSpeedCPUAdam
from transformers import AutoModelForCausalLM, AutoTokenizer, get_scheduler
from transformers.integrations import HfDeepSpeedConfig

IGNORE_INDEX = -100


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name_or_path", type=str, required=True)
    p.add_argument("--data_path", type=str, required=True)
    p.add_argument("--output_dir", type=str, default="./output")
    p.add_argument("--max_seq_len", type=int, default=4096)
    p.add_argument("--per_device_train_batch_size", type=int, default=1)
    p.add_argument("--gradient_accumulation_steps", type=int, default=8)
    p.add_argument("--learning_rate", type=float, default=2e-5)
    p.add_argument("--weight_decay", type=float, default=0.0)
    p.add_argument("--num_train_epochs", type=int, default=3)
    p.add_argument("--warmup_ratio", type=float, default=0.03)
    p.add_argument("--offload", action="store_true")
    p.add_argument("--gradient_checkpointing", action="store_true")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--local_rank", type=int, default=-1)
    p.add_argument("--ds_config", type=str, default="configs/ds_z3_config.json")
    p = deepspeed.add_config_arguments(p)
    return p.parse_args()


class SFTDataset(Dataset):
    """Baichuan2-style conversation dataset: user / assistant turns, loss only on assistant tokens."""

    def __init__(self, path, tokenizer, max_len, user_tokens=(195,), assistant_tokens=(196,)):
        with open(path, encoding="utf-8") as f:
            self.data = [json.loads(line) for line in f]
        self.tokenizer = tokenizer
        self.max_len = max_len
        self.user_tokens = list(user_tokens)
        self.assistant_tokens = list(assistant_tokens)

    def __len__(self):
        return len(self.data)

    def preprocess(self, example):
        input_ids, labels = [], []
        for message in example["conversations"]:
            value_ids = self.tokenizer.encode(message["value"])
            if message["from"] == "human":
                input_ids += self.user_tokens + value_ids
                labels += [self.tokenizer.eos_token_id] + [IGNORE_INDEX] * len(value_ids)
            else:
                input_ids += self.assistant_tokens + value_ids
                labels += [IGNORE_INDEX] + value_ids
        input_ids.append(self.tokenizer.eos_token_id)
        labels.append(self.tokenizer.eos_token_id)
        input_ids = input_ids[: self.max_len]
        labels = labels[: self.max_len]
        pad = self.max_len - len(input_ids)
        input_ids += [self.tokenizer.pad_token_id] * pad
        labels += [IGNORE_INDEX] * pad
        input_ids = torch.LongTensor(input_ids)
        labels = torch.LongTensor(labels)
        return {"input_ids": input_ids, "labels": labels,
                "attention_mask": input_ids.ne(self.tokenizer.pad_token_id)}

    def __getitem__(self, idx):
        return self.preprocess(self.data[idx])


def get_optimizer_grouped_parameters(model, weight_decay, no_decay=("bias", "norm.weight", "ln_f.weight")):
    return [
        {"params": [p for n, p in model.named_parameters()
                    if not any(nd in n for nd in no_decay) and p.requires_grad],
         "weight_decay": weight_decay},
        {"params": [p for n, p in model.named_parameters()
                    if any(nd in n for nd in no_decay) and p.requires_grad],
         "weight_decay": 0.0},
    ]


def print_rank_0(msg):
    if dist.get_rank() == 0:
        print(msg, flush=True)


def main():
    args = parse_args()
    torch.cuda.set_device(args.local_rank)
    device = torch.device(f"cuda:{args.local_rank}")
    deepspeed.init_distributed()
    torch.manual_seed(args.seed)

    with open(args.ds_config) as f:
        ds_config = json.load(f)
    ds_config["train_micro_batch_size_per_gpu"] = args.per_device_train_batch_size
    ds_config["gradient_accumulation_steps"] = args.gradient_accumulation_steps
    ds_config["train_batch_size"] = (args.per_device_train_batch_size * dist.get_world_size()
                                     * args.gradient_accumulation_steps)
    # must be alive before from_pretrained so that ZeRO-3 partitions weights while loading
    dschf = HfDeepSpeedConfig(ds_config)  # noqa: F841

    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path, use_fast=False, trust_remote_code=True)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token_id = 0
    model = AutoModelForCausalLM.from_pretrained(
        args.model_name_or_path, torch_dtype=torch.bfloat16, trust_remote_code=True,
        attn_implementation="flash_attention_2",
    )
    if args.gradient_checkpointing:
        model.gradient_checkpointing_enable()

    train_dataset = SFTDataset(args.data_path, tokenizer, args.max_seq_len)
    train_loader = DataLoader(train_dataset, sampler=DistributedSampler(train_dataset),
                              batch_size=args.per_device_train_batch_size, num_workers=4, pin_memory=True)

    groups = get_optimizer_grouped_parameters(model, args.weight_decay)
    AdamOptimizer = DeepSpeedCPUAdam if args.offload else FusedAdam
    optimizer = AdamOptimizer(groups, lr=args.learning_rate, betas=(0.9, 0.95))
    num_update_steps_per_epoch = math.ceil(len(train_loader) / args.gradient_accumulation_steps)
    total_steps = args.num_train_epochs * num_update_steps_per_epoch
    lr_scheduler = get_scheduler("cosine", optimizer=optimizer,
                                 num_warmup_steps=int(args.warmup_ratio * total_steps),
                                 num_training_steps=total_steps)

    model, optimizer, _, lr_scheduler = deepspeed.initialize(
        model=model, optimizer=optimizer, args=args, config=ds_config,
        lr_scheduler=lr_scheduler, dist_init_required=True)

    for epoch in range(args.num_train_epochs):
        train_loader.sampler.set_epoch(epoch)
        model.train()
        t0 = time.time()
        for step, batch in enumerate(train_loader):
            batch = {k: v.to(device) for k, v in batch.items()}
            loss = model(**batch, use_cache=False).loss
            model.backward(loss)
            model.step()
            if step % 10 == 0:
                torch.cuda.synchronize()
                elapsed = time.time() - t0
                t0 = time.time()
                print_rank_0(f"epoch {epoch} step {step} loss {loss.item():.4f} "
                             f"lr {lr_scheduler.get_last_lr()[0]:.2e} {elapsed / 10:.2f}s/it "
                             f"mem {torch.cuda.max_memory_reserved() / 2**30:.1f}G")
        model.save_checkpoint(args.output_dir, tag=f"epoch{epoch}")

    # gather the ZeRO-3 shards and save a HF checkpoint on rank 0
    state_dict = model._zero3_consolidated_16bit_state_dict()
    if dist.get_rank() == 0:
        model.module.save_pretrained(args.output_dir, state_dict=state_dict, safe_serialization=True)
        tokenizer.save_pretrained(args.output_dir)


if __name__ == "__main__":
    main()
