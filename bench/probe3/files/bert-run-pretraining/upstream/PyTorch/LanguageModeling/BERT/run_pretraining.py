# coding=utf-8
# Copyright (c) 2019-2021 NVIDIA CORPORATION. All rights reserved.
# Copyright 2018 The Google AI Language Team Authors and The HuggingFace Inc. team.
"""BERT pre-training (phase 1 / phase 2) with apex AMP O2, FusedLAMB and gradient all-reduce after accumulation."""
import argparse
import glob
import h5py
import logging
import math
import os
import random
import time
from concurrent.futures import ProcessPoolExecutor

import amp_C
import apex_C
import dllogger
import numpy as np
import torch
from apex import amp
from apex.amp import _amp_state
from apex.optimizers import FusedLAMB
from apex.parallel import DistributedDataParallel as DDP
from apex.parallel.distributed import flat_dist_call
from apex.multi_tensor_apply import multi_tensor_applier
from torch.utils.data import DataLoader, Dataset, RandomSampler

import modeling
from schedulers import PolyWarmUpScheduler
from utils import format_step, get_rank, get_world_size, is_main_process

torch._C._jit_set_profiling_mode(False)
torch._C._jit_set_profiling_executor(False)

skipped_steps = 0


class WorkerInitObj(object):
    def __init__(self, seed):
        self.seed = seed

    def __call__(self, id):
        np.random.seed(seed=self.seed + id)
        random.seed(self.seed + id)


class PretrainingDataset(Dataset):
    def __init__(self, input_file, max_pred_length):
        self.input_file = input_file
        self.max_pred_length = max_pred_length
        f = h5py.File(input_file, "r")
        keys = ["input_ids", "input_mask", "segment_ids", "masked_lm_positions", "masked_lm_ids",
                "next_sentence_labels"]
        self.inputs = [np.asarray(f[key][:]) for key in keys]
        f.close()

    def __len__(self):
        return len(self.inputs[0])

    def __getitem__(self, index):
        input_ids, input_mask, segment_ids, masked_lm_positions, masked_lm_ids, next_sentence_labels = [
            torch.from_numpy(input[index].astype(np.int64)) if indice < 5
            else torch.from_numpy(np.asarray(input[index].astype(np.int64)))
            for indice, input in enumerate(self.inputs)
        ]
        masked_lm_labels = torch.ones(input_ids.shape, dtype=torch.long) * -1
        index = self.max_pred_length
        padded_mask_indices = (masked_lm_positions == 0).nonzero()
        if len(padded_mask_indices) != 0:
            index = padded_mask_indices[0].item()
        masked_lm_labels[masked_lm_positions[:index]] = masked_lm_ids[:index]
        return [input_ids, segment_ids, input_mask, masked_lm_labels, next_sentence_labels]


def create_pretraining_dataset(input_file, max_pred_length, shared_list, args, worker_init):
    train_data = PretrainingDataset(input_file=input_file, max_pred_length=max_pred_length)
    train_sampler = RandomSampler(train_data)
    train_dataloader = DataLoader(train_data, sampler=train_sampler, batch_size=args.train_batch_size * args.n_gpu,
                                  num_workers=4, worker_init_fn=worker_init, pin_memory=True)
    return train_dataloader, input_file


def parse_arguments():
    parser = argparse.ArgumentParser()
    parser.add_argument("--input_dir", type=str, required=True)
    parser.add_argument("--config_file", type=str, required=True)
    parser.add_argument("--output_dir", type=str, required=True)
    parser.add_argument("--max_predictions_per_seq", default=80, type=int)
    parser.add_argument("--train_batch_size", default=32, type=int)
    parser.add_argument("--learning_rate", default=5e-5, type=float)
    parser.add_argument("--max_steps", default=1000, type=float)
    parser.add_argument("--warmup_proportion", default=0.01, type=float)
    parser.add_argument("--local_rank", type=int, default=os.getenv("LOCAL_RANK", -1))
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--fp16", default=False, action="store_true")
    parser.add_argument("--loss_scale", type=float, default=0.0)
    parser.add_argument("--allreduce_post_accumulation", default=False, action="store_true")
    parser.add_argument("--allreduce_post_accumulation_fp16", default=False, action="store_true")
    parser.add_argument("--log_freq", type=float, default=1.0)
    return parser.parse_args()


