"""Two-stage text-to-SQL fine-tuning (schema linking -> SQL generation) with plain torchrun + DDP.

Stage is selected with --stage {schema_linking,sql_generation}; both stages fine-tune a
DeepSeek-Coder / Mistral style decoder on prompts of the form

    ### Database schema: ... ### Question: ... ### Relevant tables: <target>
    ### Database schema (filtered): ... ### Question: ... ### SQL: <target>

Launch (one node, 8 GPUs):
    torchrun --nproc_per_node 8 finetune_ddp.py --stage sql_generation \
        --model deepseek-ai/deepseek-coder-6.7b-instruct --train_file data/sqlgen_train.jsonl
"""
import argparse
import datetime
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
from transformers import AutoModelForCausalLM, AutoTokenizer, get_cosine_schedule_with_warmup

try:
    # apex's multi-tensor Adam is ~10% faster per step on A100 for 7B models
    from apex.optimizers import FusedAdam as AdamW
    APEX_FUSED = True
except ImportError:
    from torch.optim import AdamW
    APEX_FUSED = False

IGNORE_INDEX = -100


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--stage", choices=["schema_linking", "sql_generation"], required=True)
    p.add_argument("--model", default="deepseek-ai/deepseek-coder-6.7b-instruct")
    p.add_argument("--train_file", required=True)
    p.add_argument("--output_dir", default="ckpts")
    p.add_argument("--max_len", type=int, default=3072)
    p.add_argument("--micro_batch_size", type=int, default=1)
    p.add_argument("--grad_accum", type=int, default=8)
    p.add_argument("--lr", type=float, default=2e-5)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--warmup_ratio", type=float, default=0.03)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--bf16", action="store_true")
    p.add_argument("--gradient_checkpointing", action="store_true")
    p.add_argument("--log_every", type=int, default=10)
    return p.parse_args()


def setup_distributed():
    os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    dist.init_process_group(backend="nccl", timeout=datetime.timedelta(minutes=60))
    torch.cuda.set_device(local_rank)
    return local_rank, dist.get_rank(), dist.get_world_size()


def seed_everything(seed, rank):
    random.seed(seed + rank)
    np.random.seed(seed + rank)
    torch.manual_seed(seed + rank)


class PromptDataset(Dataset):
    def __init__(self, path, tokenizer, max_len, stage):
        self.examples = []
        with open(path) as f:
            for line in f:
                ex = json.loads(line)
                if stage == "schema_linking":
                    prompt = f"### Database schema:\n{ex['schema']}\n### Question: {ex['question']}\n### Relevant tables:"
                    target = " " + ", ".join(ex["tables"])
                else:
                    prompt = f"### Database schema (filtered):\n{ex['filtered_schema']}\n### Question: {ex['question']}\n### SQL:"
                    target = " " + ex["sql"].strip()
                p_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
                t_ids = tokenizer(target, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
                ids = ([tokenizer.bos_token_id] + p_ids + t_ids)[:max_len]
                labels = ([IGNORE_INDEX] * (1 + len(p_ids)) + t_ids)[:max_len]
                self.examples.append((ids, labels))

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, i):
        return self.examples[i]


def collate(batch, pad_id):
    max_len = max(len(ids) for ids, _ in batch)
    input_ids = torch.full((len(batch), max_len), pad_id, dtype=torch.long)
    labels = torch.full((len(batch), max_len), IGNORE_INDEX, dtype=torch.long)
    attn = torch.zeros((len(batch), max_len), dtype=torch.long)
    for i, (ids, lab) in enumerate(batch):
        input_ids[i, : len(ids)] = torch.tensor(ids)
        labels[i, : len(lab)] = torch.tensor(lab)
        attn[i, : len(ids)] = 1
    return {"input_ids": input_ids, "labels": labels, "attention_mask": attn}


def main():
    args = parse_args()
    local_rank, rank, world_size = setup_distributed()
    device = torch.device("cuda", local_rank)
    seed_everything(args.seed, rank)
    is_main = rank == 0

    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token_id = tokenizer.eos_token_id

    dtype = torch.bfloat16 if args.bf16 else torch.float32
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=dtype)
    if args.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    model.to(device)
    model = DDP(model, device_ids=[local_rank], output_device=local_rank)

    dataset = PromptDataset(args.train_file, tokenizer, args.max_len, args.stage)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=args.seed)
    loader = DataLoader(
        dataset,
        batch_size=args.micro_batch_size,
        sampler=sampler,
        collate_fn=lambda b: collate(b, tokenizer.pad_token_id),
        num_workers=2,
        pin_memory=True,
    )

    optimizer = AdamW(model.parameters(), lr=args.lr, weight_decay=0.0, betas=(0.9, 0.95))
    total_steps = math.ceil(len(loader) / args.grad_accum) * args.epochs
    scheduler = get_cosine_schedule_with_warmup(optimizer, int(args.warmup_ratio * total_steps), total_steps)
    if is_main:
        print(f"world_size={world_size} apex_fused={APEX_FUSED} steps={total_steps} examples={len(dataset)}")

    step, t0 = 0, time.time()
    model.train()
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for it, batch in enumerate(loader):
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            sync = (it + 1) % args.grad_accum == 0
            ctx = model.no_sync() if not sync else torch.enable_grad()
            with ctx:
                with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=args.bf16):
                    loss = model(**batch).loss / args.grad_accum
                loss.backward()
            if not sync:
                continue
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1

            if step % args.log_every == 0:
                reduced = loss.detach() * args.grad_accum
                dist.all_reduce(reduced, op=dist.ReduceOp.AVG)
                if is_main:
                    mem = torch.cuda.max_memory_reserved(device) / 2**30
                    print(f"epoch {epoch} step {step}/{total_steps} loss {reduced.item():.4f} "
                          f"lr {scheduler.get_last_lr()[0]:.2e} {(time.time() - t0) / args.log_every:.2f}s/it mem {mem:.1f}G")
                    t0 = time.time()

        if is_main:
            out = os.path.join(args.output_dir, f"{args.stage}-epoch{epoch}")
            model.module.save_pretrained(out, safe_serialization=True)
            tokenizer.save_pretrained(out)
        dist.barrier()

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
