#!/usr/bin/env python
# coding=utf-8
"""
Train a Genie-style spatio-temporal MaskGIT on pre-tokenized video (1X world model challenge).
Adapted from HuggingFace `run_clm_no_trainer.py`.
"""
import argparse
import json
import logging
import math
import os
import time

import mup
import torch
import transformers
from accelerate import Accelerator
from accelerate.logging import get_logger
from accelerate.utils import set_seed
from torch.utils.data import DataLoader
from tqdm.auto import tqdm
from transformers import default_data_collator, get_scheduler

from data import RawTokenDataset, get_maskgit_collator
from genie.config import GenieConfig
from genie.st_mask_git import STMaskGIT
from eval_utils import compute_loss, decode_tokens

torch.backends.cuda.matmul.allow_tf32 = True
torch.set_float32_matmul_precision("medium")
logger = get_logger(__name__)


def parse_args():
    parser = argparse.ArgumentParser(description="Train a spatial-temporal MaskGIT-style model on video generation.")
    parser.add_argument("--train_data_dir", type=str, default="data/train_v1.1")
    parser.add_argument("--val_data_dir", type=str, default="data/val_v1.1")
    parser.add_argument("--window_size", type=int, default=16, help="Number of frames in a sequence.")
    parser.add_argument("--stride", type=int, default=15, help="Difference in frame count between consecutive frames in a sequence.")
    parser.add_argument("--genie_config", type=str, help="GenieConfig json.")
    parser.add_argument("--per_device_train_batch_size", type=int, default=4)
    parser.add_argument("--per_device_eval_batch_size", type=int, default=4)
    parser.add_argument("--learning_rate", type=float, default=3e-4)
    parser.add_argument("--weight_decay", type=float, default=0.0)
    parser.add_argument("--num_train_epochs", type=int, default=1)
    parser.add_argument("--max_train_steps", type=int, default=None)
    parser.add_argument("--max_eval_steps", type=int, default=int(1e10))
    parser.add_argument("--eval_every_n_steps", type=int, default=1000)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--lr_scheduler_type", type=str, default="constant_with_warmup")
    parser.add_argument("--num_warmup_steps", type=int, default=5000)
    parser.add_argument("--output_dir", type=str, required=True)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--checkpointing_steps", type=str, default="10000")
    parser.add_argument("--resume_from_checkpoint", type=str, default=None)
    parser.add_argument("--with_tracking", action="store_true")
    parser.add_argument("--report_to", type=str, default="all")
    parser.add_argument("--no_compile", action="store_true", help="If true, will not compile the model.")
    return parser.parse_args()


