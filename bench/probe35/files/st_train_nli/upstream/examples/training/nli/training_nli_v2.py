"""
The system trains a SentenceTransformer model on the SNLI + MultiNLI (AllNLI) dataset
with MultipleNegativesRankingLoss. Entailment pairs are used as positive pairs, the
contradicting hypothesis is added as a hard negative.

The model is evaluated on the STS benchmark dev set while training and on the STS
benchmark test set at the end.

Usage:
python training_nli_v2.py

OR
python training_nli_v2.py --model_name pretrained_transformer_model_name
"""
import argparse
import csv
import gzip
import logging
import math
import os
import random
from datetime import datetime

import numpy as np
import torch
from torch.utils.data import DataLoader

from sentence_transformers import LoggingHandler, SentenceTransformer, losses, models, util
from sentence_transformers.datasets import NoDuplicatesDataLoader
from sentence_transformers.evaluation import EmbeddingSimilarityEvaluator
from sentence_transformers.readers import InputExample

#### Just some code to print debug information to stdout
logging.basicConfig(
    format="%(asctime)s - %(message)s", datefmt="%Y-%m-%d %H:%M:%S", level=logging.INFO, handlers=[LoggingHandler()]
)
logger = logging.getLogger(__name__)
#### /print debug information to stdout


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name", default="distilroberta-base")
    parser.add_argument("--train_batch_size", type=int, default=128,
                        help="The larger you select this, the better the results (usually). But it requires more GPU memory")
    parser.add_argument("--max_seq_length", type=int, default=75)
    parser.add_argument("--num_epochs", type=int, default=1)
    parser.add_argument("--warmup_ratio", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--use_amp", action="store_true", help="Use fp16 mixed precision on the GPU")
    parser.add_argument("--output_dir", default="output")
    return parser.parse_args()


def set_seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def add_to_samples(train_data, sent1, sent2, label):
    if sent1 not in train_data:
        train_data[sent1] = {"contradiction": set(), "entailment": set(), "neutral": set()}
    train_data[sent1][label].add(sent2)


def read_all_nli(nli_dataset_path):
    train_data = {}
    with gzip.open(nli_dataset_path, "rt", encoding="utf8") as fIn:
        reader = csv.DictReader(fIn, delimiter="\t", quoting=csv.QUOTE_NONE)
        for row in reader:
            if row["split"] == "train":
                sent1 = row["sentence1"].strip()
                sent2 = row["sentence2"].strip()
                add_to_samples(train_data, sent1, sent2, row["label"])
                add_to_samples(train_data, sent2, sent1, row["label"])  # Also add the opposite

    train_samples = []
    for sent1, others in train_data.items():
        if len(others["entailment"]) > 0 and len(others["contradiction"]) > 0:
            train_samples.append(
                InputExample(
                    texts=[sent1, random.choice(list(others["entailment"])), random.choice(list(others["contradiction"]))]
                )
            )
            train_samples.append(
                InputExample(
                    texts=[random.choice(list(others["entailment"])), sent1, random.choice(list(others["contradiction"]))]
                )
            )
    return train_samples


def read_sts(sts_dataset_path, split):
    samples = []
    with gzip.open(sts_dataset_path, "rt", encoding="utf8") as fIn:
        reader = csv.DictReader(fIn, delimiter="\t", quoting=csv.QUOTE_NONE)
        for row in reader:
            if row["split"] == split:
                score = float(row["score"]) / 5.0  # Normalize score to range 0 ... 1
                samples.append(InputExample(texts=[row["sentence1"], row["sentence2"]], label=score))
    return samples


def main():
    args = parse_args()
    set_seed(args.seed)

    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda":
        logger.info("Training on %s", torch.cuda.get_device_name(0))
    else:
        logger.warning("No accelerator found - training on CPU will be very slow")

    model_save_path = os.path.join(
        args.output_dir,
        "training_nli_v2_" + args.model_name.replace("/", "-") + "-" + datetime.now().strftime("%Y-%m-%d_%H-%M-%S"),
    )

    # Here we define our SentenceTransformer model
    word_embedding_model = models.Transformer(args.model_name, max_seq_length=args.max_seq_length)
    pooling_model = models.Pooling(word_embedding_model.get_word_embedding_dimension(), pooling_mode="mean")
    model = SentenceTransformer(modules=[word_embedding_model, pooling_model], device=device)

    # Check if dataset exists. If not, download and extract it
    nli_dataset_path = "data/AllNLI.tsv.gz"
    sts_dataset_path = "data/stsbenchmark.tsv.gz"
    if not os.path.exists(nli_dataset_path):
        util.http_get("https://sbert.net/datasets/AllNLI.tsv.gz", nli_dataset_path)
    if not os.path.exists(sts_dataset_path):
        util.http_get("https://sbert.net/datasets/stsbenchmark.tsv.gz", sts_dataset_path)

    logger.info("Read AllNLI train dataset")
    train_samples = read_all_nli(nli_dataset_path)
    logger.info("Train samples: {}".format(len(train_samples)))

    # Special data loader that avoid duplicates within a batch
    train_dataloader = NoDuplicatesDataLoader(train_samples, batch_size=args.train_batch_size)

    # Our training loss
    train_loss = losses.MultipleNegativesRankingLoss(model)

    dev_samples = read_sts(sts_dataset_path, "dev")
    dev_evaluator = EmbeddingSimilarityEvaluator.from_input_examples(
        dev_samples, batch_size=args.train_batch_size, name="sts-dev"
    )

    # Configure the training
    warmup_steps = math.ceil(len(train_dataloader) * args.num_epochs * args.warmup_ratio)
    logger.info("Warmup-steps: {}".format(warmup_steps))

    # Train the model
    model.fit(
        train_objectives=[(train_dataloader, train_loss)],
        evaluator=dev_evaluator,
        epochs=args.num_epochs,
        evaluation_steps=int(len(train_dataloader) * 0.1),
        warmup_steps=warmup_steps,
        output_path=model_save_path,
        use_amp=args.use_amp,  # Set to True, if your GPU supports FP16 operations
    )

    ##############################################################################
    #
    # Load the stored model and evaluate its performance on STS benchmark dataset
    #
    ##############################################################################

    test_samples = read_sts(sts_dataset_path, "test")
    model = SentenceTransformer(model_save_path, device=device)
    test_evaluator = EmbeddingSimilarityEvaluator.from_input_examples(
        test_samples, batch_size=args.train_batch_size, name="sts-test"
    )
    test_evaluator(model, output_path=model_save_path)

    if model.device.type == "cuda":
        logger.info("Peak GPU memory: %.2f GB", torch.cuda.max_memory_allocated() / 1024**3)


if __name__ == "__main__":
    main()
