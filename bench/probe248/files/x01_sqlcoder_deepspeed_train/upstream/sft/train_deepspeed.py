"""Full-parameter SFT of a code LLM on text-to-SQL pairs with DeepSpeed ZeRO (no HF Trainer).

    deepspeed --include localhost:0,1,2,3,4,5,6,7 sft/train_deepspeed.py \
        --model_name_or_path defog/sqlcoder-7b-2 --data_path data/spider_bird_train.jsonl \
        --zero_stage 3 --bf16 --output_dir ckpts/sqlcoder-sft
"""
import argparse
import json
import math
import os
import time

import deepspeed
import torch
from deepspeed.accelerator import get_accelerator
from deepspeed.ops.adam import DeepSpeedCPUAdam, FusedAdam
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoModelForCausalLM, AutoTokenizer, get_scheduler

PROMPT = """### Task
Generate a SQL query to answer [QUESTION]{question}[/QUESTION]

### Database Schema
The query will run on a database with the following schema:
{schema}

### Answer
Given the database schema, here is the SQL query that answers [QUESTION]{question}[/QUESTION]
[SQL]
"""


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name_or_path", type=str, required=True)
    parser.add_argument("--data_path", type=str, required=True)
    parser.add_argument("--output_dir", type=str, default="ckpts")
    parser.add_argument("--max_seq_len", type=int, default=4096)
    parser.add_argument("--per_device_train_batch_size", type=int, default=1)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=16)
    parser.add_argument("--learning_rate", type=float, default=1e-5)
    parser.add_argument("--weight_decay", type=float, default=0.0)
    parser.add_argument("--num_train_epochs", type=int, default=3)
    parser.add_argument("--num_warmup_steps", type=int, default=100)
    parser.add_argument("--zero_stage", type=int, default=3)
    parser.add_argument("--offload", action="store_true", help="offload optimizer states to CPU")
    parser.add_argument("--bf16", action="store_true")
    parser.add_argument("--gradient_checkpointing", action="store_true")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--local_rank", type=int, default=-1)
    parser = deepspeed.add_config_arguments(parser)
    return parser.parse_args()


def get_ds_config(args, world_size):
    return {
        "train_batch_size": args.per_device_train_batch_size * args.gradient_accumulation_steps * world_size,
        "train_micro_batch_size_per_gpu": args.per_device_train_batch_size,
        "gradient_accumulation_steps": args.gradient_accumulation_steps,
        "gradient_clipping": 1.0,
        "steps_per_print": 50,
        "bf16": {"enabled": args.bf16},
        "fp16": {"enabled": not args.bf16, "loss_scale_window": 100, "initial_scale_power": 16},
        "zero_optimization": {
            "stage": args.zero_stage,
            "offload_optimizer": {"device": "cpu" if args.offload else "none", "pin_memory": True},
            "overlap_comm": True,
            "contiguous_gradients": True,
            "reduce_bucket_size": 5e8,
            "stage3_prefetch_bucket_size": 5e8,
            "stage3_param_persistence_threshold": 1e6,
            "stage3_gather_16bit_weights_on_model_save": True,
        },
        "wall_clock_breakdown": False,
    }


class SQLSFTDataset(Dataset):
    def __init__(self, path, tokenizer, max_seq_len):
        self.items = []
        with open(path) as f:
            for line in f:
                ex = json.loads(line)
                prompt = PROMPT.format(question=ex["question"], schema=ex["schema"])
                answer = ex["query"].strip() + "\n[/SQL]" + tokenizer.eos_token
                p = tokenizer(prompt, add_special_tokens=True)["input_ids"]
                a = tokenizer(answer, add_special_tokens=False)["input_ids"]
                ids = (p + a)[:max_seq_len]
                labels = ([-100] * len(p) + a)[:max_seq_len]
                self.items.append((ids, labels))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        return self.items[idx]


def collate_fn(batch, pad_token_id):
    width = max(len(x[0]) for x in batch)
    ids = torch.full((len(batch), width), pad_token_id, dtype=torch.long)
    labels = torch.full((len(batch), width), -100, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for i, (x, y) in enumerate(batch):
        ids[i, : len(x)] = torch.tensor(x)
        labels[i, : len(y)] = torch.tensor(y)
        mask[i, : len(x)] = 1
    return {"input_ids": ids, "labels": labels, "attention_mask": mask}


def main():
    args = parse_args()

    if args.local_rank == -1:
        device = torch.device("cuda")
    else:
        torch.cuda.set_device(args.local_rank)
        device = torch.device(get_accelerator().device_name(args.local_rank))
        # Initializes the distributed backend which will take care of sychronizing nodes/GPUs
        deepspeed.init_distributed(dist_backend="nccl")

    world_size = torch.distributed.get_world_size()
    rank = torch.distributed.get_rank()
    torch.manual_seed(args.seed)
    get_accelerator().manual_seed_all(args.seed)

    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token

    ds_config = get_ds_config(args, world_size)
    model = AutoModelForCausalLM.from_pretrained(
        args.model_name_or_path, torch_dtype=torch.bfloat16 if args.bf16 else torch.float16
    )
    if args.gradient_checkpointing:
        model.gradient_checkpointing_enable()

    dataset = SQLSFTDataset(args.data_path, tokenizer, args.max_seq_len)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=args.seed)
    loader = DataLoader(
        dataset,
        sampler=sampler,
        batch_size=args.per_device_train_batch_size,
        collate_fn=lambda b: collate_fn(b, tokenizer.pad_token_id),
    )

    AdamOptimizer = DeepSpeedCPUAdam if args.offload else FusedAdam
    optimizer = AdamOptimizer(model.parameters(), lr=args.learning_rate, betas=(0.9, 0.95), weight_decay=args.weight_decay)
    num_update_steps_per_epoch = math.ceil(len(loader) / args.gradient_accumulation_steps)
    lr_scheduler = get_scheduler(
        "cosine",
        optimizer=optimizer,
        num_warmup_steps=args.num_warmup_steps,
        num_training_steps=args.num_train_epochs * num_update_steps_per_epoch,
    )

    model, optimizer, _, lr_scheduler = deepspeed.initialize(
        model=model, optimizer=optimizer, args=args, config=ds_config, lr_scheduler=lr_scheduler, dist_init_required=True
    )

    for epoch in range(args.num_train_epochs):
        sampler.set_epoch(epoch)
        model.train()
        for step, batch in enumerate(loader):
            batch = {k: v.to(device) for k, v in batch.items()}
            torch.cuda.synchronize()
            t0 = time.time()
            loss = model(**batch, use_cache=False).loss
            model.backward(loss)
            model.step()
            torch.cuda.synchronize()  # include the optimizer step in the timing
            if rank == 0 and step % 50 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} {time.time() - t0:.2f}s/step "
                      f"mem {get_accelerator().max_memory_allocated() / 2**30:.1f}G")

        get_accelerator().empty_cache()
        save_dir = os.path.join(args.output_dir, f"epoch-{epoch}")
        model.save_16bit_model(save_dir)
        if rank == 0:
            tokenizer.save_pretrained(save_dir)


if __name__ == "__main__":
    main()
