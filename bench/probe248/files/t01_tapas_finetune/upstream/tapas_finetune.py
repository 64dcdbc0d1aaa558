"""Fine-tune TAPAS (TapasForQuestionAnswering) on SQA or WikiTableQuestions.

Adapted from the HuggingFace TAPAS fine-tuning tutorial; keeps the plain PyTorch
training loop so that weak supervision (WTQ: float answers + aggregation) and the
conversational setting (SQA: prev_labels) can be switched with --task.

Usage:
    python tapas_finetune.py --task wtq --data_dir data/wtq --output_dir runs/tapas-wtq \
        --model_name google/tapas-base --per_gpu_train_batch_size 32 --fp16
"""
import argparse
import ast
import json
import logging
import os
import random

import numpy as np
import pandas as pd
import torch
from torch.utils.data import DataLoader, Dataset, RandomSampler, SequentialSampler
from tqdm import tqdm, trange
from transformers import (
    TapasConfig,
    TapasForQuestionAnswering,
    TapasTokenizer,
    get_linear_schedule_with_warmup,
)

logger = logging.getLogger(__name__)

WTQ_CONFIG = dict(
    num_aggregation_labels=4,
    use_answer_as_supervision=True,
    answer_loss_cutoff=0.664694,
    cell_selection_preference=0.207951,
    huber_loss_delta=0.121194,
    init_cell_selection_weights_to_zero=True,
    select_one_column=True,
    allow_empty_column_selection=False,
    temperature=0.0352513,
)


def set_seed(args):
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    if args.n_gpu > 0:
        torch.cuda.manual_seed_all(args.seed)


def _parse_answer_coordinates(answer_coordinate_str):
    """SQA stores coordinates as strings like "['(0, 1)', '(2, 1)']"."""
    try:
        answer_coordinates = []
        coords = ast.literal_eval(answer_coordinate_str)
        for row_index, column_index in sorted(ast.literal_eval(coord) for coord in coords):
            answer_coordinates.append((row_index, column_index))
    except SyntaxError:
        raise ValueError("Unable to evaluate %s" % answer_coordinate_str)
    return answer_coordinates


def _parse_answer_text(answer_text):
    try:
        answer = []
        for value in ast.literal_eval(answer_text):
            answer.append(value)
    except SyntaxError:
        raise ValueError("Unable to evaluate %s" % answer_text)
    return answer


class TableDataset(Dataset):
    def __init__(self, df, tokenizer, table_dir, task):
        self.df = df
        self.tokenizer = tokenizer
        self.table_dir = table_dir
        self.task = task

    def __getitem__(self, idx):
        item = self.df.iloc[idx]
        table = pd.read_csv(os.path.join(self.table_dir, item.table_file)).astype(str)
        encoding = self.tokenizer(
            table=table,
            queries=item.question,
            answer_coordinates=item.answer_coordinates,
            answer_text=item.answer_text,
            truncation=True,
            padding="max_length",
            return_tensors="pt",
        )
        # remove the batch dimension which the tokenizer adds by default
        encoding = {key: val.squeeze(0) for key, val in encoding.items()}
        if self.task == "wtq":
            # float_answer is required for weak supervision
            encoding["float_answer"] = torch.tensor(item.float_answer, dtype=torch.float)
        return encoding

    def __len__(self):
        return len(self.df)


def load_split(args, split, tokenizer):
    path = os.path.join(args.data_dir, f"{split}.tsv")
    df = pd.read_csv(path, sep="\t")
    df["answer_coordinates"] = df["answer_coordinates"].apply(_parse_answer_coordinates)
    df["answer_text"] = df["answer_text"].apply(_parse_answer_text)
    if args.task == "wtq" and "float_answer" not in df.columns:
        df["float_answer"] = float("nan")
    if args.max_examples is not None:
        df = df.iloc[: args.max_examples]
    return TableDataset(df, tokenizer, os.path.join(args.data_dir, "tables"), args.task)


