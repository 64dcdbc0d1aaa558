#!/usr/bin/env python
# coding: utf-8
"""
Geneformer fine-tuning for cell-type classification.

Launch on one node with all GPUs:
    python cell_classification.py --organ heart --output_dir /path/to/out
"""
import os
GPU_NUMBER = [0, 1, 2, 3]
os.environ["CUDA_VISIBLE_DEVICES"] = ",".join([str(s) for s in GPU_NUMBER])
os.environ["NCCL_DEBUG"] = "INFO"

import argparse
import datetime
import pickle
import subprocess
from collections import Counter

import numpy as np
import seaborn as sns
from datasets import load_from_disk
from sklearn.metrics import accuracy_score, f1_score
import torch
from transformers import BertForSequenceClassification, Trainer
from transformers.training_args import TrainingArguments

from geneformer import DataCollatorForCellClassification

sns.set()

parser = argparse.ArgumentParser()
parser.add_argument("--organ", type=str, default="heart")
parser.add_argument("--dataset", type=str, default="/path/to/cell_type_train_data.dataset")
parser.add_argument("--pretrained", type=str, default="/path/to/pretrained_model/")
parser.add_argument("--output_dir", type=str, default="./output")
parser.add_argument("--bf16", action="store_true", help="use bf16 instead of fp16 (Ampere GPUs and newer)")
args = parser.parse_args()

train_dataset = load_from_disk(args.dataset)
organ_trainset = train_dataset.filter(lambda example: example["organ_major"] == args.organ, num_proc=16)
organ_trainset = organ_trainset.shuffle(seed=42)
organ_trainset = organ_trainset.rename_column("cell_type", "label")
organ_trainset = organ_trainset.remove_columns("organ_major")

# change labels to numerical ids
target_names = list(Counter(organ_trainset["label"]).keys())
target_name_id_dict = dict(zip(target_names, [i for i in range(len(target_names))]))


def classes_to_ids(example):
    example["label"] = target_name_id_dict[example["label"]]
    return example


labeled_trainset = organ_trainset.map(classes_to_ids, num_proc=16)
labeled_train_split = labeled_trainset.select([i for i in range(0, round(len(labeled_trainset) * 0.8))])
labeled_eval_split = labeled_trainset.select([i for i in range(round(len(labeled_trainset) * 0.8), len(labeled_trainset))])


def compute_metrics(pred):
    labels = pred.label_ids
    preds = pred.predictions.argmax(-1)
    acc = accuracy_score(labels, preds)
    macro_f1 = f1_score(labels, preds, average="macro")
    return {"accuracy": acc, "macro_f1": macro_f1}


# set model parameters
max_input_size = 2 ** 11  # 2048
max_lr = 5e-5
freeze_layers = 0
num_gpus = torch.cuda.device_count()
num_proc = 16
geneformer_batch_size = 12
lr_schedule_fn = "linear"
warmup_steps = 500
epochs = 10
optimizer = "adamw"

logging_steps = round(len(labeled_train_split) / geneformer_batch_size / max(num_gpus, 1) / 10)

model = BertForSequenceClassification.from_pretrained(
    args.pretrained,
    num_labels=len(organ_trainset.unique("label")),
    output_attentions=False,
    output_hidden_states=False,
).to("cuda")

if freeze_layers is not None:
    modules_to_freeze = model.bert.encoder.layer[:freeze_layers]
    for module in modules_to_freeze:
        for param in module.parameters():
            param.requires_grad = False

current_date = datetime.datetime.now()
datestamp = f"{str(current_date.year)[-2:]}{current_date.month:02d}{current_date.day:02d}"
output_dir = f"{args.output_dir}/{datestamp}_geneformer_CellClassifier_{args.organ}_L{max_input_size}_B{geneformer_batch_size}_LR{max_lr}_LS{lr_schedule_fn}_WU{warmup_steps}_E{epochs}_O{optimizer}_F{freeze_layers}/"
subprocess.call(f"mkdir -p {output_dir}", shell=True)

training_args = {
    "learning_rate": max_lr,
    "do_train": True,
    "do_eval": True,
    "evaluation_strategy": "epoch",
    "save_strategy": "epoch",
    "logging_steps": logging_steps,
    "group_by_length": True,
    "length_column_name": "length",
    "disable_tqdm": False,
    "lr_scheduler_type": lr_schedule_fn,
    "warmup_steps": warmup_steps,
    "weight_decay": 0.001,
    "per_device_train_batch_size": geneformer_batch_size,
    "per_device_eval_batch_size": geneformer_batch_size,
    "num_train_epochs": epochs,
    "load_best_model_at_end": True,
    "output_dir": output_dir,
    "fp16": not args.bf16,
    "bf16": args.bf16,
    "optim": "adamw_torch_fused",
    "ddp_backend": "nccl",
    "dataloader_pin_memory": True,
}

training_args_init = TrainingArguments(**training_args)

trainer = Trainer(
    model=model,
    args=training_args_init,
    data_collator=DataCollatorForCellClassification(),
    train_dataset=labeled_train_split,
    eval_dataset=labeled_eval_split,
    compute_metrics=compute_metrics,
)
trainer.train()
predictions = trainer.predict(labeled_eval_split)
with open(f"{output_dir}predictions.pickle", "wb") as fp:
    pickle.dump(predictions, fp)
trainer.save_metrics("eval", predictions.metrics)
trainer.save_model(output_dir)
print(f"peak memory: {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB on {num_gpus} GPU(s)")
