#  Copyright (c) Facebook, Inc. and its affiliates.
#  All rights reserved.
#
#  This source code is licensed under the license found in the
#  LICENSE file in the root directory of this source tree.

import logging
import math
import sys
from argparse import ArgumentParser, Namespace
from pathlib import Path
import json
import os
import time

import numpy as np
from tqdm import tqdm
import torch
import torch.distributed
from torch import nn
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from fairseq.optim.adam import FairseqAdam
from fairseq.optim.fp16_optimizer import FP16Optimizer, MemoryEfficientFP16Optimizer
from fairseq.optim.lr_scheduler.polynomial_decay_schedule import PolynomialDecaySchedule
from fairseq.options import eval_str_list

from table_bert.config import TableBertConfig
from table_bert.vanilla_table_bert import VanillaTableBert
from table_bert.vertical.config import VerticalAttentionTableBertConfig
from table_bert.vertical.dataset import VerticalAttentionTableBertDataset
from table_bert.vertical.vertical_attention_table_bert import VerticalAttentionTableBert
from table_bert.dataset import TableDataset
from utils.comm import init_distributed_mode, is_main_process, get_world_size
from utils.evaluator import Evaluator
from utils.util import init_logger


task_dict = {
    'vanilla': {
        'dataset': TableDataset,
        'config': TableBertConfig,
        'model': VanillaTableBert,
    },
    'vertical_attention': {
        'dataset': VerticalAttentionTableBertDataset,
        'config': VerticalAttentionTableBertConfig,
        'model': VerticalAttentionTableBert
    }
}


def parse_train_arg():
    parser = ArgumentParser()

    parser.add_argument('--task',
                        type=str,
                        default='vanilla',
                        choices=['vanilla', 'vertical_attention'])
    parser.add_argument('--seed',
                        type=int,
                        default=42,
                        help="random seed for initialization")

    # distributed training
    parser.add_argument("--ddp-backend", type=str, default='pytorch', choices=['pytorch', 'apex'])
    parser.add_argument("--local_rank", "--local-rank",
                        type=int,
                        default=-1,
                        help="local_rank for distributed training on gpus")
    parser.add_argument("--master-port", type=int, default=-1)
    parser.add_argument("--debug-slurm", action='store_true',
                        help="Debug multi-GPU / multi-node within a SLURM job")

    # training details
    parser.add_argument("--train-batch-size",
                        default=32,
                        type=int,
                        help="Total batch size for training.")
    parser.add_argument("--max-epoch", default=-1, type=int)
    # parser.add_argument("--total-num-update", type=int, default=1000000, help="Number of steps to train for")
    parser.add_argument('--gradient-accumulation-steps',
                        type=int,
                        default=1,
                        help="Number of updates steps to accumulate before performing a backward/update pass.")
    parser.add_argument("--lr-scheduler", type=str, default='polynomial_decay', help='Learning rate scheduler')
    parser.add_argument("--optimizer", type=str, default='adam', help='Optimizer to use')
    parser.add_argument('--lr', '--learning-rate', default='0.00005', type=eval_str_list,
                        metavar='LR_1,LR_2,...,LR_N',
                        help='learning rate for the first N epochs; all epochs >N using LR_N'
                             ' (note: this may be interpreted differently depending on --lr-scheduler)')
    parser.add_argument('--clip-norm', default=0., type=float, help='clip gradient')
    parser.add_argument('--empty-cache-freq', default=0, type=int,
                        help='how often to clear the PyTorch CUDA cache (0 to disable)')
    parser.add_argument('--save-checkpoint-every-niter', default=10000, type=int)

    FairseqAdam.add_args(parser)
    PolynomialDecaySchedule.add_args(parser)

    # FP16 training
    parser.add_argument('--fp16',
                        action='store_true',
                        help="Whether to use 16-bit float precision instead of 32-bit")
    parser.add_argument('--memory-efficient-fp16',
                        action='store_true',
                        help='use a memory-efficient version of FP16 training; implies --fp16')
    parser.add_argument('--fp16-init-scale', default=2 ** 7, type=int,
                        help='default FP16 loss scale')
    parser.add_argument('--fp16-scale-window', type=int,
                        help='number of updates before increasing loss scale')
    parser.add_argument('--fp16-scale-tolerance', default=0.0, type=float,
                        help='pct of updates that can overflow before decreasing the loss scale')
    parser.add_argument('--min-loss-scale', default=1e-4, type=float, metavar='D',
                        help='minimum FP16 loss scale, after which training is stopped')

    parser.add_argument('--data-dir', type=Path, required=True)
    parser.add_argument('--output-dir', type=Path, required=True)
    parser.add_argument('--resume', type=Path, default=None,
                        help='resume training from this checkpoint file')
    parser.add_argument('--data-loader-num-workers', type=int, default=2)

    TableBertConfig.add_args(parser)

    args = parser.parse_args()

    return args


