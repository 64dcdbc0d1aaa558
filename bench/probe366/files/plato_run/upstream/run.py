#!/usr/bin/env python
# -*- coding: utf-8 -*-
"""
Running scripts.

PyTorch port of PLATO (Bao et al., 2020): "PLATO: Pre-trained Dialogue
Generation Model with Discrete Latent Variable". The original release is in
PaddlePaddle; the layout (args / data / models / trainer) is kept as-is.
"""

import argparse
import json
import os

import numpy as np
import torch

from plato.args import parse_args
from plato.args import str2bool
from plato.data.data_loader import DataLoader
from plato.data.dataset import Dataset
from plato.data.dataset import LazyDataset
from plato.data.field import BPETextField
from plato.trainer import Trainer
from plato.models.model_base import ModelBase
from plato.models.generator import Generator
import plato.modules.parallel as parallel


def main():
    parser = argparse.ArgumentParser()

    parser.add_argument("--do_train", type=str2bool, default=False,
                        help="Whether to run trainning.")
    parser.add_argument("--do_test", type=str2bool, default=False,
                        help="Whether to run evaluation on the test dataset.")
    parser.add_argument("--do_infer", type=str2bool, default=False,
                        help="Whether to run inference on the test dataset.")
    parser.add_argument("--num_infer_batches", type=int, default=None,
                        help="The number of batches need to infer.\n"
                        "Stay 'None': infer on entrie test dataset.")
    parser.add_argument("--hparams_file", type=str, default=None,
                        help="Loading hparams setting from file(.json format).")
    parser.add_argument("--use_gpu", type=str2bool, default=True,
                        help="Whether to use GPUs (falls back to CPU if none found).")
    parser.add_argument("--use_data_distributed", type=str2bool, default=False,
                        help="Whether to use data distributed (one process per GPU).")
    BPETextField.add_cmdline_argument(parser)
    Dataset.add_cmdline_argument(parser)
    Trainer.add_cmdline_argument(parser)
    ModelBase.add_cmdline_argument(parser)
    Generator.add_cmdline_argument(parser)

    hparams = parse_args(parser)

    if hparams.use_data_distributed:
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.distributed.init_process_group(backend="nccl", init_method="env://")
        torch.cuda.set_device(local_rank)
        hparams.device = torch.device(f"cuda:{local_rank}")
        dev_count = torch.distributed.get_world_size()
        parallel.Env().local_rank = local_rank
    else:
        hparams.use_gpu = hparams.use_gpu and torch.cuda.is_available()
        hparams.device = torch.device("cuda" if hparams.use_gpu else "cpu")
        local_rank = 0
        dev_count = 1
    hparams.local_rank = local_rank
    hparams.dev_count = dev_count

    if hparams.seed is not None:
        np.random.seed(hparams.seed)
        torch.manual_seed(hparams.seed)

    print(json.dumps(hparams, indent=2))

    if not os.path.exists(hparams.save_dir):
        os.makedirs(hparams.save_dir, exist_ok=True)
    hparams.save(os.path.join(hparams.save_dir, "hparams.json"))

    bpe = BPETextField(hparams.BPETextField)
    hparams.Model.num_token_embeddings = bpe.vocab_size

    generator = Generator.create(hparams.Generator, bpe=bpe)

    COLLATE_FN = {
        "multi": bpe.collate_fn_multi_turn,
        "multi_knowledge": bpe.collate_fn_multi_turn_with_knowledge
    }
    collate_fn = COLLATE_FN[hparams.data_type]

    # Loading datasets
    if hparams.do_train:
        raw_train_file = os.path.join(hparams.data_dir, "dial.train")
        train_file = raw_train_file + f".{hparams.tokenizer_type}.jsonl"
        assert os.path.exists(train_file), f"{train_file} isn't exist"
        train_dataset = LazyDataset(train_file)
        train_loader = DataLoader(train_dataset, hparams.Trainer, collate_fn=collate_fn, is_train=True)
        raw_valid_file = os.path.join(hparams.data_dir, "dial.valid")
        valid_file = raw_valid_file + f".{hparams.tokenizer_type}.jsonl"
        assert os.path.exists(valid_file), f"{valid_file} isn't exist"
        valid_dataset = LazyDataset(valid_file)
        valid_loader = DataLoader(valid_dataset, hparams.Trainer, collate_fn=collate_fn)

    if hparams.do_infer or hparams.do_test:
        raw_test_file = os.path.join(hparams.data_dir, "dial.test")
        test_file = raw_test_file + f".{hparams.tokenizer_type}.jsonl"
        assert os.path.exists(test_file), f"{test_file} isn't exist"
        test_dataset = LazyDataset(test_file)
        test_loader = DataLoader(test_dataset, hparams.Trainer, collate_fn=collate_fn, is_test=hparams.do_infer)

    def to_tensor(array):
        array = torch.tensor(array)
        return array.cuda() if hparams.use_gpu else array

    # Construct Model
    model = ModelBase.create(hparams, generator=generator)

    # Construct Trainer
    trainer = Trainer(model, to_tensor, hparams.Trainer)

    if hparams.do_train:
        # Training process
        for epoch in range(hparams.num_epochs):
            trainer.train_epoch(train_loader, valid_loader)

    if hparams.do_test:
        # Validation process
        trainer.evaluate(test_loader, need_save=False)

    if hparams.do_infer:
        # Inference process
        def split(xs, sep, pad):
            """ Split id list by separator. """
            out, o = [], []
            for x in xs:
                if x == pad:
                    continue
                if x != sep:
                    o.append(x)
                else:
                    if len(o) > 0:
                        out.append(list(o))
                        o = []
            if len(o) > 0:
                out.append(list(o))
            assert(all(len(o) > 0 for o in out))
            return out

        def parse_context(batch):
            """ Parse context. """
            return bpe.denumericalize([split(xs, bpe.eos_id, bpe.pad_id)
                                       for xs in batch.tolist()])

        def parse_text(batch):
            """ Parse text. """
            return bpe.denumericalize(batch.tolist())

        infer_parse_dict = {
            "src": parse_context,
            "tgt": parse_text,
            "preds": parse_text
        }
        trainer.infer(test_loader, infer_parse_dict, num_batches=hparams.num_infer_batches)


if __name__ == "__main__":
    main()
