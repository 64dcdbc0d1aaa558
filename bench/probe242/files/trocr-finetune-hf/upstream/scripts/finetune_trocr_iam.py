#!/usr/bin/env python
# coding=utf-8
"""Fine-tune TrOCR on IAM (or any line-level HTR dataset in the same format)
with the HuggingFace Seq2SeqTrainer.

Adapted from the "Fine-tune TrOCR on the IAM Handwriting Database" notebook.

    CUDA_VISIBLE_DEVICES=0 python scripts/finetune_trocr_iam.py \
        --train_csv data/iam/train.csv --eval_csv data/iam/val.csv \
        --image_dir data/iam/lines --output_dir runs/trocr-base-iam
"""
import argparse
import logging
import os

# pin to the first card before torch is imported; the shared box has 4 GPUs
# and other users' jobs on the remaining ones
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")

import evaluate
import pandas as pd
import torch
from PIL import Image
from torch.utils.data import Dataset
from transformers import (
    Seq2SeqTrainer,
    Seq2SeqTrainingArguments,
    TrOCRProcessor,
    VisionEncoderDecoderModel,
    default_data_collator,
    set_seed,
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
        encoding = {
            "pixel_values": pixel_values.squeeze(),
            "labels": torch.tensor(labels),
        }
        return encoding


def read_split(csv_path):
    df = pd.read_csv(csv_path, sep="\t", header=None, names=["file_name", "text"])
    df = df.dropna().reset_index(drop=True)
    # IAM uses "|" as word separator in some exports
    df["text"] = df["text"].str.replace("|", " ", regex=False)
    return df


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--train_csv", required=True)
    p.add_argument("--eval_csv", required=True)
    p.add_argument("--image_dir", required=True)
    p.add_argument("--output_dir", default="runs/trocr-base-iam")
    p.add_argument("--model_name", default="microsoft/trocr-base-stage1")
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--batch_size", type=int, default=8)
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument("--max_target_length", type=int, default=128)
    p.add_argument("--num_beams", type=int, default=4)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--fp16", action="store_true", default=True)
    p.add_argument("--no_fp16", dest="fp16", action="store_false")
    p.add_argument("--gradient_checkpointing", action="store_true")
    return p.parse_args()


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO)
    set_seed(args.seed)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    logger.info("Training on %s (%d visible GPUs)", device, torch.cuda.device_count())

    processor = TrOCRProcessor.from_pretrained(args.model_name)
    train_df = read_split(args.train_csv)
    eval_df = read_split(args.eval_csv)
    train_dataset = IAMDataset(args.image_dir, train_df, processor, args.max_target_length)
    eval_dataset = IAMDataset(args.image_dir, eval_df, processor, args.max_target_length)
    logger.info("Number of training examples: %d", len(train_dataset))
    logger.info("Number of validation examples: %d", len(eval_dataset))

    model = VisionEncoderDecoderModel.from_pretrained(args.model_name)
    model.to(device)

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
    model.config.num_beams = args.num_beams

    if args.gradient_checkpointing:
        model.gradient_checkpointing_enable()

    training_args = Seq2SeqTrainingArguments(
        predict_with_generate=True,
        evaluation_strategy="steps",
        per_device_train_batch_size=args.batch_size,
        per_device_eval_batch_size=args.batch_size,
        learning_rate=args.lr,
        num_train_epochs=args.epochs,
        fp16=args.fp16,
        output_dir=args.output_dir,
        logging_steps=50,
        save_steps=1000,
        eval_steps=1000,
        save_total_limit=3,
        dataloader_num_workers=4,
        dataloader_pin_memory=True,
        report_to=["tensorboard"],
        load_best_model_at_end=True,
        metric_for_best_model="cer",
        greater_is_better=False,
    )

    cer_metric = evaluate.load("cer")

    def compute_metrics(pred):
        labels_ids = pred.label_ids
        pred_ids = pred.predictions
        pred_str = processor.batch_decode(pred_ids, skip_special_tokens=True)
        labels_ids[labels_ids == -100] = processor.tokenizer.pad_token_id
        label_str = processor.batch_decode(labels_ids, skip_special_tokens=True)
        cer = cer_metric.compute(predictions=pred_str, references=label_str)
        return {"cer": cer}

    # instantiate trainer
    trainer = Seq2SeqTrainer(
        model=model,
        tokenizer=processor.feature_extractor,
        args=training_args,
        compute_metrics=compute_metrics,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        data_collator=default_data_collator,
    )
    trainer.train()
    trainer.save_model(os.path.join(args.output_dir, "final"))
    processor.save_pretrained(os.path.join(args.output_dir, "final"))

    # quick sanity check on a few validation lines
    model.eval()
    for i in range(min(5, len(eval_dataset))):
        pixel_values = eval_dataset[i]["pixel_values"].unsqueeze(0).to(device)
        with torch.no_grad():
            generated_ids = model.generate(pixel_values)
        text = processor.batch_decode(generated_ids, skip_special_tokens=True)[0]
        logger.info("%s -> %s", eval_df["file_name"][i], text)


if __name__ == "__main__":
    main()
