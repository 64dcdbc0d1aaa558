#!/usr/bin/env python
from __future__ import absolute_import

import argparse
import os
import random
from typing import Any, Dict, Optional

import numpy as np
import torch

import laia.common.logging as log
from laia.callbacks import ProgressBar, ProgressBarGPUStats
from laia.common.arguments import add_argument, add_defaults, args, parse_kwargs_from_str
from laia.common.arguments_types import NumberInClosedRange, str2bool
from laia.common.loader import ModelLoader, StateLoader, TrainerLoader
from laia.common.saver import CheckpointSaver, ModelCheckpointSaver, RollingSaver
from laia.conditions import Lowest, MultipleOf, GEqThan, ConsecutiveNonDecreasing
from laia.data import ImageDataLoader, TextImageFromTextTableDataset
from laia.data.padding_collater import PaddingCollater
from laia.engine import Trainer, Evaluator, HtrEngineWrapper
from laia.engine.feeders import ImageFeeder, ItemFeeder
from laia.experiments.htr_experiment import HTRExperiment
from laia.hooks import Hook, HookList, action
from laia.losses.ctc_loss import CTCLoss, CTCLossImpl
from laia.utils import SymbolsTable, ImageToTensor, TextToTensor
from laia.utils.dortmund_image_to_tensor import DortmundImageToTensor

logger = log.get_logger("laia.scripts.htr.train_ctc")


def set_rng_state(seed, use_cuda):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if use_cuda:
        torch.cuda.manual_seed_all(seed)


def get_device(gpu):
    # type: (int) -> torch.device
    """--gpu N (N >= 1) means the N-th visible GPU, --gpu 0 means CPU."""
    if gpu > 0 and torch.cuda.is_available():
        return torch.device("cuda:{}".format(gpu - 1))
    if gpu > 0:
        logger.warning("CUDA is not available, training on the CPU!")
    return torch.device("cpu")


def log_device_info(device):
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        logger.info(
            "Using GPU {} ({}), compute capability {}.{}, {:.1f} GiB",
            device.index,
            props.name,
            props.major, props.minor,
            props.total_memory / 1024 ** 3,
        )
    else:
        logger.info("Using the CPU")


def build_parser():
    add_defaults(
        "batch_size",
        "learning_rate",
        "momentum",
        "gpu",
        "max_epochs",
        "seed",
        "show_progress_bar",
        "train_path",
        "train_samples_per_epoch",
        "valid_samples_per_epoch",
        "iterations_per_update",
        "save_checkpoint_interval",
        "num_rolling_checkpoints",
        "use_distortions",
        "weight_l2_penalty",
        "nesterov",
        "max_updates",
        "valid_cer_std_window_size",
        "valid_cer_std_threshold",
        "valid_map_std_window_size",
    )
    add_argument(
        "syms",
        type=argparse.FileType("r"),
        help="Symbols table mapping from strings to integers",
    )
    add_argument("img_dirs", type=str, nargs="+", help="Directory containing word images")
    add_argument(
        "tr_txt_table",
        type=argparse.FileType("r"),
        help="Character transcriptions of each training image",
    )
    add_argument(
        "va_txt_table",
        type=argparse.FileType("r"),
        help="Character transcriptions of each validation image",
    )
    add_argument(
        "--delimiters",
        type=str,
        nargs="+",
        default=["<space>"],
        help="Sequence of characters representing the word delimiters",
    )
    add_argument(
        "--early_stop_epochs",
        type=NumberInClosedRange(int, vmin=1),
        default=20,
        help="If n>0, stop training after this number of epochs "
        "without a significant improvement in the validation CER",
    )
    add_argument(
        "--optimizer",
        type=str,
        default="RMSProp",
        choices=["SGD", "RMSProp", "Adam"],
        help="Optimizer to use",
    )
    add_argument(
        "--ctc_implementation",
        type=CTCLossImpl,
        default=CTCLossImpl.PYTORCH,
        choices=list(CTCLossImpl),
        help="CTC implementation (WARP_CTC requires warpctc_pytorch)",
    )
    add_argument(
        "--average_frames",
        type=str2bool,
        nargs="?",
        const=True,
        default=False,
        help="Divide the CTC loss of each sample by its number of frames",
    )
    add_argument(
        "--cudnn_benchmark",
        type=str2bool,
        nargs="?",
        const=True,
        default=True,
        help="Let cuDNN pick the fastest convolution algorithms",
    )
    add_argument(
        "--num_workers",
        type=NumberInClosedRange(int, vmin=0),
        default=8,
        help="Number of DataLoader workers",
    )
    add_argument(
        "--model_kwargs",
        type=str,
        default="",
        help="Extra keyword arguments passed to the model (a=1,b=2)",
    )
    add_argument(
        "--model_filename", type=str, default="model", help="File name of the model"
    )
    add_argument(
        "--checkpoint",
        type=str,
        default="ckpt.lowest-valid-cer*",
        help="Name of the model checkpoint to use, can be a glob pattern",
    )


