#!/usr/bin/env python3
# Copyright    2022  Xiaomi Corp.        (authors: Fangjun Kuang, Wei Kang)
#
# See ../../../../LICENSE for clarification regarding multiple authors
"""
Usage:

export CUDA_VISIBLE_DEVICES="0,1,2,3"

./pruned_transducer_stateless7/train.py \
  --world-size 4 \
  --num-epochs 30 \
  --start-epoch 1 \
  --use-fp16 1 \
  --exp-dir pruned_transducer_stateless7/exp \
  --full-libri 1 \
  --max-duration 300
"""

import argparse
import copy
import logging
import warnings
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

import k2
import optim
import sentencepiece as spm
import torch
import torch.multiprocessing as mp
import torch.nn as nn
from asr_datamodule import LibriSpeechAsrDataModule
from model import Transducer
from optim import Eden, ScaledAdam
from torch import Tensor
from torch.cuda.amp import GradScaler
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.tensorboard import SummaryWriter

from icefall.checkpoint import load_checkpoint, save_checkpoint_with_global_batch_idx
from icefall.dist import cleanup_dist, setup_dist
from icefall.env import get_env_info
from icefall.utils import AttributeDict, MetricsTracker, setup_logger, str2bool


def get_parser():
    parser = argparse.ArgumentParser(formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--world-size", type=int, default=1, help="Number of GPUs for DDP training.")
    parser.add_argument("--master-port", type=int, default=12354, help="Master port to use for DDP training.")
    parser.add_argument("--num-epochs", type=int, default=30)
    parser.add_argument("--start-epoch", type=int, default=1)
    parser.add_argument("--exp-dir", type=str, default="pruned_transducer_stateless7/exp")
    parser.add_argument("--base-lr", type=float, default=0.05)
    parser.add_argument("--prune-range", type=int, default=5)
    parser.add_argument("--lm-scale", type=float, default=0.25)
    parser.add_argument("--am-scale", type=float, default=0.0)
    parser.add_argument("--simple-loss-scale", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--use-fp16",
        type=str2bool,
        default=False,
        help="Whether to use half precision training (needs a CUDA GPU).",
    )
    return parser


def compute_loss(params, model, sp, batch, is_training: bool):
    device = model.device if isinstance(model, DDP) is False else next(model.parameters()).device
    feature = batch["inputs"]
    assert feature.ndim == 3
    feature = feature.to(device)

    supervisions = batch["supervisions"]
    feature_lens = supervisions["num_frames"].to(device)

    texts = batch["supervisions"]["text"]
    y = sp.encode(texts, out_type=int)
    y = k2.RaggedTensor(y).to(device)

    with torch.set_grad_enabled(is_training):
        simple_loss, pruned_loss = model(
            x=feature,
            x_lens=feature_lens,
            y=y,
            prune_range=params.prune_range,
            am_scale=params.am_scale,
            lm_scale=params.lm_scale,
        )
        loss = params.simple_loss_scale * simple_loss + pruned_loss

    assert loss.requires_grad == is_training
    info = MetricsTracker()
    info["frames"] = (feature_lens // 4).sum().item()
    info["loss"] = loss.detach().cpu().item()
    info["simple_loss"] = simple_loss.detach().cpu().item()
    info["pruned_loss"] = pruned_loss.detach().cpu().item()
    return loss, info


def train_one_epoch(params, model, optimizer, scheduler, sp, train_dl, scaler, tb_writer, world_size, rank):
    model.train()
    tot_loss = MetricsTracker()
    for batch_idx, batch in enumerate(train_dl):
        params.batch_idx_train += 1
        batch_size = len(batch["supervisions"]["text"])
        try:
            with torch.cuda.amp.autocast(enabled=params.use_fp16):
                loss, loss_info = compute_loss(params, model, sp, batch, is_training=True)
            tot_loss = (tot_loss * (1 - 1 / 200)) + loss_info
            scaler.scale(loss).backward()
            scheduler.step_batch(params.batch_idx_train)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
        except RuntimeError as e:
            if "CUDA out of memory" in str(e):
                logging.error(f"OOM at batch {batch_idx}, batch size {batch_size}")
                display_and_save_batch(batch, params=params, sp=sp)
            raise

        if batch_idx % 100 == 0 and params.use_fp16:
            cur_grad_scale = scaler._scale.item()
            if cur_grad_scale < 1.0e-05:
                raise RuntimeError(f"grad_scale is too small, exiting: {cur_grad_scale}")
            if tb_writer is not None:
                tb_writer.add_scalar("train/grad_scale", cur_grad_scale, params.batch_idx_train)

        if batch_idx % 50 == 0 and rank == 0:
            logging.info(
                f"Epoch {params.cur_epoch}, batch {batch_idx}, loss[{loss_info}], "
                f"tot_loss[{tot_loss}], batch size: {batch_size}, "
                f"max mem: {torch.cuda.max_memory_allocated() // 1000000}MB"
            )
    params.train_loss = tot_loss["loss"] / tot_loss["frames"]


def display_and_save_batch(batch, params, sp):
    filename = f"{params.exp_dir}/batch-{params.batch_idx_train}.pt"
    logging.info(f"Saving batch to {filename}")
    torch.save(batch, filename)


def run(rank, world_size, args):
    params = AttributeDict(vars(args))
    params.batch_idx_train = 0
    torch.manual_seed(params.seed)
    if world_size > 1:
        setup_dist(rank, world_size, params.master_port)

    setup_logger(f"{params.exp_dir}/log/log-train")
    logging.info(params)

    tb_writer = SummaryWriter(log_dir=f"{params.exp_dir}/tensorboard") if rank == 0 else None

    device = torch.device("cpu")
    if torch.cuda.is_available():
        device = torch.device("cuda", rank)
    logging.info(f"Device: {device}")

    sp = spm.SentencePieceProcessor()
    sp.load(params.bpe_model)

    model = Transducer.from_params(params)
    num_param = sum([p.numel() for p in model.parameters()])
    logging.info(f"Number of model parameters: {num_param}")

    checkpoints = load_checkpoint(f"{params.exp_dir}/epoch-{params.start_epoch - 1}.pt", model=model)
    model.to(device)
    if world_size > 1:
        logging.info("Using DDP")
        model = DDP(model, device_ids=[rank], find_unused_parameters=True)

    optimizer = ScaledAdam(model.parameters(), lr=params.base_lr, clipping_scale=2.0)
    scheduler = Eden(optimizer, params.lr_batches, params.lr_epochs)

    librispeech = LibriSpeechAsrDataModule(args)
    train_dl = librispeech.train_dataloaders(librispeech.train_clean_100_cuts())

    scaler = GradScaler(enabled=params.use_fp16, init_scale=1.0)
    if checkpoints and "grad_scaler" in checkpoints:
        scaler.load_state_dict(checkpoints["grad_scaler"])

    for epoch in range(params.start_epoch, params.num_epochs + 1):
        scheduler.step_epoch(epoch - 1)
        train_dl.sampler.set_epoch(epoch - 1)
        params.cur_epoch = epoch
        train_one_epoch(params, model, optimizer, scheduler, sp, train_dl, scaler, tb_writer, world_size, rank)
        save_checkpoint_with_global_batch_idx(
            out_dir=params.exp_dir, global_batch_idx=params.batch_idx_train,
            model=model, params=params, optimizer=optimizer, scaler=scaler, rank=rank,
        )

    logging.info("Done!")
    if world_size > 1:
        torch.distributed.barrier()
        cleanup_dist()


def main():
    parser = get_parser()
    LibriSpeechAsrDataModule.add_arguments(parser)
    args = parser.parse_args()
    args.exp_dir = Path(args.exp_dir)

    world_size = args.world_size
    assert world_size >= 1
    if world_size > 1:
        mp.spawn(run, args=(world_size, args), nprocs=world_size, join=True)
    else:
        run(rank=0, world_size=1, args=args)


torch.set_num_threads(1)
torch.set_num_interop_threads(1)

if __name__ == "__main__":
    main()
