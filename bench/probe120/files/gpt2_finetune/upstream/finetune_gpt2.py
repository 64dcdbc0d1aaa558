#!/usr/bin/env python
# coding=utf-8
"""Fine-tune GPT-2 (causal LM) on a plain-text corpus.

Single GPU:
    python finetune_gpt2.py --train_file data/train.txt --output_dir out/ --fp16
Several GPUs on one node:
    python -m torch.distributed.launch --nproc_per_node 8 finetune_gpt2.py ...

Precision modes:
    (default)     fp32 weights, fp32 math (TF32 matmuls on Ampere)
    --fp16        torch.cuda.amp autocast + GradScaler
    --pure_fp16   the whole model in half precision (model.half().cuda()),
                  no loss scaling -- only for short, low-lr fine-tunes
"""

import argparse
import logging
import math
import os
import random
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, RandomSampler, SequentialSampler
from torch.utils.data.distributed import DistributedSampler
from tqdm import tqdm

from transformers import (
    GPT2LMHeadModel,
    GPT2TokenizerFast,
    get_linear_schedule_with_warmup,
)

try:
    import bitsandbytes as bnb
except ImportError:
    bnb = None

logger = logging.getLogger(__name__)


class TextDataset(Dataset):
    """Concatenate the corpus and cut it into blocks of ``block_size`` tokens."""

    def __init__(self, tokenizer, file_path, block_size=512, cache_dir=None):
        assert os.path.isfile(file_path), file_path
        directory, filename = os.path.split(file_path)
        cached = os.path.join(cache_dir or directory, "gpt2_cached_lm_{}_{}".format(block_size, filename))
        if os.path.exists(cached):
            logger.info("Loading features from cached file %s", cached)
            self.examples = torch.load(cached)
            return

        logger.info("Creating features from dataset file at %s", directory)
        with open(file_path, encoding="utf-8") as f:
            text = f.read()
        tokenized = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text))
        self.examples = [
            torch.tensor(tokenized[i : i + block_size], dtype=torch.long)
            for i in range(0, len(tokenized) - block_size + 1, block_size)
        ]
        torch.save(self.examples, cached)

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, i):
        return self.examples[i]


def set_seed(args):
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    if args.n_gpu > 0:
        torch.cuda.manual_seed_all(args.seed)


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train_file", type=str, required=True)
    parser.add_argument("--eval_file", type=str, default=None)
    parser.add_argument("--output_dir", type=str, required=True)
    parser.add_argument("--model_name_or_path", type=str, default="gpt2-medium")
    parser.add_argument("--block_size", type=int, default=512)
    parser.add_argument("--per_gpu_train_batch_size", type=int, default=4)
    parser.add_argument("--per_gpu_eval_batch_size", type=int, default=8)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=8)
    parser.add_argument("--learning_rate", type=float, default=5e-5)
    parser.add_argument("--weight_decay", type=float, default=0.0)
    parser.add_argument("--adam_epsilon", type=float, default=1e-8)
    parser.add_argument("--max_grad_norm", type=float, default=1.0)
    parser.add_argument("--num_train_epochs", type=float, default=3.0)
    parser.add_argument("--warmup_steps", type=int, default=200)
    parser.add_argument("--logging_steps", type=int, default=50)
    parser.add_argument("--save_steps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--num_workers", type=int, default=4)
    parser.add_argument("--gradient_checkpointing", action="store_true",
                        help="Trade compute for GPU memory")
    parser.add_argument("--optim", default="adamw_torch",
                        choices=["adamw_torch", "adamw_apex_fused", "adamw_bnb_8bit"])
    parser.add_argument("--fp16", action="store_true", help="Mixed precision via torch.cuda.amp")
    parser.add_argument("--pure_fp16", action="store_true", help="Cast the whole model to fp16")
    parser.add_argument("--use_flash_attn", action="store_true",
                        help="Use FlashAttention-2 kernels (needs flash-attn and an Ampere+ GPU)")
    parser.add_argument("--torch_compile", action="store_true")
    parser.add_argument("--no_cuda", action="store_true")
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", -1)))
    return parser.parse_args()


