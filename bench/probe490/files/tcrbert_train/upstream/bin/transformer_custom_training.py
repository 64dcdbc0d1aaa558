"""
Script for pretraining a BERT-style model on TCR CDR3 sequences (masked amino acid
modelling) with the HuggingFace Trainer.

Launch on one GPU:
    python bin/transformer_custom_training.py -c jsons/config_bert.json -o models/bert_pretrain
Launch on several (DDP):
    python -m torch.distributed.launch --nproc_per_node 4 bin/transformer_custom_training.py ...
"""

import os, sys
import shutil
import json
import argparse
import logging
import collections
from typing import *

import numpy as np
import torch
import torch.nn as nn
from transformers import (
    BertConfig,
    BertForMaskedLM,
    ConvBertConfig,
    ConvBertForMaskedLM,
    Trainer,
    TrainingArguments,
    EarlyStoppingCallback,
)

SRC_DIR = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tcr"
)
assert os.path.isdir(SRC_DIR), f"Cannot find src dir: {SRC_DIR}"
sys.path.append(SRC_DIR)
import data_loader as dl
import featurization as ft
import model_utils
import utils

logging.basicConfig(level=logging.INFO)

MODEL_DICT = {
    "bert": (BertConfig, BertForMaskedLM),
    "convbert": (ConvBertConfig, ConvBertForMaskedLM),
}

DATASET_TO_COLUMNS = {
    "PIRD": ["CDR3.alpha.aa", "CDR3.beta.aa"],
    "VDJdb": ["cdr3"],
    "TCRdb": ["AASeq"],
}


def get_params(config_json: str, **kwargs) -> Dict[str, Any]:
    """Load the params and override with anything given as kwargs"""
    with open(config_json) as source:
        params = json.load(source)
    params.update({k: v for k, v in kwargs.items() if v is not None})
    return params


def build_parser():
    parser = argparse.ArgumentParser(
        usage=__doc__, formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    parser.add_argument("-c", "--config", type=str, required=True, help="Config json")
    parser.add_argument("-o", "--outdir", type=str, required=True, help="Output directory")
    parser.add_argument("--local_rank", type=int, default=-1, help="Set by torch.distributed.launch")
    parser.add_argument("--resume", action="store_true", help="Resume from last checkpoint in outdir")
    parser.add_argument("--no-fp16", action="store_true", help="Disable mixed precision")
    parser.add_argument("--seed", type=int, default=6489)
    return parser


def main():
    parser = build_parser()
    args = parser.parse_args()

    utils.seed_everything(args.seed)
    if args.local_rank in (-1, 0):
        if os.path.isdir(args.outdir) and not args.resume:
            shutil.rmtree(args.outdir)
        os.makedirs(args.outdir, exist_ok=True)
        shutil.copy(args.config, os.path.join(args.outdir, "params.json"))

    params = get_params(args.config)
    logging.info(f"Training params: {params}")
    n_gpu = torch.cuda.device_count()
    logging.info(f"Visible GPUs: {n_gpu}, local rank {args.local_rank}")

    # Datasets
    tok = ft.get_aa_bert_tokenizer(params["max_len"])
    full_dataset = dl.TcrABSingleDataset(
        params["datasets"], tokenizer=tok, max_len=params["max_len"],
        columns=[c for d in params["datasets"] for c in DATASET_TO_COLUMNS.get(d, [])],
    )
    train_idx, valid_idx, _ = utils.split_train_valid_test(full_dataset, validation=0.1, test=0.0)
    train_dataset = dl.DatasetSplit(full_dataset, train_idx)
    valid_dataset = dl.DatasetSplit(full_dataset, valid_idx)
    collator = dl.MaskedAACollator(tok, mlm_probability=params.get("mlm_probability", 0.15))

    # Model
    config_cls, model_cls = MODEL_DICT[params["model_type"]]
    config = config_cls(
        vocab_size=len(tok.vocab),
        hidden_size=params["hidden_size"],
        num_hidden_layers=params["num_hidden_layers"],
        num_attention_heads=params["num_attention_heads"],
        intermediate_size=params["intermediate_size"],
        hidden_act=params.get("hidden_act", "gelu"),
        hidden_dropout_prob=params.get("hidden_dropout_prob", 0.1),
        attention_probs_dropout_prob=params.get("attention_probs_dropout_prob", 0.1),
        max_position_embeddings=params["max_len"],
        type_vocab_size=2,
        pad_token_id=tok.pad_token_id,
        position_embedding_type=params.get("position_embedding_type", "absolute"),
    )
    model = model_cls(config)
    logging.info(f"Model has {sum(p.numel() for p in model.parameters()):,} parameters")

    # Effective batch size is per_device * n_gpu * grad_accum; keep it fixed across cluster sizes
    per_device_bs = params["batch_size"] // max(n_gpu, 1)
    training_args = TrainingArguments(
        output_dir=args.outdir,
        overwrite_output_dir=not args.resume,
        num_train_epochs=params["epochs"],
        per_device_train_batch_size=per_device_bs,
        per_device_eval_batch_size=per_device_bs,
        learning_rate=params["lr"],
        warmup_ratio=params.get("warmup", 0.1),
        weight_decay=params.get("weight_decay", 0.0),
        evaluation_strategy="epoch",
        save_strategy="epoch",
        load_best_model_at_end=True,
        metric_for_best_model="eval_loss",
        save_total_limit=3,
        logging_dir=os.path.join(args.outdir, "logs"),
        logging_steps=100,
        dataloader_num_workers=8,
        fp16=torch.cuda.is_available() and not args.no_fp16,
        local_rank=args.local_rank,
        seed=args.seed,
        disable_tqdm=True,
        report_to="none",
    )

    trainer = Trainer(
        model=model,
        args=training_args,
        data_collator=collator,
        train_dataset=train_dataset,
        eval_dataset=valid_dataset,
        callbacks=[EarlyStoppingCallback(early_stopping_patience=params.get("patience", 5))],
    )
    trainer.train(resume_from_checkpoint=args.resume or None)

    if trainer.is_world_process_zero():
        trainer.save_model(args.outdir)
        tok.save_pretrained(args.outdir)
        metrics = trainer.evaluate()
        with open(os.path.join(args.outdir, "eval_metrics.json"), "w") as sink:
            json.dump(metrics, sink, indent=4)
        logging.info(f"Final eval metrics: {metrics}")


if __name__ == "__main__":
    main()
