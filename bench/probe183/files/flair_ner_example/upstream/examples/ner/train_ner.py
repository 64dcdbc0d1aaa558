"""Train a Flair NER tagger (CoNLL-03 / OntoNotes / WNUT-17).

Two model families are supported:

* ``--model lstm-crf``: stacked Flair + GloVe embeddings into a BiLSTM-CRF
  (Akbik et al., 2018). Embeddings are static, so ``--storage gpu`` keeps
  them on the device between epochs and is by far the fastest option when
  the card has enough memory.
* ``--model transformer``: fine-tune XLM-R / RoBERTa with a linear head and
  FLERT document context (Schweter & Akbik, 2020).

Example::

    CUDA_VISIBLE_DEVICES=0 python examples/ner/train_ner.py --corpus conll_03 \
        --model transformer --transformer xlm-roberta-large --amp --gpu 0
"""
import argparse
import json
import logging
import os
import random
from pathlib import Path

import numpy as np
import torch

import flair
from flair.datasets import CONLL_03, ONTONOTES, WNUT_17, ColumnCorpus
from flair.embeddings import (
    FlairEmbeddings,
    StackedEmbeddings,
    TransformerWordEmbeddings,
    WordEmbeddings,
)
from flair.models import SequenceTagger
from flair.trainers import ModelTrainer
from flair.trainers.plugins import TensorboardLogger

log = logging.getLogger("flair")


def get_args():
    p = argparse.ArgumentParser(description="Train a Flair NER model")
    p.add_argument("--corpus", default="conll_03", choices=["conll_03", "ontonotes", "wnut_17", "column"])
    p.add_argument("--data-folder", type=Path, default=None, help="for --corpus column")
    p.add_argument("--model", default="lstm-crf", choices=["lstm-crf", "transformer"])
    p.add_argument("--transformer", default="xlm-roberta-large")
    p.add_argument("--hidden-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=None)
    p.add_argument("--batch-size", type=int, default=None)
    p.add_argument("--chunk-size", type=int, default=None, help="mini_batch_chunk_size to save memory")
    p.add_argument("--epochs", type=int, default=None)
    p.add_argument("--storage", default="gpu", choices=["none", "cpu", "gpu"],
                   help="embeddings_storage_mode; 'gpu' keeps static embeddings on the device")
    p.add_argument("--gpu", type=int, default=0, help="CUDA device index, -1 for CPU")
    p.add_argument("--amp", action="store_true", help="use torch AMP (fp16 autocast)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--output", type=Path, default=Path("resources/taggers/ner"))
    p.add_argument("--tensorboard", action="store_true")
    return p.parse_args()


def set_device(gpu: int) -> None:
    if gpu >= 0 and torch.cuda.is_available():
        flair.device = torch.device(f"cuda:{gpu}")
        torch.cuda.set_device(gpu)
    else:
        flair.device = torch.device("cpu")
    log.info(f"flair.device = {flair.device}")


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    flair.set_seed(seed)


def load_corpus(args):
    if args.corpus == "conll_03":
        return CONLL_03()
    if args.corpus == "ontonotes":
        return ONTONOTES()
    if args.corpus == "wnut_17":
        return WNUT_17()
    columns = {0: "text", 1: "ner"}
    return ColumnCorpus(args.data_folder, columns, train_file="train.txt", dev_file="dev.txt", test_file="test.txt")


def build_lstm_crf(label_dict, hidden_size: int) -> SequenceTagger:
    embeddings = StackedEmbeddings(
        [
            WordEmbeddings("glove"),
            FlairEmbeddings("news-forward"),
            FlairEmbeddings("news-backward"),
        ]
    )
    return SequenceTagger(
        hidden_size=hidden_size,
        embeddings=embeddings,
        tag_dictionary=label_dict,
        tag_type="ner",
        use_crf=True,
    )


def build_transformer(label_dict, name: str) -> SequenceTagger:
    embeddings = TransformerWordEmbeddings(
        model=name,
        layers="-1",
        subtoken_pooling="first",
        fine_tune=True,
        use_context=True,
    )
    return SequenceTagger(
        hidden_size=256,
        embeddings=embeddings,
        tag_dictionary=label_dict,
        tag_type="ner",
        use_crf=False,
        use_rnn=False,
        reproject_embeddings=False,
    )


def main():
    args = get_args()
    logging.basicConfig(level=logging.INFO)
    set_device(args.gpu)
    seed_everything(args.seed)

    corpus = load_corpus(args)
    label_dict = corpus.make_label_dictionary(label_type="ner", add_unk=False)
    log.info(f"labels: {label_dict}")

    plugins = []
    if args.tensorboard:
        plugins.append(TensorboardLogger(log_dir=args.output / "tb"))

    args.output.mkdir(parents=True, exist_ok=True)
    with open(args.output / "args.json", "w") as f:
        json.dump({k: str(v) for k, v in vars(args).items()}, f, indent=2)

    if args.model == "lstm-crf":
        tagger = build_lstm_crf(label_dict, args.hidden_size)
        trainer = ModelTrainer(tagger, corpus)
        result = trainer.train(
            args.output,
            learning_rate=args.lr or 0.1,
            mini_batch_size=args.batch_size or 32,
            mini_batch_chunk_size=args.chunk_size,
            max_epochs=args.epochs or 150,
            embeddings_storage_mode=args.storage,
            use_amp=args.amp,
            plugins=plugins,
        )
    else:
        tagger = build_transformer(label_dict, args.transformer)
        trainer = ModelTrainer(tagger, corpus)
        # FLERT recipe: AdamW + linear warmup, small lr, 20 epochs, no storage
        result = trainer.fine_tune(
            args.output,
            learning_rate=args.lr or 5.0e-6,
            mini_batch_size=args.batch_size or 4,
            mini_batch_chunk_size=args.chunk_size or 1,
            max_epochs=args.epochs or 20,
            embeddings_storage_mode="none",
            use_amp=args.amp,
            plugins=plugins,
        )

    log.info(f"test score: {result['test_score']:.4f}")
    if flair.device.type == "cuda":
        log.info(f"peak GPU memory: {torch.cuda.max_memory_allocated(flair.device) / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
