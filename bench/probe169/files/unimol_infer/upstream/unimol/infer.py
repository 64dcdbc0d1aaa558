#!/usr/bin/env python3 -u
# Copyright (c) DP Techonology, Inc. and its affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.

"""Run a fine-tuned Uni-Mol model over one or more subsets and pickle the raw
per-batch logging outputs (predictions, targets, smiles) for later scoring.

Example:

    python ./unimol/infer.py --user-dir ./unimol $data_path --task-name $task_name \
        --valid-subset test --results-path $results_path \
        --num-workers 8 --ddp-backend=c10d --batch-size 32 \
        --task mol_finetune --loss finetune_cross_entropy --arch unimol_base \
        --classification-head-name $task_name --num-classes $task_num \
        --dict-name dict.txt --conf-size 11 --only-polar 0 \
        --path $weight_path --fp16 --fp16-init-scale 4 --fp16-scale-window 256 \
        --log-interval 50 --log-format simple
"""

import logging
import os
import pickle
import sys

import numpy as np
import torch
from unicore import checkpoint_utils, distributed_utils, options, tasks, utils
from unicore.logging import progress_bar

logging.basicConfig(
    format="%(asctime)s | %(levelname)s | %(name)s | %(message)s",
    datefmt="%Y-%m-%d %H:%M:%S",
    level=os.environ.get("LOGLEVEL", "INFO").upper(),
    stream=sys.stdout,
)
logger = logging.getLogger("unimol.inference")


def _summarize(log_outputs, task_name):
    """Quick console summary; the full pickle is what downstream scripts read."""
    n = sum(len(lo.get("smi_name", [])) for lo in log_outputs)
    logger.info(f"[{task_name}] {len(log_outputs)} batches, {n} molecules")
    if len(log_outputs) and "predict" in log_outputs[0]:
        preds = torch.cat([lo["predict"].float() for lo in log_outputs], dim=0)
        logger.info(
            "prediction mean/std: {:.4f} / {:.4f}".format(
                preds.mean().item(), preds.std().item()
            )
        )


def main(args):

    assert (
        args.batch_size is not None
    ), "Must specify batch size either with --batch-size"

    use_fp16 = args.fp16
    use_cuda = torch.cuda.is_available() and not args.cpu

    if use_cuda:
        torch.cuda.set_device(args.device_id)

    if args.distributed_world_size > 1:
        data_parallel_world_size = distributed_utils.get_data_parallel_world_size()
        data_parallel_rank = distributed_utils.get_data_parallel_rank()
    else:
        data_parallel_world_size = 1
        data_parallel_rank = 0

    # Load model
    logger.info("loading model(s) from {}".format(args.path))
    state = checkpoint_utils.load_checkpoint_to_cpu(args.path)
    task = tasks.setup_task(args)
    model = task.build_model(args)
    model.load_state_dict(state["model"], strict=False)

    # Move models to GPU
    if use_fp16:
        model.half()
    if use_cuda:
        model.cuda()

    # Print args
    logger.info(args)

    # Build loss
    loss = task.build_loss(args)
    loss.eval()

    for subset in args.valid_subset.split(","):
        try:
            task.load_dataset(subset, combine=False, epoch=1)
            dataset = task.dataset(subset)
        except KeyError:
            raise Exception("Cannot find dataset: " + subset)

        if not os.path.exists(args.results_path):
            os.makedirs(args.results_path)
        fname = (args.path).split("/")[-2]
        save_path = os.path.join(args.results_path, fname + "_" + subset + ".out.pkl")
        # Initialize data iterator
        itr = task.get_batch_iterator(
            dataset=dataset,
            batch_size=args.batch_size,
            ignore_invalid_inputs=True,
            required_batch_size_multiple=args.required_batch_size_multiple,
            seed=args.seed,
            num_shards=data_parallel_world_size,
            shard_id=data_parallel_rank,
            num_workers=args.num_workers,
            data_buffer_size=args.data_buffer_size,
        ).next_epoch_itr(shuffle=False)
        progress = progress_bar.progress_bar(
            itr,
            log_format=args.log_format,
            log_interval=args.log_interval,
            prefix=f"valid on '{subset}' subset",
            default_log_format=("tqdm" if not args.no_progress_bar else "simple"),
        )
        log_outputs = []
        for i, sample in enumerate(progress):
            sample = utils.move_to_cuda(sample) if use_cuda else sample
            if len(sample) == 0:
                continue
            with torch.no_grad():
                _, _, log_output = task.valid_step(sample, model, loss, test=True)
            progress.log({}, step=i)
            log_outputs.append(log_output)
        pickle.dump(log_outputs, open(save_path, "wb"))
        _summarize(log_outputs, getattr(args, "task_name", subset))
        logger.info("Done inference! ")
    return None


def cli_main():
    parser = options.get_validation_parser()
    options.add_model_args(parser)
    args = options.parse_args_and_arch(parser)
    np.random.seed(args.seed)

    distributed_utils.call_main(args, main)


if __name__ == "__main__":
    cli_main()
