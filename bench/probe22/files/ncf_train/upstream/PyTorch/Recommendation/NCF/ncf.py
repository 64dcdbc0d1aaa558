# Copyright (c) 2018, deepakn94, codyaustun, robieta. All rights reserved.
# Copyright (c) 2018-2021, NVIDIA CORPORATION. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");

import math
import os
import time
from argparse import ArgumentParser

import numpy as np
import torch
import torch.nn as nn
import tqdm

import dllogger
from apex.optimizers import FusedAdam
from dataloading import create_test_data, prepare_epoch_train_data
from neumf import NeuMF
from neumf_constants import USER_CHANNEL_NAME, ITEM_CHANNEL_NAME, LABEL_CHANNEL_NAME
import utils


def parse_args():
    parser = ArgumentParser(description="Train a Neural Collaborative Filtering model")
    parser.add_argument("--data", type=str, help="Path to the directory containing the feature specification yaml")
    parser.add_argument("-e", "--epochs", type=int, default=30)
    parser.add_argument("-b", "--batch_size", type=int, default=2 ** 20)
    parser.add_argument("--valid_batch_size", type=int, default=2 ** 20)
    parser.add_argument("-f", "--factors", type=int, default=64)
    parser.add_argument("--layers", nargs="+", type=int, default=[256, 256, 128, 64])
    parser.add_argument("-n", "--negative_samples", type=int, default=4)
    parser.add_argument("-l", "--learning_rate", type=float, default=0.0045)
    parser.add_argument("-k", "--topk", type=int, default=10)
    parser.add_argument("--seed", "-s", type=int, default=None)
    parser.add_argument("--threshold", "-t", type=float, default=1.0)
    parser.add_argument("--beta1", "-b1", type=float, default=0.25)
    parser.add_argument("--beta2", "-b2", type=float, default=0.5)
    parser.add_argument("--eps", type=float, default=1e-8)
    parser.add_argument("--dropout", type=float, default=0.5)
    parser.add_argument("--checkpoint_dir", default="", type=str)
    parser.add_argument("--load_checkpoint_path", default=None, type=str)
    parser.add_argument("--mode", choices=["train", "test"], default="train", type=str)
    parser.add_argument("--grads_accumulated", default=1, type=int)
    parser.add_argument("--amp", action="store_true", help="Enable mixed precision training")
    parser.add_argument("--log_path", default="log.json", type=str)
    parser.add_argument("--local_rank", default=os.getenv("LOCAL_RANK", 0), type=int)
    return parser.parse_args()


def init_distributed(args):
    args.world_size = int(os.environ.get("WORLD_SIZE", 1))
    args.distributed = args.world_size > 1

    if args.distributed:
        args.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(args.local_rank)
        torch.distributed.init_process_group(backend="nccl", init_method="env://")
        args.world_size = torch.distributed.get_world_size()
    else:
        args.local_rank = 0


def val_epoch(model, dataloader, k, distributed=False, world_size=1):
    model.eval()
    user_feature_name = dataloader.channel_spec[USER_CHANNEL_NAME][0]
    item_feature_name = dataloader.channel_spec[ITEM_CHANNEL_NAME][0]
    label_feature_name = dataloader.channel_spec[LABEL_CHANNEL_NAME][0]
    with torch.no_grad():
        p = []
        labels_list = []
        losses = []
        for batch_dict in dataloader.get_epoch_data():
            user_batch = batch_dict[USER_CHANNEL_NAME][user_feature_name]
            item_batch = batch_dict[ITEM_CHANNEL_NAME][item_feature_name]
            label_batch = batch_dict[LABEL_CHANNEL_NAME][label_feature_name]
            prediction_batch = model(user_batch, item_batch, sigmoid=True).detach()
            p.append(prediction_batch)
            labels_list.append(label_batch)

        ignore_mask = dataloader.get_ignore_mask().view(-1, dataloader.samples_in_series)
        ratings = torch.cat(p).view(-1, dataloader.samples_in_series)
        ratings[ignore_mask] = -1
        labels = torch.cat(labels_list).view(-1, dataloader.samples_in_series)

        _, indices = torch.topk(ratings, k)
        positive_indices = torch.nonzero(labels)[:, 1].view(-1, 1)
        hits = (indices == positive_indices).any(dim=1).float().sum()

        global_hits = torch.tensor(hits, device="cuda")
        if distributed:
            torch.distributed.all_reduce(global_hits, op=torch.distributed.ReduceOp.SUM)
        num_test_cases = dataloader.raw_dataset_length / dataloader.samples_in_series
        hr = global_hits.item() / num_test_cases
    model.train()
    return hr


