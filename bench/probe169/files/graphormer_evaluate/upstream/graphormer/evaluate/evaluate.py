#!/usr/bin/env python3 -u
# Copyright (c) Microsoft Corporation.
# Licensed under the MIT License.

"""
Evaluate a trained (or pretrained) Graphormer checkpoint on one split of a
graph-level property prediction dataset (PCQM4M / PCQM4Mv2 / ZINC / ogbg-molhiv /
ogbg-molpcba).

Usage:

    CUDA_VISIBLE_DEVICES=0 python evaluate.py \
        --user-dir ../../graphormer \
        --num-workers 16 \
        --ddp-backend=legacy_ddp \
        --dataset-name pcqm4mv2 \
        --dataset-source ogb \
        --task graph_prediction \
        --arch graphormer_base \
        --num-classes 1 \
        --batch-size 256 \
        --save-dir ../../examples/property_prediction/ckpts/ \
        --split valid \
        --metric mae
"""

import logging
import os
import sys
from pathlib import Path

import numpy as np
import torch

from fairseq import checkpoint_utils, options, tasks, utils
from fairseq.dataclass.utils import convert_namespace_to_omegaconf
from fairseq.logging import progress_bar

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from pretrain import load_pretrained_model  # noqa: E402

from sklearn.metrics import roc_auc_score  # noqa: E402

logging.basicConfig(
    format="%(asctime)s | %(levelname)s | %(name)s | %(message)s",
    datefmt="%Y-%m-%d %H:%M:%S",
    level=os.environ.get("LOGLEVEL", "INFO").upper(),
    stream=sys.stdout,
)
logger = logging.getLogger("graphormer.evaluate")


def _build_iterator(cfg, task, model, split):
    batch_iterator = task.get_batch_iterator(
        dataset=task.dataset(split),
        max_tokens=cfg.dataset.max_tokens_valid,
        max_sentences=cfg.dataset.batch_size_valid,
        max_positions=utils.resolve_max_positions(
            task.max_positions(),
            model.max_positions(),
        ),
        ignore_invalid_inputs=cfg.dataset.skip_invalid_size_inputs_valid_test,
        required_batch_size_multiple=cfg.dataset.required_batch_size_multiple,
        seed=cfg.common.seed,
        num_workers=cfg.dataset.num_workers,
        epoch=0,
        data_buffer_size=cfg.dataset.data_buffer_size,
        disable_iterator_cache=False,
    )
    itr = batch_iterator.next_epoch_itr(shuffle=False, set_dataset_epoch=False)
    progress = progress_bar.progress_bar(
        itr,
        log_format=cfg.common.log_format,
        log_interval=cfg.common.log_interval,
        default_log_format=("tqdm" if not cfg.common.no_progress_bar else "simple"),
    )
    return progress


def _score(args, y_pred, y_true):
    """Compute the requested metric on CPU tensors."""
    if args.metric == "auc":
        auc = roc_auc_score(y_true.numpy(), y_pred.numpy())
        return "auc", auc
    elif args.metric == "mae":
        mae = torch.abs(y_true - y_pred).mean().item()
        return "mae", mae
    elif args.metric == "rmse":
        rmse = torch.sqrt(torch.mean((y_true - y_pred) ** 2)).item()
        return "rmse", rmse
    else:
        raise ValueError(f"Unsupported metric {args.metric}")


def eval(args, use_pretrained, checkpoint_path=None, logger=None):
    cfg = convert_namespace_to_omegaconf(args)
    np.random.seed(cfg.common.seed)
    utils.set_torch_seed(cfg.common.seed)

    # initialize task
    task = tasks.setup_task(cfg.task)
    model = task.build_model(cfg.model)

    # load checkpoint
    if use_pretrained:
        model_state = load_pretrained_model(cfg.task.pretrained_model_name)
    else:
        # fairseq writes checkpoints with tensors already moved to CPU
        model_state = torch.load(checkpoint_path)["model"]
    model.load_state_dict(model_state, strict=True, model_cfg=cfg.model)
    del model_state

    if cfg.common.fp16:
        # evaluating a --fp16 run in half precision matches the training numerics
        model = model.half()
    model.to(torch.cuda.current_device())

    # load dataset
    split = args.split
    task.load_dataset(split)
    progress = _build_iterator(cfg, task, model, split)

    # infer
    y_pred = []
    y_true = []
    with torch.no_grad():
        model.eval()
        for i, sample in enumerate(progress):
            sample = utils.move_to_cuda(sample)
            y = model(**sample["net_input"])[:, 0, :].reshape(-1)
            y_pred.extend(y.detach().float().cpu())
            y_true.extend(sample["target"].detach().cpu().reshape(-1)[: y.shape[0]])
            if i % 200 == 0:
                # long valid sets fragment the caching allocator on 16GB V100s
                torch.cuda.empty_cache()

    # save predictions
    y_pred = torch.Tensor(y_pred)
    y_true = torch.Tensor(y_true)

    if args.save_predictions is not None:
        out_file = Path(args.save_predictions)
        out_file.parent.mkdir(parents=True, exist_ok=True)
        torch.save({"y_pred": y_pred, "y_true": y_true}, out_file)
        logger.info(f"wrote {len(y_pred)} predictions to {out_file}")

    # evaluate
    name, value = _score(args, y_pred, y_true)
    logger.info(f"{name}: {value}")
    return value


def _peak_memory_report(logger):
    if torch.cuda.is_available():
        peak = torch.cuda.max_memory_allocated() / 1024 ** 3
        logger.info(f"peak GPU memory during evaluation: {peak:.2f} GB")


def main():
    parser = options.get_training_parser()
    parser.add_argument(
        "--split",
        type=str,
    )
    parser.add_argument(
        "--metric",
        type=str,
    )
    parser.add_argument(
        "--save-predictions",
        type=str,
        default=None,
        help="optional path to dump y_pred / y_true as a .pt file",
    )
    args = options.parse_args_and_arch(parser, modify_parser=None)
    logger = logging.getLogger(__name__)

    if args.pretrained_model_name != "none":
        eval(args, True, logger=logger)
    elif hasattr(args, "save_dir"):
        results = {}
        for checkpoint_fname in sorted(os.listdir(args.save_dir)):
            if not checkpoint_fname.endswith(".pt"):
                continue
            checkpoint_path = Path(args.save_dir) / checkpoint_fname
            logger.info(f"evaluating checkpoint file {checkpoint_path}")
            results[checkpoint_fname] = eval(args, False, checkpoint_path, logger)
        if results:
            best = min(results, key=results.get) if args.metric != "auc" else max(results, key=results.get)
            logger.info(f"best checkpoint: {best} ({args.metric}={results[best]})")
    _peak_memory_report(logger)


if __name__ == "__main__":
    main()
