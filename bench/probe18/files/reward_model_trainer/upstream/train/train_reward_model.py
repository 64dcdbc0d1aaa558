"""Train a Bradley-Terry reward model on pairwise preference data.

Plain PyTorch loop (no HF Trainer) so the loss and the logging stay readable.
Launch with: torchrun --nproc_per_node 8 train/train_reward_model.py --model meta-llama/Meta-Llama-3-8B
"""
import argparse
import math
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from datasets import load_dataset
from deepspeed.ops.adam import FusedAdam
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_cosine_schedule_with_warmup


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--dataset", default="Anthropic/hh-rlhf")
    p.add_argument("--max_len", type=int, default=1024)
    p.add_argument("--batch_size", type=int, default=4, help="per-GPU pairs")
    p.add_argument("--lr", type=float, default=9e-6)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--fp16", action="store_true", help="fp16 + loss scaling instead of bf16")
    p.add_argument("--margin", type=float, default=0.0)
    p.add_argument("--output_dir", default="./rm-out")
    return p.parse_args()


def setup():
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    torch.backends.cuda.matmul.allow_tf32 = True
    return local_rank


def collate(tokenizer, max_len):
    def fn(batch):
        chosen = [b["chosen"] for b in batch]
        rejected = [b["rejected"] for b in batch]
        enc = tokenizer(chosen + rejected, max_length=max_len, truncation=True, padding=True, return_tensors="pt")
        return enc["input_ids"], enc["attention_mask"]
    return fn


def main():
    args = parse_args()
    local_rank = setup()
    rank = dist.get_rank()
    world = dist.get_world_size()

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
    model = AutoModelForSequenceClassification.from_pretrained(
        args.model, num_labels=1, torch_dtype=torch.bfloat16 if not args.fp16 else torch.float32,
        attn_implementation="flash_attention_2" if not args.fp16 else "sdpa",
    )
    model.config.pad_token_id = tokenizer.pad_token_id
    model.gradient_checkpointing_enable()
    model = model.cuda()
    model = DDP(model, device_ids=[local_rank], output_device=local_rank, find_unused_parameters=False)

    ds = load_dataset(args.dataset, split="train")
    sampler = DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=True)
    loader = DataLoader(ds, batch_size=args.batch_size, sampler=sampler, num_workers=4, pin_memory=True,
                        collate_fn=collate(tokenizer, args.max_len))

    optimizer = FusedAdam(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.0, adam_w_mode=True)
    total = args.epochs * len(loader)
    scheduler = get_cosine_schedule_with_warmup(optimizer, int(0.03 * total), total)
    scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)

    step = 0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        t0 = time.time()
        for input_ids, attention_mask in loader:
            input_ids = input_ids.cuda(non_blocking=True)
            attention_mask = attention_mask.cuda(non_blocking=True)
            with torch.cuda.amp.autocast(enabled=args.fp16, dtype=torch.float16):
                rewards = model(input_ids=input_ids, attention_mask=attention_mask).logits.squeeze(-1)
            n = rewards.shape[0] // 2
            chosen, rejected = rewards[:n].float(), rewards[n:].float()
            loss = -F.logsigmoid(chosen - rejected - args.margin).mean()

            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            scheduler.step()
            step += 1

            if step % 10 == 0:
                acc = (chosen > rejected).float().mean()
                stats = torch.stack([loss.detach(), acc, grad_norm.float()])
                dist.all_reduce(stats, op=dist.ReduceOp.AVG)
                if rank == 0:
                    mem = torch.cuda.max_memory_allocated() / 2**30
                    dt = (time.time() - t0) / 10
                    print(f"epoch {epoch} step {step} loss {stats[0]:.4f} acc {stats[1]:.3f} "
                          f"gnorm {stats[2]:.2f} {dt:.2f}s/it peak_mem {mem:.1f}GiB")
                    t0 = time.time()

    if rank == 0:
        os.makedirs(args.output_dir, exist_ok=True)
        model.module.save_pretrained(args.output_dir, safe_serialization=True)
        tokenizer.save_pretrained(args.output_dir)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
