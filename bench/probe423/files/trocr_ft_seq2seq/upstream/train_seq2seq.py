#!/usr/bin/env python
"""TrOCR fine-tuning with the Hugging Face Seq2SeqTrainer.

This is the shorter of the two training entry points; use train.py if you need
full control over the loop. Our shared box has two GPUs and card 0 is usually
busy with the annotation service, so we pin this job to the second card.
"""
import os

os.environ["CUDA_VISIBLE_DEVICES"] = "1"
os.environ.setdefault("WANDB_DISABLED", "true")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse
import logging

import torch
from transformers import (
    Seq2SeqTrainer,
    Seq2SeqTrainingArguments,
    TrOCRProcessor,
    VisionEncoderDecoderModel,
    default_data_collator,
)

from src.dataset import IAMDataset, load_iam_split
from src.metrics import compute_cer

logger = logging.getLogger(__name__)


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_dir", default="data/IAM")
    parser.add_argument("--encoder", default="google/vit-base-patch16-384")
    parser.add_argument("--decoder", default="xlm-roberta-base",
                        help="decoder LM; ignored when --init_from is given")
    parser.add_argument("--init_from", default="microsoft/trocr-small-stage1")
    parser.add_argument("--output_dir", default="runs/trocr-seq2seq")
    parser.add_argument("--epochs", type=float, default=20)
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--max_target_length", type=int, default=96)
    parser.add_argument("--eval_steps", type=int, default=1000)
    parser.add_argument("--resume", action="store_true")
    return parser.parse_args()


def build_model(args, processor):
    if args.init_from:
        model = VisionEncoderDecoderModel.from_pretrained(args.init_from)
    else:
        model = VisionEncoderDecoderModel.from_encoder_decoder_pretrained(args.encoder, args.decoder)
    tok = processor.tokenizer
    model.config.decoder_start_token_id = tok.cls_token_id
    model.config.pad_token_id = tok.pad_token_id
    model.config.vocab_size = model.config.decoder.vocab_size
    model.config.eos_token_id = tok.sep_token_id
    model.config.max_length = args.max_target_length
    model.config.early_stopping = True
    model.config.no_repeat_ngram_size = 3
    model.config.length_penalty = 2.0
    model.config.num_beams = 4
    return model


def main():
    args = get_args()
    logging.basicConfig(level=logging.INFO)

    processor = TrOCRProcessor.from_pretrained("microsoft/trocr-small-handwritten")
    train_ds = IAMDataset(args.data_dir, load_iam_split(args.data_dir, "train"), processor,
                          max_target_length=args.max_target_length, augment=True)
    eval_ds = IAMDataset(args.data_dir, load_iam_split(args.data_dir, "validation"), processor,
                         max_target_length=args.max_target_length)
    logger.info("train: %d lines, validation: %d lines", len(train_ds), len(eval_ds))

    model = build_model(args, processor)

    # Ampere and newer: train in bf16, otherwise fall back to fp16 with loss scaling.
    use_bf16 = torch.cuda.is_available() and torch.cuda.is_bf16_supported()

    training_args = Seq2SeqTrainingArguments(
        output_dir=args.output_dir,
        predict_with_generate=True,
        evaluation_strategy="steps",
        save_strategy="steps",
        per_device_train_batch_size=args.batch_size,
        per_device_eval_batch_size=args.batch_size,
        learning_rate=args.lr,
        num_train_epochs=args.epochs,
        bf16=use_bf16,
        fp16=not use_bf16,
        logging_steps=50,
        save_steps=args.eval_steps,
        eval_steps=args.eval_steps,
        save_total_limit=3,
        load_best_model_at_end=True,
        metric_for_best_model="cer",
        greater_is_better=False,
        dataloader_num_workers=4,
        report_to="none",
    )

    def compute_metrics(pred):
        return compute_cer(pred.predictions, pred.label_ids, processor.tokenizer)

    trainer = Seq2SeqTrainer(
        model=model,
        tokenizer=processor.feature_extractor,
        args=training_args,
        compute_metrics=compute_metrics,
        train_dataset=train_ds,
        eval_dataset=eval_ds,
        data_collator=default_data_collator,
    )
    trainer.train(resume_from_checkpoint=args.resume or None)
    trainer.save_model(os.path.join(args.output_dir, "final"))
    processor.save_pretrained(os.path.join(args.output_dir, "final"))

    test_ds = IAMDataset(args.data_dir, load_iam_split(args.data_dir, "test"), processor,
                         max_target_length=args.max_target_length)
    metrics = trainer.evaluate(test_ds, metric_key_prefix="test")
    logger.info("test metrics: %s", metrics)


if __name__ == "__main__":
    main()