def main():
    args = parse_args()
    init_distributed(args)

    if args.local_rank == 0:
        dllogger.init(backends=[dllogger.JSONStreamBackend(verbosity=dllogger.Verbosity.VERBOSE,
                                                           filename=args.log_path),
                                dllogger.StdOutBackend(verbosity=dllogger.Verbosity.VERBOSE)])
    else:
        dllogger.init(backends=[])

    dllogger.log(data=vars(args), step="PARAMETER")

    if args.seed is not None:
        torch.manual_seed(args.seed)

    if args.checkpoint_dir:
        os.makedirs(args.checkpoint_dir, exist_ok=True)

    # sync workers before timing
    if args.distributed:
        torch.distributed.broadcast(torch.tensor([1], device="cuda"), 0)
    torch.cuda.synchronize()

    main_start_time = time.time()

    train_loader, test_loader = utils.create_dataloaders(args)

    model = NeuMF(train_loader.nb_users, train_loader.nb_items, mf_dim=args.factors,
                  mlp_layer_sizes=args.layers, dropout=args.dropout)

    optimizer = FusedAdam(model.parameters(), lr=args.learning_rate, betas=(args.beta1, args.beta2), eps=args.eps)

    criterion = nn.BCEWithLogitsLoss(reduction="none")  # use torch.mean() with dim later to avoid copy to host
    # Move model and loss to GPU
    model = model.cuda()
    criterion = criterion.cuda()

    if args.distributed:
        model = torch.nn.parallel.DistributedDataParallel(model)

    local_batch = args.batch_size // args.world_size
    traced_criterion = torch.jit.trace(criterion.forward,
                                       (torch.rand(local_batch, 1), torch.rand(local_batch, 1)))

    if args.load_checkpoint_path:
        state_dict = torch.load(args.load_checkpoint_path)
        state_dict = {k.replace("module.", ""): v for k, v in state_dict.items()}
        model.load_state_dict(state_dict)

    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)
    max_hr = 0
    for epoch in range(args.epochs):
        begin = time.time()
        batch_dict_list = train_loader.get_epoch_data()
        num_batches = len(batch_dict_list)
        for i in range(num_batches // args.grads_accumulated):
            for j in range(args.grads_accumulated):
                batch_idx = (args.grads_accumulated * i) + j
                batch_dict = batch_dict_list[batch_idx]
                user_features = batch_dict[USER_CHANNEL_NAME]
                item_features = batch_dict[ITEM_CHANNEL_NAME]
                user_batch = user_features[train_loader.channel_spec[USER_CHANNEL_NAME][0]]
                item_batch = item_features[train_loader.channel_spec[ITEM_CHANNEL_NAME][0]]
                label_features = batch_dict[LABEL_CHANNEL_NAME]
                label_batch = label_features[train_loader.channel_spec[LABEL_CHANNEL_NAME][0]]
                with torch.cuda.amp.autocast(enabled=args.amp):
                    outputs = model(user_batch, item_batch)
                    loss = traced_criterion(outputs, label_batch.view(-1, 1))
                    loss = torch.mean(loss.float().view(-1), 0)
                scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            for p in model.parameters():
                p.grad = None

        train_time = time.time() - begin
        hr = val_epoch(model, test_loader, args.topk, distributed=args.distributed, world_size=args.world_size)
        dllogger.log(step=(epoch,), data={"train_epoch_time": train_time, "hr@10": hr})
        if hr > max_hr and args.local_rank == 0:
            max_hr = hr
            save_checkpoint_path = os.path.join(args.checkpoint_dir, "model.pth")
            torch.save(model.state_dict(), save_checkpoint_path)
    dllogger.log(step=tuple(), data={"best_accuracy": max_hr, "time_to_train": time.time() - main_start_time})


if __name__ == "__main__":
    main()
