#!/usr/bin/env python
from __future__ import absolute_import

import argparse
import os
import sys

import torch

import laia.common.logging as log
from laia.common.arguments import add_argument, add_defaults, args
from laia.common.arguments_types import str2bool
from laia.common.loader import ModelLoader, CheckpointLoader
from laia.data import ImageDataLoader, ImageFromListDataset
from laia.decoders import CTCGreedyDecoder
from laia.engine.feeders import ImageFeeder, ItemFeeder
from laia.experiments import Experiment
from laia.utils import SymbolsTable, ImageToTensor

logger = log.get_logger("laia.scripts.htr.decode_ctc")


def main():
    add_defaults("batch_size", "gpu", "train_path", logging_level="WARNING")
    add_argument(
        "syms",
        type=argparse.FileType("r"),
        help="Symbols table mapping from strings to integers",
    )
    add_argument("img_dirs", type=str, nargs="+", help="Directory containing word images")
    add_argument(
        "img_list",
        type=argparse.FileType("r"),
        help="File or list containing images to decode",
    )
    add_argument(
        "--model_filename", type=str, default="model", help="File name of the model"
    )
    add_argument(
        "--checkpoint",
        type=str,
        default="experiment.ckpt.lowest-valid-cer*",
        help="Name of the model checkpoint to use, can be a glob pattern",
    )
    add_argument(
        "--source",
        type=str,
        default="experiment",
        choices=["experiment", "model"],
        help="Type of class which generated the checkpoint",
    )
    add_argument(
        "--print_img_ids",
        type=str2bool,
        nargs="?",
        const=True,
        default=True,
        help="Print output with the associated image id",
    )
    add_argument(
        "--separator",
        type=str,
        default=" ",
        help="Use this string as the separator between the ids and output",
    )
    add_argument("--join_str", type=str, help="Join the output using this")
    add_argument(
        "--use_letters", action="store_true", help="Print the output with letters"
    )
    add_argument(
        "--output_space", default=" ", help="Output symbol for the space token"
    )
    add_argument(
        "--fp16",
        type=str2bool,
        nargs="?",
        const=True,
        default=False,
        help="Run the forward pass under torch.cuda.amp.autocast (GPU only)",
    )
    args_ = args()

    syms = SymbolsTable(args_.syms)
    device = torch.device("cuda:{}".format(args_.gpu - 1) if args_.gpu else "cpu")

    model = ModelLoader(
        args_.train_path, filename=args_.model_filename, device=device
    ).load()
    if model is None:
        log.error("Could not find the model")
        exit(1)
    state = CheckpointLoader(device=device).load_by(
        os.path.join(args_.train_path, args_.checkpoint)
    )
    model.load_state_dict(
        state if args_.source == "model" else Experiment.get_model_state_dict(state)
    )
    model = model.to(device)
    model.eval()

    dataset = ImageFromListDataset(
        args_.img_list, img_dirs=args_.img_dirs, img_transform=ImageToTensor()
    )
    dataset_loader = ImageDataLoader(
        dataset=dataset, image_channels=1, num_workers=8, pin_memory=True
    )

    decoder = CTCGreedyDecoder()
    batch_input_fn = ImageFeeder(device=device, parent_feeder=ItemFeeder("img"))

    for batch in dataset_loader:
        batch_input = batch_input_fn(batch)
        with torch.no_grad():
            with torch.cuda.amp.autocast(enabled=args_.fp16):
                batch_output = model(batch_input)
        batch_decode = decoder(batch_output)
        for img_id, out in zip(batch["id"], batch_decode):
            if args_.use_letters:
                out = [str(syms[val]) for val in out]
                if args_.output_space is not None:
                    out = [args_.output_space if sym == "<space>" else sym for sym in out]
            if args_.join_str is not None:
                out = args_.join_str.join(str(x) for x in out)
            if args_.print_img_ids:
                print(img_id, out, sep=args_.separator)
            else:
                print(out)
        sys.stdout.flush()


def checkpoint_to_cpu(src, dst):
    """Utility kept for users that trained on a GPU and decode on a laptop."""
    state = torch.load(src, map_location="cpu")
    for k, v in list(state.items()):
        if isinstance(v, torch.Tensor) and v.is_cuda:
            state[k] = v.cpu()
    torch.save(state, dst)


if __name__ == "__main__":
    main()
