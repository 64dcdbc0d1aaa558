#!/usr/bin/env python
# coding=utf-8
"""
Fine-tuning OpenAI Whisper on a Common Voice language with the HF Seq2SeqTrainer.
Adapted from the community event "Whisper fine-tuning sprint" notebook.
"""
import argparse
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Union

import evaluate
import torch
from datasets import Audio, DatasetDict, load_dataset
from transformers import (
    Seq2SeqTrainer,
    Seq2SeqTrainingArguments,
    WhisperFeatureExtractor,
    WhisperForConditionalGeneration,
    WhisperProcessor,
    WhisperTokenizer,
)

os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")


@dataclass
class DataCollatorSpeechSeq2SeqWithPadding:
    processor: Any
    decoder_start_token_id: int

    def __call__(self, features: List[Dict[str, Union[List[int], torch.Tensor]]]) -> Dict[str, torch.Tensor]:
        input_features = [{"input_features": feature["input_features"]} for feature in features]
        batch = self.processor.feature_extractor.pad(input_features, return_tensors="pt")

        label_features = [{"input_ids": feature["labels"]} for feature in features]
        labels_batch = self.processor.tokenizer.pad(label_features, return_tensors="pt")
        labels = labels_batch["input_ids"].masked_fill(labels_batch.attention_mask.ne(1), -100)

        if (labels[:, 0] == self.decoder_start_token_id).all().cpu().item():
            labels = labels[:, 1:]

        batch["labels"] = labels
        return batch


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name_or_path", default="openai/whisper-small")
    p.add_argument("--language", default="hindi")
    p.add_argument("--dataset", default="mozilla-foundation/common_voice_11_0")
    p.add_argument("--output_dir", default="./whisper-small-hi")
    p.add_argument("--max_steps", type=int, default=4000)
    p.add_argument("--per_device_train_batch_size", type=int, default=16)
    p.add_argument("--use_flash_attention", action="store_true", help="Use FlashAttention-2 (Ampere GPUs or newer).")
    return p.parse_args()


def main():
    args = parse_args()

    feature_extractor = WhisperFeatureExtractor.from_pretrained(args.model_name_or_path)
    tokenizer = WhisperTokenizer.from_pretrained(args.model_name_or_path, language=args.language, task="transcribe")
    processor = WhisperProcessor.from_pretrained(args.model_name_or_path, language=args.language, task="transcribe")

    common_voice = DatasetDict()
    common_voice["train"] = load_dataset(args.dataset, "hi", split="train+validation")
    common_voice["test"] = load_dataset(args.dataset, "hi", split="test")
    common_voice = common_voice.remove_columns(["accent", "age", "client_id", "down_votes", "gender", "locale"])
    common_voice = common_voice.cast_column("audio", Audio(sampling_rate=16000))

    def prepare_dataset(batch):
        audio = batch["audio"]
        batch["input_features"] = feature_extractor(audio["array"], sampling_rate=audio["sampling_rate"]).input_features[0]
        batch["labels"] = tokenizer(batch["sentence"]).input_ids
        return batch

    common_voice = common_voice.map(prepare_dataset, remove_columns=common_voice.column_names["train"], num_proc=4)

    bf16_ok = torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    model = WhisperForConditionalGeneration.from_pretrained(
        args.model_name_or_path,
        attn_implementation="flash_attention_2" if args.use_flash_attention else "sdpa",
    )
    model.generation_config.language = args.language
    model.generation_config.task = "transcribe"
    model.generation_config.forced_decoder_ids = None

    data_collator = DataCollatorSpeechSeq2SeqWithPadding(
        processor=processor,
        decoder_start_token_id=model.config.decoder_start_token_id,
    )
    metric = evaluate.load("wer")

    def compute_metrics(pred):
        pred_ids = pred.predictions
        label_ids = pred.label_ids
        label_ids[label_ids == -100] = tokenizer.pad_token_id
        pred_str = tokenizer.batch_decode(pred_ids, skip_special_tokens=True)
        label_str = tokenizer.batch_decode(label_ids, skip_special_tokens=True)
        wer = 100 * metric.compute(predictions=pred_str, references=label_str)
        return {"wer": wer}

    training_args = Seq2SeqTrainingArguments(
        output_dir=args.output_dir,
        per_device_train_batch_size=args.per_device_train_batch_size,
        gradient_accumulation_steps=1,
        learning_rate=1e-5,
        warmup_steps=500,
        max_steps=args.max_steps,
        gradient_checkpointing=True,
        fp16=not bf16_ok,
        bf16=bf16_ok,
        tf32=True,
        optim="adamw_bnb_8bit",
        evaluation_strategy="steps",
        per_device_eval_batch_size=8,
        predict_with_generate=True,
        generation_max_length=225,
        save_steps=1000,
        eval_steps=1000,
        logging_steps=25,
        report_to=["tensorboard"],
        load_best_model_at_end=True,
        metric_for_best_model="wer",
        greater_is_better=False,
        dataloader_pin_memory=True,
        ddp_backend="nccl",
        push_to_hub=False,
    )

    trainer = Seq2SeqTrainer(
        args=training_args,
        model=model,
        train_dataset=common_voice["train"],
        eval_dataset=common_voice["test"],
        data_collator=data_collator,
        compute_metrics=compute_metrics,
        tokenizer=processor.feature_extractor,
    )
    processor.save_pretrained(training_args.output_dir)
    trainer.train()
    if torch.cuda.is_available():
        print(f"peak memory: {torch.cuda.max_memory_reserved() / 2**30:.1f} GiB")


if __name__ == "__main__":
    main()
