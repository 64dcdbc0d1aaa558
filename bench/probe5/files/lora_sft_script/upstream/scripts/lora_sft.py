#!/usr/bin/env python
"""
Minimal supervised fine-tuning with hand-rolled LoRA adapters (no peft dependency).

Injects low-rank adapters into the attention projections of a causal LM, trains only the
adapters on an instruction dataset in JSONL form, and optionally merges them back into the
base weights for export.

    python scripts/lora_sft.py --model meta-llama/Llama-2-7b-hf --data data/alpaca.jsonl \
        --rank 16 --alpha 32 --epochs 2 --out runs/lora-7b
"""
import argparse
import json
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, get_cosine_schedule_with_warmup

PROMPT = "### Instruction:\n{instruction}\n\n### Input:\n{input}\n\n### Response:\n"


class LoRALinear(nn.Module):
    """Wraps a frozen nn.Linear with a trainable low-rank update: W x + (alpha / r) * B A x."""

    def __init__(self, base: nn.Linear, r: int, alpha: int, dropout: float):
        super().__init__()
        self.base = base
        self.r = r
        self.scaling = alpha / r
        self.dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        dtype, device = base.weight.dtype, base.weight.device
        self.lora_A = nn.Parameter(torch.empty(r, base.in_features, dtype=torch.float32, device=device))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r, dtype=torch.float32, device=device))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        self.merged = False
        self._base_dtype = dtype

    def forward(self, x):
        out = self.base(x)
        if self.merged:
            return out
        lora = F.linear(F.linear(self.dropout(x).to(self.lora_A.dtype), self.lora_A), self.lora_B)
        return out + (lora * self.scaling).to(out.dtype)

    @torch.no_grad()
    def merge(self):
        if not self.merged:
            delta = (self.lora_B @ self.lora_A) * self.scaling
            self.base.weight.add_(delta.to(self._base_dtype))
            self.merged = True


def inject_lora(model, targets, r, alpha, dropout):
    replaced = 0
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            if isinstance(child, nn.Linear) and child_name in targets:
                setattr(module, child_name, LoRALinear(child, r, alpha, dropout))
                replaced += 1
    for n, p in model.named_parameters():
        p.requires_grad = "lora_" in n
    return replaced


class InstructionDataset(Dataset):
    def __init__(self, path, tokenizer, max_len):
        with open(path) as f:
            self.rows = [json.loads(line) for line in f if line.strip()]
        self.tok = tokenizer
        self.max_len = max_len

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        row = self.rows[i]
        prompt = PROMPT.format(instruction=row["instruction"], input=row.get("input", ""))
        p_ids = self.tok(prompt, add_special_tokens=True)["input_ids"]
        a_ids = self.tok(row["output"] + self.tok.eos_token, add_special_tokens=False)["input_ids"]
        ids = (p_ids + a_ids)[: self.max_len]
        labels = ([-100] * len(p_ids) + a_ids)[: self.max_len]
        return torch.tensor(ids), torch.tensor(labels)


def collate(batch, pad_id):
    ids, labels = zip(*batch)
    n = max(len(x) for x in ids)
    input_ids = torch.full((len(ids), n), pad_id, dtype=torch.long)
    label_ids = torch.full((len(ids), n), -100, dtype=torch.long)
    attn = torch.zeros((len(ids), n), dtype=torch.long)
    for k, (a, b) in enumerate(zip(ids, labels)):
        input_ids[k, : len(a)] = a
        label_ids[k, : len(b)] = b
        attn[k, : len(a)] = 1
    return input_ids, attn, label_ids


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--out", default="runs/lora")
    p.add_argument("--rank", type=int, default=16)
    p.add_argument("--alpha", type=int, default=32)
    p.add_argument("--dropout", type=float, default=0.05)
    p.add_argument("--targets", default="q_proj,k_proj,v_proj,o_proj")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--batch_size", type=int, default=4)
    p.add_argument("--grad_accum", type=int, default=8)
    p.add_argument("--max_len", type=int, default=1024)
    p.add_argument("--merge", action="store_true")
    return p.parse_args()


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.backends.cuda.enable_flash_sdp(True)
    torch.backends.cuda.matmul.allow_tf32 = True

    dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    tokenizer = AutoTokenizer.from_pretrained(args.model, use_fast=True)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(
        args.model,
        torch_dtype=dtype,
        attn_implementation="flash_attention_2",
    )
    model.to("cuda")
    model.gradient_checkpointing_enable()
    model.enable_input_require_grads()
    n = inject_lora(model, set(args.targets.split(",")), args.rank, args.alpha, args.dropout)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print(f"injected {n} adapters, {trainable / 1e6:.2f}M trainable parameters")

    ds = InstructionDataset(args.data, tokenizer, args.max_len)
    dl = DataLoader(ds, batch_size=args.batch_size, shuffle=True, num_workers=2, pin_memory=True,
                    collate_fn=lambda b: collate(b, tokenizer.pad_token_id))
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.0, fused=True)
    total = args.epochs * math.ceil(len(dl) / args.grad_accum)
    sched = get_cosine_schedule_with_warmup(opt, int(0.03 * total), total)

    torch.cuda.reset_peak_memory_stats()
    model.train()
    step, t0 = 0, time.time()
    for epoch in range(args.epochs):
        for it, (input_ids, attn, labels) in enumerate(dl):
            input_ids = input_ids.cuda(non_blocking=True)
            attn = attn.cuda(non_blocking=True)
            labels = labels.cuda(non_blocking=True)
            with torch.autocast("cuda", dtype=dtype):
                loss = model(input_ids=input_ids, attention_mask=attn, labels=labels).loss
            (loss / args.grad_accum).backward()
            if (it + 1) % args.grad_accum == 0:
                torch.nn.utils.clip_grad_norm_(params, 1.0)
                opt.step()
                sched.step()
                opt.zero_grad(set_to_none=True)
                step += 1
                if step % 10 == 0:
                    mem = torch.cuda.max_memory_allocated() / 2**30
                    print(f"epoch {epoch} step {step}/{total} loss {loss.item():.4f} "
                          f"lr {sched.get_last_lr()[0]:.2e} mem {mem:.1f}GiB {time.time() - t0:.0f}s")

    adapters = {k: v.detach().cpu() for k, v in model.state_dict().items() if "lora_" in k}
    torch.save(adapters, os.path.join(args.out, "adapters.pt"))
    if args.merge:
        for m in model.modules():
            if isinstance(m, LoRALinear):
                m.merge()
        torch.cuda.empty_cache()
        model.save_pretrained(os.path.join(args.out, "merged"), safe_serialization=True)
        tokenizer.save_pretrained(os.path.join(args.out, "merged"))
    print("done")


if __name__ == "__main__":
    main()
