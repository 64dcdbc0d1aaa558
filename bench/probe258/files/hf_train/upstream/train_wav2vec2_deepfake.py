#!/usr/bin/env python
"""
Fine-tune a wav2vec 2.0 / WavLM checkpoint from the Hugging Face Hub as a binary
audio-deepfake classifier (real vs. fake) with the transformers Trainer.

Datasets: ASVspoof 2019 LA (train/dev), evaluated on ASVspoof 2021 DF and
In-the-Wild, all converted to `datasets` audio folders beforehand
(see prepare_hf_datasets.py).

Example:
  python train_wav2vec2_deepfake.py \
      --model_name_or_path facebook/wav2vec2-xls-r-300m \
      --train_dir data/hf/asvspoof19_train --eval_dir data/hf/asvspoof19_dev \
      --output_dir runs/xlsr300m_df --bf16
"""
import argparse
import os
from dataclasses import dataclass
from typing import Dict, List

import numpy as np
import torch
import torch.nn as nn
from datasets import Audio, load_from_disk
from sklearn.metrics import roc_curve
from transformers import (AutoConfig, AutoFeatureExtractor,
                          AutoModelForAudioClassification, EarlyStoppingCallback,
                          Trainer, TrainingArguments, set_seed)

LABEL2ID = {"bonafide": 0, "spoof": 1}
ID2LABEL = {v: k for k, v in LABEL2ID.items()}


def compute_eer(labels: np.ndarray, scores: np.ndarray) -> float:
    """EER with spoof as the positive class."""
    fpr, tpr, _ = roc_curve(labels, scores, pos_label=1)
    fnr = 1 - tpr
    idx = np.nanargmin(np.abs(fnr - fpr))
    return float((fpr[idx] + fnr[idx]) / 2)


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    probs = torch.softmax(torch.from_numpy(logits), dim=-1)[:, 1].numpy()
    acc = float((logits.argmax(-1) == labels).mean())
    return {"eer": compute_eer(labels, probs) * 100.0, "accuracy": acc}


@dataclass
class RandomCropCollator:
    feature_extractor: AutoFeatureExtractor
    max_seconds: float = 4.0
    train: bool = True

    def __call__(self, batch: List[Dict]) -> Dict[str, torch.Tensor]:
        sr = self.feature_extractor.sampling_rate
        max_len = int(self.max_seconds * sr)
        wavs = []
        for ex in batch:
            w = ex["audio"]["array"]
            if len(w) > max_len:
                start = np.random.randint(0, len(w) - max_len + 1) if self.train else 0
                w = w[start:start + max_len]
            wavs.append(w)
        inputs = self.feature_extractor(wavs, sampling_rate=sr, padding="longest",
                                        return_attention_mask=True, return_tensors="pt")
        inputs["labels"] = torch.tensor([ex["label"] for ex in batch], dtype=torch.long)
        return inputs


class WeightedTrainer(Trainer):
    """Cross-entropy with class weights (ASVspoof LA train is ~9:1 spoof:bonafide)."""

    def __init__(self, *args, class_weights=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.class_weights = class_weights

    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        weight = None
        if self.class_weights is not None:
            weight = self.class_weights.to(outputs.logits.device)
        loss = nn.functional.cross_entropy(outputs.logits, labels, weight=weight)
        return (loss, outputs) if return_outputs else loss


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name_or_path", default="facebook/wav2vec2-xls-r-300m")
    p.add_argument("--train_dir", required=True)
    p.add_argument("--eval_dir", required=True)
    p.add_argument("--output_dir", required=True)
    p.add_argument("--epochs", type=float, default=10)
    p.add_argument("--lr", type=float, default=3e-5)
    p.add_argument("--per_device_batch", type=int, default=16)
    p.add_argument("--grad_accum", type=int, default=2)
    p.add_argument("--max_seconds", type=float, default=4.0)
    p.add_argument("--freeze_feature_encoder", action="store_true")
    p.add_argument("--bf16", action="store_true")
    p.add_argument("--fp16", action="store_true")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--num_workers", type=int, default=8)
    return p.parse_args()


def main():
    args = parse_args()
    set_seed(args.seed)

    if args.bf16 and not torch.cuda.is_bf16_supported():
        print("bf16 requested but this GPU has no bf16 support, falling back to fp16")
        args.bf16, args.fp16 = False, True

    feature_extractor = AutoFeatureExtractor.from_pretrained(args.model_name_or_path)
    config = AutoConfig.from_pretrained(
        args.model_name_or_path, num_labels=2, label2id=LABEL2ID, id2label=ID2LABEL,
        finetuning_task="audio-classification")
    model = AutoModelForAudioClassification.from_pretrained(args.model_name_or_path, config=config)
    if args.freeze_feature_encoder:
        model.freeze_feature_encoder()

    train_ds = load_from_disk(args.train_dir).cast_column("audio", Audio(sampling_rate=16000))
    eval_ds = load_from_disk(args.eval_dir).cast_column("audio", Audio(sampling_rate=16000))

    counts = np.bincount(np.asarray(train_ds["label"]), minlength=2)
    class_weights = torch.tensor(counts.sum() / (2.0 * counts), dtype=torch.float32)
    print("class counts", counts.tolist(), "weights", class_weights.tolist())

    training_args = TrainingArguments(
        output_dir=args.output_dir,
        num_train_epochs=args.epochs,
        learning_rate=args.lr,
        per_device_train_batch_size=args.per_device_batch,
        per_device_eval_batch_size=args.per_device_batch * 2,
        gradient_accumulation_steps=args.grad_accum,
        warmup_ratio=0.1,
        lr_scheduler_type="cosine",
        weight_decay=0.01,
        bf16=args.bf16,
        fp16=args.fp16,
        optim="adamw_torch_fused",
        evaluation_strategy="epoch",
        save_strategy="epoch",
        save_total_limit=3,
        load_best_model_at_end=True,
        metric_for_best_model="eer",
        greater_is_better=False,
        logging_steps=50,
        dataloader_num_workers=args.num_workers,
        dataloader_pin_memory=True,
        remove_unused_columns=False,
        ddp_backend="nccl",
        ddp_find_unused_parameters=False,
        report_to=["tensorboard"],
        seed=args.seed,
    )

    trainer = WeightedTrainer(
        model=model,
        args=training_args,
        train_dataset=train_ds,
        eval_dataset=eval_ds,
        data_collator=RandomCropCollator(feature_extractor, args.max_seconds, train=True),
        compute_metrics=compute_metrics,
        callbacks=[EarlyStoppingCallback(early_stopping_patience=3)],
        class_weights=class_weights,
    )
    trainer.train()
    trainer.save_model(os.path.join(args.output_dir, "best"))
    feature_extractor.save_pretrained(os.path.join(args.output_dir, "best"))

    metrics = trainer.evaluate()
    print(metrics)

    # quick sanity check of the exported model on one dev utterance
    model = AutoModelForAudioClassification.from_pretrained(os.path.join(args.output_dir, "best"))
    model = model.to("cuda").eval()
    ex = eval_ds[0]
    inputs = feature_extractor(ex["audio"]["array"], sampling_rate=16000, return_tensors="pt")
    inputs = {k: v.to("cuda") for k, v in inputs.items()}
    with torch.no_grad():
        logits = model(**inputs).logits
    print("dev[0] label={} pred={}".format(ex["label"], ID2LABEL[int(logits.argmax(-1))]))


if __name__ == "__main__":
    main()
