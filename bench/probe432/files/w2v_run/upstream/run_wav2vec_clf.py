#!/usr/bin/env python3
"""Fine-tune wav2vec 2.0 / HuBERT for utterance-level speech emotion recognition.

The CSV files must have two columns: `path` (audio file) and `emotion` (label).
"""
import logging
import os
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Union

import librosa
import numpy as np
import torch
import torchaudio
import transformers
from datasets import load_dataset
from transformers import (
    AutoConfig,
    EvalPrediction,
    HfArgumentParser,
    TrainingArguments,
    Wav2Vec2FeatureExtractor,
    set_seed,
)
from transformers.trainer_utils import get_last_checkpoint, is_main_process

from src.collator import DataCollatorCTCWithPadding
from src.models import HubertForSpeechClassification, Wav2Vec2ForSpeechClassification
from src.trainer import CTCTrainer

logger = logging.getLogger(__name__)


@dataclass
class ModelArguments:
    model_name_or_path: str = field(
        metadata={"help": "Path to pretrained model or model identifier from huggingface.co/models"}
    )
    model_type: str = field(default="wav2vec2", metadata={"help": "wav2vec2 | hubert"})
    config_name: Optional[str] = field(default=None)
    cache_dir: Optional[str] = field(default=None)
    model_revision: str = field(default="main")
    use_auth_token: bool = field(default=False)
    freeze_feature_extractor: bool = field(
        default=True, metadata={"help": "Whether to freeze the feature extractor layers of the model."}
    )
    pooling_mode: str = field(default="mean", metadata={"help": "mean | sum | max"})
    final_dropout: float = field(default=0.1)


@dataclass
class DataTrainingArguments:
    train_file: Optional[str] = field(default=None, metadata={"help": "A csv file containing the training data."})
    validation_file: Optional[str] = field(default=None, metadata={"help": "A csv file containing the validation data."})
    input_column: str = field(default="path")
    target_column: str = field(default="emotion")
    delimiter: str = field(default="\t")
    overwrite_cache: bool = field(default=False)
    preprocessing_num_workers: Optional[int] = field(default=None)
    max_train_samples: Optional[int] = field(default=None)
    max_eval_samples: Optional[int] = field(default=None)
    max_duration_in_seconds: float = field(default=12.0)


def speech_file_to_array_fn(path, target_sampling_rate):
    speech_array, sampling_rate = torchaudio.load(path)
    if speech_array.shape[0] > 1:
        speech_array = speech_array.mean(dim=0, keepdim=True)
    if sampling_rate != target_sampling_rate:
        resampler = torchaudio.transforms.Resample(sampling_rate, target_sampling_rate)
        speech_array = resampler(speech_array)
    speech = speech_array.squeeze().numpy()
    return speech