def main():
    args = parse_train_arg()
    task = task_dict[args.task]

    init_distributed_mode(args)
    logger = init_logger(args)

    if hasattr(args, 'base_model_name'):
        logger.info('Warning: --base_model_name argument is deprecated, use --base-model-name instead.')

    table_bert_config = task['config'].from_dict(vars(args))

    if args.is_master:
        args.output_dir.mkdir(exist_ok=True, parents=True)
        with (args.output_dir / 'train_config.json').open('w') as f:
            json.dump(vars(args), f, indent=2, sort_keys=True, default=str)

        logger.info(f'Table Bert Config: {table_bert_config.to_log_string()}')

        # copy the table bert config file to the working directory
        # shutil.copy(args.config_file, args.output_dir / 'tb_config.json')
        # save table BERT config
        table_bert_config.save(args.output_dir / 'tb_config.json')

    assert args.data_dir.is_dir(), \
        "--data_dir should point to the folder of files made by pregenerate_training_data.py!"

    if args.cpu:
        device = torch.device('cpu')
    else:
        device = torch.device(f'cuda:{torch.cuda.current_device()}')

    logger.info("device: {} gpu_id: {}, distributed training: {}, 16-bits training: {}".format(
        device, args.local_rank, bool(args.multi_gpu), args.fp16))

    if args.gradient_accumulation_steps < 1:
        raise ValueError("Invalid gradient_accumulation_steps parameter: {}, should be >= 1".format(
            args.gradient_accumulation_steps))

    real_batch_size = args.train_batch_size  # // args.gradient_accumulation_steps
    args.train_batch_size = args.train_batch_size // args.gradient_accumulation_steps

    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.deterministic = True

    if args.output_dir.exists() and any(args.output_dir.iterdir()) and not args.resume:
        logger.warning(f"Output directory ({args.output_dir}) already exists and is not empty!")

    # Prepare model
    if args.multi_gpu and args.global_rank != 0:
        torch.distributed.barrier()

    if args.no_init:
        raise NotImplementedError
    else:
        model = task['model'](table_bert_config)

    if args.multi_gpu and args.global_rank == 0:
        torch.distributed.barrier()

    if args.fp16:
        model = model.half()

    model = model.to(device)
    if args.multi_gpu:
        if args.ddp_backend == 'pytorch':
            model = nn.parallel.DistributedDataParallel(
                model,
                find_unused_parameters=True,
                device_ids=[args.local_rank], output_device=args.local_rank,
                broadcast_buffers=False
            )
        else:
            import apex
            model = apex.parallel.DistributedDataParallel(model, delay_allreduce=True)

        model_ptr = model.module
    else:
        model_ptr = model

    # set up update parameters for LR scheduler
    dataset_cls = task['dataset']

    train_set_info = dataset_cls.get_dataset_info(args.data_dir, args.max_epoch)
    total_num_updates = train_set_info['total_size'] // args.train_batch_size // args.global_num_workers // args.gradient_accumulation_steps
    args.max_epoch = train_set_info['max_epoch']
    logger.info(f'Train data size: {train_set_info["total_size"]} for {args.max_epoch} epochs, total num. updates: {total_num_updates}')

    args.total_num_update = total_num_updates
    args.warmup_updates = int(total_num_updates * 0.1)

    param_optimizer = list(model.named_parameters())
    no_decay = ['bias', 'LayerNorm.bias', 'LayerNorm.weight']
    optimizer_grouped_parameters = [
        {'params': [p for n, p in param_optimizer if not any(nd in n for nd in no_decay)], 'weight_decay': 0.01},
        {'params': [p for n, p in param_optimizer if any(nd in n for nd in no_decay)], 'weight_decay': 0.0}
    ]

    params = [p for n, p in param_optimizer]
    if args.fp16:
        if args.memory_efficient_fp16:
            optimizer = MemoryEfficientFP16Optimizer.build_optimizer(args, params)
        else:
            optimizer = FP16Optimizer.build_optimizer(args, params)
    else:
        optimizer = FairseqAdam(args, params)

    scheduler = PolynomialDecaySchedule(args, optimizer)

    start_epoch = 0
    global_step = 0
    if args.resume:
        logger.info(f'resume training from {args.resume}')
        state = torch.load(args.resume, map_location=lambda storage, loc: storage.cuda(args.local_rank))
        model_ptr.load_state_dict(state['model'])
        optimizer.load_state_dict(state['optimizer'])
        scheduler.load_state_dict(state['scheduler'])
        start_epoch = state['epoch'] + 1
        global_step = state['global_step']

    logger.info("***** Running training *****")
    logger.info(f"  Current config: {args}")

    model.train()

    # we also partitation the dev set for every local process
    logger.info('Loading dev set...')
    sys.stdout.flush()
    dev_set = dataset_cls(epoch=0, training_path=args.data_dir / 'dev', tokenizer=model_ptr.tokenizer, config=table_bert_config,
                          multi_gpu=args.multi_gpu, debug=args.debug_dataset)
    logger.info("Dev size: {}".format(len(dev_set)))
    evaluator = Evaluator(batch_size=args.train_batch_size * 2, collate_fn=dev_set.collate, sampler=None)

    for epoch in range(start_epoch, args.max_epoch):  # inclusive
        model.train()

        with torch.autograd.profiler.record_function('load_epoch_data'):
            train_set = dataset_cls(epoch=epoch, training_path=args.data_dir / 'train', tokenizer=model_ptr.tokenizer,
                                    config=table_bert_config, multi_gpu=args.multi_gpu, debug=args.debug_dataset)

        train_sampler = DistributedSampler(train_set) if args.multi_gpu else None
        train_dataloader = DataLoader(train_set, sampler=train_sampler, batch_size=args.train_batch_size,
                                      collate_fn=train_set.collate, num_workers=args.data_loader_num_workers,
                                      pin_memory=True)

        logger.info(f"***** Epoch {epoch} *****")
        logger.info(f"  Num examples = {len(train_set)}")
        logger.info(f"  Batch size = {args.train_batch_size}")
        logger.info(f"  Num steps = {len(train_set) // args.train_batch_size}")

        tr_loss = 0.
        nb_tr_examples, nb_tr_steps = 0, 0
        epoch_start = time.time()
        with tqdm(total=len(train_dataloader), desc=f"Epoch {epoch}", file=sys.stdout, disable=not args.is_master) as pbar:
            samples_iter = iter(train_dataloader)
            for step in range(len(train_dataloader)):
                batch = next(samples_iter)
                for key in batch:
                    if torch.is_tensor(batch[key]):
                        batch[key] = batch[key].to(device, non_blocking=True)

                loss, logging_output = model(**batch)
                loss = loss.mean()

                if args.gradient_accumulation_steps > 1:
                    loss = loss / args.gradient_accumulation_steps

                optimizer.backward(loss)

                tr_loss += loss.item()
                nb_tr_examples += batch['input_ids'].size(0)
                nb_tr_steps += 1

                if (step + 1) % args.gradient_accumulation_steps == 0:
                    optimizer.clip_grad_norm(args.clip_norm)
                    optimizer.step()
                    optimizer.zero_grad()
                    scheduler.step_update(global_step)
                    global_step += 1

                    if args.empty_cache_freq > 0 and global_step % args.empty_cache_freq == 0:
                        torch.cuda.empty_cache()

                pbar.update(1)
                if args.is_master and step % 100 == 0:
                    elapsed = time.time() - epoch_start
                    mem_gb = torch.cuda.max_memory_allocated(device) / 1024 ** 3
                    pbar.set_postfix_str(
                        f'loss={tr_loss / nb_tr_steps:.4f} lr={scheduler.get_lr():.2e} '
                        f'mem={mem_gb:.1f}G ex/s={nb_tr_examples / elapsed:.1f}')

                if args.is_master and global_step % args.save_checkpoint_every_niter == 0 and (step + 1) % args.gradient_accumulation_steps == 0:
                    # Save model checkpoint
                    logger.info("** ** * Saving fine-tuned model ** ** * ")
                    model_to_save = model.module if hasattr(model, 'module') else model
                    output_model_file = args.output_dir / f'pytorch_model_step{global_step}.bin'
                    torch.save(model_to_save.state_dict(), str(output_model_file))

        logger.info(f'Epoch {epoch} finished in {time.time() - epoch_start:.1f}s.')

        if args.is_master:
            model_to_save = model_ptr  # Only save the model it-self
            output_model_file = args.output_dir / f'pytorch_model_epoch{epoch:02d}.bin'
            torch.save(model_to_save.state_dict(), str(output_model_file))

            checkpoint_file = args.output_dir / 'optim.bin'
            torch.save({
                'model': model_to_save.state_dict(),
                'optimizer': optimizer.state_dict(),
                'scheduler': scheduler.state_dict(),
                'epoch': epoch,
                'global_step': global_step
            }, str(checkpoint_file))

        # perform validation
        logger.info("** ** * Perform validation ** ** * ")
        dev_results = evaluator.evaluate(model_ptr, dev_set)

        if args.is_master:
            logger.info('** ** * Validation Results ** ** * ')
            logger.info(f'Epoch {epoch} Validation Results: {dev_results}')

        # flush logging information to disk
        sys.stdout.flush()
        sys.stderr.flush()


if __name__ == '__main__':
    main()
