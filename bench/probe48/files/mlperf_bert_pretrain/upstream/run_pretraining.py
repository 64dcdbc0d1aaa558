# coding=utf-8
# Copyright (c) 2019-2023 NVIDIA CORPORATION. All rights reserved.
# Copyright 2018 The Google AI Language Team Authors and The HugginFace Inc. team.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
"""BERT pre-training harness for the MLPerf Training benchmark (phase-2, wiki 512)."""

import argparse
import glob
import math
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

import mlperf_logger
from mlperf_logger import mllogger
from modeling import BertConfig, BertForPreTraining
from schedulers import LinearWarmupPolyDecayScheduler
from dataset import PretrainingDataset, pretraining_collate_fn
import utils

# fmha is the NVIDIA fused multi-head attention kernel shipped with the submission container
try:
    import fmhalib  # noqa: F401  (compiled from apex/contrib/csrc/fmha)
    HAVE_FMHA = True
except ImportError:
    HAVE_FMHA = False


def parse_arguments():
    parser = argparse.ArgumentParser()
    parser.add_argument("--input_dir", type=str, required=True)
    parser.add_argument("--eval_dir", type=str, default=None)
    parser.add_argument("--bert_config_path", type=str, required=True)
    parser.add_argument("--init_checkpoint", type=str, default=None)
    parser.add_argument("--output_dir", type=str, default="/results")
    parser.add_argument("--max_seq_length", type=int, default=512)
    parser.add_argument("--max_predictions_per_seq", type=int, default=76)
    parser.add_argument("--train_batch_size", type=int, default=56)
    parser.add_argument("--eval_batch_size", type=int, default=16)
    parser.add_argument("--learning_rate", type=float, default=3.5e-4)
    parser.add_argument("--opt_lamb_beta_1", type=float, default=0.9)
    parser.add_argument("--opt_lamb_beta_2", type=float, default=0.999)
    parser.add_argument("--weight_decay_rate", type=float, default=0.01)
    parser.add_argument("--max_steps", type=int, default=7100)
    parser.add_argument("--warmup_proportion", type=float, default=0.0)
    parser.add_argument("--start_warmup_step", type=int, default=0)
    parser.add_argument("--eval_iter_start_samples", type=int, default=150000)
    parser.add_argument("--eval_iter_samples", type=int, default=150000)
    parser.add_argument("--target_mlm_accuracy", type=float, default=0.720)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--local_rank", type=int, default=int(os.getenv("LOCAL_RANK", "0")))
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--use_cuda_graph", action="store_true")
    parser.add_argument("--fused_mha", action="store_true")
    parser.add_argument("--log_freq", type=int, default=50)
    parser.add_argument("--num_workers", type=int, default=4)
    return parser.parse_args()


def setup_training(args):
    assert torch.cuda.is_available(), "MLPerf BERT requires GPUs"
    torch.cuda.set_device(args.local_rank)
    device = torch.device("cuda", args.local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")
    args.n_gpu = dist.get_world_size()
    # tf32 is allowed by the rules for this benchmark
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    if args.gradient_accumulation_steps < 1:
        raise ValueError("gradient_accumulation_steps must be >= 1")
    args.train_batch_size = args.train_batch_size // args.gradient_accumulation_steps
    return device, args


def prepare_model_and_optimizer(args, device):
    config = BertConfig.from_json_file(args.bert_config_path)
    config.fused_mha = args.fused_mha and HAVE_FMHA
    if config.vocab_size % 8 != 0:
        config.vocab_size += 8 - (config.vocab_size % 8)
    model = BertForPreTraining(config)
    if args.init_checkpoint is not None:
        checkpoint = torch.load(args.init_checkpoint, map_location="cpu")
        model.load_state_dict(checkpoint["model"], strict=False)
    model.to(device)

    param_optimizer = list(model.named_parameters())
    no_decay = ["bias", "gamma", "beta", "LayerNorm"]
    optimizer_grouped_parameters = [
        {"params": [p for n, p in param_optimizer if not any(nd in n for nd in no_decay)],
         "weight_decay": args.weight_decay_rate},
        {"params": [p for n, p in param_optimizer if any(nd in n for nd in no_decay)],
         "weight_decay": 0.0},
    ]
    optimizer = FusedLAMB(optimizer_grouped_parameters, lr=args.learning_rate,
                          betas=(args.opt_lamb_beta_1, args.opt_lamb_beta_2))
    scheduler = LinearWarmupPolyDecayScheduler(optimizer, start_warmup_steps=args.start_warmup_step,
                                               warmup_steps=int(args.warmup_proportion * args.max_steps),
                                               total_steps=args.max_steps, end_learning_rate=0.0,
                                               degree=1.0)
    grad_scaler = torch.cuda.amp.GradScaler(enabled=args.fp16, init_scale=2.0 ** 20)

    # broadcast initial weights from rank 0 (flattened, one NCCL call)
    flat_dist_call([param.data for param in model.parameters()], dist.broadcast, (0,))
    return model, optimizer, scheduler, grad_scaler


def take_optimizer_step(args, optimizer, grad_scaler, model, overflow_buf):
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    flat_grads = apex_C.flatten(grads)
    flat_grads.div_(float(dist.get_world_size() * args.gradient_accumulation_steps))
    dist.all_reduce(flat_grads)
    for buf, synced in zip(grads, apex_C.unflatten(flat_grads, grads)):
        buf.copy_(synced)
    # global grad-norm for LAMB trust ratio, computed with the apex multi-tensor kernel
    grad_norm, _ = multi_tensor_applier(amp_C.multi_tensor_l2norm, overflow_buf, [grads], False)
    grad_scaler.step(optimizer)
    grad_scaler.update()
    optimizer.zero_grad(set_to_none=True)
    return grad_norm


def build_train_loader(args, files, epoch):
    f_id = (epoch * dist.get_world_size() + dist.get_rank()) % len(files)
    dataset = PretrainingDataset(files[f_id], max_pred_length=args.max_predictions_per_seq)
    sampler = RandomSampler(dataset)
    return DataLoader(dataset, sampler=sampler, batch_size=args.train_batch_size,
                      num_workers=args.num_workers, pin_memory=True, drop_last=True,
                      collate_fn=pretraining_collate_fn)


def run_eval(model, eval_loader, device, args):
    model.eval()
    total_masked, total_correct = 0.0, 0.0
    with torch.no_grad():
        for batch in eval_loader:
            batch = [t.to(device, non_blocking=True) for t in batch]
            input_ids, segment_ids, input_mask, masked_lm_labels, _ = batch
            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.fp16):
                mlm_logits, _ = model(input_ids, segment_ids, input_mask)
            mask = masked_lm_labels != -1
            preds = mlm_logits.argmax(dim=-1)
            total_correct += (preds[mask] == masked_lm_labels[mask]).sum().float()
            total_masked += mask.sum().float()
    stats = torch.stack([total_correct, total_masked]) if torch.is_tensor(total_correct) else \
        torch.tensor([total_correct, total_masked], device=device)
    dist.all_reduce(stats)
    model.train()
    return (stats[0] / stats[1]).item()


