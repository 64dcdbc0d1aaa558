#!/usr/bin/env python
# coding=utf-8
"""
Fine-tune TrOCR on the IAM Handwriting Database (line level).

Two ways of training are supported:

  * ``--mode trainer``  -> HuggingFace Seq2SeqTrainer (fp16, generate-based eval)
  * ``--mode native``   -> a plain PyTorch loop (handy for debugging on one GPU)

Example:
    CUDA_VISIBLE_DEVICES=0 python train_trocr_iam.py --mode trainer \
        --data_dir data/IAM --output_dir runs/trocr-base-iam --fp16
"""

import argparse
import logging
import os
import random

import numpy as np
import pandas as pd
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from tqdm.auto import tqdm

import evaluate
from transformers import (
    Seq2SeqTrainer,
    Seq2SeqTrainingArguments,
    TrOCRProcessor,
    VisionEncoderDecoderModel,
    default_data_collator,
    get_linear_schedule_with_warmup,
)

logger = logging.getLogger(__name__)


class IAMDataset(Dataset):
    def __init__(self, root_dir, df, processor, max_target_length=128):
        self.root_dir = root_dir
        self.df = df
        self.processor = processor
        self.max_target_length = max_target_length

    def __len__(self):
        return len(self.df)

    def __getitem__(self, idx):
        # get file name + text
        file_name = self.df["file_name"][idx]
        text = self.df["text"][idx]
        # prepare image (i.e. resize + normalize)
        image = Image.open(os.path.join(self.root_dir, file_name)).convert("RGB")
        pixel_values = self.processor(image, return_tensors="pt").pixel_values
        # add labels (input_ids) by encoding the text
        labels = self.processor.tokenizer(
            text, padding="max_length", max_length=self.max_target_length
        ).input_ids
        # important: make sure that PAD tokens are ignored by the loss function
        labels = [
            label if label != self.processor.tokenizer.pad_token_id else -100
            for label in labels
        ]
        return {"pixel_values": pixel_values.squeeze(), "labels": torch.tensor(labels)}


def load_iam_split(data_dir, split):
    """IAM lines as a (file_name, text) dataframe; gt_test.txt style files."""
    path = os.path.join(data_dir, f"gt_{split}.txt")
    df = pd.read_fwf(path, header=None)
    df.rename(columns={0: "file_name", 1: "text"}, inplace=True)
    if 2 in df.columns:
        del df[2]
    # some file names end with jp instead of jpg, let's fix this
    df["file_name"] = df["file_name"].apply(lambda x: x + "g" if x.endswith("jp") else x)
    return df.reset_index(drop=True)


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def build_model(processor, args):
    model = VisionEncoderDecoderModel.from_pretrained(args.model_name)
    # set special tokens used for creating the decoder_input_ids from the labels
    model.config.decoder_start_token_id = processor.tokenizer.cls_token_id
    model.config.pad_token_id = processor.tokenizer.pad_token_id
    # make sure vocab size is set correctly
    model.config.vocab_size = model.config.decoder.vocab_size
    # set beam search parameters
    model.config.eos_token_id = processor.tokenizer.sep_token_id
    model.config.max_length = 64
    model.config.early_stopping = True
    model.config.no_repeat_ngram_size = 3
    model.config.length_penalty = 2.0
    model.config.num_beams = 4
    if args.gradient_checkpointing:
        model.decoder.gradient_checkpointing_enable()
    return model


def make_compute_metrics(processor):
    cer_metric = evaluate.load("cer")

    def compute_metrics(pred):
        labels_ids = pred.label_ids
        pred_ids = pred.predictions

        pred_str = processor.batch_decode(pred_ids, skip_special_tokens=True)
        labels_ids[labels_ids == -100] = processor.tokenizer.pad_token_id
        label_str = processor.batch_decode(labels_ids, skip_special_tokens=True)

        cer = cer_metric.compute(predictions=pred_str, references=label_str)
        return {"cer": cer}

    return compute_metrics


