# coding=utf-8
"""Fine-tune a (converted) Med-BERT checkpoint on a disease-onset prediction task
(DHF = heart failure among diabetes patients, or PaCa = pancreatic cancer) with PyTorch.

The pretrained TF checkpoint is converted once with
    transformers-cli convert --model_type bert --tf_checkpoint ...  --config ... --pytorch_dump_output ...

Usage:
    python finetune_pytorch.py --config configs/dhf_finetune.yaml
    python finetune_pytorch.py --config configs/dhf_finetune.yaml training.lr=2e-5 training.epochs=5
"""
import argparse
import logging
import math
import os
import pickle
import random
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import yaml
from sklearn.metrics import roc_auc_score, average_precision_score
from torch.utils.data import Dataset, DataLoader, RandomSampler, SequentialSampler
from tqdm import tqdm
from transformers import BertConfig, BertModel, get_linear_schedule_with_warmup

logger = logging.getLogger(__name__)
logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                    datefmt="%m/%d/%Y %H:%M:%S", level=logging.INFO)


class EHRDataset(Dataset):
    """Each record: [pt_id, label, codes, visit_ids] as produced by preprocess_pretrain_data.py."""

    def __init__(self, pkl_path, max_len=512, vocab_size=None):
        with open(pkl_path, "rb") as f:
            self.records = pickle.load(f)
        self.max_len = max_len
        self.vocab_size = vocab_size

    def __len__(self):
        return len(self.records)

    def __getitem__(self, idx):
        pt_id, label, codes, visits = self.records[idx]
        codes = codes[-self.max_len:]
        visits = visits[-self.max_len:]
        n = len(codes)
        input_ids = np.zeros(self.max_len, dtype=np.int64)
        visit_ids = np.zeros(self.max_len, dtype=np.int64)
        attn = np.zeros(self.max_len, dtype=np.int64)
        input_ids[:n] = codes
        visit_ids[:n] = np.minimum(visits, 511)
        attn[:n] = 1
        return {
            "input_ids": torch.from_numpy(input_ids),
            "token_type_ids": torch.from_numpy(visit_ids),
            "attention_mask": torch.from_numpy(attn),
            "labels": torch.tensor(float(label)),
        }


class MedBertClassifier(nn.Module):
    """Med-BERT encoder + bi-GRU pooling head, as in the paper's best fine-tuning setup."""

    def __init__(self, bert_path, hidden=128, dropout=0.1):
        super().__init__()
        self.bert = BertModel.from_pretrained(bert_path)
        h = self.bert.config.hidden_size
        self.gru = nn.GRU(h, hidden, batch_first=True, bidirectional=True)
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(2 * hidden, 1)

    def forward(self, input_ids, token_type_ids, attention_mask):
        seq = self.bert(input_ids=input_ids, token_type_ids=token_type_ids,
                        attention_mask=attention_mask).last_hidden_state
        seq, _ = self.gru(seq)
        lengths = attention_mask.sum(1).clamp(min=1) - 1
        last = seq[torch.arange(seq.size(0), device=seq.device), lengths]
        return self.out(self.dropout(last)).squeeze(-1)


def set_seed(seed, n_gpu):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if n_gpu > 0:
        torch.cuda.manual_seed_all(seed)


def load_config(path, overrides):
    with open(path) as f:
        cfg = yaml.safe_load(f)
    for ov in overrides:
        key, val = ov.split("=", 1)
        node = cfg
        parts = key.split(".")
        for p in parts[:-1]:
            node = node[p]
        node[parts[-1]] = yaml.safe_load(val)
    return cfg


