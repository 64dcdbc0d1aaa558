#!/usr/bin/env python
"""LoRA fine-tuning of an 8-bit (LLM.int8) causal LM with Accelerate + bitsandbytes.

    accelerate launch scripts/finetune_int8_lora.py --model_name_or_path facebook/opt-6.7b --output_dir out/
"""
import argparse
import math
import os
import time

import bitsandbytes as bnb
import torch
from accelerate import Accelerator
from accelerate.utils import set_seed
from datasets import load_dataset
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from torch.utils.data import DataLoader
from transformers import (AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig, DataCollatorForLanguageModeling,
                          get_linear_schedule_with_warmup)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name_or_path", required=True)
    p.add_argument("--dataset", default="Abirate/english_quotes")
    p.add_argument("--output_dir", required=True)
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch_size", type=int, default=4)
    p.add_argument("--grad_accum", type=int, default=4)
    p.add_argument("--max_len", type=int, default=512)
    p.add_argument("--lora_r", type=int, default=16)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--profile_steps", type=int, default=0, help="wrap the first N steps in NVTX ranges")
    return p.parse_args()


def pick_dtype():
    # bf16 needs Ampere or newer; fall back to fp16 on older cards
    if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8:
        return torch.bfloat16
    return torch.float16


def print_trainable_parameters(model):
    trainable, total = 0, 0
    for _, p in model.named_parameters():
        total += p.numel()
        if p.requires_grad:
            trainable += p.numel()
    print(f"trainable params: {trainable} || all params: {total} || trainable%: {100 * trainable / total:.4f}")


def main():
    args = parse_args()
    accelerator = Accelerator(gradient_accumulation_steps=args.grad_accum, mixed_precision="bf16")
    set_seed(args.seed)

    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cuda.enable_flash_sdp(True)

    compute_dtype = pick_dtype()
    bnb_config = BitsAndBytesConfig(
        load_in_8bit=True,
        llm_int8_threshold=6.0,
        llm_int8_has_fp16_weight=False,
    )
    max_memory = {i: f"{int(torch.cuda.mem_get_info(i)[0] / 1024**3) - 2}GiB" for i in range(torch.cuda.device_count())}
    model = AutoModelForCausalLM.from_pretrained(
        args.model_name_or_path,
        quantization_config=bnb_config,
        torch_dtype=compute_dtype,
        device_map={"": accelerator.local_process_index},
        max_memory=max_memory,
        attn_implementation="flash_attention_2",
    )
    model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=True)

    lora_config = LoraConfig(r=args.lora_r, lora_alpha=32, target_modules=["q_proj", "v_proj"], lora_dropout=0.05,
                             bias="none", task_type="CAUSAL_LM")
    model = get_peft_model(model, lora_config)
    print_trainable_parameters(model)

    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
    tokenizer.pad_token = tokenizer.eos_token
    data = load_dataset(args.dataset)
    data = data.map(lambda samples: tokenizer(samples["quote"], truncation=True, max_length=args.max_len),
                    batched=True)
    collator = DataCollatorForLanguageModeling(tokenizer, mlm=False)
    train_dl = DataLoader(data["train"].remove_columns(data["train"].column_names[:-2]), batch_size=args.batch_size,
                          shuffle=True, collate_fn=collator, pin_memory=True, num_workers=2)

    optimizer = bnb.optim.AdamW8bit(model.parameters(), lr=args.lr, betas=(0.9, 0.999), weight_decay=0.0)
    num_update_steps = math.ceil(len(train_dl) / args.grad_accum) * args.epochs
    scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=20, num_training_steps=num_update_steps)

    model, optimizer, train_dl, scheduler = accelerator.prepare(model, optimizer, train_dl, scheduler)

    model.train()
    step = 0
    for epoch in range(args.epochs):
        for batch in train_dl:
            if step < args.profile_steps:
                torch.cuda.nvtx.range_push(f"step{step}")
            t0 = time.time()
            with accelerator.accumulate(model):
                outputs = model(**batch)
                loss = outputs.loss
                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
            torch.cuda.synchronize()
            if step < args.profile_steps:
                torch.cuda.nvtx.range_pop()
            if accelerator.is_main_process and step % 10 == 0:
                mem = torch.cuda.max_memory_allocated() / 1024**3
                accelerator.print(f"epoch {epoch} step {step} loss {loss.item():.4f} "
                                  f"{time.time() - t0:.2f}s/it peak {mem:.1f}GiB")
            step += 1

    accelerator.wait_for_everyone()
    unwrapped = accelerator.unwrap_model(model)
    unwrapped.save_pretrained(args.output_dir, save_function=accelerator.save)
    if accelerator.is_main_process:
        tokenizer.save_pretrained(args.output_dir)
    torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