def train(args, train_dataset, model, tokenizer):
    args.train_batch_size = args.per_gpu_train_batch_size * max(1, args.n_gpu)
    train_sampler = RandomSampler(train_dataset)
    train_dataloader = DataLoader(
        train_dataset,
        sampler=train_sampler,
        batch_size=args.train_batch_size,
        num_workers=args.num_workers,
        pin_memory=True,
    )

    t_total = len(train_dataloader) // args.gradient_accumulation_steps * args.num_train_epochs

    no_decay = ["bias", "LayerNorm.weight"]
    optimizer_grouped_parameters = [
        {
            "params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
            "weight_decay": args.weight_decay,
        },
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(optimizer_grouped_parameters, lr=args.learning_rate, eps=args.adam_epsilon)
    scheduler = get_linear_schedule_with_warmup(
        optimizer, num_warmup_steps=int(args.warmup_ratio * t_total), num_training_steps=t_total
    )
    scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)

    # multi-gpu training
    if args.n_gpu > 1:
        model = torch.nn.DataParallel(model)

    logger.info("***** Running training *****")
    logger.info("  Num examples = %d", len(train_dataset))
    logger.info("  Num Epochs = %d", args.num_train_epochs)
    logger.info("  Instantaneous batch size per GPU = %d", args.per_gpu_train_batch_size)
    logger.info("  Total optimization steps = %d", t_total)

    global_step = 0
    tr_loss, logging_loss = 0.0, 0.0
    model.zero_grad()
    train_iterator = trange(int(args.num_train_epochs), desc="Epoch")
    set_seed(args)
    for _ in train_iterator:
        epoch_iterator = tqdm(train_dataloader, desc="Iteration")
        for step, batch in enumerate(epoch_iterator):
            model.train()
            batch = {k: v.to(args.device) for k, v in batch.items()}

            with torch.cuda.amp.autocast(enabled=args.fp16):
                outputs = model(
                    input_ids=batch["input_ids"],
                    attention_mask=batch["attention_mask"],
                    token_type_ids=batch["token_type_ids"],
                    labels=batch["labels"],
                    numeric_values=batch.get("numeric_values"),
                    numeric_values_scale=batch.get("numeric_values_scale"),
                    float_answer=batch.get("float_answer"),
                )
                loss = outputs.loss

            if args.n_gpu > 1:
                loss = loss.mean()  # mean() to average on multi-gpu parallel training
            if args.gradient_accumulation_steps > 1:
                loss = loss / args.gradient_accumulation_steps

            scaler.scale(loss).backward()
            tr_loss += loss.item()

            if (step + 1) % args.gradient_accumulation_steps == 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                scaler.step(optimizer)
                scaler.update()
                scheduler.step()
                model.zero_grad()
                global_step += 1

                if args.logging_steps > 0 and global_step % args.logging_steps == 0:
                    logger.info(
                        "step %d | loss %.4f | lr %.2e",
                        global_step,
                        (tr_loss - logging_loss) / args.logging_steps,
                        scheduler.get_last_lr()[0],
                    )
                    logging_loss = tr_loss

                if args.save_steps > 0 and global_step % args.save_steps == 0:
                    save_checkpoint(args, model, tokenizer, f"checkpoint-{global_step}")

    return global_step, tr_loss / max(global_step, 1)


def save_checkpoint(args, model, tokenizer, name):
    output_dir = os.path.join(args.output_dir, name)
    os.makedirs(output_dir, exist_ok=True)
    model_to_save = model.module if hasattr(model, "module") else model  # Take care of distributed/parallel training
    model_to_save.save_pretrained(output_dir)
    tokenizer.save_pretrained(output_dir)
    torch.save(args, os.path.join(output_dir, "training_args.bin"))
    logger.info("Saving model checkpoint to %s", output_dir)


