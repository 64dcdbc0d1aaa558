#!/usr/bin/env python
# coding=utf-8
"""Fine-tune a SegFormer (or any AutoModelForSemanticSegmentation) on a medical 2D segmentation
dataset (e.g. polyp / skin-lesion masks) with 🤗 Accelerate, without the Trainer.

Launch on one or several GPUs with:
    accelerate launch run_segformer_no_trainer.py --dataset_name <hub id> --output_dir ./out
"""
import argparse
import json
import logging
import math
import os
import random

import evaluate
import numpy as np
import torch
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.logging import get_logger
from accelerate.utils import set_seed
from datasets import load_dataset
from torch.utils.data import DataLoader
from torchvision import transforms as T
from tqdm.auto import tqdm
from transformers import (
    AutoConfig,
    AutoImageProcessor,
    AutoModelForSemanticSegmentation,
    SchedulerType,
    get_scheduler,
)

logger = get_logger(__name__)


def parse_args():
    parser = argparse.ArgumentParser(description="Finetune a transformers model on a semantic segmentation task")
    parser.add_argument("--model_name_or_path", type=str, default="nvidia/mit-b0",
                        help="Path to a pretrained model or model identifier from huggingface.co/models.")
    parser.add_argument("--dataset_name", type=str, required=True,
                        help="Name of the dataset on the hub (columns: image, label).")
    parser.add_argument("--reduce_labels", action="store_true",
                        help="Whether or not to reduce all labels by 1 and replace background by 255.")
    parser.add_argument("--train_val_split", type=float, default=0.15, help="Fraction of the dataset used for validation.")
    parser.add_argument("--per_device_train_batch_size", type=int, default=8,
                        help="Batch size (per device, i.e. per GPU) for the training dataloader.")
    parser.add_argument("--per_device_eval_batch_size", type=int, default=8,
                        help="Batch size (per device) for the evaluation dataloader.")
    parser.add_argument("--learning_rate", type=float, default=6e-5, help="Initial learning rate (after warmup).")
    parser.add_argument("--weight_decay", type=float, default=0.01, help="Weight decay to use.")
    parser.add_argument("--num_train_epochs", type=int, default=20, help="Total number of training epochs.")
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1,
                        help="Number of updates steps to accumulate before performing a backward/update pass.")
    parser.add_argument("--lr_scheduler_type", type=SchedulerType, default="polynomial", help="The scheduler type to use.")
    parser.add_argument("--num_warmup_steps", type=int, default=0, help="Number of steps for the warmup.")
    parser.add_argument("--mixed_precision", type=str, default="no", choices=["no", "fp16", "bf16"],
                        help="fp16 needs a GPU; bf16 needs an Ampere or newer GPU (or a recent accelerator).")
    parser.add_argument("--output_dir", type=str, default=None, help="Where to store the final model.")
    parser.add_argument("--seed", type=int, default=42, help="A seed for reproducible training.")
    parser.add_argument("--num_workers", type=int, default=4, help="DataLoader worker processes.")
    return parser.parse_args()


