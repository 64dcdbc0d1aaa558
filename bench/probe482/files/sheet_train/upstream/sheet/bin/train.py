#!/usr/bin/env python3
# -*- coding: utf-8 -*-

# Copyright 2024 Wen-Chin Huang
#  MIT License (https://opensource.org/licenses/MIT)

"""Train speech quality assessment model."""

import argparse
import logging
import os
import sys

import humanfriendly
import numpy as np
import sheet
import sheet.collaters
import sheet.criterions
import sheet.datasets
import sheet.models
import sheet.trainers
import torch
import yaml
from sheet.schedulers import get_scheduler
from torch.utils.data import DataLoader

# set to avoid matplotlib error in CLI environment
import matplotlib

matplotlib.use("Agg")


def main():
    """Run training process."""
    parser = argparse.ArgumentParser(
        description=(
            "Train speech quality assessment model (See detail in bin/train.py)."
        )
    )
    parser.add_argument(
        "--train",
        required=True,
        type=str,
        help=("training data csv file path."),
    )
    parser.add_argument(
        "--dev",
        required=True,
        type=str,
        help=("development data csv file path."),
    )
    parser.add_argument(
        "--outdir",
        type=str,
        required=True,
        help="directory to save checkpoints.",
    )
    parser.add_argument(
        "--config",
        type=str,
        required=True,
        help="yaml format configuration file.",
    )
    parser.add_argument(
        "--additional-config",
        type=str,
        default=None,
        help="yaml format configuration file (additional; for second-stage pretraining).",
    )
    parser.add_argument(
        "--init-checkpoint",
        default="",
        type=str,
        nargs="?",
        help='checkpoint file path to initialize pretrained params. (default="")',
    )
    parser.add_argument(
        "--resume",
        default="",
        type=str,
        nargs="?",
        help='checkpoint file path to resume training. (default="")',
    )
    parser.add_argument(
        "--verbose",
        type=int,
        default=1,
        help="logging level. higher is more logging. (default=1)",
    )
    parser.add_argument(
        "--rank",
        "--local_rank",
        default=0,
        type=int,
        help="rank for distributed training. no need to explictly specify.",
    )
    parser.add_argument(
        "--seed",
        default=1337,
        type=int,
        help="seed.",
    )
    args = parser.parse_args()

    args.distributed = False
    if not torch.cuda.is_available():
        device = torch.device("cpu")
    else:
        device = torch.device("cuda")
        # effective when using fixed size inputs
        # see https://discuss.pytorch.org/t/what-does-torch-backends-cudnn-benchmark-do/5936
        torch.backends.cudnn.benchmark = True
        torch.cuda.set_device(args.rank)
        # setup for distributed training
        # see example: https://github.com/NVIDIA/apex/tree/master/examples/simple/distributed
        if "WORLD_SIZE" in os.environ:
            args.world_size = int(os.environ["WORLD_SIZE"])
            args.distributed = args.world_size > 1
        if args.distributed:
            torch.distributed.init_process_group(backend="nccl", init_method="env://")

    # suppress logging for distributed training
    if args.rank != 0:
        sys.stdout = open(os.devnull, "w")

    # set logger
    if args.verbose > 1:
        logging.basicConfig(
            level=logging.DEBUG,
            stream=sys.stdout,
            format="%(asctime)s (%(module)s:%(lineno)d) %(levelname)s: %(message)s",
        )
    elif args.verbose > 0:
        logging.basicConfig(
            level=logging.INFO,
            stream=sys.stdout,
            format="%(asctime)s (%(module)s:%(lineno)d) %(levelname)s: %(message)s",
        )
    else:
        logging.basicConfig(
            level=logging.WARN,
            stream=sys.stdout,
            format="%(asctime)s (%(module)s:%(lineno)d) %(levelname)s: %(message)s",
        )
        logging.warning("Skip DEBUG/INFO messages")

    # fix seed
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    if torch.cuda.is_available():
        torch.backends.cudnn.deterministic = True

    # check directory existence
    if not os.path.exists(args.outdir):
        os.makedirs(args.outdir)

    # load main config
    with open(args.config) as f:
        config = yaml.load(f, Loader=yaml.Loader)
    config.update(vars(args))

    # load additional config
    if args.additional_config is not None:
        with open(args.additional_config) as f:
            additional_config = yaml.load(f, Loader=yaml.Loader)
        config.update(additional_config)

    # get dataset
    train_dataset = sheet.datasets.NonIntrusiveDataset(
        csv_path=args.train,
        target_sample_rate=config["sampling_rate"],
        model_input=config["model_input"],
        wav_only=config.get("wav_only", False),
        use_phoneme=config.get("use_phoneme", False),
        symbols=config.get("symbols", None),
        allow_cache=config["allow_cache"],
        load_wav_cache=config.get("load_wav_cache", False),
    )
    logging.info(f"The number of training files = {len(train_dataset)}.")
    dev_dataset = sheet.datasets.NonIntrusiveDataset(
        csv_path=args.dev,
        target_sample_rate=config["sampling_rate"],
        model_input=config["model_input"],
        wav_only=True,
        allow_cache=config["allow_cache"],
    )
    logging.info(f"The number of development files = {len(dev_dataset)}.")

    # write config
    config["version"] = sheet.__version__
    with open(os.path.join(args.outdir, "config.yml"), "w") as f:
        yaml.dump(config, f, Dumper=yaml.Dumper)
    for key, value in config.items():
        logging.info(f"{key} = {value}")

    # get data loader
    collater_class = getattr(
        sheet.collaters,
        config.get("collater_type", "NonIntrusiveCollater"),
    )
    collater = collater_class(config["padding_mode"])
    sampler = {"train": None, "dev": None}
    if args.distributed:
        # setup sampler for distributed training
        from torch.utils.data.distributed import DistributedSampler

        sampler["train"] = DistributedSampler(
            dataset=train_dataset,
            num_replicas=args.world_size,
            rank=args.rank,
            shuffle=True,
        )
    data_loader = {
        "train": DataLoader(
            dataset=train_dataset,
            shuffle=False if args.distributed else True,
            collate_fn=collater,
            batch_size=config["train_batch_size"],
            num_workers=config["num_workers"],
            sampler=sampler["train"],
            pin_memory=config["pin_memory"],
        ),
        "dev": DataLoader(
            dataset=dev_dataset,
            shuffle=False,
            collate_fn=collater,
            batch_size=1,
            num_workers=config["num_workers"],
            sampler=sampler["dev"],
            pin_memory=config["pin_memory"],
        ),
    }

    # define models
    model_class = getattr(
        sheet.models,
        config["model_type"],
    )
    model = model_class(
        config["model_input"],
        num_listeners=config.get("num_listeners", None),
        num_domains=config.get("num_domains", None),
        **config["model_params"],
    ).to(device)

    # load pretrained model
    if args.init_checkpoint != "":
        pretrained_model_state_dict = torch.load(args.init_checkpoint, map_location="cpu")["model"]
        model.load_state_dict(pretrained_model_state_dict, strict=False)
        logging.info(f"Loaded pretrained params from {args.init_checkpoint}.")

    # define criterions
    criterions = {
        criterion_type: getattr(sheet.criterions, criterion_type)(**criterion_params)
        for criterion_type, criterion_params in config["criterions"].items()
    }

    # define optimizers and schedulers
    optimizer_class = getattr(
        torch.optim,
        # keep compatibility
        config.get("optimizer_type", "Adam"),
    )
    optimizer = optimizer_class(
        model.parameters(),
        **config["optimizer_params"],
    )
    scheduler = get_scheduler(
        optimizer,
        config.get("scheduler_type", "multistep"),
        config["train_max_steps"],
        config["scheduler_params"],
    )

    if args.distributed:
        # wrap model for distributed training
        try:
            from apex.parallel import DistributedDataParallel
        except ImportError:
            raise ImportError(
                "apex is not installed. please check https://github.com/NVIDIA/apex."
            )
        model = DistributedDataParallel(model)

    # show settings
    logging.info(model)
    logging.info(
        "Model parameters: {}".format(
            humanfriendly.format_size(sum(p.numel() for p in model.parameters()))
        )
    )
    logging.info(optimizer)
    logging.info(scheduler)
    for criterion_type, criterion in criterions.items():
        logging.info(criterion)

    # define trainer
    trainer_class = getattr(
        sheet.trainers,
        config.get("trainer_type", "NonIntrusiveEstimatorTrainer"),
    )
    trainer = trainer_class(
        steps=0,
        epochs=0,
        data_loader=data_loader,
        sampler=sampler,
        model=model,
        criterion=criterions,
        optimizer=optimizer,
        scheduler=scheduler,
        config=config,
        device=device,
    )

    # resume from checkpoint
    if len(args.resume) != 0:
        trainer.load_checkpoint(args.resume)
        logging.info(f"Successfully resumed from {args.resume}.")

    # run training loop
    try:
        trainer.run()
    finally:
        trainer.save_checkpoint(
            os.path.join(config["outdir"], f"checkpoint-{trainer.steps}steps.pkl")
        )
        logging.info(f"Successfully saved checkpoint @ {trainer.steps}steps.")


if __name__ == "__main__":
    main()
