# coding=utf-8
# Copyright (c) 2019-2021 NVIDIA CORPORATION. All rights reserved.
# Copyright 2018 The Google AI Language Team Authors and The HuggingFace Inc. team.
#
# Licensed under the Apache License, Version 2.0 (the "License");
"""BERT pretraining runner (phase 1 / phase 2) with LAMB and gradient accumulation."""

import argparse
import os
import random
import time

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, RandomSampler

import amp_C
import apex_C
from apex.optimizers import FusedLAMB
from apex.multi_tensor_apply import multi_tensor_applier
from apex.parallel.distributed import flat_dist_call

import dllogger
import modeling
from schedulers import PolyWarmUpScheduler
from utils import is_main_process, get_world_size, format_step
from dataset import create_pretraining_dataset


def parse_arguments():
    parser = argparse.ArgumentParser()
    parser.add_argument("--input_dir", type=str, required=True)
    parser.add_argument("--config_file", type=str, required=True)
    parser.add_argument("--output_dir", type=str, required=True)
    parser.add_argument("--init_checkpoint", type=str, default=None)
    parser.add_argument("--train_batch_size", type=int, default=32)
    parser.add_argument("--learning_rate", type=float, default=5e-5)
    parser.add_argument("--max_steps", type=int, default=1000)
    parser.add_argument("--warmup_proportion", type=float, default=0.01)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--local_rank", type=int, default=os.getenv("LOCAL_RANK", -1))
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--amp", action="store_true", help="Mixed precision training (on GPUs with Tensor Cores)")
    parser.add_argument("--allreduce_post_accumulation", action="store_true",
                        help="Whether to do allreduces during gradient accumulation steps.")
    parser.add_argument("--allreduce_post_accumulation_fp16", action="store_true",
                        help="Whether to do fp16 allreduce post accumulation.")
    parser.add_argument("--json-summary", type=str, default="results/dllogger.json")
    parser.add_argument("--num_workers", type=int, default=4)
    parser.add_argument("--log_freq", type=float, default=1.0)
    parser.add_argument("--disable_progress_bar", action="store_true")
    return parser.parse_args()


def setup_training(args):
    assert torch.cuda.is_available(), "BERT pretraining requires at least one GPU"
    if args.local_rank == -1:
        device = torch.device("cuda")
        args.n_gpu = torch.cuda.device_count()
        args.allreduce_post_accumulation = False
        args.allreduce_post_accumulation_fp16 = False
    else:
        torch.cuda.set_device(args.local_rank)
        device = torch.device("cuda", args.local_rank)
        # Initializes the distributed backend which will take care of synchronizing nodes/GPUs
        dist.init_process_group(backend="nccl", init_method="env://")
        args.n_gpu = 1

    if is_main_process():
        dllogger.init(backends=[dllogger.JSONStreamBackend(verbosity=dllogger.Verbosity.VERBOSE,
                                                           filename=args.json_summary),
                                dllogger.StdOutBackend(verbosity=dllogger.Verbosity.VERBOSE, step_format=format_step)])
    else:
        dllogger.init(backends=[])

    print("device: {} n_gpu: {}, distributed training: {}, 16-bits training: {}".format(
        device, args.n_gpu, bool(args.local_rank != -1), args.amp))
    args.train_batch_size = args.train_batch_size // args.gradient_accumulation_steps
    return device, args


def prepare_model_and_optimizer(args, device):
    config = modeling.BertConfig.from_json_file(args.config_file)
    if config.vocab_size % 8 != 0:
        config.vocab_size += 8 - (config.vocab_size % 8)
    model = modeling.BertForPreTraining(config)

    checkpoint = None
    global_step = 0
    if args.init_checkpoint is not None:
        checkpoint = torch.load(args.init_checkpoint, map_location="cpu")
        model.load_state_dict(checkpoint["model"], strict=False)
        global_step = checkpoint.get("global_step", 0)

    model.to(device)

    param_optimizer = list(model.named_parameters())
    no_decay = ["bias", "gamma", "beta", "LayerNorm"]
    optimizer_grouped_parameters = [
        {"params": [p for n, p in param_optimizer if not any(nd in n for nd in no_decay)], "weight_decay": 0.01},
        {"params": [p for n, p in param_optimizer if any(nd in n for nd in no_decay)], "weight_decay": 0.0}]

    optimizer = FusedLAMB(optimizer_grouped_parameters, lr=args.learning_rate)
    lr_scheduler = PolyWarmUpScheduler(optimizer, warmup=args.warmup_proportion, total_steps=args.max_steps)
    grad_scaler = torch.cuda.amp.GradScaler(init_scale=2 ** 20, enabled=args.amp)

    if checkpoint is not None and "optimizer" in checkpoint:
        optimizer.load_state_dict(checkpoint["optimizer"])

    if args.local_rank != -1 and not args.allreduce_post_accumulation:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank],
                                                          output_device=args.local_rank)
    elif args.n_gpu > 1:
        model = torch.nn.DataParallel(model)

    criterion = modeling.BertPretrainingCriterion(config.vocab_size)
    return model, optimizer, grad_scaler, lr_scheduler, checkpoint, global_step, criterion


