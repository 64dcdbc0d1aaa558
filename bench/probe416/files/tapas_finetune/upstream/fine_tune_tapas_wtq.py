"""Fine-tune TAPAS on WikiTableQuestions (weak supervision for aggregation).

Adapted from the "Fine-tuning TapasForQuestionAnswering on SQA / WTQ" notebook.
Usage:
    python fine_tune_tapas_wtq.py --data_dir data/WTQ --table_csv_dir data/WTQ --epochs 5
"""
import argparse
import ast
import logging
import os
import random
import time

import numpy as np
import pandas as pd
import torch
from torch.utils.data import DataLoader
from tqdm.auto import tqdm
from transformers import TapasConfig, TapasForQuestionAnswering, TapasTokenizer, get_linear_schedule_with_warmup

logger = logging.getLogger(__name__)
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def _parse_answer_coordinates(answer_coordinate_str):
    """Parses the answer_coordinates of a question.
    Args:
      answer_coordinate_str: A string representation of a Python list of tuple
        strings.
        For example: "['(1, 4)','(1, 3)', ...]"
    """
    try:
        answer_coordinates = []
        # make a list of strings
        coords = ast.literal_eval(answer_coordinate_str)
        # parse each string as a tuple
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


class TableDataset(torch.utils.data.Dataset):
    def __init__(self, df, tokenizer, table_csv_dir):
        self.df = df
        self.tokenizer = tokenizer
        self.table_csv_dir = table_csv_dir

    def __getitem__(self, idx):
        item = self.df.iloc[idx]
        table = pd.read_csv(os.path.join(self.table_csv_dir, item.table_file)).astype(str)
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
        # add the float_answer which is also required (weak supervision for aggregation case)
        encoding["float_answer"] = torch.tensor(item.float_answer)
        return encoding

    def __len__(self):
        return len(self.df)


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_dir", default="data/WTQ")
    parser.add_argument("--table_csv_dir", default="data/WTQ")
    parser.add_argument("--model_name", default="google/tapas-base")
    parser.add_argument("--config_name", default="google/tapas-base-finetuned-wtq")
    parser.add_argument("--output_dir", default="checkpoints/tapas-wtq")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--warmup_ratio", type=float, default=0.1)
    parser.add_argument("--num_workers", type=int, default=4)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--fp16", action="store_true", help="use torch.cuda.amp mixed precision")
    return parser.parse_args()


def evaluate(model, dataloader):
    model.eval()
    total_loss, steps = 0.0, 0
    with torch.no_grad():
        for batch in dataloader:
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            outputs = model(**batch)
            total_loss += outputs.loss.item()
            steps += 1
    model.train()
    return total_loss / max(steps, 1)


def main():
    args = parse_args()
    set_seed(args.seed)
    os.makedirs(args.output_dir, exist_ok=True)

    logger.info("device: %s, n_gpu: %d", device, torch.cuda.device_count())

    tokenizer = TapasTokenizer.from_pretrained(args.config_name)

    train_df = pd.read_csv(os.path.join(args.data_dir, "train.tsv"), sep="\t")
    dev_df = pd.read_csv(os.path.join(args.data_dir, "dev.tsv"), sep="\t")
    for df in (train_df, dev_df):
        df["answer_coordinates"] = df["answer_coordinates"].apply(_parse_answer_coordinates)
        df["answer_text"] = df["answer_text"].apply(_parse_answer_text)

    train_dataset = TableDataset(train_df, tokenizer, args.table_csv_dir)
    dev_dataset = TableDataset(dev_df, tokenizer, args.table_csv_dir)
    train_dataloader = DataLoader(train_dataset, batch_size=args.batch_size, shuffle=True,
                                  num_workers=args.num_workers, pin_memory=True)
    dev_dataloader = DataLoader(dev_dataset, batch_size=args.batch_size, shuffle=False,
                                num_workers=args.num_workers, pin_memory=True)

    # the WTQ config enables the aggregation head with weak supervision (cell selection + scalar answer)
    config = TapasConfig.from_pretrained(args.config_name)
    model = TapasForQuestionAnswering.from_pretrained(args.model_name, config=config)
    model.to(device)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    num_training_steps = args.epochs * len(train_dataloader)
    scheduler = get_linear_schedule_with_warmup(
        optimizer, int(args.warmup_ratio * num_training_steps), num_training_steps
    )
    scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)

    best_dev_loss = float("inf")
    global_step = 0
    for epoch in range(args.epochs):
        logger.info("Epoch: %d", epoch)
        start = time.time()
        for batch in tqdm(train_dataloader):
            input_ids = batch["input_ids"].to(device, non_blocking=True)
            attention_mask = batch["attention_mask"].to(device, non_blocking=True)
            token_type_ids = batch["token_type_ids"].to(device, non_blocking=True)
            labels = batch["labels"].to(device, non_blocking=True)
            numeric_values = batch["numeric_values"].to(device, non_blocking=True)
            numeric_values_scale = batch["numeric_values_scale"].to(device, non_blocking=True)
            float_answer = batch["float_answer"].to(device, non_blocking=True)

            optimizer.zero_grad()
            with torch.cuda.amp.autocast(enabled=args.fp16):
                outputs = model(
                    input_ids=input_ids,
                    attention_mask=attention_mask,
                    token_type_ids=token_type_ids,
                    labels=labels,
                    numeric_values=numeric_values,
                    numeric_values_scale=numeric_values_scale,
                    float_answer=float_answer,
                )
            loss = outputs.loss
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            global_step += 1

            if global_step % 100 == 0:
                logger.info("step %d loss %.4f peak mem %.1f GB", global_step, loss.item(),
                            torch.cuda.max_memory_allocated() / 2**30)

        dev_loss = evaluate(model, dev_dataloader)
        logger.info("epoch %d done in %.1fs, dev loss %.4f", epoch, time.time() - start, dev_loss)
        if dev_loss < best_dev_loss:
            best_dev_loss = dev_loss
            model.save_pretrained(args.output_dir)
            tokenizer.save_pretrained(args.output_dir)

    logger.info("best dev loss %.4f", best_dev_loss)


if __name__ == "__main__":
    main()