def main():
    parser = HfArgumentParser((ModelArguments, DataTrainingArguments, TrainingArguments))
    if len(sys.argv) == 2 and sys.argv[1].endswith(".json"):
        model_args, data_args, training_args = parser.parse_json_file(json_file=os.path.abspath(sys.argv[1]))
    else:
        model_args, data_args, training_args = parser.parse_args_into_dataclasses()

    # Detecting last checkpoint.
    last_checkpoint = None
    if os.path.isdir(training_args.output_dir) and training_args.do_train and not training_args.overwrite_output_dir:
        last_checkpoint = get_last_checkpoint(training_args.output_dir)
        if last_checkpoint is None and len(os.listdir(training_args.output_dir)) > 0:
            raise ValueError(
                f"Output directory ({training_args.output_dir}) already exists and is not empty. "
                "Use --overwrite_output_dir to overcome."
            )
        elif last_checkpoint is not None:
            logger.info(
                f"Checkpoint detected, resuming training at {last_checkpoint}. To avoid this behavior, change "
                "the `--output_dir` or add `--overwrite_output_dir` to train from scratch."
            )

    # Setup logging
    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s -   %(message)s",
        datefmt="%m/%d/%Y %H:%M:%S",
        handlers=[logging.StreamHandler(sys.stdout)],
    )
    logger.setLevel(logging.INFO if is_main_process(training_args.local_rank) else logging.WARN)

    # Log on each process the small summary:
    logger.warning(
        f"Process rank: {training_args.local_rank}, device: {training_args.device}, n_gpu: {training_args.n_gpu}"
        + f"distributed training: {bool(training_args.local_rank != -1)}, 16-bits training: {training_args.fp16}"
    )
    if is_main_process(training_args.local_rank):
        transformers.utils.logging.set_verbosity_info()
    logger.info("Training/evaluation parameters %s", training_args)

    if training_args.fp16 and not torch.cuda.is_available():
        logger.warning("--fp16 requested but no GPU found; falling back to fp32 training")
        training_args.fp16 = False

    set_seed(training_args.seed)

    data_files = {"train": data_args.train_file, "validation": data_args.validation_file}
    dataset = load_dataset("csv", data_files=data_files, delimiter=data_args.delimiter, cache_dir=model_args.cache_dir)
    train_dataset = dataset["train"]
    eval_dataset = dataset["validation"]

    if data_args.max_train_samples is not None:
        train_dataset = train_dataset.select(range(data_args.max_train_samples))
    if data_args.max_eval_samples is not None:
        eval_dataset = eval_dataset.select(range(data_args.max_eval_samples))

    label_list = sorted(train_dataset.unique(data_args.target_column))
    num_labels = len(label_list)
    logger.info(f"A classification problem with {num_labels} classes: {label_list}")

    config = AutoConfig.from_pretrained(
        model_args.config_name if model_args.config_name else model_args.model_name_or_path,
        num_labels=num_labels,
        label2id={label: i for i, label in enumerate(label_list)},
        id2label={i: label for i, label in enumerate(label_list)},
        finetuning_task="wav2vec2_clf",
        cache_dir=model_args.cache_dir,
        revision=model_args.model_revision,
    )
    setattr(config, "pooling_mode", model_args.pooling_mode)
    setattr(config, "final_dropout", model_args.final_dropout)

    feature_extractor = Wav2Vec2FeatureExtractor.from_pretrained(
        model_args.model_name_or_path, cache_dir=model_args.cache_dir
    )
    target_sampling_rate = feature_extractor.sampling_rate
    max_samples = int(data_args.max_duration_in_seconds * target_sampling_rate)

    def label_to_id(label, label_list):
        if len(label_list) > 0:
            return label_list.index(label) if label in label_list else -1
        return label

    def preprocess_function(examples):
        speech_list = [speech_file_to_array_fn(path, target_sampling_rate)[:max_samples]
                       for path in examples[data_args.input_column]]
        target_list = [label_to_id(label, label_list) for label in examples[data_args.target_column]]

        result = feature_extractor(speech_list, sampling_rate=target_sampling_rate)
        result["labels"] = list(target_list)
        return result

    train_dataset = train_dataset.map(
        preprocess_function,
        batch_size=100,
        batched=True,
        num_proc=data_args.preprocessing_num_workers,
        load_from_cache_file=not data_args.overwrite_cache,
    )
    eval_dataset = eval_dataset.map(
        preprocess_function,
        batch_size=100,
        batched=True,
        num_proc=data_args.preprocessing_num_workers,
        load_from_cache_file=not data_args.overwrite_cache,
    )

    model_cls = HubertForSpeechClassification if model_args.model_type == "hubert" else Wav2Vec2ForSpeechClassification
    model = model_cls.from_pretrained(
        model_args.model_name_or_path,
        config=config,
        cache_dir=model_args.cache_dir,
        revision=model_args.model_revision,
    )
    if model_args.freeze_feature_extractor:
        model.freeze_feature_extractor()

    data_collator = DataCollatorCTCWithPadding(feature_extractor=feature_extractor, padding=True)

    def compute_metrics(p: EvalPrediction):
        preds = p.predictions[0] if isinstance(p.predictions, tuple) else p.predictions
        preds = np.argmax(preds, axis=1)
        return {"accuracy": (preds == p.label_ids).astype(np.float32).mean().item()}

    trainer = CTCTrainer(
        model=model,
        data_collator=data_collator,
        args=training_args,
        compute_metrics=compute_metrics,
        train_dataset=train_dataset if training_args.do_train else None,
        eval_dataset=eval_dataset if training_args.do_eval else None,
        tokenizer=feature_extractor,
    )

    if training_args.do_train:
        checkpoint = last_checkpoint if last_checkpoint is not None else None
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


if __name__ == "__main__":
    main()
