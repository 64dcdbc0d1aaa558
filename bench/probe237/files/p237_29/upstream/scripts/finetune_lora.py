"""Fine-tune LoRA adapters used by the multi-LoRA serving benchmarks.

Each run produces one PEFT adapter directory (adapter_config.json +
adapter_model.safetensors) that punica/S-LoRA/LoRAX can load directly.

Single GPU:
    python scripts/finetune_lora.py --base meta-llama/Llama-2-7b-hf --data gsm8k --out /models/lora/gsm8k-r16
Multi GPU (DDP):
    torchrun --nproc_per_node 8 scripts/finetune_lora.py ...
"""
import argparse
import json
import math
import os
import random
import time
from contextlib import nullcontext

import numpy as np
import torch
import torch.distributed as dist
from datasets import load_dataset
from peft import LoraConfig, TaskType, get_peft_model
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from transformers import AutoModelForCausalLM, AutoTokenizer, get_cosine_schedule_with_warmup

try:
    from apex.optimizers import FusedAdam

    HAS_APEX = True
except ImportError:
    HAS_APEX = False

PROMPTS = {
    "gsm8k": ("Question: {question}\nAnswer:", " {answer}"),
    "sqlctx": ("-- context:\n{context}\n-- question: {question}\nSELECT", " {answer}"),
    "viggo": ("Convert to a meaning representation: {target}\n", "{meaning_representation}"),
}
DATASETS = {
    "gsm8k": ("gsm8k", "main", "train"),
    "sqlctx": ("b-mc2/sql-create-context", None, "train"),
    "viggo": ("GEM/viggo", None, "train"),
}


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--base", required=True)
    p.add_argument("--data", choices=sorted(DATASETS), required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--rank", type=int, default=16)
    p.add_argument("--alpha", type=int, default=32)
    p.add_argument("--dropout", type=float, default=0.05)
    p.add_argument("--targets", default="q_proj,k_proj,v_proj,o_proj")
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--grad-accum", type=int, default=4)
    p.add_argument("--max-len", type=int, default=512)
    p.add_argument("--precision", choices=["fp16", "bf16", "fp32"], default="fp16")
    p.add_argument("--grad-ckpt", action="store_true")
    p.add_argument("--num-workers", type=int, default=4)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--log-every", type=int, default=20)
    return p.parse_args()


def setup_distributed():
    if "RANK" not in os.environ:
        return 0, 1, 0
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    world = dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return rank, world, local_rank


def seed_everything(seed: int):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


class Collator:
    def __init__(self, tok, max_len):
        self.tok = tok
        self.max_len = max_len

    def __call__(self, batch):
        input_ids, labels = [], []
        for prompt, target in batch:
            p = self.tok(prompt, add_special_tokens=True)["input_ids"]
            t = self.tok(target, add_special_tokens=False)["input_ids"] + [self.tok.eos_token_id]
            ids = (p + t)[: self.max_len]
            lab = ([-100] * len(p) + t)[: self.max_len]
            input_ids.append(ids)
            labels.append(lab)
        n = max(len(x) for x in input_ids)
        pad = self.tok.pad_token_id
        input_ids = torch.tensor([x + [pad] * (n - len(x)) for x in input_ids])
        labels = torch.tensor([x + [-100] * (n - len(x)) for x in labels])
        return {"input_ids": input_ids, "labels": labels, "attention_mask": (input_ids != pad).long()}


def build_dataset(name):
    path, cfg, split = DATASETS[name]
    ds = load_dataset(path, cfg, split=split)
    prompt_tmpl, target_tmpl = PROMPTS[name]
    return [(prompt_tmpl.format(**ex), target_tmpl.format(**ex)) for ex in ds]


def main():
    args = parse_args()
    rank, world, local_rank = setup_distributed()
    is_main = rank == 0
    seed_everything(args.seed + rank)
    device = torch.device("cuda", local_rank)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    tok = AutoTokenizer.from_pretrained(args.base)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token

    load_dtype = {"fp16": torch.float32, "bf16": torch.bfloat16, "fp32": torch.float32}[args.precision]
    model = AutoModelForCausalLM.from_pretrained(args.base, torch_dtype=load_dtype)
    if args.grad_ckpt:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.enable_input_require_grads()
    lora_cfg = LoraConfig(
        task_type=TaskType.CAUSAL_LM,
        r=args.rank,
        lora_alpha=args.alpha,
        lora_dropout=args.dropout,
        target_modules=args.targets.split(","),
        bias="none",
    )
    model = get_peft_model(model, lora_cfg)
    if is_main:
        model.print_trainable_parameters()
    model.cuda()

    if world > 1:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank, find_unused_parameters=False)

    data = build_dataset(args.data)
    sampler = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=True) if world > 1 else None
    loader = DataLoader(
        data,
        batch_size=args.batch_size,
        shuffle=sampler is None,
        sampler=sampler,
        collate_fn=Collator(tok, args.max_len),
        num_workers=args.num_workers,
        pin_memory=True,
        pin_memory_device="cuda",
        drop_last=True,
    )

    params = [p for p in model.parameters() if p.requires_grad]
    if HAS_APEX:
        optimizer = FusedAdam(params, lr=args.lr, weight_decay=0.0, adam_w_mode=True)
    else:
        optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.0, fused=True)
    steps_per_epoch = len(loader) // args.grad_accum
    total_steps = steps_per_epoch * args.epochs
    scheduler = get_cosine_schedule_with_warmup(optimizer, int(0.03 * total_steps), total_steps)

    use_amp = args.precision in ("fp16", "bf16")
    amp_dtype = torch.float16 if args.precision == "fp16" else torch.bfloat16
    scaler = torch.cuda.amp.GradScaler(enabled=args.precision == "fp16")

    step = 0
    t0 = time.time()
    model.train()
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for i, batch in enumerate(loader):
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            sync_ctx = model.no_sync() if (world > 1 and (i + 1) % args.grad_accum != 0) else nullcontext()
            with sync_ctx:
                with torch.cuda.amp.autocast(enabled=use_amp, dtype=amp_dtype):
                    loss = model(**batch).loss / args.grad_accum
                scaler.scale(loss).backward()
            if (i + 1) % args.grad_accum != 0:
                continue
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            scheduler.step()
            step += 1
            if is_main and step % args.log_every == 0:
                elapsed = time.time() - t0
                mem = torch.cuda.max_memory_allocated() / 2**30
                print(f"epoch {epoch} step {step}/{total_steps} loss {loss.item() * args.grad_accum:.4f} "
                      f"lr {scheduler.get_last_lr()[0]:.2e} {elapsed / step:.2f}s/step mem {mem:.1f}GiB")

    if world > 1:
        dist.barrier()
    if is_main:
        unwrapped = model.module if isinstance(model, DDP) else model
        unwrapped.save_pretrained(args.out, safe_serialization=True)
        with open(os.path.join(args.out, "train_args.json"), "w") as f:
            json.dump(vars(args), f, indent=2)
        print(f"saved adapter to {args.out}")
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
