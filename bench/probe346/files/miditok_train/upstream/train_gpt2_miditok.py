#!/usr/bin/env python
"""
Pre-train a (Mistral-style) causal LM on MidiTok-tokenised MIDI (REMI + BPE).

Single node, multi GPU:
    torchrun --nproc_per_node 8 train_gpt2_miditok.py --config configs/remi_bpe_lakh.json

The script follows the MidiTok "train a model" example: tokenizer training with BPE, a
DatasetMIDI that chunks every file into max_seq_len windows, and the HF Trainer.
"""
import argparse
import json
import logging
import os
from pathlib import Path

import torch
from torch.utils.data import Subset
from miditok import REMI, TokenizerConfig
from miditok.pytorch_data import DatasetMIDI, DataCollator
from miditok.utils import split_files_for_training
from transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    Trainer,
    TrainingArguments,
    set_seed,
)
from transformers.trainer_utils import get_last_checkpoint

logger = logging.getLogger(__name__)

DEFAULTS = dict(
    vocab_size=30_000,
    max_seq_len=1024,
    hidden_size=512,
    intermediate_size=2048,
    num_hidden_layers=8,
    num_attention_heads=8,
    num_key_value_heads=4,
    per_device_train_batch_size=32,
    gradient_accumulation_steps=2,
    learning_rate=1e-4,
    max_steps=100_000,
    warmup_ratio=0.03,
    seed=444,
)


def load_config(path):
    cfg = dict(DEFAULTS)
    if path:
        with open(path) as f:
            cfg.update(json.load(f))
    return cfg


def build_tokenizer(midi_paths, vocab_size, out_dir):
    tok_path = Path(out_dir, "tokenizer.json")
    if tok_path.exists():
        return REMI(params=tok_path)
    config = TokenizerConfig(
        num_velocities=16,
        use_chords=True,
        use_programs=True,
        use_tempos=True,
        use_time_signatures=True,
    )
    tokenizer = REMI(config)
    tokenizer.train(vocab_size=vocab_size, files_paths=midi_paths)
    tokenizer.save(tok_path)
    return tokenizer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default=None)
    parser.add_argument("--data_dir", default="data/lakh_clean")
    parser.add_argument("--out_dir", default="runs/remi_bpe_lakh")
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", -1)))
    args = parser.parse_args()
    cfg = load_config(args.config)

    logging.basicConfig(level=logging.INFO if args.local_rank in (-1, 0) else logging.WARN)
    set_seed(cfg["seed"])

    # TF32 matmuls for everything that is not covered by autocast
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    midi_paths = sorted(Path(args.data_dir).glob("**/*.mid"))
    logger.info("%d MIDI files", len(midi_paths))
    tokenizer = build_tokenizer(midi_paths, cfg["vocab_size"], args.out_dir)

    chunks_dir = Path(args.out_dir, "chunks")
    if not chunks_dir.exists():
        split_files_for_training(
            files_paths=midi_paths,
            tokenizer=tokenizer,
            save_dir=chunks_dir,
            max_seq_len=cfg["max_seq_len"],
        )
    dataset = DatasetMIDI(
        files_paths=sorted(chunks_dir.glob("**/*.mid")),
        tokenizer=tokenizer,
        max_seq_len=cfg["max_seq_len"],
        bos_token_id=tokenizer["BOS_None"],
        eos_token_id=tokenizer["EOS_None"],
    )
    n_valid = max(256, len(dataset) // 100)
    train_ds = Subset(dataset, range(n_valid, len(dataset)))
    valid_ds = Subset(dataset, range(n_valid))
    collator = DataCollator(tokenizer.pad_token_id, copy_inputs_as_labels=True)

    model_config = AutoConfig.from_pretrained(
        "mistralai/Mistral-7B-v0.1",
        vocab_size=len(tokenizer),
        hidden_size=cfg["hidden_size"],
        intermediate_size=cfg["intermediate_size"],
        num_hidden_layers=cfg["num_hidden_layers"],
        num_attention_heads=cfg["num_attention_heads"],
        num_key_value_heads=cfg["num_key_value_heads"],
        max_position_embeddings=cfg["max_seq_len"] * 4,
        sliding_window=cfg["max_seq_len"],
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer["BOS_None"],
        eos_token_id=tokenizer["EOS_None"],
    )
    use_bf16 = torch.cuda.is_bf16_supported()
    model = AutoModelForCausalLM.from_config(
        model_config,
        attn_implementation="flash_attention_2",
        torch_dtype=torch.bfloat16 if use_bf16 else torch.float16,
    )
    logger.info("model: %.1fM params, bf16=%s", model.num_parameters() / 1e6, use_bf16)

    training_args = TrainingArguments(
        output_dir=args.out_dir,
        overwrite_output_dir=False,
        do_train=True,
        do_eval=True,
        per_device_train_batch_size=cfg["per_device_train_batch_size"],
        per_device_eval_batch_size=cfg["per_device_train_batch_size"],
        gradient_accumulation_steps=cfg["gradient_accumulation_steps"],
        eval_accumulation_steps=None,
        eval_steps=1000,
        evaluation_strategy="steps",
        learning_rate=cfg["learning_rate"],
        weight_decay=0.01,
        max_grad_norm=3.0,
        max_steps=cfg["max_steps"],
        lr_scheduler_type="cosine_with_restarts",
        warmup_ratio=cfg["warmup_ratio"],
        log_level="debug",
        logging_strategy="steps",
        logging_steps=20,
        save_strategy="steps",
        save_steps=1000,
        save_total_limit=5,
        no_cuda=False,
        seed=cfg["seed"],
        fp16=not use_bf16,
        bf16=use_bf16,
        tf32=True,
        load_best_model_at_end=True,
        label_smoothing_factor=0.0,
        optim="adamw_torch_fused",
        report_to=["tensorboard"],
        gradient_checkpointing=True,
        ddp_backend="nccl",
        ddp_find_unused_parameters=False,
        dataloader_num_workers=8,
        dataloader_pin_memory=True,
    )

    trainer = Trainer(
        model=model,
        args=training_args,
        data_collator=collator,
        train_dataset=train_ds,
        eval_dataset=valid_ds,
    )

    last_ckpt = get_last_checkpoint(args.out_dir) if os.path.isdir(args.out_dir) else None
    train_result = trainer.train(resume_from_checkpoint=last_ckpt)
    trainer.save_model()
    trainer.log_metrics("train", train_result.metrics)
    trainer.save_metrics("train", train_result.metrics)
    trainer.save_state()

    metrics = trainer.evaluate()
    trainer.log_metrics("eval", metrics)
    trainer.save_metrics("eval", metrics)

    if trainer.is_world_process_zero():
        logger.info("max GPU memory allocated: %.2f GiB", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
