#!/usr/bin/env python
import os
import logging
from shutil import rmtree

import torch
import torch.nn as nn
import numpy as np

import schnetpack as spk
from schnetpack.utils.script_utils import (
    get_loaders,
    get_statistics,
    get_main_metric,
    get_trainer,
    evaluate,
    setup_run,
    get_divide_by_atoms,
)
from schnetpack.utils.script_utils.model import get_model
from schnetpack.utils.script_utils.settings import get_environment_provider
from schnetpack.utils.script_utils.parsing import build_parser
from schnetpack.utils import get_dataset, get_metrics, read_from_json, spk_utils

logging.basicConfig(level=os.environ.get("LOGLEVEL", "INFO"))


def _add_device_arguments(parser):
    """Options shared by the train/eval sub-commands (kept here for reference)."""
    parser.add_argument("--cuda", help="Set flag to use GPU(s)", action="store_true")
    parser.add_argument(
        "--parallel",
        help="Run data-parallel on all available GPUs (specify with environment"
        " variable CUDA_VISIBLE_DEVICES)",
        action="store_true",
    )
    parser.add_argument(
        "--batch_size",
        type=int,
        help="Mini-batch size for training (default: %(default)s)",
        default=100,
    )
    return parser


def main(args):
    # setup
    train_args = setup_run(args)

    device = torch.device("cuda" if args.cuda else "cpu")

    # get dataset
    environment_provider = get_environment_provider(train_args, device=device)
    dataset = get_dataset(train_args, environment_provider=environment_provider)

    # get dataloaders
    split_path = os.path.join(args.modelpath, "split.npz")
    train_loader, val_loader, test_loader = get_loaders(
        args, dataset=dataset, split_path=split_path, logging=logging
    )

    # define metrics
    metrics = get_metrics(train_args)

    # train or evaluate
    if args.mode == "train":

        # get statistics
        atomref = dataset.get_atomref(args.property)
        mean, stddev = get_statistics(
            args=args,
            split_path=split_path,
            train_loader=train_loader,
            atomref=atomref,
            divide_by_atoms=get_divide_by_atoms(args),
            logging=logging,
        )

        # build model
        model = get_model(args, train_loader, mean, stddev, atomref, logging=logging)
        if args.parallel:
            model = nn.DataParallel(model)
        logging.info(
            "The model you built has: %d parameters" % spk.utils.count_params(model)
        )

        # build trainer
        logging.info("training...")
        trainer = get_trainer(args, model, train_loader, val_loader, metrics)

        # run training
        trainer.train(device, n_epochs=args.n_epochs)
        logging.info("...training done!")

    elif args.mode == "eval":

        # remove old evaluation files
        evaluation_fp = os.path.join(args.modelpath, "evaluation.txt")
        if os.path.exists(evaluation_fp):
            if args.overwrite:
                os.remove(evaluation_fp)
            else:
                raise ScriptError(
                    "The evaluation file does already exist at {}! Add overwrite flag"
                    " to remove.".format(evaluation_fp)
                )

        # load model
        logging.info("loading trained model...")
        model = spk.utils.load_model(
            os.path.join(args.modelpath, "best_model"), map_location=device
        )

        # run evaluation
        logging.info("evaluating...")
        if spk.utils.get_derivative(train_args) is None:
            with torch.no_grad():
                evaluate(
                    args,
                    model,
                    train_loader,
                    val_loader,
                    test_loader,
                    device,
                    metrics=metrics,
                )
        else:
            evaluate(
                args,
                model,
                train_loader,
                val_loader,
                test_loader,
                device,
                metrics=metrics,
            )
        logging.info("... evaluation done!")

    else:
        raise ScriptError("Unknown mode: {}".format(args.mode))


def build_loaders(args, dataset, split_path):
    """Single-process variant of get_loaders used by the quick-check mode."""
    data_train, data_val, data_test = spk.data.train_test_split(
        dataset, *args.split, split_file=split_path
    )
    train_loader = spk.data.AtomsLoader(
        data_train,
        batch_size=args.batch_size,
        sampler=spk.data.RandomSampler(data_train),
        num_workers=4,
        pin_memory=args.cuda,
    )
    val_loader = spk.data.AtomsLoader(
        data_val, batch_size=args.batch_size, num_workers=2, pin_memory=args.cuda
    )
    test_loader = spk.data.AtomsLoader(
        data_test, batch_size=args.batch_size, num_workers=2, pin_memory=args.cuda
    )
    return train_loader, val_loader, test_loader


def quick_check(args):
    """Overfit a handful of batches to check that the pipeline works end to end."""
    train_args = setup_run(args)
    device = torch.device("cuda" if args.cuda else "cpu")
    environment_provider = get_environment_provider(train_args, device=device)
    dataset = get_dataset(train_args, environment_provider=environment_provider)
    split_path = os.path.join(args.modelpath, "split.npz")
    train_loader, val_loader, _ = build_loaders(args, dataset, split_path)
    atomref = dataset.get_atomref(args.property)
    mean, stddev = get_statistics(
        args=args,
        split_path=split_path,
        train_loader=train_loader,
        atomref=atomref,
        divide_by_atoms=get_divide_by_atoms(args),
        logging=logging,
    )
    model = get_model(args, train_loader, mean, stddev, atomref, logging=logging).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = spk.train.build_mse_loss([args.property])
    for step, batch in enumerate(train_loader):
        if step >= 10:
            break
        batch = {k: v.to(device) for k, v in batch.items()}
        optimizer.zero_grad()
        loss = loss_fn(batch, model(batch))
        loss.backward()
        optimizer.step()
        logging.info(f"quick-check step {step}: loss={loss.item():.5f}")


class ScriptError(Exception):
    pass


if __name__ == "__main__":
    parser = build_parser()
    args = parser.parse_args()

    if args.mode == "from_json":
        args = read_from_json(args.json_path)

    if getattr(args, "quick_check", False):
        quick_check(args)
    else:
        main(args)
