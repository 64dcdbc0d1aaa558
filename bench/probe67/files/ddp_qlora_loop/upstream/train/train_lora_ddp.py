"""Plain-PyTorch DDP LoRA / QLoRA trainer (no HF Trainer), in the style of minimal fine-tuning repos.

torchrun --nproc_per_node 8 train/train_lora_ddp.py --model meta-llama/Llama-2-7b-hf --qlora
"""
import argparse
import math
import os
import time
from contextlib import nullcontext

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

import bitsandbytes as bnb
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="meta-llama/Llama-2-7b-hf")
    p.add_argument("--data", default="data/alpaca_tokenized.pt")
    p.add_argument("--qlora", action="store_true")
    p.add_argument("--lora_r", type=int, default=16)
    p.add_argument("--lora_alpha", type=int, default=32)
    p.add_argument("--batch_size", type=int, default=4)
    p.add_argument("--grad_accum", type=int, default=8)
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--max_len", type=int, default=1024)
    p.add_argument("--dtype", default="fp16", choices=["fp16", "bf16", "fp32"])
    p.add_argument("--optim", default="paged_adamw8bit", choices=["paged_adamw8bit", "adamw"])
    p.add_argument("--out", default="out/lora")
    p.add_argument("--profile", action="store_true")
    return p.parse_args()


class TokenizedDataset(Dataset):
    def __init__(self, path, max_len):
        self.samples = torch.load(path)
        self.max_len = max_len

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, idx):
        ids = self.samples[idx]["input_ids"][: self.max_len]
        labels = self.samples[idx]["labels"][: self.max_len]
        return torch.tensor(ids), torch.tensor(labels)


def collate(batch, pad_id=0):
    n = max(len(x) for x, _ in batch)
    ids = torch.full((len(batch), n), pad_id, dtype=torch.long)
    labels = torch.full((len(batch), n), -100, dtype=torch.long)
    for i, (x, y) in enumerate(batch):
        ids[i, : len(x)] = x
        labels[i, : len(y)] = y
    return ids, labels


def setup_distributed():
    if "RANK" not in os.environ:
        return 0, 0, 1
    dist.init_process_group(backend="nccl", init_method="env://")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return rank, local_rank, dist.get_world_size()


def build_model(args, local_rank):
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[args.dtype]
    quant = None
    if args.qlora:
        quant = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
                                   bnb_4bit_compute_dtype=dtype)
    model = AutoModelForCausalLM.from_pretrained(args.model, quantization_config=quant, torch_dtype=dtype,
                                                 device_map={"": f"cuda:{local_rank}"})
    if args.qlora:
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=True)
    cfg = LoraConfig(r=args.lora_r, lora_alpha=args.lora_alpha, lora_dropout=0.05, target_modules="all-linear",
                     task_type="CAUSAL_LM")
    model = get_peft_model(model, cfg)
    return model, dtype


def cosine_lr(step, total, base, warmup=50):
    if step < warmup:
        return base * step / warmup
    return 0.5 * base * (1 + math.cos(math.pi * (step - warmup) / max(1, total - warmup)))


def main():
    args = get_args()
    rank, local_rank, world = setup_distributed()
    device = torch.device("cuda", local_rank)
    torch.manual_seed(1337 + rank)
    torch.cuda.manual_seed_all(1337 + rank)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    tok = AutoTokenizer.from_pretrained(args.model)
    model, dtype = build_model(args, local_rank)
    if world > 1:
        model = DDP(model, device_ids=[local_rank], find_unused_parameters=False)
    elif torch.cuda.device_count() > 1:
        model = torch.nn.DataParallel(model)

    ds = TokenizedDataset(args.data, args.max_len)
    sampler = DistributedSampler(ds, shuffle=True) if world > 1 else None
    dl = DataLoader(ds, batch_size=args.batch_size, sampler=sampler, shuffle=sampler is None,
                    collate_fn=lambda b: collate(b, tok.pad_token_id or 0), num_workers=4, pin_memory=True,
                    drop_last=True)

    params = [p for p in model.parameters() if p.requires_grad]
    if args.optim == "paged_adamw8bit":
        optimizer = bnb.optim.PagedAdamW8bit(params, lr=args.lr, weight_decay=0.0)
    else:
        optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.0, fused=True)

    use_amp = args.dtype != "fp32"
    scaler = torch.cuda.amp.GradScaler(enabled=args.dtype == "fp16")
    amp_ctx = torch.cuda.amp.autocast(dtype=dtype) if use_amp else nullcontext()

    total_steps = args.epochs * len(dl) // args.grad_accum
    step = 0
    t0 = time.time()
    model.train()
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for i, (ids, labels) in enumerate(dl):
            ids = ids.cuda(non_blocking=True)
            labels = labels.to(device, non_blocking=True)
            sync = (i + 1) % args.grad_accum == 0
            ctx = model.no_sync() if (world > 1 and not sync) else nullcontext()
            if args.profile and step == 10:
                torch.cuda.nvtx.range_push("train_step")
            with ctx, amp_ctx:
                logits = model(input_ids=ids).logits
                loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)).float(), labels[:, 1:].reshape(-1),
                                       ignore_index=-100) / args.grad_accum
            scaler.scale(loss).backward()
            if not sync:
                continue
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            for g in optimizer.param_groups:
                g["lr"] = cosine_lr(step, total_steps, args.lr)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            if args.profile and step == 10:
                torch.cuda.nvtx.range_pop()
            step += 1
            if rank == 0 and step % 10 == 0:
                torch.cuda.synchronize()
                dt = (time.time() - t0) / 10
                t0 = time.time()
                mem = torch.cuda.max_memory_allocated(device) / 2**30
                print(f"epoch {epoch} step {step}/{total_steps} loss {loss.item() * args.grad_accum:.4f} "
                      f"{dt:.2f}s/it mem {mem:.1f}GiB lr {optimizer.param_groups[0]['lr']:.2e}")

    if rank == 0:
        os.makedirs(args.out, exist_ok=True)
        to_save = model.module if hasattr(model, "module") else model
        to_save.save_pretrained(args.out)
        print(f"saved adapter to {args.out}")
    if world > 1:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
