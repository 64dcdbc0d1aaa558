# coding: utf-8

# Copyright (c) 2019-2020, NVIDIA CORPORATION. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");

import argparse
import functools
import itertools
import logging
import math
import os
import time
import warnings

import dllogger
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

try:
    from apex import amp
except ModuleNotFoundError:
    warnings.warn("APEX AMP is unavailable")

from torch.nn.parallel import DistributedDataParallel

import lamb
import utils
from data_utils import get_lm_corpus
from mem_transformer import MemTransformerLM
from utils.data_parallel import BalancedDataParallel
from utils.exp_utils import AverageMeter, TimeoutHandler, benchmark, create_exp_dir, l2_promote, log_env_info


def parse_args():
    parser = argparse.ArgumentParser(description="PyTorch Transformer-XL Language Model",
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--work_dir", default="LM-TFM", type=str, help="Directory for the results")
    parser.add_argument("--cuda", action="store_true", help="Run training on a GPU using CUDA")
    parser.add_argument("--fp16", action="store_true", help="Run training in fp16/mixed precision")
    parser.add_argument("--amp", choices=["apex", "pytorch"], default="pytorch",
                        help="Implementation of automatic mixed precision")
    parser.add_argument("--apex_amp_opt_level", type=str, default="O2", choices=["O0", "O1", "O2", "O3"])
    parser.add_argument("--multi_gpu", default=None, type=str, choices=["ddp", "dp"],
                        help="Use multiple GPU")
    parser.add_argument("--gpu0_bsz", type=int, default=-1, help="Batch size on gpu 0 (for \"dp\" backend)")
    parser.add_argument("--local_rank", type=int, default=os.getenv("LOCAL_RANK", 0), help="Used for multi-process training.")
    parser.add_argument("--seed", type=int, default=1111)
    parser.add_argument("--data", type=str, default="../data/wikitext-103")
    parser.add_argument("--dataset", type=str, default="wt103")
    parser.add_argument("--n_layer", type=int, default=16)
    parser.add_argument("--d_model", type=int, default=512)
    parser.add_argument("--batch_size", type=int, default=256)
    parser.add_argument("--tgt_len", type=int, default=192)
    parser.add_argument("--mem_len", type=int, default=192)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--optim", default="jitlamb", type=str, choices=["adam", "sgd", "lamb", "jitlamb"])
    parser.add_argument("--max_step", type=int, default=40000)
    parser.add_argument("--batch_chunk", type=int, default=1)
    parser.add_argument("--log_interval", type=int, default=10)
    parser.add_argument("--affinity", type=str, default="socket_unique_interleaved",
                        help="type of CPU affinity")
    return parser.parse_args()


def init_distributed(cuda):
    distributed = False
    if "WORLD_SIZE" in os.environ:
        distributed = int(os.environ["WORLD_SIZE"]) > 1

    if distributed:
        backend = "nccl" if cuda else "gloo"
        torch.distributed.init_process_group(backend=backend, init_method="env://")
        assert torch.distributed.is_initialized()
    return distributed


def train_iteration(model, i, mems, data_chunks, target_chunks, scaler, optimizer, device, delay_unscale, args):
    cpu = torch.device("cpu")
    data_i = data_chunks[i].contiguous()
    target_i = target_chunks[i].contiguous()

    if args.swap_mem and mems[i] is not None:
        mems[i] = mems[i].to(device, non_blocking=True)

    enable_autocast = args.fp16 and args.amp == "pytorch"
    with torch.cuda.amp.autocast(enable_autocast):
        loss, mems[i] = model(data_i, target_i, mems[i])
        loss = loss.float().mean().type_as(loss) / args.batch_chunk

    if args.swap_mem and mems[i] is not None:
        mems[i] = mems[i].to(cpu, non_blocking=True)

    if args.fp16:
        if args.amp == "pytorch":
            scaler.scale(loss).backward()
        elif args.amp == "apex":
            with amp.scale_loss(loss, optimizer, delay_unscale=delay_unscale) as scaled_loss:
                scaled_loss.backward()
    else:
        loss.backward()

    train_loss = loss.float().item()
    return train_loss


def main():
    args = parse_args()
    if args.affinity != "disabled":
        nproc_per_node = torch.cuda.device_count()
        affinity = utils.gpu_affinity.set_affinity(args.local_rank, nproc_per_node, args.affinity)
        print(f"{args.local_rank}: thread affinity: {affinity}")

    # Initialize device and distributed backend
    torch.cuda.set_device(args.local_rank)
    l2_promote()
    device = torch.device("cuda" if args.cuda else "cpu")
    args.multi_gpu = "ddp" if init_distributed(args.cuda) and args.multi_gpu is None else args.multi_gpu

    # Set the random seed manually for reproducibility.
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)

    corpus = get_lm_corpus(args.data, args.dataset, "word")
    ntokens = len(corpus.vocab)
    tr_iter = corpus.get_iterator("train", args.batch_size, args.tgt_len, device=device, ext_len=0)

    model = MemTransformerLM(ntokens, args.n_layer, 8, args.d_model, 64, 2048, 0.1, 0.0,
                             tgt_len=args.tgt_len, mem_len=args.mem_len)
    model = model.to(device)

    if args.optim.lower() == "jitlamb":
        optimizer = lamb.JITLamb(model.parameters(), lr=args.lr, weight_decay=0.0)
    else:
        optimizer = optim.Adam(model.parameters(), lr=args.lr)

    scaler = None
    if args.fp16:
        if args.amp == "pytorch":
            scaler = torch.cuda.amp.GradScaler()
        elif args.amp == "apex":
            model, optimizer = amp.initialize(model, optimizer, opt_level=args.apex_amp_opt_level)

    if args.multi_gpu == "ddp" and torch.distributed.is_initialized():
        para_model = DistributedDataParallel(model, device_ids=[args.local_rank], output_device=args.local_rank,
                                             broadcast_buffers=False, find_unused_parameters=True)
    elif args.multi_gpu == "dp":
        if args.gpu0_bsz >= 0:
            para_model = BalancedDataParallel(args.gpu0_bsz // args.batch_chunk, model, dim=1).to(device)
        else:
            para_model = nn.DataParallel(model, dim=1).to(device)
    else:
        para_model = model

    log_start_time = time.time()
    train_step = 0
    mems = [None for _ in range(args.batch_chunk)]
    para_model.train()
    for batch, (data, target, seq_len, _) in enumerate(tr_iter):
        train_step += 1
        data_chunks = torch.chunk(data, args.batch_chunk, 1)
        target_chunks = torch.chunk(target, args.batch_chunk, 1)
        for i in range(args.batch_chunk):
            train_loss = train_iteration(para_model, i, mems, data_chunks, target_chunks, scaler, optimizer,
                                         device, i < args.batch_chunk - 1, args)
        if args.fp16 and args.amp == "pytorch":
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
        para_model.zero_grad()

        if train_step % args.log_interval == 0:
            elapsed = time.time() - log_start_time
            throughput = args.log_interval * args.batch_size * args.tgt_len / elapsed
            max_mem = torch.cuda.max_memory_allocated() / 2 ** 20
            dllogger.log(step=(train_step,), data={"train_loss": train_loss, "tok/s": throughput,
                                                   "max_mem_MB": max_mem})
            torch.cuda.reset_peak_memory_stats()
            log_start_time = time.time()
        if train_step >= args.max_step:
            break


if __name__ == "__main__":
    # Disable profiling executor
    try:
        torch._C._jit_set_profiling_executor(False)
        torch._C._jit_set_profiling_mode(False)
    except AttributeError:
        pass

    main()
