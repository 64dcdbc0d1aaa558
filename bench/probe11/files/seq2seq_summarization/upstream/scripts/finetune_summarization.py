"""Summarisation fine-tuning (BART / PEGASUS / flan-T5) with Seq2SeqTrainer on CNN-DailyMail or XSum.

    python scripts/finetune_summarization.py --model google/flan-t5-large --dataset cnn_dailymail --gpus 0,1
"""
import argparse
import logging
import os

import nltk
import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="facebook/bart-large")
parser.add_argument("--dataset", default="cnn_dailymail")
parser.add_argument("--dataset_config", default="3.0.0")
parser.add_argument("--gpus", default="0")
parser.add_argument("--output_dir", default="outputs/summarization")
parser.add_argument("--epochs", type=float, default=3)
parser.add_argument("--lr", type=float, default=3e-5)
parser.add_argument("--batch_size", type=int, default=8)
parser.add_argument("--grad_accum", type=int, default=4)
parser.add_argument("--max_source_length", type=int, default=1024)
parser.add_argument("--max_target_length", type=int, default=142)
parser.add_argument("--num_beams", type=int, default=4)
parser.add_argument("--max_train_samples", type=int, default=None)
parser.add_argument("--wandb_project", default=None)
args = parser.parse_args()

# pin the run to the requested cards before torch initialises its device context
os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus
if args.wandb_project:
    os.environ["WANDB_PROJECT"] = args.wandb_project

import evaluate  # noqa: E402
import torch  # noqa: E402
from datasets import load_dataset  # noqa: E402
from transformers import (  # noqa: E402
    AutoModelForSeq2SeqLM,
    AutoTokenizer,
    DataCollatorForSeq2Seq,
    EarlyStoppingCallback,
    Seq2SeqTrainer,
    Seq2SeqTrainingArguments,
)

logging.basicConfig(level=logging.INFO)
logger = logging.getLogger(__name__)

try:
    nltk.data.find("tokenizers/punkt")
except LookupError:
    nltk.download("punkt", quiet=True)

TEXT_COLUMNS = {
    "cnn_dailymail": ("article", "highlights"),
    "xsum": ("document", "summary"),
    "samsum": ("dialogue", "summary"),
}


def main():
    text_column, summary_column = TEXT_COLUMNS.get(args.dataset, ("text", "summary"))
    raw = load_dataset(args.dataset, args.dataset_config)
    if args.max_train_samples:
        raw["train"] = raw["train"].select(range(args.max_train_samples))

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForSeq2SeqLM.from_pretrained(args.model, torch_dtype="auto")
    prefix = "summarize: " if "t5" in args.model else ""

    def preprocess(batch):
        inputs = [prefix + doc for doc in batch[text_column]]
        model_inputs = tokenizer(inputs, max_length=args.max_source_length, truncation=True)
        labels = tokenizer(text_target=batch[summary_column], max_length=args.max_target_length, truncation=True)
        model_inputs["labels"] = labels["input_ids"]
        return model_inputs

    tokenized = raw.map(preprocess, batched=True, remove_columns=raw["train"].column_names, num_proc=8)
    collator = DataCollatorForSeq2Seq(tokenizer, model=model, pad_to_multiple_of=8)
    rouge = evaluate.load("rouge")

    def compute_metrics(eval_pred):
        preds, labels = eval_pred
        if isinstance(preds, tuple):
            preds = preds[0]
        preds = np.where(preds != -100, preds, tokenizer.pad_token_id)
        decoded_preds = tokenizer.batch_decode(preds, skip_special_tokens=True)
        labels = np.where(labels != -100, labels, tokenizer.pad_token_id)
        decoded_labels = tokenizer.batch_decode(labels, skip_special_tokens=True)
        decoded_preds = ["\n".join(nltk.sent_tokenize(p.strip())) for p in decoded_preds]
        decoded_labels = ["\n".join(nltk.sent_tokenize(l.strip())) for l in decoded_labels]
        result = rouge.compute(predictions=decoded_preds, references=decoded_labels, use_stemmer=True)
        result = {k: round(v * 100, 4) for k, v in result.items()}
        result["gen_len"] = np.mean([np.count_nonzero(p != tokenizer.pad_token_id) for p in preds])
        return result

    logger.info("visible devices: %s (%d)", args.gpus, torch.cuda.device_count())

    training_args = Seq2SeqTrainingArguments(
        output_dir=args.output_dir,
        num_train_epochs=args.epochs,
        learning_rate=args.lr,
        per_device_train_batch_size=args.batch_size,
        per_device_eval_batch_size=args.batch_size,
        gradient_accumulation_steps=args.grad_accum,
        warmup_ratio=0.05,
        weight_decay=0.01,
        lr_scheduler_type="cosine",
        fp16=not torch.cuda.is_bf16_supported(),
        bf16=torch.cuda.is_bf16_supported(),
        tf32=True,
        optim="adamw_bnb_8bit",
        gradient_checkpointing=True,
        predict_with_generate=True,
        generation_max_length=args.max_target_length,
        generation_num_beams=args.num_beams,
        evaluation_strategy="steps",
        eval_steps=2000,
        save_steps=2000,
        save_total_limit=3,
        logging_steps=50,
        load_best_model_at_end=True,
        metric_for_best_model="rougeL",
        dataloader_num_workers=4,
        dataloader_pin_memory=True,
        group_by_length=True,
        report_to="wandb" if args.wandb_project else "tensorboard",
        ddp_find_unused_parameters=False,
    )

    trainer = Seq2SeqTrainer(
        model=model,
        args=training_args,
        train_dataset=tokenized["train"],
        eval_dataset=tokenized["validation"].select(range(2000)),
        tokenizer=tokenizer,
        data_collator=collator,
        compute_metrics=compute_metrics,
        callbacks=[EarlyStoppingCallback(early_stopping_patience=3)],
    )

    train_result = trainer.train()
    trainer.save_model()
    trainer.log_metrics("train", train_result.metrics)
    trainer.save_state()

    torch.cuda.empty_cache()
    metrics = trainer.evaluate(eval_dataset=tokenized["test"], metric_key_prefix="test",
                               max_length=args.max_target_length, num_beams=args.num_beams)
    trainer.log_metrics("test", metrics)
    trainer.save_metrics("test", metrics)


if __name__ == "__main__":
    main()
