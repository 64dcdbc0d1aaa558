"""
Knowledge distillation of a ColBERT model from a cross-encoder teacher on MS MARCO,
following the PyLate documentation. Run on a multi-GPU node with:

    torchrun --nproc_per_node=4 examples/train/knowledge_distillation.py --model_name answerdotai/ModernBERT-base

Scores come from the `lightonai/ms-marco-en-bge` dataset (bge-reranker-v2-gemma teacher).
"""
import argparse
import os

import torch
from datasets import load_dataset
from sentence_transformers import (
    SentenceTransformerTrainer,
    SentenceTransformerTrainingArguments,
)

from pylate import evaluation, losses, models, utils


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name", type=str, default="answerdotai/ModernBERT-base")
    parser.add_argument("--output_dir", type=str, default="output/colbert-kd")
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--num_train_epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=1e-5)
    parser.add_argument("--document_length", type=int, default=300)
    parser.add_argument("--query_length", type=int, default=32)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--compile", action="store_true", help="torch.compile the underlying transformer")
    parser.add_argument("--flash_attention", action="store_true", help="use flash_attention_2 (requires flash-attn)")
    return parser.parse_args()


def main():
    args = parse_args()

    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)

    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    # Ampere and newer: bf16, otherwise fp16 mixed precision
    use_bf16 = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

    model_kwargs = {"torch_dtype": torch.bfloat16 if use_bf16 else torch.float16}
    if args.flash_attention:
        model_kwargs["attn_implementation"] = "flash_attention_2"

    # Load the datasets required for knowledge distillation (train, queries, documents)
    train = load_dataset(path="lightonai/ms-marco-en-bge", name="train", split="train")
    queries = load_dataset(path="lightonai/ms-marco-en-bge", name="queries", split="train")
    documents = load_dataset(path="lightonai/ms-marco-en-bge", name="documents", split="train")

    # Set the transformation to load the documents/queries texts using the corresponding ids on the fly
    train.set_transform(
        utils.KDProcessing(queries=queries, documents=documents).transform,
    )

    # Split for evaluation
    splits = train.train_test_split(test_size=0.01, seed=42)
    train_dataset, eval_dataset = splits["train"], splits["test"]

    model = models.ColBERT(
        model_name_or_path=args.model_name,
        document_length=args.document_length,
        query_length=args.query_length,
        model_kwargs=model_kwargs,
    )

    if args.compile:
        model[0].auto_model = torch.compile(model[0].auto_model, mode="max-autotune")

    # Configure the training arguments (e.g., epochs, batch size, learning rate)
    training_args = SentenceTransformerTrainingArguments(
        output_dir=args.output_dir,
        num_train_epochs=args.num_train_epochs,
        per_device_train_batch_size=args.batch_size,
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        learning_rate=args.lr,
        warmup_ratio=0.05,
        fp16=not use_bf16,
        bf16=use_bf16,
        logging_steps=20,
        save_steps=5000,
        eval_strategy="steps",
        eval_steps=5000,
        dataloader_num_workers=4,
        dataloader_pin_memory=True,
        ddp_find_unused_parameters=False,
        run_name="colbert-kd",
        report_to="none",
    )

    # Use the Distillation loss function for training
    train_loss = losses.Distillation(model=model)

    dev_evaluator = evaluation.ColBERTDistillationEvaluator(
        queries=eval_dataset["query"],
        documents=eval_dataset["documents"],
        scores=eval_dataset["scores"],
        name="ms-marco-kd-dev",
    )

    # Initialize the trainer
    trainer = SentenceTransformerTrainer(
        model=model,
        args=training_args,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        loss=train_loss,
        evaluator=dev_evaluator,
        data_collator=utils.ColBERTCollator(tokenize_fn=model.tokenize),
    )

    trainer.train()

    if trainer.is_world_process_zero():
        model.save_pretrained(os.path.join(args.output_dir, "final"))
        print(f"peak memory: {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB")


if __name__ == "__main__":
    main()