def take_optimizer_step(args, optimizer, grad_scaler, model, overflow_buf, global_step):
    if args.allreduce_post_accumulation:
        # manually allreduce gradients after all accumulation steps
        # check for Inf/NaN
        # 1. allocate an uninitialized buffer for flattened gradient
        loss_scale = grad_scaler._get_scale_async() if args.amp else 1.
        master_grads = [p.grad for p in model.parameters() if p.grad is not None]
        flat_grad_size = sum(p.numel() for p in master_grads)
        allreduce_dtype = torch.float16 if args.allreduce_post_accumulation_fp16 else torch.float32
        flat_raw = torch.empty(flat_grad_size, device="cuda", dtype=allreduce_dtype)
        # 2. combine unflattening and predivision of unscaled 'raw' gradient
        allreduced_views = apex_C.unflatten(flat_raw, master_grads)
        overflow_buf.zero_()
        multi_tensor_applier(amp_C.multi_tensor_scale, overflow_buf, [master_grads, allreduced_views],
                             loss_scale / (get_world_size() * args.gradient_accumulation_steps))
        # 3. sum gradient across ranks. Because of the predivision, this averages the gradient
        dist.all_reduce(flat_raw)
        # 4. combine unscaling and unflattening of allreduced gradient
        overflow_buf.zero_()
        multi_tensor_applier(amp_C.multi_tensor_scale, overflow_buf, [allreduced_views, master_grads],
                             1. / loss_scale)
        # 5. update loss scale
        if args.amp:
            grad_scaler._unscale_grads_(optimizer, torch.ones_like(grad_scaler._scale), overflow_buf, True)
        global_step += 1
        optimizer.step()
    else:
        grad_scaler.step(optimizer)
        grad_scaler.update()
        global_step += 0 if grad_scaler._scale is None else 1
    optimizer.zero_grad(set_to_none=True)
    return global_step


def main():
    args = parse_arguments()
    random.seed(args.seed + args.local_rank)
    np.random.seed(args.seed + args.local_rank)
    torch.manual_seed(args.seed + args.local_rank)
    torch.cuda.manual_seed(args.seed + args.local_rank)

    device, args = setup_training(args)
    dllogger.log(step="PARAMETER", data={"Config": [str(args)]})

    model, optimizer, grad_scaler, lr_scheduler, checkpoint, global_step, criterion = \
        prepare_model_and_optimizer(args, device)

    raw_train_start = time.time()
    model.train()
    overflow_buf = torch.cuda.IntTensor([0]) if args.allreduce_post_accumulation else None
    files = sorted(os.path.join(args.input_dir, f) for f in os.listdir(args.input_dir) if "training" in f)

    training_steps = 0
    average_loss = 0.0
    for f_id, data_file in enumerate(files):
        train_dataloader, _ = create_pretraining_dataset(data_file, 80, args.num_workers,
                                                         args.train_batch_size, worker_init=None)
        for step, batch in enumerate(train_dataloader):
            training_steps += 1
            batch = [t.to(device, non_blocking=True) for t in batch]
            input_ids, segment_ids, input_mask, masked_lm_labels, next_sentence_labels = batch

            with torch.cuda.amp.autocast(enabled=args.amp):
                prediction_scores, seq_relationship_score = model(
                    input_ids=input_ids, token_type_ids=segment_ids, attention_mask=input_mask)
                loss = criterion(prediction_scores, seq_relationship_score, masked_lm_labels,
                                 next_sentence_labels)
            if args.n_gpu > 1:
                loss = loss.mean()  # mean() to average on multi-gpu.

            divisor = args.gradient_accumulation_steps
            if args.gradient_accumulation_steps > 1:
                loss = loss / args.gradient_accumulation_steps
            grad_scaler.scale(loss).backward()
            average_loss += loss.item()

            if training_steps % args.gradient_accumulation_steps == 0:
                lr_scheduler.step()
                global_step = take_optimizer_step(args, optimizer, grad_scaler, model, overflow_buf, global_step)

            if global_step >= args.max_steps:
                train_time_raw = time.time() - raw_train_start
                last_num_steps = int(training_steps / args.gradient_accumulation_steps) % args.log_freq
                average_loss = torch.tensor(average_loss, dtype=torch.float32).cuda()
                average_loss = average_loss / (last_num_steps * divisor)
                if torch.distributed.is_initialized():
                    average_loss /= get_world_size()
                    torch.distributed.all_reduce(average_loss)
                final_loss = average_loss.item()
                if is_main_process():
                    dllogger.log(step=(global_step,), data={"final_loss": final_loss,
                                                            "raw_train_time": train_time_raw})
                    output_save_file = os.path.join(args.output_dir, "ckpt_{}.pt".format(global_step))
                    model_to_save = model.module if hasattr(model, "module") else model
                    torch.save({"model": model_to_save.state_dict(),
                                "optimizer": optimizer.state_dict(),
                                "global_step": global_step}, output_save_file)
                dllogger.flush()
                return args, final_loss, train_time_raw, global_step
        del train_dataloader
    return args, None, None, global_step


if __name__ == "__main__":
    now = time.time()
    args, final_loss, train_time_raw, global_step = main()
    gpu_count = args.n_gpu
    if torch.distributed.is_initialized():
        gpu_count = get_world_size()
    if is_main_process():
        e2e_time = time.time() - now
        dllogger.log(step=tuple(), data={"e2e_train_time": e2e_time, "gpu_count": gpu_count})
    dllogger.flush()
