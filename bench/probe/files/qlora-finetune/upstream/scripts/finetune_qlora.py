#!/usr/bin/env python
# QLoRA supervised fine-tuning with transformers + peft + bitsandbytes.
import argparse
import math
import os
from dataclasses import dataclass
from typing import Dict, List

import torch
import bitsandbytes as bnb
from datasets import load_dataset
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    BitsAndBytesConfig,
    Trainer,
    TrainingArguments,
    set_seed,
)


@dataclass
class DataCollatorForCausalLM:
    tokenizer: AutoTokenizer
    max_len: int = 2048

    def __call__(self, features: List[Dict]) -> Dict[str, torch.Tensor]:
        texts = [f["prompt"] + f["response"] + self.tokenizer.eos_token for f in features]
        enc = self.tokenizer(texts, max_length=self.max_len, truncation=True, padding=True, return_tensors="pt")
        labels = enc["input_ids"].clone()
        labels[enc["attention_mask"] == 0] = -100
        enc["labels"] = labels
        return enc


def find_all_linear_names(model, bits: int):
    cls = bnb.nn.Linear4bit if bits == 4 else (bnb.nn.Linear8bitLt if bits == 8 else torch.nn.Linear)
    lora_module_names = set()
    for name, module in model.named_modules():
        if isinstance(module, cls):
            names = name.split(".")
            lora_module_names.add(names[0] if len(names) == 1 else names[-1])
    lora_module_names.discard("lm_head")
    return list(lora_module_names)


def print_trainable_parameters(model):
    trainable, total = 0, 0
    for _, p in model.named_parameters():
        total += p.numel()
        if p.requires_grad:
            trainable += p.numel()
    print(f"trainable params: {trainable:,} || all params: {total:,} || trainable%: {100 * trainable / total:.4f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name_or_path", required=True)
    parser.add_argument("--dataset", default="timdettmers/openassistant-guanaco")
    parser.add_argument("--output_dir", default="./qlora-out")
    parser.add_argument("--bits", type=int, default=4)
    parser.add_argument("--lora_r", type=int, default=64)
    parser.add_argument("--lora_alpha", type=int, default=16)
    parser.add_argument("--max_steps", type=int, default=1000)
    parser.add_argument("--per_device_batch", type=int, default=1)
    parser.add_argument("--grad_accum", type=int, default=16)
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    set_seed(args.seed)
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    device_map = {"": torch.cuda.current_device()} if torch.cuda.is_available() else None
    if int(os.environ.get("WORLD_SIZE", 1)) > 1:
        device_map = {"": local_rank}

    use_bf16 = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8
    compute_dtype = torch.bfloat16 if use_bf16 else torch.float16

    quant_config = BitsAndBytesConfig(
        load_in_4bit=args.bits == 4,
        load_in_8bit=args.bits == 8,
        llm_int8_threshold=6.0,
        llm_int8_has_fp16_weight=False,
        bnb_4bit_compute_dtype=compute_dtype,
        bnb_4bit_use_double_quant=True,
        bnb_4bit_quant_type="nf4",
    )

    model = AutoModelForCausalLM.from_pretrained(
        args.model_name_or_path,
        quantization_config=quant_config,
        device_map=device_map,
        torch_dtype=compute_dtype,
        attn_implementation="flash_attention_2",
    )
    model.config.use_cache = False
    model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=True)

    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path, use_fast=True)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token

    lora_config = LoraConfig(
        r=args.lora_r,
        lora_alpha=args.lora_alpha,
        target_modules=find_all_linear_names(model, args.bits),
        lora_dropout=0.05,
        bias="none",
        task_type="CAUSAL_LM",
    )
    model = get_peft_model(model, lora_config)
    print_trainable_parameters(model)

    ds = load_dataset(args.dataset, split="train")
    ds = ds.map(lambda ex: {"prompt": ex["text"].split("### Assistant:")[0], "response": ex["text"].split("### Assistant:")[-1]})

    training_args = TrainingArguments(
        output_dir=args.output_dir,
        per_device_train_batch_size=args.per_device_batch,
        gradient_accumulation_steps=args.grad_accum,
        max_steps=args.max_steps,
        learning_rate=args.lr,
        lr_scheduler_type="constant",
        warmup_ratio=0.03,
        logging_steps=10,
        save_steps=250,
        bf16=use_bf16,
        fp16=not use_bf16,
        tf32=True,
        optim="paged_adamw_32bit",
        gradient_checkpointing=True,
        ddp_find_unused_parameters=False,
        dataloader_pin_memory=True,
        report_to="none",
    )

    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=ds,
        data_collator=DataCollatorForCausalLM(tokenizer),
    )
    trainer.train()
    trainer.save_model(args.output_dir)
    print(f"peak memory: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
