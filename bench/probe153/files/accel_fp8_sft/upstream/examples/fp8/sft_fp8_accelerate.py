# coding=utf-8
"""Supervised fine-tuning with Accelerate in FP8.

Accelerate dispatches FP8 to one of three backends:
  * te    -> NVIDIA Transformer Engine (te.Linear swap + fp8_autocast)
  * msamp -> MS-AMP (O1/O2, FP8 weights/optimizer states)
  * ao    -> torchao float8 (Float8Linear, works best with torch.compile)

    accelerate launch --config_file configs/fp8_8gpu.yaml examples/fp8/sft_fp8_accelerate.py \
        --model_name_or_path meta-llama/Llama-3.2-1B --fp8_backend te
"""
import argparse
import math
import os

import torch
from datasets import load_dataset
from torch.utils.data import DataLoader
from tqdm.auto import tqdm
from transformers import AutoModelForCausalLM, AutoTokenizer, get_cosine_schedule_with_warmup

from accelerate import Accelerator
from accelerate.logging import get_logger
from accelerate.utils import AORecipeKwargs, FP8RecipeKwargs, MSAMPRecipeKwargs, set_seed

logger = get_logger(__name__)


def parse_args():
    parser = argparse.ArgumentParser(description="FP8 SFT with Accelerate")
    parser.add_argument("--model_name_or_path", type=str, default="meta-llama/Llama-3.2-1B")
    parser.add_argument("--dataset_name", type=str, default="tatsu-lab/alpaca")
    parser.add_argument("--max_length", type=int, default=1024)
    parser.add_argument("--per_device_train_batch_size", type=int, default=8)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=4)
    parser.add_argument("--learning_rate", type=float, default=2e-5)
    parser.add_argument("--num_train_epochs", type=int, default=1)
    parser.add_argument("--warmup_ratio", type=float, default=0.03)
    parser.add_argument("--fp8_backend", choices=["te", "msamp", "ao"], default="te")
    parser.add_argument("--output_dir", type=str, default="outputs/sft-fp8")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--gradient_checkpointing", action="store_true")
    return parser.parse_args()


def build_fp8_kwargs(backend: str):
    if backend == "te":
        return [FP8RecipeKwargs(backend="te", fp8_format="HYBRID", amax_history_len=32, amax_compute_algo="max")]
    if backend == "msamp":
        return [MSAMPRecipeKwargs(opt_level="O2")]
    return [AORecipeKwargs()]


def format_example(example):
    if example.get("input"):
        prompt = (
            "Below is an instruction that describes a task, paired with an input that provides further context.\n\n"
            f"### Instruction:\n{example['instruction']}\n\n### Input:\n{example['input']}\n\n### Response:\n"
        )
    else:
        prompt = (
            "Below is an instruction that describes a task.\n\n"
            f"### Instruction:\n{example['instruction']}\n\n### Response:\n"
        )
    return prompt, example["output"]


def main():
    args = parse_args()

    accelerator = Accelerator(
        mixed_precision="fp8",
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        kwargs_handlers=build_fp8_kwargs(args.fp8_backend),
        log_with="tensorboard",
        project_dir=args.output_dir,
    )
    set_seed(args.seed)
    logger.info(accelerator.state, main_process_only=False)

    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token

    raw = load_dataset(args.dataset_name, split="train")

    def tokenize(example):
        prompt, answer = format_example(example)
        prompt_ids = tokenizer(prompt, add_special_tokens=True)["input_ids"]
        answer_ids = tokenizer(answer + tokenizer.eos_token, add_special_tokens=False)["input_ids"]
        input_ids = (prompt_ids + answer_ids)[: args.max_length]
        labels = ([-100] * len(prompt_ids) + answer_ids)[: args.max_length]
        return {"input_ids": input_ids, "labels": labels}

    with accelerator.main_process_first():
        dataset = raw.map(tokenize, remove_columns=raw.column_names, num_proc=8)

    def collate(batch):
        # FP8 GEMMs need every dim divisible by 16: pad the sequence length accordingly
        max_len = max(len(x["input_ids"]) for x in batch)
        max_len = int(math.ceil(max_len / 16) * 16)
        input_ids = torch.full((len(batch), max_len), tokenizer.pad_token_id, dtype=torch.long)
        labels = torch.full((len(batch), max_len), -100, dtype=torch.long)
        attention_mask = torch.zeros((len(batch), max_len), dtype=torch.long)
        for i, x in enumerate(batch):
            n = len(x["input_ids"])
            input_ids[i, :n] = torch.tensor(x["input_ids"])
            labels[i, :n] = torch.tensor(x["labels"])
            attention_mask[i, :n] = 1
        return {"input_ids": input_ids, "labels": labels, "attention_mask": attention_mask}

    train_dataloader = DataLoader(
        dataset,
        shuffle=True,
        collate_fn=collate,
        batch_size=args.per_device_train_batch_size,
        num_workers=4,
        pin_memory=True,
        pin_memory_device="cuda",
        drop_last=True,
    )

    model = AutoModelForCausalLM.from_pretrained(
        args.model_name_or_path,
        torch_dtype=torch.bfloat16,
        attn_implementation="flash_attention_2",
    )
    if args.gradient_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=0.0, betas=(0.9, 0.95))
    num_update_steps_per_epoch = math.ceil(len(train_dataloader) / args.gradient_accumulation_steps)
    max_train_steps = args.num_train_epochs * num_update_steps_per_epoch
    lr_scheduler = get_cosine_schedule_with_warmup(
        optimizer,
        num_warmup_steps=int(args.warmup_ratio * max_train_steps),
        num_training_steps=max_train_steps,
    )

    model, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, lr_scheduler
    )
    accelerator.init_trackers("sft_fp8", config=vars(args))

    if accelerator.is_main_process:
        logger.info(f"FP8 backend: {args.fp8_backend}, steps: {max_train_steps}")
        logger.info(torch.cuda.memory_summary(abbreviated=True))

    progress_bar = tqdm(range(max_train_steps), disable=not accelerator.is_local_main_process)
    completed_steps = 0
    for epoch in range(args.num_train_epochs):
        model.train()
        for step, batch in enumerate(train_dataloader):
            with accelerator.accumulate(model):
                outputs = model(**batch)
                loss = outputs.loss
                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()

            if accelerator.sync_gradients:
                progress_bar.update(1)
                completed_steps += 1
                if completed_steps % 10 == 0:
                    accelerator.log(
                        {
                            "train/loss": loss.detach().float().item(),
                            "train/lr": lr_scheduler.get_last_lr()[0],
                            "train/mem_gib": torch.cuda.max_memory_allocated() / 2**30,
                        },
                        step=completed_steps,
                    )
            if completed_steps >= max_train_steps:
                break

        torch.cuda.empty_cache()

    accelerator.wait_for_everyone()
    unwrapped = accelerator.unwrap_model(model)
    unwrapped.save_pretrained(
        args.output_dir,
        is_main_process=accelerator.is_main_process,
        save_function=accelerator.save,
        safe_serialization=True,
    )
    if accelerator.is_main_process:
        tokenizer.save_pretrained(args.output_dir)
    accelerator.end_training()


if __name__ == "__main__":
    main()