def setup_training(args):
    assert (torch.cuda.is_available())

    if args.local_rank == -1:
        device = torch.device("cuda")
        args.n_gpu = torch.cuda.device_count()
        args.allreduce_post_accumulation = False
        args.allreduce_post_accumulation_fp16 = False
    else:
        torch.cuda.set_device(args.local_rank)
        device = torch.device("cuda", args.local_rank)
        # Initializes the distributed backend which will take care of synchronizing nodes/GPUs
        torch.distributed.init_process_group(backend='nccl', init_method='env://')
        args.n_gpu = 1

    if is_main_process():
        dllogger.init(backends=[dllogger.JSONStreamBackend(verbosity=dllogger.Verbosity.VERBOSE,
                                                           filename=os.path.join(args.output_dir, "log.json")),
                                dllogger.StdOutBackend(verbosity=dllogger.Verbosity.VERBOSE, step_format=format_step)])
    else:
        dllogger.init(backends=[])

    if args.gradient_accumulation_steps == 1:
        args.allreduce_post_accumulation = False
        args.allreduce_post_accumulation_fp16 = False
    args.train_batch_size = args.train_batch_size // args.gradient_accumulation_steps
    return device, args


def prepare_model_and_optimizer(args, device):
    config = modeling.BertConfig.from_json_file(args.config_file)
    if config.vocab_size % 8 != 0:
        config.vocab_size += 8 - (config.vocab_size % 8)
    modeling.ACT2FN["bias_gelu"] = modeling.bias_gelu_training
    model = modeling.BertForPreTraining(config)
    model.to(device)

    param_optimizer = list(model.named_parameters())
    no_decay = ['bias', 'gamma', 'beta', 'LayerNorm']
    optimizer_grouped_parameters = [
        {'params': [p for n, p in param_optimizer if not any(nd in n for nd in no_decay)], 'weight_decay': 0.01},
        {'params': [p for n, p in param_optimizer if any(nd in n for nd in no_decay)], 'weight_decay': 0.0}]

    optimizer = FusedLAMB(optimizer_grouped_parameters,
                          lr=args.learning_rate)
    lr_scheduler = PolyWarmUpScheduler(optimizer, warmup=args.warmup_proportion, total_steps=args.max_steps)
    if args.fp16:
        if args.loss_scale == 0:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O2", loss_scale="dynamic",
                                              cast_model_outputs=torch.float16)
        else:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O2", loss_scale=args.loss_scale,
                                              cast_model_outputs=torch.float16)
        amp._amp_state.loss_scalers[0]._loss_scale = 2 ** 20

    if args.local_rank != -1:
        if not args.allreduce_post_accumulation:
            model = DDP(model, message_size=250000000, gradient_predivide_factor=get_world_size())
        else:
            flat_dist_call([param.data for param in model.parameters()], torch.distributed.broadcast, (0,))
    criterion = modeling.BertPretrainingCriterion(config.vocab_size)
    return model, optimizer, lr_scheduler, criterion


