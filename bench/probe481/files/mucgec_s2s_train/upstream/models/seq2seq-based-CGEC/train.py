# -*- coding: utf-8 -*-
"""Fine-tune Chinese BART (fnlp/bart-large-chinese) on parallel GEC data (Lang8 + HSK)."""
import argparse
import logging
import os
import random
import sys

import numpy as np
import torch
from datasets import load_dataset
from transformers import (
    BartForConditionalGeneration,
    BertTokenizer,
    DataCollatorForSeq2Seq,
    EarlyStoppingCallback,
    Seq2SeqTrainer,
    Seq2SeqTrainingArguments,
)

logger = logging.getLogger(__name__)
logging.basicConfig(
    format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
    datefmt="%m/%d/%Y %H:%M:%S",
    handlers=[logging.StreamHandler(sys.stdout)],
    level=logging.INFO,
)


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
        torch.backends.cudnn.deterministic = True


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_path", default="fnlp/bart-large-chinese", type=str)
    parser.add_argument("--train_file", required=True, type=str)
    parser.add_argument("--dev_file", required=True, type=str)
    parser.add_argument("--save_path", default="./exps/bart_cgec", type=str)
    parser.add_argument("--max_source_length", default=128, type=int)
    parser.add_argument("--max_target_length", default=128, type=int)
    parser.add_argument("--batch_size", default=32, type=int)
    parser.add_argument("--gradient_accumulation_steps", default=4, type=int)
    parser.add_argument("--lr", default=3e-6, type=float)
    parser.add_argument("--warmup_steps", default=2000, type=int)
    parser.add_argument("--epoch", default=10, type=int)
    parser.add_argument("--patience", default=5, type=int)
    parser.add_argument("--seed", default=2021, type=int)
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--local_rank", default=-1, type=int)
    parser.add_argument("--num_workers", default=8, type=int)
    return parser.parse_args()


def main():
    args = parse_args()
    set_seed(args.seed)

    if args.local_rank != -1:
        torch.cuda.set_device(args.local_rank)
    n_gpu = torch.cuda.device_count()
    logger.info("local_rank: %d, n_gpu: %d, fp16: %s", args.local_rank, n_gpu, args.fp16)

    tokenizer = BertTokenizer.from_pretrained(args.model_path)
    model = BartForConditionalGeneration.from_pretrained(args.model_path)
    model.config.max_length = args.max_target_length

    raw_datasets = load_dataset(
        "json",
        data_files={"train": args.train_file, "validation": args.dev_file},
    )

    def preprocess_function(examples):
        inputs = [ex for ex in examples["source"]]
        targets = [ex for ex in examples["target"]]
        model_inputs = tokenizer(inputs, max_length=args.max_source_length,
                                 padding=False, truncation=True)
        labels = tokenizer(targets, max_length=args.max_target_length,
                           padding=False, truncation=True)
        model_inputs["labels"] = labels["input_ids"]
        # BertTokenizer adds token_type_ids which BART does not take
        model_inputs.pop("token_type_ids", None)
        return model_inputs

    tokenized = raw_datasets.map(
        preprocess_function,
        batched=True,
        num_proc=args.num_workers,
        remove_columns=["source", "target"],
        desc="Running tokenizer on dataset",
    )

    data_collator = DataCollatorForSeq2Seq(
        tokenizer,
        model=model,
        label_pad_token_id=-100,
        pad_to_multiple_of=8 if args.fp16 else None,
    )

    training_args = Seq2SeqTrainingArguments(
        output_dir=args.save_path,
        do_train=True,
        do_eval=True,
        evaluation_strategy="steps",
        eval_steps=2000,
        save_steps=2000,
        save_total_limit=3,
        per_device_train_batch_size=args.batch_size,
        per_device_eval_batch_size=args.batch_size,
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        learning_rate=args.lr,
        warmup_steps=args.warmup_steps,
        num_train_epochs=args.epoch,
        weight_decay=0.01,
        label_smoothing_factor=0.1,
        logging_steps=100,
        load_best_model_at_end=True,
        metric_for_best_model="eval_loss",
        greater_is_better=False,
        predict_with_generate=False,
        fp16=args.fp16,
        local_rank=args.local_rank,
        dataloader_num_workers=args.num_workers,
        dataloader_pin_memory=True,
        ddp_find_unused_parameters=False,
        seed=args.seed,
        report_to=["tensorboard"],
    )

    trainer = Seq2SeqTrainer(
        model=model,
        args=training_args,
        train_dataset=tokenized["train"],
        eval_dataset=tokenized["validation"],
        tokenizer=tokenizer,
        data_collator=data_collator,
        callbacks=[EarlyStoppingCallback(early_stopping_patience=args.patience)],
    )

    train_result = trainer.train()
    trainer.save_model()
    metrics = train_result.metrics
    metrics["train_samples"] = len(tokenized["train"])
    trainer.log_metrics("train", metrics)
    trainer.save_metrics("train", metrics)
    trainer.save_state()

    if trainer.is_world_process_zero():
        best_dir = os.path.join(args.save_path, "best")
        os.makedirs(best_dir, exist_ok=True)
        trainer.model.save_pretrained(best_dir)
        tokenizer.save_pretrained(best_dir)
        logger.info("Best checkpoint saved to %s", best_dir)


if __name__ == "__main__":
    main()