def main():
    args = parse_args()

    # Accelerate picks the device (GPU, other accelerators, or CPU) and the distributed backend itself
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps,
                              mixed_precision=args.mixed_precision)
    logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s", level=logging.INFO)
    logger.info(accelerator.state, main_process_only=False)
    if args.seed is not None:
        set_seed(args.seed, device_specific=True)

    dataset = load_dataset(args.dataset_name)
    if "validation" not in dataset.keys():
        dataset = dataset["train"].train_test_split(test_size=args.train_val_split, seed=args.seed)
        dataset["validation"] = dataset.pop("test")

    label2id = {"background": 0, "lesion": 1}
    id2label = {v: k for k, v in label2id.items()}

    config = AutoConfig.from_pretrained(args.model_name_or_path, id2label=id2label, label2id=label2id)
    image_processor = AutoImageProcessor.from_pretrained(args.model_name_or_path, do_reduce_labels=args.reduce_labels)
    model = AutoModelForSemanticSegmentation.from_pretrained(args.model_name_or_path, config=config,
                                                             ignore_mismatched_sizes=True)

    size = (512, 512)
    jitter = T.ColorJitter(brightness=0.25, contrast=0.25, saturation=0.25, hue=0.1)

    def preprocess_train(example_batch):
        images = [jitter(x.convert("RGB").resize(size)) for x in example_batch["image"]]
        labels = [np.array(x.resize(size, resample=0)) for x in example_batch["label"]]
        labels = [(l > 0).astype(np.int64) for l in labels]
        inputs = image_processor(images, labels, return_tensors="pt")
        return inputs

    def preprocess_val(example_batch):
        images = [x.convert("RGB").resize(size) for x in example_batch["image"]]
        labels = [(np.array(x.resize(size, resample=0)) > 0).astype(np.int64) for x in example_batch["label"]]
        return image_processor(images, labels, return_tensors="pt")

    with accelerator.main_process_first():
        train_ds = dataset["train"].with_transform(preprocess_train)
        eval_ds = dataset["validation"].with_transform(preprocess_val)

    def collate_fn(examples):
        pixel_values = torch.stack([example["pixel_values"] for example in examples])
        labels = torch.stack([example["labels"] for example in examples])
        return {"pixel_values": pixel_values, "labels": labels}

    train_dataloader = DataLoader(train_ds, shuffle=True, collate_fn=collate_fn,
                                  batch_size=args.per_device_train_batch_size,
                                  num_workers=args.num_workers, pin_memory=True)
    eval_dataloader = DataLoader(eval_ds, collate_fn=collate_fn, batch_size=args.per_device_eval_batch_size,
                                 num_workers=args.num_workers)

    optimizer = torch.optim.AdamW(
        [p for p in model.parameters() if p.requires_grad],
        lr=args.learning_rate,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=args.weight_decay,
    )

    num_update_steps_per_epoch = math.ceil(len(train_dataloader) / args.gradient_accumulation_steps)
    max_train_steps = args.num_train_epochs * num_update_steps_per_epoch
    lr_scheduler = get_scheduler(
        name=args.lr_scheduler_type,
        optimizer=optimizer,
        num_warmup_steps=args.num_warmup_steps * accelerator.num_processes,
        num_training_steps=max_train_steps * accelerator.num_processes,
    )

    model, optimizer, train_dataloader, eval_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, eval_dataloader, lr_scheduler
    )

    metric = evaluate.load("mean_iou")
    total_batch_size = args.per_device_train_batch_size * accelerator.num_processes * args.gradient_accumulation_steps
    logger.info("***** Running training *****")
    logger.info(f"  Num examples = {len(train_ds)}")
    logger.info(f"  Num Epochs = {args.num_train_epochs}")
    logger.info(f"  Total train batch size (w. parallel, distributed & accumulation) = {total_batch_size}")
    logger.info(f"  Total optimization steps = {max_train_steps}")
    progress_bar = tqdm(range(max_train_steps), disable=not accelerator.is_local_main_process)

    completed_steps = 0
    for epoch in range(args.num_train_epochs):
        model.train()
        for step, batch in enumerate(train_dataloader):
            with accelerator.accumulate(model):
                outputs = model(**batch)
                loss = outputs.loss
                accelerator.backward(loss)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()

            if accelerator.sync_gradients:
                progress_bar.update(1)
                completed_steps += 1

        logger.info("***** Running evaluation *****")
        model.eval()
        for step, batch in enumerate(tqdm(eval_dataloader, disable=not accelerator.is_local_main_process)):
            with torch.no_grad():
                outputs = model(**batch)

            upsampled_logits = F.interpolate(
                outputs.logits, size=batch["labels"].shape[-2:], mode="bilinear", align_corners=False
            )
            predictions = upsampled_logits.argmax(dim=1)

            predictions, references = accelerator.gather_for_metrics((predictions, batch["labels"]))
            metric.add_batch(
                predictions=predictions.cpu().numpy(),
                references=references.cpu().numpy(),
            )

        eval_metrics = metric.compute(num_labels=len(id2label), ignore_index=255, reduce_labels=False)
        logger.info(f"epoch {epoch}: mean_iou {eval_metrics['mean_iou']:.4f} "
                    f"(peak memory is reported by `accelerate env` / the device's own tools)")

    if args.output_dir is not None:
        accelerator.wait_for_everyone()
        unwrapped_model = accelerator.unwrap_model(model)
        unwrapped_model.save_pretrained(args.output_dir, is_main_process=accelerator.is_main_process,
                                        save_function=accelerator.save)
        if accelerator.is_main_process:
            image_processor.save_pretrained(args.output_dir)
            all_results = {f"eval_{k}": v for k, v in eval_metrics.items() if k != "per_category_iou"}
            with open(os.path.join(args.output_dir, "all_results.json"), "w") as f:
                json.dump({k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in all_results.items()}, f)


if __name__ == "__main__":
    main()