def main():
    args = parse_args()
    accelerator_log_kwargs = {}
    if args.with_tracking:
        accelerator_log_kwargs["log_with"] = args.report_to
        accelerator_log_kwargs["project_dir"] = args.output_dir

    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps, **accelerator_log_kwargs)

    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
        datefmt="%m/%d/%Y %H:%M:%S",
        level=logging.INFO,
    )
    logger.info(accelerator.state, main_process_only=False)
    if accelerator.is_local_main_process:
        transformers.utils.logging.set_verbosity_info()
    else:
        transformers.utils.logging.set_verbosity_error()

    if args.seed is not None:
        set_seed(args.seed)

    if accelerator.is_main_process and args.output_dir is not None:
        os.makedirs(args.output_dir, exist_ok=True)
    accelerator.wait_for_everyone()

    config = GenieConfig.from_pretrained(args.genie_config)
    train_dataset = RawTokenDataset(args.train_data_dir, window_size=args.window_size, stride=args.stride, filter_overlaps=True)
    eval_dataset = RawTokenDataset(args.val_data_dir, window_size=args.window_size, stride=args.stride, filter_overlaps=True)
    assert train_dataset.metadata["s"] == config.S, "Dataset and config disagree on the number of frames"

    collate_fn = get_maskgit_collator(config)
    train_dataloader = DataLoader(
        train_dataset, shuffle=True, collate_fn=collate_fn,
        batch_size=args.per_device_train_batch_size, num_workers=4, pin_memory=True,
    )
    eval_dataloader = DataLoader(
        eval_dataset, shuffle=False, collate_fn=default_data_collator,
        batch_size=args.per_device_eval_batch_size, num_workers=4, pin_memory=True,
    )

    model = STMaskGIT(config)
    if config.use_mup:
        mup.set_base_shapes(model, STMaskGIT(config.shallow_copy()))
        model.init_weights()

    no_decay = ["bias", "layer_norm.weight"]
    optimizer_grouped_parameters = [
        {
            "params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
            "weight_decay": args.weight_decay,
        },
        {
            "params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
            "weight_decay": 0.0,
        },
    ]
    opt_class = mup.MuAdamW if config.use_mup else torch.optim.AdamW
    optimizer = opt_class(optimizer_grouped_parameters, lr=args.learning_rate, betas=(0.9, 0.95), eps=1e-8)

    num_update_steps_per_epoch = math.ceil(len(train_dataloader) / args.gradient_accumulation_steps)
    if args.max_train_steps is None:
        args.max_train_steps = args.num_train_epochs * num_update_steps_per_epoch

    lr_scheduler = get_scheduler(
        name=args.lr_scheduler_type,
        optimizer=optimizer,
        num_warmup_steps=args.num_warmup_steps * accelerator.num_processes,
        num_training_steps=args.max_train_steps * accelerator.num_processes,
    )

    if not args.no_compile:
        torch._dynamo.config.cache_size_limit = 256
        torch._dynamo.config.optimize_ddp = False  # https://github.com/pytorch/pytorch/issues/104674
        model = torch.compile(model)

    model, optimizer, train_dataloader, eval_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, eval_dataloader, lr_scheduler
    )

    if args.with_tracking:
        accelerator.init_trackers("genie", vars(args))

    total_batch_size = args.per_device_train_batch_size * accelerator.num_processes * args.gradient_accumulation_steps
    logger.info("***** Running training *****")
    logger.info(f"  Num examples = {len(train_dataset)}")
    logger.info(f"  Total train batch size (w. parallel, distributed & accumulation) = {total_batch_size}")
    logger.info(f"  Total optimization steps = {args.max_train_steps}")

    progress_bar = tqdm(range(args.max_train_steps), disable=not accelerator.is_local_main_process)
    completed_steps = 0
    train_iter = iter(train_dataloader)
    model.train()
    step_start = time.time()
    while completed_steps < args.max_train_steps:
        try:
            batch = next(train_iter)
        except StopIteration:
            train_iter = iter(train_dataloader)
            batch = next(train_iter)

        with accelerator.accumulate(model):
            outputs = model(**batch)
            loss = outputs.loss
            accelerator.backward(loss)
            if accelerator.sync_gradients:
                accelerator.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad(set_to_none=True)

        if accelerator.sync_gradients:
            progress_bar.update(1)
            completed_steps += 1
            if args.with_tracking:
                accelerator.log(
                    {
                        "train_loss": loss.item(),
                        "lr": lr_scheduler.get_last_lr()[0],
                        "step_time": time.time() - step_start,
                        "max_mem_gb": torch.cuda.max_memory_allocated() / 1024 ** 3,
                    },
                    step=completed_steps,
                )
            step_start = time.time()

            if completed_steps % args.eval_every_n_steps == 0:
                model.eval()
                losses = []
                for eval_step, eval_batch in enumerate(eval_dataloader):
                    if eval_step >= args.max_eval_steps:
                        break
                    with torch.no_grad():
                        eval_outputs = model(**eval_batch)
                    losses.append(accelerator.gather_for_metrics(eval_outputs.loss.repeat(args.per_device_eval_batch_size)))
                eval_loss = torch.cat(losses).mean()
                logger.info(f"step {completed_steps}: eval_loss {eval_loss.item():.4f}")
                if args.with_tracking:
                    accelerator.log({"eval_loss": eval_loss.item()}, step=completed_steps)
                torch.cuda.empty_cache()
                model.train()

            if completed_steps % int(args.checkpointing_steps) == 0:
                accelerator.save_state(os.path.join(args.output_dir, f"step_{completed_steps}"))

    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        unwrapped_model = accelerator.unwrap_model(model)
        unwrapped_model.save_pretrained(args.output_dir, safe_serialization=False)
        with open(os.path.join(args.output_dir, "all_results.json"), "w") as f:
            json.dump({"eval_loss": eval_loss.item()}, f)
    if args.with_tracking:
        accelerator.end_training()


if __name__ == "__main__":
    main()