def setup(args):
    if args.local_rank == -1 or args.no_cuda:
        device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")
        args.n_gpu = 0 if args.no_cuda else torch.cuda.device_count()
    else:
        torch.cuda.set_device(args.local_rank)
        device = torch.device("cuda", args.local_rank)
        torch.distributed.init_process_group(backend="nccl")
        args.n_gpu = 1
    args.device = device

    # TF32 is free accuracy-wise for fine-tuning and ~2x faster on A100
    if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True


def build_model(args):
    attn_impl = "flash_attention_2" if args.use_flash_attn else "eager"
    if args.use_flash_attn:
        major, _ = torch.cuda.get_device_capability()
        if major < 8:
            raise ValueError("FlashAttention-2 needs compute capability >= 8.0 (Ampere or newer)")
    model = GPT2LMHeadModel.from_pretrained(
        args.model_name_or_path,
        torch_dtype=torch.float16 if (args.pure_fp16 or args.use_flash_attn) else None,
        attn_implementation=attn_impl,
    )
    if args.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    if args.pure_fp16:
        model = model.half().cuda()
    else:
        model.to(args.device)
    if args.torch_compile:
        model = torch.compile(model, mode="max-autotune")
    return model


def build_optimizer(args, model):
    no_decay = ["bias", "ln_1.weight", "ln_2.weight", "ln_f.weight"]
    grouped = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
         "weight_decay": args.weight_decay},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
         "weight_decay": 0.0},
    ]
    if args.optim == "adamw_bnb_8bit":
        if bnb is None:
            raise ImportError("pip install bitsandbytes to use --optim adamw_bnb_8bit")
        return bnb.optim.AdamW8bit(grouped, lr=args.learning_rate, eps=args.adam_epsilon)
    if args.optim == "adamw_apex_fused":
        from apex.optimizers import FusedAdam
        return FusedAdam(grouped, lr=args.learning_rate, eps=args.adam_epsilon, adam_w_mode=True)
    return torch.optim.AdamW(grouped, lr=args.learning_rate, eps=args.adam_epsilon,
                             fused=torch.cuda.is_available())


def evaluate(args, model, dataset):
    args.eval_batch_size = args.per_gpu_eval_batch_size * max(1, args.n_gpu)
    loader = DataLoader(dataset, sampler=SequentialSampler(dataset), batch_size=args.eval_batch_size)
    model.eval()
    total, steps = 0.0, 0
    for batch in tqdm(loader, desc="Evaluating", disable=args.local_rank not in [-1, 0]):
        batch = batch.to(args.device)
        with torch.no_grad(), torch.cuda.amp.autocast(enabled=args.fp16):
            loss = model(batch, labels=batch)[0]
        total += loss.mean().item()
        steps += 1
    model.train()
    return {"eval_loss": total / max(steps, 1), "perplexity": math.exp(total / max(steps, 1))}


def sample_text(model, tokenizer, prompt="The meaning of life is", max_new_tokens=40):
    model_to_use = model.module if hasattr(model, "module") else model
    input_ids = tokenizer.encode(prompt, return_tensors="pt").to("cuda")
    with torch.no_grad():
        out = model_to_use.generate(input_ids, max_new_tokens=max_new_tokens, do_sample=True, top_p=0.9,
                                    pad_token_id=tokenizer.eos_token_id)
    return tokenizer.decode(out[0], skip_special_tokens=True)