def main():
    args = parse_arguments()
    random.seed(args.seed + args.local_rank)
    np.random.seed(args.seed + args.local_rank)
    torch.manual_seed(args.seed + args.local_rank)
    torch.cuda.manual_seed_all(args.seed + args.local_rank)

    mllogger.start(key=mlperf_logger.constants.INIT_START)
    device, args = setup_training(args)
    model, optimizer, scheduler, grad_scaler = prepare_model_and_optimizer(args, device)
    overflow_buf = torch.cuda.IntTensor([0])

    train_step = model
    if args.use_cuda_graph:
        sample = [torch.ones(args.train_batch_size, args.max_seq_length, dtype=torch.int64, device=device)
                  for _ in range(3)]
        train_step = torch.cuda.make_graphed_callables(model, tuple(sample))

    files = sorted(glob.glob(os.path.join(args.input_dir, "part*")))
    eval_loader = None
    if args.eval_dir:
        eval_ds = PretrainingDataset(sorted(glob.glob(os.path.join(args.eval_dir, "*")))[0],
                                     max_pred_length=args.max_predictions_per_seq)
        eval_loader = DataLoader(eval_ds, batch_size=args.eval_batch_size, num_workers=2,
                                 pin_memory=True)

    mllogger.end(key=mlperf_logger.constants.INIT_STOP)
    dist.barrier()
    mllogger.start(key=mlperf_logger.constants.RUN_START)

    global_step, samples_seen, epoch = 0, 0, 0
    next_eval = args.eval_iter_start_samples
    converged = False
    torch.cuda.synchronize()  # init work done before the clock starts
    run_start = time.perf_counter()
    window_start, window_samples = run_start, 0
    model.train()
    while global_step < args.max_steps and not converged:
        loader = build_train_loader(args, files, epoch)
        for step, batch in enumerate(loader):
            batch = [t.to(device, non_blocking=True) for t in batch]
            input_ids, segment_ids, input_mask, masked_lm_labels, nsp_labels = batch
            with torch.cuda.amp.autocast(enabled=args.fp16):
                loss = train_step(input_ids, segment_ids, input_mask, masked_lm_labels, nsp_labels)
                loss = loss / args.gradient_accumulation_steps
            grad_scaler.scale(loss).backward()
            if (step + 1) % args.gradient_accumulation_steps != 0:
                continue
            take_optimizer_step(args, optimizer, grad_scaler, model, overflow_buf)
            scheduler.step()
            global_step += 1
            step_samples = args.train_batch_size * args.gradient_accumulation_steps * args.n_gpu
            samples_seen += step_samples
            window_samples += step_samples

            if global_step % args.log_freq == 0:
                torch.cuda.synchronize()
                now = time.perf_counter()
                throughput = window_samples / (now - window_start)
                if dist.get_rank() == 0:
                    print(f"step {global_step} loss {loss.item() * args.gradient_accumulation_steps:.4f} "
                          f"lr {scheduler.get_last_lr()[0]:.3e} {throughput:.1f} seq/s "
                          f"mem {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")
                mllogger.event(key="tracked_stats", value={"throughput": throughput}, metadata={"step": global_step})
                window_start, window_samples = now, 0

            if eval_loader is not None and samples_seen >= next_eval:
                mllogger.start(key=mlperf_logger.constants.EVAL_START, metadata={"epoch_num": samples_seen})
                acc = run_eval(model, eval_loader, device, args)
                mllogger.event(key=mlperf_logger.constants.EVAL_ACCURACY, value=acc,
                               metadata={"epoch_num": samples_seen})
                mllogger.end(key=mlperf_logger.constants.EVAL_STOP, metadata={"epoch_num": samples_seen})
                next_eval += args.eval_iter_samples
                if acc >= args.target_mlm_accuracy:
                    converged = True
                    break
            if global_step >= args.max_steps:
                break
        epoch += 1

    torch.cuda.synchronize()  # wait for the last step
    elapsed = time.perf_counter() - run_start
    mllogger.end(key=mlperf_logger.constants.RUN_STOP,
                 metadata={"status": "success" if converged else "aborted"})
    if dist.get_rank() == 0:
        print(f"training_sequences_per_second {samples_seen / elapsed:.2f} "
              f"e2e_time {elapsed:.1f}s steps {global_step}")
        utils.save_checkpoint(args.output_dir, model, optimizer, global_step)


if __name__ == "__main__":
    main()
