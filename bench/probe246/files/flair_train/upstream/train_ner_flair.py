"""Train Flair sequence taggers for the NER stage of the IE pipeline.

Two recipes:

  * ``flert``   - fine-tune xlm-roberta-large with document context (FLERT, Schweter & Akbik 2020)
  * ``classic`` - BiLSTM-CRF over stacked GloVe + Flair contextual string embeddings

    python train_ner_flair.py --recipe flert --corpus conll03 --out resources/taggers/flert-conll03
    python train_ner_flair.py --recipe classic --corpus wnut17 --gpu 1
"""
import argparse
import logging
import os
from pathlib import Path

import flair
import torch
from flair.data import Corpus, Sentence
from flair.datasets import CONLL_03, WNUT_17, ColumnCorpus
from flair.embeddings import (
    FlairEmbeddings,
    StackedEmbeddings,
    TransformerWordEmbeddings,
    WordEmbeddings,
)
from flair.models import SequenceTagger
from flair.trainers import ModelTrainer

log = logging.getLogger("flair")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--recipe", choices=["flert", "classic"], default="flert")
    p.add_argument("--corpus", choices=["conll03", "wnut17", "custom"], default="conll03")
    p.add_argument("--data_folder", type=str, default="resources/tasks")
    p.add_argument("--out", type=str, default="resources/taggers/ner")
    p.add_argument("--gpu", type=int, default=0, help="index of the GPU to train on")
    p.add_argument("--max_epochs", type=int, default=20)
    p.add_argument("--mini_batch_size", type=int, default=4)
    p.add_argument("--mini_batch_chunk_size", type=int, default=1, help="split batches to fit in GPU memory")
    p.add_argument("--lr", type=float, default=5.0e-6)
    p.add_argument("--amp", action="store_true", help="mixed precision (fp16) training")
    p.add_argument("--seed", type=int, default=1)
    return p.parse_args()


def select_device(gpu: int) -> torch.device:
    if gpu >= 0 and torch.cuda.is_available():
        if gpu >= torch.cuda.device_count():
            raise ValueError(f"--gpu {gpu} but only {torch.cuda.device_count()} GPUs are visible")
        return torch.device(f"cuda:{gpu}")
    log.warning("CUDA not available - training on CPU will take days for the FLERT recipe")
    return torch.device("cpu")


def load_corpus(name: str, data_folder: str) -> Corpus:
    if name == "conll03":
        return CONLL_03(base_path=data_folder)
    if name == "wnut17":
        return WNUT_17(base_path=data_folder)
    columns = {0: "text", 1: "ner"}
    return ColumnCorpus(
        Path(data_folder) / "custom_ner",
        columns,
        train_file="train.txt",
        dev_file="dev.txt",
        test_file="test.txt",
        document_separator_token="-DOCSTART-",
    )


def build_flert_tagger(label_dict, label_type: str) -> SequenceTagger:
    embeddings = TransformerWordEmbeddings(
        model="xlm-roberta-large",
        layers="-1",
        subtoken_pooling="first",
        fine_tune=True,
        use_context=True,
    )
    return SequenceTagger(
        hidden_size=256,
        embeddings=embeddings,
        tag_dictionary=label_dict,
        tag_type=label_type,
        use_crf=False,
        use_rnn=False,
        reproject_embeddings=False,
    )


def build_classic_tagger(label_dict, label_type: str) -> SequenceTagger:
    embedding_types = [
        WordEmbeddings("glove"),
        FlairEmbeddings("news-forward"),
        FlairEmbeddings("news-backward"),
    ]
    embeddings = StackedEmbeddings(embeddings=embedding_types)
    return SequenceTagger(
        hidden_size=256,
        embeddings=embeddings,
        tag_dictionary=label_dict,
        tag_type=label_type,
        use_crf=True,
    )


def main():
    args = parse_args()
    flair.set_seed(args.seed)

    flair.device = select_device(args.gpu)
    log.info(f"flair.device = {flair.device}")

    corpus = load_corpus(args.corpus, args.data_folder)
    label_type = "ner"
    label_dict = corpus.make_label_dictionary(label_type=label_type, add_unk=False)
    log.info(label_dict)

    os.makedirs(args.out, exist_ok=True)

    if args.recipe == "flert":
        tagger = build_flert_tagger(label_dict, label_type)
        trainer = ModelTrainer(tagger, corpus)
        trainer.fine_tune(
            args.out,
            learning_rate=args.lr,
            mini_batch_size=args.mini_batch_size,
            mini_batch_chunk_size=args.mini_batch_chunk_size,
            max_epochs=args.max_epochs,
            use_amp=args.amp,
        )
    else:
        tagger = build_classic_tagger(label_dict, label_type)
        trainer = ModelTrainer(tagger, corpus)
        # keep the (expensive) Flair string embeddings on the GPU between epochs
        trainer.train(
            args.out,
            learning_rate=0.1,
            mini_batch_size=32,
            max_epochs=150,
            embeddings_storage_mode="gpu",
        )

    # quick smoke test of the final model on the same device it was trained on
    tagger = SequenceTagger.load(os.path.join(args.out, "final-model.pt"))
    sentence = Sentence("George Washington went to Washington to meet Angela Merkel .")
    tagger.predict(sentence)
    print(sentence.to_tagged_string())

    if flair.device.type == "cuda":
        log.info(f"peak GPU memory: {torch.cuda.max_memory_allocated(flair.device) / 2**30:.1f} GiB")


def load_for_inference(model_path: str, gpu: int = 0) -> SequenceTagger:
    """Helper used by the pipeline service: load a tagger straight onto a GPU."""
    flair.device = torch.device("cuda:%d" % gpu) if torch.cuda.is_available() else torch.device("cpu")
    tagger = SequenceTagger.load(model_path)
    tagger.eval()
    return tagger


if __name__ == "__main__":
    main()