def evaluate(model, loader, device, fp16):
    model.eval()
    ys, ps = [], []
    start = time.time()
    for batch in loader:
        batch = {k: v.to(device) for k, v in batch.items()}
        with torch.no_grad(), torch.cuda.amp.autocast(enabled=fp16):
            logits = model(batch["input_ids"], batch["token_type_ids"], batch["attention_mask"])
        ps.append(torch.sigmoid(logits.float()).cpu().numpy())
        ys.append(batch["labels"].cpu().numpy())
    if device.type == "cuda":
        torch.cuda.synchronize()
    elapsed = time.time() - start
    y, p = np.concatenate(ys), np.concatenate(ps)
    return {"auroc": roc_auc_score(y, p), "auprc": average_precision_score(y, p),
            "n": len(y), "seconds": elapsed}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("overrides", nargs="*")
    args = parser.parse_args()
    cfg = load_config(args.config, args.overrides)
    tcfg, dcfg, mcfg = cfg["training"], cfg["data"], cfg["model"]

    use_cuda = torch.cuda.is_available() and tcfg["device"].startswith("cuda")
    device = torch.device(tcfg["device"] if use_cuda else "cpu")
    n_gpu = torch.cuda.device_count() if use_cuda else 0
    fp16 = bool(tcfg.get("fp16", False)) and use_cuda
    logger.info("device: %s, n_gpu: %d, 16-bits training: %s", device, n_gpu, fp16)
    if use_cuda:
        props = torch.cuda.get_device_properties(device)
        logger.info("GPU: %s, %.1f GB", props.name, props.total_memory / 1e9)

    set_seed(tcfg["seed"], n_gpu)
    os.makedirs(tcfg["output_dir"], exist_ok=True)

    train_ds = EHRDataset(dcfg["train"], max_len=dcfg["max_len"])
    valid_ds = EHRDataset(dcfg["valid"], max_len=dcfg["max_len"])
    test_ds = EHRDataset(dcfg["test"], max_len=dcfg["max_len"])
    train_loader = DataLoader(train_ds, sampler=RandomSampler(train_ds), batch_size=tcfg["batch_size"],
                              num_workers=tcfg["num_workers"], pin_memory=use_cuda)
    valid_loader = DataLoader(valid_ds, sampler=SequentialSampler(valid_ds), batch_size=tcfg["eval_batch_size"],
                              num_workers=tcfg["num_workers"])
    test_loader = DataLoader(test_ds, sampler=SequentialSampler(test_ds), batch_size=tcfg["eval_batch_size"],
                             num_workers=tcfg["num_workers"])

    model = MedBertClassifier(mcfg["pretrained_path"], hidden=mcfg["gru_hidden"], dropout=mcfg["dropout"])
    model.to(device)

    no_decay = ["bias", "LayerNorm.weight"]
    grouped = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
         "weight_decay": tcfg["weight_decay"]},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
         "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(grouped, lr=tcfg["lr"], eps=1e-8)
    total_steps = math.ceil(len(train_loader) / tcfg["grad_accum"]) * tcfg["epochs"]
    scheduler = get_linear_schedule_with_warmup(optimizer, int(tcfg["warmup"] * total_steps), total_steps)
    scaler = torch.cuda.amp.GradScaler(enabled=fp16)
    criterion = nn.BCEWithLogitsLoss()

    best_auc, bad = 0.0, 0
    global_step = 0
    for epoch in range(tcfg["epochs"]):
        model.train()
        torch.cuda.reset_peak_memory_stats()
        pbar = tqdm(train_loader, desc="epoch {}".format(epoch), disable=not tcfg.get("progress", True))
        for step, batch in enumerate(pbar):
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            with torch.cuda.amp.autocast(enabled=fp16):
                logits = model(batch["input_ids"], batch["token_type_ids"], batch["attention_mask"])
                loss = criterion(logits.float(), batch["labels"]) / tcfg["grad_accum"]
            scaler.scale(loss).backward()
            if (step + 1) % tcfg["grad_accum"] == 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), tcfg["max_grad_norm"])
                scaler.step(optimizer)
                scaler.update()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
                global_step += 1
            pbar.set_postfix(loss="{:.4f}".format(loss.item() * tcfg["grad_accum"]))

        val = evaluate(model, valid_loader, device, fp16)
        peak = torch.cuda.max_memory_allocated() / 2 ** 30 if use_cuda else 0.0
        logger.info("epoch %d  val AUROC %.4f AUPRC %.4f  peak mem %.2f GB", epoch, val["auroc"], val["auprc"], peak)
        if val["auroc"] > best_auc:
            best_auc, bad = val["auroc"], 0
            torch.save(model.state_dict(), os.path.join(tcfg["output_dir"], "best_model.bin"))
        else:
            bad += 1
            if bad >= tcfg["patience"]:
                logger.info("early stop after %d epochs without improvement", bad)
                break

    model.load_state_dict(torch.load(os.path.join(tcfg["output_dir"], "best_model.bin"), map_location=device))
    test = evaluate(model, test_loader, device, fp16)
    logger.info("TEST AUROC %.4f AUPRC %.4f (%d patients, %.1fs)", test["auroc"], test["auprc"], test["n"],
                test["seconds"])
    with open(os.path.join(tcfg["output_dir"], "test_results.yaml"), "w") as f:
        yaml.safe_dump({"test": {k: float(v) for k, v in test.items()}, "best_val_auroc": float(best_auc)}, f)


if __name__ == "__main__":
    sys.exit(main())