def make_optimizer(name, parameters, a):
    if name == "SGD":
        return torch.optim.SGD(
            parameters,
            lr=a.learning_rate,
            momentum=a.momentum,
            weight_decay=a.weight_l2_penalty,
            nesterov=a.nesterov,
        )
    elif name == "RMSProp":
        return torch.optim.RMSprop(
            parameters,
            lr=a.learning_rate,
            momentum=a.momentum,
            weight_decay=a.weight_l2_penalty,
        )
    elif name == "Adam":
        return torch.optim.Adam(
            parameters, lr=a.learning_rate, weight_decay=a.weight_l2_penalty
        )
    raise ValueError("Unknown optimizer {!r}".format(name))


def main():
    build_parser()
    a = args()

    use_cuda = a.gpu > 0
    device = get_device(a.gpu)
    if use_cuda:
        torch.cuda.set_device(device)
    torch.backends.cudnn.benchmark = a.cudnn_benchmark
    set_rng_state(a.seed, use_cuda)
    log_device_info(device)

    # Load model
    model = ModelLoader(
        a.train_path, filename=a.model_filename, device=device
    ).load()
    if model is None:
        logger.error("Could not find the model. Have you run pylaia-htr-create-model?")
        exit(1)
    model = model.to(device)
    model_kwargs = parse_kwargs_from_str(a.model_kwargs)
    if model_kwargs:
        logger.info("Ignoring model_kwargs at train time: {}", model_kwargs)

    # Prepare data
    syms = SymbolsTable(a.syms)
    if a.use_distortions:
        img_transform = DortmundImageToTensor(fixed_height=128)
    else:
        img_transform = ImageToTensor(fixed_height=128)
    tr_ds = TextImageFromTextTableDataset(
        a.tr_txt_table,
        a.img_dirs,
        img_transform=img_transform,
        txt_transform=TextToTensor(syms),
    )
    va_ds = TextImageFromTextTableDataset(
        a.va_txt_table,
        a.img_dirs,
        img_transform=ImageToTensor(fixed_height=128),
        txt_transform=TextToTensor(syms),
    )
    tr_ds_loader = ImageDataLoader(
        dataset=tr_ds,
        image_channels=1,
        batch_size=a.batch_size,
        num_workers=a.num_workers,
        shuffle=not bool(a.train_samples_per_epoch),
        sampler=None,
        pin_memory=use_cuda,
    )
    va_ds_loader = ImageDataLoader(
        dataset=va_ds,
        image_channels=1,
        batch_size=a.batch_size,
        num_workers=a.num_workers,
        pin_memory=use_cuda,
    )

    optimizer = make_optimizer(a.optimizer, model.parameters(), a)
    criterion = CTCLoss(
        average_frames=a.average_frames, implementation=a.ctc_implementation
    )

    # The feeder moves each batch to the training device. non_blocking only
    # helps when the DataLoader returned pinned host memory.
    batch_input_fn = ImageFeeder(
        device=device, keep_padded_tensors=False, parent_feeder=ItemFeeder("img")
    )
    batch_target_fn = ItemFeeder("txt")

    trainer = Trainer(
        model=model,
        criterion=criterion,
        optimizer=optimizer,
        data_loader=tr_ds_loader,
        batch_input_fn=batch_input_fn,
        batch_target_fn=batch_target_fn,
        batch_id_fn=ItemFeeder("id"),
        progress_bar="Train" if a.show_progress_bar else None,
        iterations_per_update=a.iterations_per_update,
    )
    evaluator = Evaluator(
        model=model,
        data_loader=va_ds_loader,
        batch_input_fn=batch_input_fn,
        batch_target_fn=batch_target_fn,
        batch_id_fn=ItemFeeder("id"),
        progress_bar="Valid" if a.show_progress_bar else None,
    )

    engine_wrapper = HtrEngineWrapper(trainer, evaluator)
    engine_wrapper.set_word_delimiters([syms[sym] for sym in a.delimiters])

    lowest_cer_saver = ModelCheckpointSaver(
        RollingSaver(
            CheckpointSaver(os.path.join(a.train_path, "ckpt.lowest-valid-cer")),
            keep=a.num_rolling_checkpoints,
        ),
        model,
    )
    lowest_wer_saver = ModelCheckpointSaver(
        RollingSaver(
            CheckpointSaver(os.path.join(a.train_path, "ckpt.lowest-valid-wer")),
            keep=a.num_rolling_checkpoints,
        ),
        model,
    )

    @action
    def save_ckpt(saver, epoch, best_cer=None):
        saver.save(suffix=epoch)

    # Set hooks
    trainer.add_hook(
        "on_end_epoch",
        HookList(
            Hook(Lowest(engine_wrapper.valid_cer(), name="Lowest CER"), save_ckpt, lowest_cer_saver),
            Hook(Lowest(engine_wrapper.valid_wer(), name="Lowest WER"), save_ckpt, lowest_wer_saver),
        ),
    )
    if a.early_stop_epochs:
        trainer.add_hook(
            "on_end_epoch",
            Hook(
                ConsecutiveNonDecreasing(engine_wrapper.valid_cer(), a.early_stop_epochs),
                trainer.stop,
            ),
        )
    if a.max_epochs:
        trainer.add_hook("on_start_epoch", Hook(GEqThan(trainer.epochs, a.max_epochs), trainer.stop))
    if a.save_checkpoint_interval:
        trainer.add_hook(
            "on_end_epoch",
            Hook(MultipleOf(trainer.epochs, a.save_checkpoint_interval), save_ckpt, lowest_cer_saver),
        )

    if a.show_progress_bar and use_cuda:
        # Shows nvidia-smi-like memory/utilisation next to the tqdm bar
        trainer.add_hook("on_start_iteration", ProgressBarGPUStats())

    # Continue from the last checkpoint, if any
    state = StateLoader(a.train_path, checkpoint=a.checkpoint, device=device).load()
    if state is not None:
        trainer.load_state_dict(state["trainer"])
        logger.info("Resumed training from epoch {}", trainer.epochs())

    try:
        engine_wrapper.run()
    except RuntimeError as e:
        if "out of memory" in str(e) and use_cuda:
            logger.error(
                "CUDA out of memory. Peak allocated: {:.2f} GiB",
                torch.cuda.max_memory_allocated(device) / 1024 ** 3,
            )
        raise
    finally:
        if use_cuda:
            torch.cuda.empty_cache()

    # Save the final state of the trainer
    trainer.save_state_dict(os.path.join(a.train_path, "ckpt.last"))


if __name__ == "__main__":
    main()
