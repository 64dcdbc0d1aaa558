"""
Train an MMM-style (Multi-Track Music Machine) GPT-2 on bar-fill tokenised MIDI.

The tokenizer is a word-level PreTrainedTokenizerFast built by tokenize_dataset.py; every
training example is one song rendered as
    PIECE_START TRACK_START INST=.. BAR_START NOTE_ON=.. TIME_DELTA=.. NOTE_OFF=.. BAR_END ... TRACK_END ...

    python scripts/train_mmm.py --data data/jsb_mmm --out runs/mmm_jsb --epochs 10
"""
import argparse
import json
import logging
import math
import os

import torch
from datasets import load_from_disk
from transformers import (
    DataCollatorForLanguageModeling,
    GPT2Config,
    GPT2LMHeadModel,
    PreTrainedTokenizerFast,
    Trainer,
    TrainingArguments,
    set_seed,
)

logger = logging.getLogger("train_mmm")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True, help="folder with tokenizer.json and a saved HF dataset")
    p.add_argument("--out", required=True)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--n_positions", type=int, default=2048)
    p.add_argument("--n_embd", type=int, default=512)
    p.add_argument("--n_layer", type=int, default=6)
    p.add_argument("--n_head", type=int, default=8)
    p.add_argument("--global_batch_size", type=int, default=64,
                   help="sequences per optimizer step, summed over all GPUs")
    p.add_argument("--per_device_batch_size", type=int, default=8)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--resume", action="store_true")
    return p.parse_args()


def build_model(tokenizer, args):
    config = GPT2Config(
        vocab_size=tokenizer.vocab_size,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        n_positions=args.n_positions,
        n_ctx=args.n_positions,
        n_embd=args.n_embd,
        n_layer=args.n_layer,
        n_head=args.n_head,
    )
    model = GPT2LMHeadModel(config)
    n_params = sum(p.numel() for p in model.parameters())
    logger.info("GPT-2 with %.1fM parameters", n_params / 1e6)
    return model


def gradient_accumulation(args):
    """Keep the global batch fixed whatever the number of GPUs we get scheduled on."""
    n_devices = max(torch.cuda.device_count(), 1)
    per_step = args.per_device_batch_size * n_devices
    if args.global_batch_size % per_step != 0:
        raise ValueError("global batch %d not divisible by %d x %d"
                         % (args.global_batch_size, args.per_device_batch_size, n_devices))
    return args.global_batch_size // per_step


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    set_seed(args.seed)

    tokenizer = PreTrainedTokenizerFast(tokenizer_file=os.path.join(args.data, "tokenizer.json"))
    tokenizer.add_special_tokens({"pad_token": "[PAD]", "bos_token": "PIECE_START", "eos_token": "PIECE_END"})

    dataset = load_from_disk(os.path.join(args.data, "hf_dataset"))
    train_ds, eval_ds = dataset["train"], dataset["validation"]
    logger.info("train=%d eval=%d", len(train_ds), len(eval_ds))

    model = build_model(tokenizer, args)
    collator = DataCollatorForLanguageModeling(tokenizer=tokenizer, mlm=False)

    grad_accum = gradient_accumulation(args)
    logger.info("gradient_accumulation_steps=%d", grad_accum)

    training_args = TrainingArguments(
        output_dir=args.out,
        overwrite_output_dir=not args.resume,
        num_train_epochs=args.epochs,
        per_device_train_batch_size=args.per_device_batch_size,
        per_device_eval_batch_size=args.per_device_batch_size,
        gradient_accumulation_steps=grad_accum,
        learning_rate=args.lr,
        weight_decay=0.01,
        warmup_ratio=0.05,
        lr_scheduler_type="cosine",
        evaluation_strategy="steps",
        eval_steps=1000,
        save_steps=1000,
        save_total_limit=3,
        logging_steps=50,
        prediction_loss_only=True,
        fp16=True,
        dataloader_num_workers=4,
        dataloader_pin_memory=True,
        report_to=["tensorboard"],
        seed=args.seed,
    )

    trainer = Trainer(
        model=model,
        args=training_args,
        data_collator=collator,
        train_dataset=train_ds,
        eval_dataset=eval_ds,
    )

    trainer.train(resume_from_checkpoint=args.resume or None)
    trainer.save_model(os.path.join(args.out, "final"))
    tokenizer.save_pretrained(os.path.join(args.out, "final"))

    metrics = trainer.evaluate()
    metrics["perplexity"] = math.exp(metrics["eval_loss"])
    with open(os.path.join(args.out, "final", "eval_metrics.json"), "w") as f:
        json.dump(metrics, f, indent=2)
    logger.info("eval: %s", metrics)

    # quick sanity sample
    if torch.cuda.is_available():
        model = model.to("cuda")
    model.eval()
    prompt = tokenizer("PIECE_START TRACK_START INST=0 BAR_START", return_tensors="pt").input_ids.to(model.device)
    with torch.no_grad():
        out = model.generate(prompt, max_length=256, do_sample=True, temperature=1.0, top_k=0,
                             pad_token_id=tokenizer.pad_token_id)
    print(tokenizer.decode(out[0]))


if __name__ == "__main__":
    main()
