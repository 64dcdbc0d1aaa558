#!/usr/bin/env python
"""Fine-tune facebook/bart-large on XSum with the HF Seq2SeqTrainer, then
decode the test split with beam search and report ROUGE.

    python scripts/finetune_bart_xsum.py --output_dir runs/bart-large-xsum
    torchrun --nproc_per_node 8 scripts/finetune_bart_xsum.py --output_dir runs/bart-large-xsum
"""
import argparse
import logging
import os

os.environ["CUDA_VISIBLE_DEVICES"] = os.environ.get("CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import evaluate
import nltk
import numpy as np
import torch
from datasets import load_dataset
from transformers import (
    AutoModelForSeq2SeqLM,
    AutoTokenizer,
    DataCollatorForSeq2Seq,
    Seq2SeqTrainer,
    Seq2SeqTrainingArguments,
    set_seed,
)

logger = logging.getLogger(__name__)

MODEL_NAME = "facebook/bart-large"
MAX_SOURCE_LEN = 1024
MAX_TARGET_LEN = 64


def preprocess(batch, tokenizer):
    model_inputs = tokenizer(batch["document"], max_length=MAX_SOURCE_LEN, truncation=True)
    labels = tokenizer(text_target=batch["summary"], max_length=MAX_TARGET_LEN, truncation=True)
    model_inputs["labels"] = labels["input_ids"]
    return model_inputs


def postprocess_text(preds, labels):
    preds = [pred.strip() for pred in preds]
    labels = [label.strip() for label in labels]
    # rougeLSum expects newline after each sentence
    preds = ["\n".join(nltk.sent_tokenize(pred)) for pred in preds]
    labels = ["\n".join(nltk.sent_tokenize(label)) for label in labels]
    return preds, labels


def build_compute_metrics(tokenizer):
    rouge = evaluate.load("rouge")

    def compute_metrics(eval_preds):
        preds, labels = eval_preds
        if isinstance(preds, tuple):
            preds = preds[0]
        preds = np.where(preds != -100, preds, tokenizer.pad_token_id)
        decoded_preds = tokenizer.batch_decode(preds, skip_special_tokens=True)
        labels = np.where(labels != -100, labels, tokenizer.pad_token_id)
        decoded_labels = tokenizer.batch_decode(labels, skip_special_tokens=True)
        decoded_preds, decoded_labels = postprocess_text(decoded_preds, decoded_labels)
        result = rouge.compute(predictions=decoded_preds, references=decoded_labels, use_stemmer=True)
        result = {k: round(v * 100, 4) for k, v in result.items()}
        prediction_lens = [np.count_nonzero(pred != tokenizer.pad_token_id) for pred in preds]
        result["gen_len"] = np.mean(prediction_lens)
        return result

    return compute_metrics


@torch.no_grad()
def decode_test(model, tokenizer, dataset, out_file, batch_size=32, num_beams=6):
    model = model.to("cuda").eval().half()
    with open(out_file, "w") as f:
        for start in range(0, len(dataset), batch_size):
            docs = dataset[start : start + batch_size]["document"]
            enc = tokenizer(docs, max_length=MAX_SOURCE_LEN, truncation=True, padding=True, return_tensors="pt")
            enc = {k: v.cuda(non_blocking=True) for k, v in enc.items()}
            out = model.generate(**enc, num_beams=num_beams, max_length=62, min_length=11,
                                 length_penalty=1.0, no_repeat_ngram_size=3, early_stopping=True)
            for line in tokenizer.batch_decode(out, skip_special_tokens=True):
                f.write(line.strip() + "\n")
    torch.cuda.empty_cache()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--epochs", type=float, default=3.0)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--per_device_batch_size", type=int, default=8)
    parser.add_argument("--grad_accum", type=int, default=4)
    parser.add_argument("--deepspeed", default=None, help="path to a DeepSpeed json config")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    logging.basicConfig(level=logging.INFO)
    set_seed(args.seed)
    nltk.download("punkt", quiet=True)

    tokenizer = AutoTokenizer.from_pretrained(MODEL_NAME)
    model = AutoModelForSeq2SeqLM.from_pretrained(MODEL_NAME)

    raw = load_dataset("xsum")
    tokenized = raw.map(lambda b: preprocess(b, tokenizer), batched=True,
                        remove_columns=raw["train"].column_names, num_proc=8)
    collator = DataCollatorForSeq2Seq(tokenizer, model=model, label_pad_token_id=-100, pad_to_multiple_of=8)

    training_args = Seq2SeqTrainingArguments(
        output_dir=args.output_dir,
        num_train_epochs=args.epochs,
        learning_rate=args.lr,
        per_device_train_batch_size=args.per_device_batch_size,
        per_device_eval_batch_size=args.per_device_batch_size,
        gradient_accumulation_steps=args.grad_accum,
        warmup_ratio=0.05,
        weight_decay=0.01,
        label_smoothing_factor=0.1,
        fp16=True,
        tf32=True,
        optim="adamw_apex_fused",
        dataloader_num_workers=4,
        dataloader_pin_memory=True,
        evaluation_strategy="steps",
        eval_steps=2000,
        save_steps=2000,
        save_total_limit=3,
        logging_steps=100,
        predict_with_generate=True,
        generation_max_length=MAX_TARGET_LEN,
        generation_num_beams=4,
        ddp_backend="nccl",
        ddp_find_unused_parameters=False,
        deepspeed=args.deepspeed,
        report_to=["tensorboard"],
    )

    trainer = Seq2SeqTrainer(
        model=model,
        args=training_args,
        train_dataset=tokenized["train"],
        eval_dataset=tokenized["validation"].select(range(2000)),
        tokenizer=tokenizer,
        data_collator=collator,
        compute_metrics=build_compute_metrics(tokenizer),
    )
    trainer.train()
    trainer.save_model()

    if trainer.is_world_process_zero():
        logger.info("peak memory %.1f GiB", torch.cuda.max_memory_allocated() / 2**30)
        decode_test(trainer.model, tokenizer, raw["test"], os.path.join(args.output_dir, "test.hypo"))


if __name__ == "__main__":
    main()
