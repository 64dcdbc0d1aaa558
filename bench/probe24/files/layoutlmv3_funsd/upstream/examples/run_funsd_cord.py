#!/usr/bin/env python
# coding=utf-8
"""Fine-tune LayoutLMv3 for token classification (FUNSD / CORD) with the HF Trainer.

    python run_funsd_cord.py --dataset_name funsd --output_dir out/funsd \
        --do_train --do_eval --max_steps 1000 --per_device_train_batch_size 2 --fp16
"""
import logging
import os
import sys
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import torch
import transformers
from datasets import ClassLabel, load_dataset, load_metric
from transformers import (AutoConfig, AutoModelForTokenClassification, AutoProcessor,
                          HfArgumentParser, Trainer, TrainingArguments, set_seed)
from transformers.data.data_collator import default_data_collator
from transformers.trainer_utils import get_last_checkpoint

logger = logging.getLogger(__name__)


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="microsoft/layoutlmv3-base")
    cache_dir: Optional[str] = field(default=None, metadata={"help": "Where to store the pretrained models"})
    model_revision: str = field(default="main")
    visual_embed: bool = field(default=True, metadata={"help": "use the patch embedding branch"})


@dataclass
class DataTrainingArguments:
    dataset_name: str = field(default="funsd", metadata={"help": "funsd or cord"})
    max_seq_length: int = field(default=512)
    preprocessing_num_workers: Optional[int] = field(default=None)
    label_all_tokens: bool = field(default=False)
    return_entity_level_metrics: bool = field(default=False)


def main():
    parser = HfArgumentParser((ModelArguments, DataTrainingArguments, TrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()

    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
        datefmt="%m/%d/%Y %H:%M:%S",
        handlers=[logging.StreamHandler(sys.stdout)],
    )
    logger.setLevel(logging.INFO if training_args.should_log else logging.WARN)
    transformers.utils.logging.set_verbosity_info()
    # The Trainer picks the accelerator itself; log what it chose.
    logger.warning(
        f"Process rank: {training_args.local_rank}, device: {training_args.device}, n_gpu: {training_args.n_gpu}, "
        f"distributed training: {bool(training_args.local_rank != -1)}, 16-bits training: {training_args.fp16}"
    )

    last_checkpoint = None
    if os.path.isdir(training_args.output_dir) and training_args.do_train and not training_args.overwrite_output_dir:
        last_checkpoint = get_last_checkpoint(training_args.output_dir)

    set_seed(training_args.seed)

    if data_args.dataset_name == "funsd":
        datasets = load_dataset("nielsr/funsd-layoutlmv3")
    else:
        datasets = load_dataset("nielsr/cord-layoutlmv3")
    column_names = datasets["train"].column_names
    features = datasets["train"].features
    label_list = features["ner_tags"].feature.names
    id2label = dict(enumerate(label_list))
    label2id = {v: k for k, v in id2label.items()}

    processor = AutoProcessor.from_pretrained(model_args.model_name_or_path, apply_ocr=False)
    config = AutoConfig.from_pretrained(
        model_args.model_name_or_path, num_labels=len(label_list), id2label=id2label,
        label2id=label2id, cache_dir=model_args.cache_dir, revision=model_args.model_revision,
        visual_embed=model_args.visual_embed)
    model = AutoModelForTokenClassification.from_pretrained(
        model_args.model_name_or_path, config=config, cache_dir=model_args.cache_dir,
        revision=model_args.model_revision)

    def prepare_examples(examples):
        images = examples["image"]
        words = examples["tokens"]
        boxes = examples["bboxes"]
        word_labels = examples["ner_tags"]
        encoding = processor(images, words, boxes=boxes, word_labels=word_labels,
                             truncation=True, padding="max_length",
                             max_length=data_args.max_seq_length)
        return encoding

    train_dataset = datasets["train"].map(
        prepare_examples, batched=True, remove_columns=column_names,
        num_proc=data_args.preprocessing_num_workers)
    eval_dataset = datasets["test"].map(
        prepare_examples, batched=True, remove_columns=column_names,
        num_proc=data_args.preprocessing_num_workers)
    train_dataset.set_format("torch")
    eval_dataset.set_format("torch")

    metric = load_metric("seqeval")

    def compute_metrics(p):
        predictions, labels = p
        predictions = np.argmax(predictions, axis=2)
        true_predictions = [
            [label_list[p] for (p, l) in zip(prediction, label) if l != -100]
            for prediction, label in zip(predictions, labels)
        ]
        true_labels = [
            [label_list[l] for (p, l) in zip(prediction, label) if l != -100]
            for prediction, label in zip(predictions, labels)
        ]
        results = metric.compute(predictions=true_predictions, references=true_labels)
        return {
            "precision": results["overall_precision"],
            "recall": results["overall_recall"],
            "f1": results["overall_f1"],
            "accuracy": results["overall_accuracy"],
        }

    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=train_dataset if training_args.do_train else None,
        eval_dataset=eval_dataset if training_args.do_eval else None,
        tokenizer=processor,
        data_collator=default_data_collator,
        compute_metrics=compute_metrics,
    )

    if training_args.do_train:
        checkpoint = training_args.resume_from_checkpoint or last_checkpoint
        train_result = trainer.train(resume_from_checkpoint=checkpoint)
        trainer.save_model()
        metrics = train_result.metrics
        metrics["train_samples"] = len(train_dataset)
        trainer.log_metrics("train", metrics)
        trainer.save_metrics("train", metrics)
        trainer.save_state()

    if training_args.do_eval:
        logger.info("*** Evaluate ***")
        metrics = trainer.evaluate()
        metrics["eval_samples"] = len(eval_dataset)
        trainer.log_metrics("eval", metrics)
        trainer.save_metrics("eval", metrics)

    # free the device before the interpreter exits (helps under notebooks)
    del trainer, model
    torch.cuda.empty_cache()


def _mp_fn(index):
    # For xla_spawn (TPUs)
    main()


if __name__ == "__main__":
    main()