def train_with_trainer(model, processor, train_dataset, eval_dataset, args):
    training_args = Seq2SeqTrainingArguments(
        output_dir=args.output_dir,
        predict_with_generate=True,
        evaluation_strategy="steps",
        per_device_train_batch_size=args.batch_size,
        per_device_eval_batch_size=args.batch_size,
        gradient_accumulation_steps=args.grad_accum,
        learning_rate=args.lr,
        num_train_epochs=args.epochs,
        warmup_ratio=0.05,
        fp16=args.fp16,
        tf32=True,
        dataloader_num_workers=args.num_workers,
        dataloader_pin_memory=True,
        logging_steps=50,
        save_steps=1000,
        eval_steps=1000,
        save_total_limit=3,
        load_best_model_at_end=True,
        metric_for_best_model="cer",
        greater_is_better=False,
        report_to=["tensorboard"],
        ddp_find_unused_parameters=False,
    )

    trainer = Seq2SeqTrainer(
        model=model,
        tokenizer=processor.feature_extractor,
        args=training_args,
        compute_metrics=make_compute_metrics(processor),
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        data_collator=default_data_collator,
    )
    trainer.train(resume_from_checkpoint=args.resume)
    trainer.save_model(args.output_dir)
    processor.save_pretrained(args.output_dir)


def train_native(model, processor, train_dataset, eval_dataset, args):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model.to(device)

    train_dataloader = DataLoader(
        train_dataset, batch_size=args.batch_size, shuffle=True,
        num_workers=args.num_workers, pin_memory=True,
    )
    eval_dataloader = DataLoader(
        eval_dataset, batch_size=args.batch_size, num_workers=args.num_workers
    )

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    num_training_steps = args.epochs * len(train_dataloader) // args.grad_accum
    scheduler = get_linear_schedule_with_warmup(
        optimizer, int(0.05 * num_training_steps), num_training_steps
    )
    scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)
    cer_metric = evaluate.load("cer")

    best_cer = float("inf")
    for epoch in range(args.epochs):
        model.train()
        train_loss = 0.0
        for step, batch in enumerate(tqdm(train_dataloader, desc=f"epoch {epoch}")):
            for k, v in batch.items():
                batch[k] = v.to(device, non_blocking=True)

            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.fp16):
                outputs = model(**batch)
                loss = outputs.loss / args.grad_accum

            scaler.scale(loss).backward()
            if (step + 1) % args.grad_accum == 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad(set_to_none=True)
                scheduler.step()
            train_loss += loss.item()

        logger.info("Loss after epoch %d: %.4f", epoch, train_loss / len(train_dataloader))

        # evaluate
        model.eval()
        preds, refs = [], []
        with torch.no_grad():
            for batch in tqdm(eval_dataloader, desc="eval"):
                outputs = model.generate(batch["pixel_values"].to(device))
                preds.extend(processor.batch_decode(outputs, skip_special_tokens=True))
                labels = batch["labels"].clone()
                labels[labels == -100] = processor.tokenizer.pad_token_id
                refs.extend(processor.batch_decode(labels, skip_special_tokens=True))

        cer = cer_metric.compute(predictions=preds, references=refs)
        logger.info("Validation CER: %.4f", cer)
        if cer < best_cer:
            best_cer = cer
            model.save_pretrained(args.output_dir)
            processor.save_pretrained(args.output_dir)

        if torch.cuda.is_available():
            logger.info(
                "max memory allocated: %.1f MiB",
                torch.cuda.max_memory_allocated() / 2 ** 20,
            )
            torch.cuda.reset_peak_memory_stats()


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data_dir", default="data/IAM")
    p.add_argument("--image_dir", default=None)
    p.add_argument("--output_dir", default="runs/trocr-iam")
    p.add_argument("--model_name", default="microsoft/trocr-base-stage1")
    p.add_argument("--processor_name", default="microsoft/trocr-base-handwritten")
    p.add_argument("--mode", choices=["trainer", "native"], default="trainer")
    p.add_argument("--batch_size", type=int, default=8)
    p.add_argument("--grad_accum", type=int, default=1)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument("--num_workers", type=int, default=4)
    p.add_argument("--fp16", action="store_true")
    p.add_argument("--gradient_checkpointing", action="store_true")
    p.add_argument("--resume", default=None)
    p.add_argument("--seed", type=int, default=42)
    return p.parse_args()


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    set_seed(args.seed)

    processor = TrOCRProcessor.from_pretrained(args.processor_name)
    image_dir = args.image_dir or os.path.join(args.data_dir, "image")
    train_df = load_iam_split(args.data_dir, "train")
    eval_df = load_iam_split(args.data_dir, "valid")
    logger.info("Train: %d lines, Valid: %d lines", len(train_df), len(eval_df))

    train_dataset = IAMDataset(root_dir=image_dir, df=train_df, processor=processor)
    eval_dataset = IAMDataset(root_dir=image_dir, df=eval_df, processor=processor)

    model = build_model(processor, args)

    if args.mode == "trainer":
        train_with_trainer(model, processor, train_dataset, eval_dataset, args)
    else:
        train_native(model, processor, train_dataset, eval_dataset, args)


if __name__ == "__main__":
    main()
