"""Fine-tune T5 for abstractive news summarisation (CNN/DailyMail or XSum).

    python t5_summarization/train_t5.py --model t5-base --train data/train.csv \
        --valid data/valid.csv --out runs/t5-base-cnndm --epochs 3 --bf16

Adapted from the widely shared "T5 fine-tuning with PyTorch" notebook: a plain
training loop, a pandas-backed dataset, Adafactor or AdamW, and naive model
parallelism for t5-3b / t5-11b via ``model.parallelize()``.
"""

import argparse
import math
import os
import time

import numpy as np
import pandas as pd
import torch
from torch import cuda
from torch.utils.data import DataLoader, Dataset, RandomSampler, SequentialSampler
from transformers import T5ForConditionalGeneration, T5TokenizerFast
from transformers.optimization import Adafactor, AdafactorSchedule, get_linear_schedule_with_warmup

device = 'cuda' if cuda.is_available() else 'cpu'


class SummaryDataset(Dataset):
    def __init__(self, dataframe, tokenizer, source_len, summ_len, source_text="text", target_text="summary"):
        self.tokenizer = tokenizer
        self.data = dataframe
        self.source_len = source_len
        self.summ_len = summ_len
        self.source_text = self.data[source_text]
        self.target_text = self.data[target_text]

    def __len__(self):
        return len(self.target_text)

    def __getitem__(self, index):
        source_text = "summarize: " + " ".join(str(self.source_text[index]).split())
        target_text = " ".join(str(self.target_text[index]).split())

        source = self.tokenizer.batch_encode_plus(
            [source_text], max_length=self.source_len, pad_to_max_length=True,
            truncation=True, padding="max_length", return_tensors="pt",
        )
        target = self.tokenizer.batch_encode_plus(
            [target_text], max_length=self.summ_len, pad_to_max_length=True,
            truncation=True, padding="max_length", return_tensors="pt",
        )

        return {
            "source_ids": source["input_ids"].squeeze().to(dtype=torch.long),
            "source_mask": source["attention_mask"].squeeze().to(dtype=torch.long),
            "target_ids": target["input_ids"].squeeze().to(dtype=torch.long),
        }


def pick_precision(args):
    """bf16 on Ampere+, otherwise fp16 only if explicitly requested (T5 overflows in fp16)."""
    if args.bf16 and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    if args.fp16:
        return torch.float16
    return None


def build_device_map(model, n_devices):
    """Spread the T5 blocks evenly over the visible GPUs for model.parallelize()."""
    n_blocks = len(model.encoder.block)
    per_device = int(math.ceil(n_blocks / n_devices))
    return {
        d: list(range(d * per_device, min((d + 1) * per_device, n_blocks)))
        for d in range(n_devices)
    }


def train_epoch(epoch, tokenizer, model, loader, optimizer, scheduler, scaler, amp_dtype, log_every=100):
    model.train()
    t0 = time.time()
    for step, data in enumerate(loader, 0):
        y = data["target_ids"].to(device, dtype=torch.long)
        y_ids = y[:, :-1].contiguous()
        lm_labels = y[:, 1:].clone().detach()
        lm_labels[y[:, 1:] == tokenizer.pad_token_id] = -100
        ids = data["source_ids"].to(device, dtype=torch.long)
        mask = data["source_mask"].to(device, dtype=torch.long)

        with torch.cuda.amp.autocast(enabled=amp_dtype is not None, dtype=amp_dtype or torch.float16):
            outputs = model(input_ids=ids, attention_mask=mask, decoder_input_ids=y_ids, labels=lm_labels)
            loss = outputs[0]

        optimizer.zero_grad(set_to_none=True)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        if scheduler is not None:
            scheduler.step()

        if step % log_every == 0:
            elapsed = time.time() - t0
            mem = cuda.max_memory_allocated() / 2**30 if cuda.is_available() else 0.0
            print(f"epoch {epoch} step {step} loss {loss.item():.4f} "
                  f"{elapsed / max(step, 1):.3f}s/it peak-mem {mem:.1f}GiB")


@torch.no_grad()
def validate(tokenizer, model, loader, max_len, num_beams):
    model.eval()
    predictions, actuals = [], []
    for _, data in enumerate(loader, 0):
        y = data["target_ids"].to(device, dtype=torch.long)
        ids = data["source_ids"].to(device, dtype=torch.long)
        mask = data["source_mask"].to(device, dtype=torch.long)

        generated_ids = model.generate(
            input_ids=ids, attention_mask=mask, max_length=max_len,
            num_beams=num_beams, repetition_penalty=2.5, length_penalty=1.0, early_stopping=True,
        )
        preds = [tokenizer.decode(g, skip_special_tokens=True, clean_up_tokenization_spaces=True) for g in generated_ids]
        target = [tokenizer.decode(t, skip_special_tokens=True, clean_up_tokenization_spaces=True) for t in y]
        predictions.extend(preds)
        actuals.extend(target)
    return predictions, actuals


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="t5-base")
    parser.add_argument("--train", required=True)
    parser.add_argument("--valid", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--source_len", type=int, default=512)
    parser.add_argument("--summ_len", type=int, default=150)
    parser.add_argument("--adafactor", action="store_true")
    parser.add_argument("--bf16", action="store_true")
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--model_parallel", action="store_true",
                        help="split t5-3b/t5-11b over all visible GPUs with model.parallelize()")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cuda.matmul.allow_tf32 = True

    tokenizer = T5TokenizerFast.from_pretrained(args.model)
    model = T5ForConditionalGeneration.from_pretrained(args.model)

    if args.model_parallel and cuda.device_count() > 1:
        device_map = build_device_map(model, cuda.device_count())
        model.parallelize(device_map)
    else:
        model = model.to(device)

    train_df = pd.read_csv(args.train)
    valid_df = pd.read_csv(args.valid)
    train_set = SummaryDataset(train_df, tokenizer, args.source_len, args.summ_len)
    valid_set = SummaryDataset(valid_df, tokenizer, args.source_len, args.summ_len)

    loader_kwargs = dict(batch_size=args.batch_size, num_workers=4, pin_memory=True)
    train_loader = DataLoader(train_set, sampler=RandomSampler(train_set), **loader_kwargs)
    valid_loader = DataLoader(valid_set, sampler=SequentialSampler(valid_set), **loader_kwargs)

    if args.adafactor:
        optimizer = Adafactor(model.parameters(), scale_parameter=True, relative_step=True,
                              warmup_init=True, lr=None)
        scheduler = AdafactorSchedule(optimizer)
    else:
        optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
        total = len(train_loader) * args.epochs
        scheduler = get_linear_schedule_with_warmup(optimizer, int(0.06 * total), total)

    amp_dtype = pick_precision(args)
    scaler = torch.cuda.amp.GradScaler() if amp_dtype == torch.float16 else None

    for epoch in range(args.epochs):
        train_epoch(epoch, tokenizer, model, train_loader, optimizer, scheduler, scaler, amp_dtype)
        if cuda.is_available():
            cuda.empty_cache()

    os.makedirs(args.out, exist_ok=True)
    if args.model_parallel:
        model.deparallelize()
    model.save_pretrained(args.out)
    tokenizer.save_pretrained(args.out)

    predictions, actuals = validate(tokenizer, model, valid_loader, args.summ_len, num_beams=2)
    pd.DataFrame({"Generated Text": predictions, "Actual Text": actuals}).to_csv(
        os.path.join(args.out, "predictions.csv"), index=False
    )


if __name__ == "__main__":
    main()