@torch.no_grad()
def evaluate(args, model, tokenizer, eval_dataset):
    eval_dataloader = DataLoader(
        eval_dataset, sampler=SequentialSampler(eval_dataset), batch_size=args.per_gpu_eval_batch_size
    )
    model.eval()
    correct, total = 0, 0
    for batch in tqdm(eval_dataloader, desc="Evaluating"):
        inputs = {k: v.to(args.device) for k, v in batch.items() if k not in ("labels", "float_answer")}
        outputs = model(**inputs)
        # the tokenizer's post-processing runs on CPU tensors
        cpu_inputs = {k: v.cpu() for k, v in inputs.items()}
        logits = outputs.logits.detach().cpu()
        if args.task == "wtq":
            predicted_coordinates, _ = tokenizer.convert_logits_to_predictions(
                cpu_inputs, logits, outputs.logits_aggregation.detach().cpu()
            )
        else:
            predicted_coordinates = tokenizer.convert_logits_to_predictions(cpu_inputs, logits)
            if isinstance(predicted_coordinates, tuple):
                predicted_coordinates = predicted_coordinates[0]
        gold = batch["labels"]
        for i, coords in enumerate(predicted_coordinates):
            has_gold = bool(gold[i].sum().item() > 0)
            correct += int(has_gold == (len(coords) > 0))
            total += 1
    acc = correct / max(total, 1)
    logger.info("answerability agreement (approx.) = %.4f", acc)
    return {"acc": acc}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", choices=["sqa", "wtq"], default="sqa")
    parser.add_argument("--data_dir", type=str, required=True)
    parser.add_argument("--output_dir", type=str, required=True)
    parser.add_argument("--model_name", type=str, default="google/tapas-base")
    parser.add_argument("--per_gpu_train_batch_size", type=int, default=32)
    parser.add_argument("--per_gpu_eval_batch_size", type=int, default=64)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--learning_rate", type=float, default=5e-5)
    parser.add_argument("--weight_decay", type=float, default=0.01)
    parser.add_argument("--adam_epsilon", type=float, default=1e-8)
    parser.add_argument("--max_grad_norm", type=float, default=10.0)
    parser.add_argument("--num_train_epochs", type=float, default=3.0)
    parser.add_argument("--warmup_ratio", type=float, default=0.0)
    parser.add_argument("--logging_steps", type=int, default=50)
    parser.add_argument("--save_steps", type=int, default=1000)
    parser.add_argument("--num_workers", type=int, default=4)
    parser.add_argument("--max_examples", type=int, default=None)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--no_cuda", action="store_true", help="Avoid using CUDA when available")
    parser.add_argument("--fp16", action="store_true", help="Use torch.cuda.amp mixed precision")
    args = parser.parse_args()

    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
        datefmt="%m/%d/%Y %H:%M:%S",
        level=logging.INFO,
    )

    # Setup CUDA, GPU
    args.device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")
    args.n_gpu = 0 if args.no_cuda else torch.cuda.device_count()
    logger.warning("device: %s, n_gpu: %s, 16-bits training: %s", args.device, args.n_gpu, args.fp16)

    set_seed(args)

    tokenizer = TapasTokenizer.from_pretrained(args.model_name)
    if args.task == "wtq":
        config = TapasConfig.from_pretrained(args.model_name, **WTQ_CONFIG)
    else:
        config = TapasConfig.from_pretrained(args.model_name)
    model = TapasForQuestionAnswering.from_pretrained(args.model_name, config=config)
    model.to(args.device)

    train_dataset = load_split(args, "train", tokenizer)
    dev_dataset = load_split(args, "dev", tokenizer)

    global_step, tr_loss = train(args, train_dataset, model, tokenizer)
    logger.info(" global_step = %s, average loss = %s", global_step, tr_loss)
    save_checkpoint(args, model, tokenizer, "final")

    results = evaluate(args, model, tokenizer, dev_dataset)
    with open(os.path.join(args.output_dir, "dev_results.json"), "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