def take_optimizer_step(args, optimizer, model, overflow_buf, global_step):
    global skipped_steps
    if args.allreduce_post_accumulation:
        # manually allreduce gradients after all accumulation steps
        scaler = _amp_state.loss_scalers[0]
        master_grads = [p.grad for p in amp.master_params(optimizer) if p.grad is not None]
        flat_grad_size = sum(p.numel() for p in master_grads)
        allreduce_dtype = torch.float16 if args.allreduce_post_accumulation_fp16 else torch.float32
        flat_raw = torch.empty(flat_grad_size, device='cuda', dtype=allreduce_dtype)
        allreduced_views = apex_C.unflatten(flat_raw, master_grads)
        overflow_buf.zero_()
        multi_tensor_applier(
            amp_C.multi_tensor_scale,
            overflow_buf,
            [master_grads, allreduced_views],
            scaler.loss_scale() / (get_world_size() * args.gradient_accumulation_steps))
        torch.distributed.all_reduce(flat_raw)
        overflow_buf.zero_()
        multi_tensor_applier(amp_C.multi_tensor_scale, overflow_buf, [allreduced_views, master_grads],
                             1. / scaler.loss_scale())
        scaler = _amp_state.loss_scalers[0]
        old_overflow_buf = scaler._overflow_buf
        scaler._overflow_buf = overflow_buf
        had_overflow = scaler.update_scale()
        scaler._overfloat_buf = old_overflow_buf
        if had_overflow == 0:
            optimizer.step()
            global_step += 1
        else:
            skipped_steps += 1
    else:
        optimizer.step()
        global_step += 0 if _amp_state.loss_scalers[0]._has_overflow else 1
    for param in model.parameters():
        param.grad = None
    return global_step


def main():
    args = parse_arguments()
    random.seed(args.seed + args.local_rank)
    np.random.seed(args.seed + args.local_rank)
    torch.manual_seed(args.seed + args.local_rank)
    torch.cuda.manual_seed(args.seed + args.local_rank)
    worker_init = WorkerInitObj(args.seed + args.local_rank)

    device, args = setup_training(args)
    model, optimizer, lr_scheduler, criterion = prepare_model_and_optimizer(args, device)
    overflow_buf = torch.cuda.IntTensor([0]) if args.allreduce_post_accumulation else None

    files = sorted(f for f in glob.glob(os.path.join(args.input_dir, "*")) if "training" in f)
    pool = ProcessPoolExecutor(1)
    global_step, average_loss, training_steps = 0, 0.0, 0
    model.train()
    start = time.perf_counter()
    for data_file in files:
        train_dataloader, _ = create_pretraining_dataset(data_file, args.max_predictions_per_seq, None, args,
                                                         worker_init)
        for step, batch in enumerate(train_dataloader):
            training_steps += 1
            batch = [t.to(device) for t in batch]
            input_ids, segment_ids, input_mask, masked_lm_labels, next_sentence_labels = batch
            prediction_scores, seq_relationship_score = model(input_ids=input_ids, token_type_ids=segment_ids,
                                                              attention_mask=input_mask)
            loss = criterion(prediction_scores, seq_relationship_score, masked_lm_labels, next_sentence_labels)
            loss = loss / args.gradient_accumulation_steps
            if args.fp16:
                with amp.scale_loss(loss, optimizer,
                                    delay_overflow_check=args.allreduce_post_accumulation) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            average_loss += loss.item()

            if training_steps % args.gradient_accumulation_steps == 0:
                lr_scheduler.step()
                global_step = take_optimizer_step(args, optimizer, model, overflow_buf, global_step)

            if global_step >= args.max_steps:
                average_loss_tensor = torch.tensor(average_loss, dtype=torch.float64, device=device)
                if torch.distributed.is_initialized():
                    average_loss_tensor /= get_world_size()
                    torch.distributed.all_reduce(average_loss_tensor)
                torch.cuda.synchronize()
                elapsed = time.perf_counter() - start
                if is_main_process():
                    dllogger.log(step=(), data={"final_loss": average_loss_tensor.item(),
                                               "seq/s": training_steps * args.train_batch_size / elapsed})
                    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                                "master params": list(amp.master_params(optimizer))},
                               os.path.join(args.output_dir, f"ckpt_{global_step}.pt"))
                return
    pool.shutdown()


if __name__ == "__main__":
    main()