def train(args, model, tokenizer, train_dataset, eval_dataset=None):
    args.train_batch_size = args.per_gpu_train_batch_size * max(1, args.n_gpu)
    sampler = RandomSampler(train_dataset) if args.local_rank == -1 else DistributedSampler(train_dataset)
    loader = DataLoader(train_dataset, sampler=sampler, batch_size=args.train_batch_size,
                        num_workers=args.num_workers, pin_memory=True, drop_last=True)

    t_total = int(len(loader) // args.gradient_accumulation_steps * args.num_train_epochs)
    optimizer = build_optimizer(args, model)
    scheduler = get_linear_schedule_with_warmup(optimizer, args.warmup_steps, t_total)
    scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)

    if args.local_rank != -1:
        model = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[args.local_rank], output_device=args.local_rank
        )
    elif args.n_gpu > 1:
        model = torch.nn.DataParallel(model)

    logger.info("***** Running training *****")
    logger.info("  Num examples = %d, epochs = %s, total steps = %d", len(train_dataset),
                args.num_train_epochs, t_total)

    global_step, tr_loss, logging_loss = 0, 0.0, 0.0
    model.zero_grad()
    set_seed(args)
    t0 = time.time()
    for epoch in range(int(math.ceil(args.num_train_epochs))):
        if isinstance(sampler, DistributedSampler):
            sampler.set_epoch(epoch)
        for step, batch in enumerate(tqdm(loader, desc="Iteration", disable=args.local_rank not in [-1, 0])):
            inputs = batch.to(args.device, non_blocking=True)
            model.train()
            with torch.cuda.amp.autocast(enabled=args.fp16):
                outputs = model(inputs, labels=inputs)
                loss = outputs[0]
            if args.n_gpu > 1:
                loss = loss.mean()
            loss = loss / args.gradient_accumulation_steps
            scaler.scale(loss).backward()
            tr_loss += loss.item()

            if (step + 1) % args.gradient_accumulation_steps != 0:
                continue
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            model.zero_grad(set_to_none=True)
            global_step += 1

            if args.local_rank in [-1, 0] and global_step % args.logging_steps == 0:
                elapsed = time.time() - t0
                logger.info(
                    "step %d | loss %.4f | lr %.2e | %.2f it/s | max mem %.1f GB",
                    global_step,
                    (tr_loss - logging_loss) / args.logging_steps,
                    scheduler.get_last_lr()[0],
                    args.logging_steps / elapsed,
                    torch.cuda.max_memory_allocated() / 2 ** 30,
                )
                logging_loss, t0 = tr_loss, time.time()
                if eval_dataset is not None and args.local_rank == -1:
                    logger.info("eval: %s", evaluate(args, model, eval_dataset))
                    logger.info("sample: %s", sample_text(model, tokenizer))

            if args.local_rank in [-1, 0] and global_step % args.save_steps == 0:
                out_dir = os.path.join(args.output_dir, "checkpoint-{}".format(global_step))
                os.makedirs(out_dir, exist_ok=True)
                (model.module if hasattr(model, "module") else model).save_pretrained(out_dir)
                tokenizer.save_pretrained(out_dir)
                torch.save(optimizer.state_dict(), os.path.join(out_dir, "optimizer.pt"))
    return global_step, tr_loss / max(global_step, 1)


def main():
    args = parse_args()
    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
        level=logging.INFO if args.local_rank in [-1, 0] else logging.WARN,
    )
    setup(args)
    logger.warning("device: %s, n_gpu: %s, distributed: %s, fp16: %s, pure_fp16: %s",
                   args.device, args.n_gpu, args.local_rank != -1, args.fp16, args.pure_fp16)
    if args.n_gpu > 0:
        props = torch.cuda.get_device_properties(0)
        logger.info("GPU 0: %s, %.1f GB", props.name, props.total_memory / 2 ** 30)
    set_seed(args)

    tokenizer = GPT2TokenizerFast.from_pretrained(args.model_name_or_path)
    model = build_model(args)

    if args.local_rank not in [-1, 0]:
        torch.distributed.barrier()
    train_dataset = TextDataset(tokenizer, args.train_file, args.block_size)
    eval_dataset = TextDataset(tokenizer, args.eval_file, args.block_size) if args.eval_file else None
    if args.local_rank == 0:
        torch.distributed.barrier()

    global_step, avg_loss = train(args, model, tokenizer, train_dataset, eval_dataset)
    logger.info("global_step = %s, average loss = %s", global_step, avg_loss)

    if args.local_rank in [-1, 0]:
        os.makedirs(args.output_dir, exist_ok=True)
        (model.module if hasattr(model, "module") else model).save_pretrained(args.output_dir)
        tokenizer.save_pretrained(args.output_dir)
        torch.save(args, os.path.join(args.output_dir, "training_args.bin"))
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
