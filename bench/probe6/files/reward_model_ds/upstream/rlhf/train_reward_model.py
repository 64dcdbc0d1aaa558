"""Pairwise (Bradley-Terry) reward-model training on chosen/rejected pairs with DeepSpeed ZeRO-2.

deepspeed --num_gpus 8 rlhf/train_reward_model.py --model_name_or_path ... --data_path Anthropic/hh-rlhf
"""
import argparse
import math
import os

import deepspeed
import torch
import torch.nn as nn
import torch.nn.functional as F
from datasets import load_dataset
from deepspeed.accelerator import get_accelerator
from deepspeed.ops.adam import FusedAdam
from torch.utils.data import DataLoader, DistributedSampler
from transformers import AutoModel, AutoTokenizer, get_scheduler


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name_or_path", required=True)
    p.add_argument("--data_path", default="Anthropic/hh-rlhf")
    p.add_argument("--max_seq_len", type=int, default=512)
    p.add_argument("--per_device_batch_size", type=int, default=8)
    p.add_argument("--lr", type=float, default=9.65e-6)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--zero_stage", type=int, default=2)
    p.add_argument("--gradient_checkpointing", action="store_true")
    p.add_argument("--local_rank", type=int, default=-1)
    p.add_argument("--output_dir", default="rm_out")
    p = deepspeed.add_config_arguments(p)
    return p.parse_args()


class RewardModel(nn.Module):
    def __init__(self, base, pad_id):
        super().__init__()
        self.base = base
        self.pad_id = pad_id
        self.v_head = nn.Linear(base.config.hidden_size, 1, bias=False)

    def forward(self, input_ids, attention_mask):
        h = self.base(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        values = self.v_head(h).squeeze(-1)
        last = attention_mask.sum(dim=1) - 1
        return values.gather(1, last[:, None]).squeeze(1)


def collate(batch, tok, max_len):
    texts = [b["chosen"] for b in batch] + [b["rejected"] for b in batch]
    enc = tok(texts, max_length=max_len, padding="max_length", truncation=True, return_tensors="pt")
    return enc["input_ids"], enc["attention_mask"]


def ds_config(args, world):
    return {
        "train_batch_size": args.per_device_batch_size * world,
        "train_micro_batch_size_per_gpu": args.per_device_batch_size,
        "bf16": {"enabled": True},
        "zero_optimization": {"stage": args.zero_stage, "overlap_comm": True, "contiguous_gradients": True},
        "gradient_clipping": 1.0,
        "steps_per_print": 50,
    }


def main():
    args = parse_args()
    if args.local_rank == -1:
        device = torch.device("cuda")
    else:
        torch.cuda.set_device(args.local_rank)
        device = torch.device("cuda", args.local_rank)
        deepspeed.init_distributed(dist_backend="nccl")
    world = torch.distributed.get_world_size()
    rank = torch.distributed.get_rank()

    tok = AutoTokenizer.from_pretrained(args.model_name_or_path)
    tok.pad_token = tok.pad_token or tok.eos_token
    base = AutoModel.from_pretrained(args.model_name_or_path, torch_dtype=torch.bfloat16,
                                     attn_implementation="flash_attention_2")
    if args.gradient_checkpointing:
        base.gradient_checkpointing_enable()
    model = RewardModel(base, tok.pad_token_id)

    data = load_dataset(args.data_path, split="train")
    sampler = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=True, seed=42)
    loader = DataLoader(data, batch_size=args.per_device_batch_size, sampler=sampler, pin_memory=True,
                        collate_fn=lambda b: collate(b, tok, args.max_seq_len))

    optimizer = FusedAdam(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.0)
    steps = args.epochs * math.ceil(len(loader))
    scheduler = get_scheduler("cosine", optimizer=optimizer, num_warmup_steps=int(0.03 * steps), num_training_steps=steps)
    engine, optimizer, _, scheduler = deepspeed.initialize(model=model, optimizer=optimizer, lr_scheduler=scheduler,
                                                           config=ds_config(args, world))

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        engine.train()
        for step, (ids, mask) in enumerate(loader):
            ids, mask = ids.to(device), mask.to(device)
            rewards = engine(ids, mask)
            chosen, rejected = rewards.chunk(2)
            loss = -F.logsigmoid(chosen - rejected).mean()
            engine.backward(loss)
            engine.step()
            if step % 50 == 0 and rank == 0:
                acc = (chosen > rejected).float().mean().item()
                mem = get_accelerator().max_memory_allocated() / 2**30
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} acc {acc:.3f} mem {mem:.1f}G")

    if rank == 0:
        os.makedirs(args.output_dir, exist_ok=True)
    engine.save_checkpoint(args.output_dir)
    torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
