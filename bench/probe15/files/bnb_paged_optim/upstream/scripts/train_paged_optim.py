"""Fine-tune a small causal LM with a bitsandbytes paged 8-bit optimizer.

Paged optimizers keep optimizer state in CUDA unified memory and page it to CPU
when the GPU runs out of memory, which lets 7B models fit on a 24 GB card.
"""
import argparse
import math
import os

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader
import bitsandbytes as bnb
from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, get_cosine_schedule_with_warmup

os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="EleutherAI/pythia-410m")
    p.add_argument("--optim", choices=["paged_adamw8bit", "paged_adamw32bit", "adamw8bit", "adamw"],
                   default="paged_adamw8bit")
    p.add_argument("--lr", type=float, default=2e-5)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--grad-accum", type=int, default=4)
    p.add_argument("--seq-len", type=int, default=512)
    p.add_argument("--steps", type=int, default=500)
    p.add_argument("--bf16", action="store_true")
    p.add_argument("--gradient-checkpointing", action="store_true")
    return p.parse_args()


def build_optimizer(name, params, lr):
    if name == "paged_adamw8bit":
        return bnb.optim.PagedAdamW8bit(params, lr=lr, betas=(0.9, 0.95), weight_decay=0.0)
    if name == "paged_adamw32bit":
        return bnb.optim.PagedAdamW32bit(params, lr=lr, betas=(0.9, 0.95), weight_decay=0.0)
    if name == "adamw8bit":
        return bnb.optim.AdamW8bit(params, lr=lr, betas=(0.9, 0.95))
    return torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.95), fused=True)


def make_loader(tok, seq_len, batch_size):
    ds = load_dataset("wikitext", "wikitext-2-raw-v1", split="train")
    ds = ds.filter(lambda r: len(r["text"]) > 32)

    def tokenize(batch):
        out = tok(batch["text"], truncation=True, max_length=seq_len, padding="max_length")
        out["labels"] = [ids[:] for ids in out["input_ids"]]
        return out

    ds = ds.map(tokenize, batched=True, remove_columns=ds.column_names)
    ds.set_format("torch")
    return DataLoader(ds, batch_size=batch_size, shuffle=True, num_workers=2, pin_memory=True,
                      drop_last=True)


def main():
    args = get_args()
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    tok = AutoTokenizer.from_pretrained(args.model)
    tok.pad_token = tok.pad_token or tok.eos_token
    model = AutoModelForCausalLM.from_pretrained(args.model)
    if args.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    model.to(device)
    model.train()

    optim = build_optimizer(args.optim, model.parameters(), args.lr)
    sched = get_cosine_schedule_with_warmup(optim, 50, args.steps)
    loader = make_loader(tok, args.seq_len, args.batch_size)
    amp_dtype = torch.bfloat16 if args.bf16 else torch.float16
    scaler = torch.cuda.amp.GradScaler(enabled=not args.bf16)

    step, micro = 0, 0
    while step < args.steps:
        for batch in loader:
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            with torch.cuda.amp.autocast(dtype=amp_dtype):
                logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
                loss = F.cross_entropy(logits[:, :-1].flatten(0, 1).float(),
                                       batch["labels"][:, 1:].flatten(), ignore_index=tok.pad_token_id)
                loss = loss / args.grad_accum
            scaler.scale(loss).backward()
            micro += 1
            if micro % args.grad_accum:
                continue
            scaler.unscale_(optim)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optim)
            scaler.update()
            optim.zero_grad(set_to_none=True)
            sched.step()
            step += 1
            if step % 20 == 0:
                peak = torch.cuda.max_memory_allocated() / 2**30
                print(f"step {step} loss {loss.item() * args.grad_accum:.4f} "
                      f"ppl {math.exp(loss.item() * args.grad_accum):.2f} peak {peak:.2f} GiB")
                torch.cuda.reset_peak_memory_stats()
            if step >= args.steps:
                break

    model.save_pretrained("out/paged-optim-ft")


if __name__ == "__main__":
    main()
