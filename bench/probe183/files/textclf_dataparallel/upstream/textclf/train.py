"""Sentence classification with TextCNN / BiLSTM on torchtext legacy datasets.

    python textclf/train.py --model cnn --dataset sst2 --embeddings glove.840B.300d --gpus 0,1

Kim (2014) hyper-parameters by default. Multiple GPUs are used through
nn.DataParallel (single process), which is plenty for models this small.
"""
import argparse
import json
import logging
import os
import random
import time
from typing import Dict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchtext.legacy import data, datasets

from models import BiLSTMClassifier, TextCNN

logger = logging.getLogger("textclf")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", choices=["cnn", "lstm"], default="cnn")
    p.add_argument("--dataset", choices=["sst2", "sst5", "imdb", "trec"], default="sst2")
    p.add_argument("--embeddings", default="glove.840B.300d")
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=50)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--max-norm", type=float, default=3.0, help="l2 constraint on the output layer (Kim 2014)")
    p.add_argument("--gpus", default="0", help="comma separated GPU ids; empty for CPU")
    p.add_argument("--seed", type=int, default=3435)
    p.add_argument("--out", default="runs/textclf")
    p.add_argument("--deterministic", action="store_true")
    return p.parse_args()


def setup(args):
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    gpu_ids = [int(g) for g in args.gpus.split(",") if g.strip() != ""]
    if gpu_ids and torch.cuda.is_available():
        torch.cuda.manual_seed_all(args.seed)
        device = torch.device("cuda", gpu_ids[0])
        if args.deterministic:
            torch.backends.cudnn.deterministic = True
            torch.backends.cudnn.benchmark = False
        else:
            torch.backends.cudnn.benchmark = True
    else:
        gpu_ids = []
        device = torch.device("cpu")
    return device, gpu_ids


def load_data(args, device):
    TEXT = data.Field(lower=True, batch_first=True, include_lengths=args.model == "lstm")
    LABEL = data.LabelField(dtype=torch.long)
    if args.dataset in ("sst2", "sst5"):
        fine = args.dataset == "sst5"
        filt = None if fine else (lambda ex: ex.label != "neutral")
        train, dev, test = datasets.SST.splits(TEXT, LABEL, fine_grained=fine, train_subtrees=True, filter_pred=filt)
    elif args.dataset == "imdb":
        train, test = datasets.IMDB.splits(TEXT, LABEL)
        train, dev = train.split(split_ratio=0.9, random_state=random.getstate())
    else:
        train, test = datasets.TREC.splits(TEXT, LABEL, fine_grained=False)
        train, dev = train.split(split_ratio=0.9, random_state=random.getstate())

    TEXT.build_vocab(train, vectors=args.embeddings, unk_init=torch.Tensor.normal_)
    LABEL.build_vocab(train)

    train_iter, dev_iter, test_iter = data.BucketIterator.splits(
        (train, dev, test),
        batch_sizes=(args.batch_size, 256, 256),
        sort_key=lambda ex: len(ex.text),
        sort_within_batch=args.model == "lstm",
        device=device,
        repeat=False,
    )
    return TEXT, LABEL, train_iter, dev_iter, test_iter


def build_model(args, TEXT, LABEL):
    vectors = TEXT.vocab.vectors
    if args.model == "cnn":
        model = TextCNN(vectors, n_classes=len(LABEL.vocab), kernel_sizes=(3, 4, 5), n_filters=100, dropout=args.dropout)
    else:
        model = BiLSTMClassifier(vectors, n_classes=len(LABEL.vocab), hidden=150, dropout=args.dropout,
                                 pad_idx=TEXT.vocab.stoi[TEXT.pad_token])
    return model


def batch_inputs(batch, model_type):
    if model_type == "lstm":
        text, lengths = batch.text
        return (text, lengths.cpu())
    return (batch.text,)


def run_epoch(model, iterator, optimizer, args, train: bool) -> Dict[str, float]:
    model.train(train)
    total_loss, correct, n = 0.0, 0, 0
    for batch in iterator:
        with torch.set_grad_enabled(train):
            logits = model(*batch_inputs(batch, args.model))
            loss = F.cross_entropy(logits, batch.label)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            # Kim (2014): rescale the output layer weights to have l2 norm <= max_norm
            fc = model.module.fc if isinstance(model, nn.DataParallel) else model.fc
            with torch.no_grad():
                fc.weight.data = torch.renorm(fc.weight.data, p=2, dim=0, maxnorm=args.max_norm)
        total_loss += loss.item() * batch.label.size(0)
        correct += (logits.argmax(-1) == batch.label).sum().item()
        n += batch.label.size(0)
    return {"loss": total_loss / n, "acc": correct / n}


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    os.makedirs(args.out, exist_ok=True)
    device, gpu_ids = setup(args)
    logger.info("device=%s gpus=%s", device, gpu_ids)

    TEXT, LABEL, train_iter, dev_iter, test_iter = load_data(args, device)
    model = build_model(args, TEXT, LABEL).to(device)
    if len(gpu_ids) > 1:
        model = nn.DataParallel(model, device_ids=gpu_ids)
    optimizer = torch.optim.Adam(filter(lambda p: p.requires_grad, model.parameters()), lr=args.lr)

    best_dev, history = 0.0, []
    for epoch in range(1, args.epochs + 1):
        t0 = time.time()
        tr = run_epoch(model, train_iter, optimizer, args, train=True)
        dv = run_epoch(model, dev_iter, None, args, train=False)
        history.append({"epoch": epoch, "train": tr, "dev": dv, "time": time.time() - t0})
        logger.info("epoch %d train_loss %.4f train_acc %.4f dev_acc %.4f (%.1fs)",
                    epoch, tr["loss"], tr["acc"], dv["acc"], time.time() - t0)
        if dv["acc"] > best_dev:
            best_dev = dv["acc"]
            state = model.module.state_dict() if isinstance(model, nn.DataParallel) else model.state_dict()
            torch.save(state, os.path.join(args.out, "best.pt"))

    state = torch.load(os.path.join(args.out, "best.pt"), map_location=device)
    (model.module if isinstance(model, nn.DataParallel) else model).load_state_dict(state)
    te = run_epoch(model, test_iter, None, args, train=False)
    logger.info("best dev acc %.4f | test acc %.4f", best_dev, te["acc"])
    with open(os.path.join(args.out, "history.json"), "w") as f:
        json.dump({"history": history, "test": te, "args": vars(args)}, f, indent=2)


if __name__ == "__main__":
    main()
