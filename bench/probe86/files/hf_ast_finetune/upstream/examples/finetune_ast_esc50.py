#!/usr/bin/env python
"""Fine-tune the Audio Spectrogram Transformer on ESC-50 with the Hugging Face Trainer.

    torchrun --nproc_per_node 4 examples/finetune_ast_esc50.py --fold 1 --output_dir runs/ast-esc50-f1
"""
import argparse
import os

import evaluate
import numpy as np
import torch
from datasets import Audio, load_dataset
from transformers import (ASTFeatureExtractor, ASTForAudioClassification, Trainer,
                          TrainingArguments, pipeline, set_seed)

MODEL_ID = "MIT/ast-finetuned-audioset-10-10-0.4593"


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--fold", type=int, default=1, help="ESC-50 fold used for validation")
    p.add_argument("--output_dir", type=str, default="runs/ast-esc50")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--lr", type=float, default=3e-5)
    p.add_argument("--batch_size", type=int, default=16)
    p.add_argument("--grad_accum", type=int, default=1)
    p.add_argument("--max_length", type=int, default=512, help="spectrogram frames (5 s clips)")
    p.add_argument("--spec_augment", action="store_true")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--seed", type=int, default=42)
    return p.parse_args()


def build_dataset(feature_extractor, fold):
    ds = load_dataset("ashraq/esc50", split="train")
    ds = ds.cast_column("audio", Audio(sampling_rate=feature_extractor.sampling_rate))
    labels = sorted(set(ds["category"]))
    label2id = {l: i for i, l in enumerate(labels)}

    def preprocess(batch):
        arrays = [a["array"] for a in batch["audio"]]
        feats = feature_extractor(arrays, sampling_rate=feature_extractor.sampling_rate,
                                  return_tensors="np")
        batch["input_values"] = list(feats["input_values"])
        batch["labels"] = [label2id[c] for c in batch["category"]]
        return batch

    ds = ds.map(preprocess, batched=True, batch_size=64, remove_columns=["audio"], num_proc=4)
    train = ds.filter(lambda x: x["fold"] != fold)
    valid = ds.filter(lambda x: x["fold"] == fold)
    return train, valid, labels


class SpecAugmentCollator:
    """Time/frequency masking applied on the fly to (B, T, F) spectrograms."""

    def __init__(self, freq_mask=24, time_mask=96, enabled=True):
        self.freq_mask = freq_mask
        self.time_mask = time_mask
        self.enabled = enabled

    def __call__(self, features):
        x = torch.tensor(np.stack([f["input_values"] for f in features]), dtype=torch.float32)
        y = torch.tensor([f["labels"] for f in features], dtype=torch.long)
        if self.enabled:
            B, T, F = x.shape
            for b in range(B):
                f0 = np.random.randint(0, F - self.freq_mask)
                t0 = np.random.randint(0, T - self.time_mask)
                x[b, :, f0:f0 + np.random.randint(0, self.freq_mask)] = 0.0
                x[b, t0:t0 + np.random.randint(0, self.time_mask), :] = 0.0
        return {"input_values": x, "labels": y}


def main():
    args = parse_args()
    set_seed(args.seed)

    feature_extractor = ASTFeatureExtractor.from_pretrained(MODEL_ID, max_length=args.max_length)
    train_ds, valid_ds, labels = build_dataset(feature_extractor, args.fold)

    model = ASTForAudioClassification.from_pretrained(
        MODEL_ID,
        num_labels=len(labels),
        label2id={l: i for i, l in enumerate(labels)},
        id2label={i: l for i, l in enumerate(labels)},
        ignore_mismatched_sizes=True,
        attn_implementation="sdpa",
        max_length=args.max_length,
    )

    use_bf16 = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8
    training_args = TrainingArguments(
        output_dir=args.output_dir,
        per_device_train_batch_size=args.batch_size,
        per_device_eval_batch_size=args.batch_size * 2,
        gradient_accumulation_steps=args.grad_accum,
        learning_rate=args.lr,
        num_train_epochs=args.epochs,
        warmup_ratio=0.1,
        lr_scheduler_type="cosine",
        weight_decay=0.01,
        bf16=use_bf16,
        fp16=torch.cuda.is_available() and not use_bf16,
        evaluation_strategy="epoch",
        save_strategy="epoch",
        save_total_limit=2,
        load_best_model_at_end=True,
        metric_for_best_model="accuracy",
        logging_steps=20,
        dataloader_num_workers=4,
        dataloader_pin_memory=True,
        ddp_backend="nccl",
        ddp_find_unused_parameters=False,
        torch_compile=args.compile,
        report_to=["tensorboard"],
        remove_unused_columns=False,
    )

    accuracy = evaluate.load("accuracy")

    def compute_metrics(eval_pred):
        logits, refs = eval_pred
        return accuracy.compute(predictions=np.argmax(logits, axis=-1), references=refs)

    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=train_ds,
        eval_dataset=valid_ds,
        data_collator=SpecAugmentCollator(enabled=args.spec_augment),
        compute_metrics=compute_metrics,
    )
    trainer.train()
    metrics = trainer.evaluate()
    trainer.save_model(args.output_dir)
    feature_extractor.save_pretrained(args.output_dir)
    print(metrics)

    if trainer.is_world_process_zero():
        torch.cuda.empty_cache()
        sanity_check(args.output_dir, valid_ds, labels)


@torch.no_grad()
def sanity_check(model_dir, valid_ds, labels, n=8):
    """Re-load the exported model and classify a few validation clips end to end."""
    model = ASTForAudioClassification.from_pretrained(model_dir).to("cuda").eval()
    x = torch.tensor(np.stack(valid_ds[:n]["input_values"]), dtype=torch.float32).to("cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        pred = model(input_values=x).logits.argmax(-1).cpu().tolist()
    gold = valid_ds[:n]["labels"]
    print("pred:", [labels[p] for p in pred])
    print("gold:", [labels[g] for g in gold])

    clf = pipeline("audio-classification", model=model_dir, device=0)
    print(clf(np.random.randn(16000 * 5).astype(np.float32), top_k=3))


if __name__ == "__main__":
    main()
