# Copyright 2017--2023 Amazon.com, Inc. or its affiliates. All Rights Reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License"). You may not
# use this file except in compliance with the License. A copy of the License
# is located at
#
#     http://aws.amazon.com/apache2.0/
#
# or in the "license" file accompanying this file. This file is distributed on
# an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either
# express or implied. See the License for the specific language governing
# permissions and limitations under the License.

"""
Simple Training CLI.
"""
import argparse
import logging
import os
import shutil
import sys
import tempfile
from contextlib import ExitStack
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch
import torch.distributed
import torch.distributed.elastic.multiprocessing.errors

try:
    import apex.optimizers
except ImportError:
    pass

from . import arguments
from . import checkpoint_decoder
from . import constants as C
from . import data_io
from . import model
from . import training
from . import utils
from . import vocab
from .config import Config
from .log import setup_main_logger
from .utils import check_condition

# Set and check PyTorch version
logger = logging.getLogger(__name__)

# Variable-length batches fragment the caching allocator badly on long runs.
os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")


def none_if_negative(val):
    return None if val < 0 else val


def _build_optimizer(sockeye_model: torch.nn.Module, args: argparse.Namespace,
                     running_on_gpu: bool) -> Tuple[torch.optim.Optimizer, Dict[str, Any]]:
    """
    Create an optimizer for the model. Apex's FusedAdam is used on GPU when it
    is installed, it is noticeably faster than torch.optim.Adam for large models.
    """
    zero_grad_kwargs = {}  # type: Dict[str, Any]
    adam_impl = torch.optim.Adam
    if running_on_gpu and args.optimizer in (C.OPTIMIZER_ADAM, C.OPTIMIZER_ADAMW):
        try:
            adam_impl = apex.optimizers.FusedAdam
            # Apex's FusedAdam can set grads to None instead of zeroing them.
            zero_grad_kwargs = {'set_to_none': True}
        except (NameError, AttributeError):
            logger.info("Apex not installed, using torch.optim.Adam")
    elif args.optimizer == C.OPTIMIZER_SGD:
        return torch.optim.SGD(sockeye_model.parameters(), lr=args.initial_learning_rate,
                               momentum=args.optimizer_momentum), zero_grad_kwargs

    adam_kwargs = dict(lr=args.initial_learning_rate,
                       betas=(args.optimizer_betas[0], args.optimizer_betas[1]),
                       eps=args.optimizer_eps,
                       weight_decay=args.weight_decay)
    if adam_impl is not torch.optim.Adam:
        adam_kwargs['adam_w_mode'] = args.optimizer == C.OPTIMIZER_ADAMW
    return adam_impl(sockeye_model.parameters(), **adam_kwargs), zero_grad_kwargs


def _amp_objects(args: argparse.Namespace):
    """Autocast context factory and GradScaler for --amp (PyTorch native AMP)."""
    if not args.amp:
        return utils.no_context, None
    logger.info("Using PyTorch AMP (fp16 autocast + dynamic loss scaling)")

    def autocast():
        return torch.cuda.amp.autocast(cache_enabled=False)

    scaler = torch.cuda.amp.GradScaler()
    return autocast, scaler


@torch.distributed.elastic.multiprocessing.errors.record
def main():
    params = arguments.ConfigArgumentParser(description='Train Sockeye sequence-to-sequence models.')
    arguments.add_train_cli_args(params)
    args = params.parse_args()
    train(args)


def train(args: argparse.Namespace, custom_metrics_logger: Optional[Callable] = None,
          checkpoint_callback: Optional[Callable] = None) -> training.TrainState:
    """
    :param custom_metrics_logger: Optional custom metrics logging function. If supplied, takes care of metrics produced
                                  during training in a custom way. It should accept a list or a dictionary of
                                  (metric name, metric value) pairs, and an optional global_step/checkpoint parameter.
    :param checkpoint_callback: An optional callback function (int -> None). The function will be called
                                each time a checkpoint has been reached
    """

    if args.dist:
        torch.distributed.init_process_group(torch.distributed.Backend.GLOO if args.use_cpu
                                             else torch.distributed.Backend.NCCL)

    if args.dry_run:
        # Modify arguments so that we write to a temporary directory and
        # perform 0 training iterations
        temp_dir = tempfile.TemporaryDirectory()  # Will be automatically removed
        args.output = temp_dir.name
        args.max_updates = 0

    # Automatic Mixed Precision training
    using_amp = False
    if args.amp:
        using_amp = True

    if args.apex_amp:
        check_condition(not args.amp, "--apex-amp and --amp cannot be used together")

    utils.seed_rngs(args.seed)

    check_resume(args, args.output)
    setup_main_logger(file_logging=utils.is_primary_worker() and not args.no_logfile,
                      console=utils.is_primary_worker() and not args.quiet,
                      path=os.path.join(args.output, C.LOG_NAME),
                      level=args.loglevel)
    utils.log_basic_info(args)

    if args.dist and not args.use_cpu:
        # In distributed mode every worker uses the GPU matching its local rank
        args.device_id = utils.get_local_rank()
    if not args.use_cpu:
        check_condition(args.device_id < utils.get_num_gpus(),
                        "--device-id %d but only %d GPU(s) visible" % (args.device_id, utils.get_num_gpus()))
    device = utils.init_device(args)
    logger.info(f'Training Device: {device}')

    max_seq_len_source, max_seq_len_target = args.max_seq_len
    # The maximum length given by the user is the length before we add the BOS/EOS symbols
    max_seq_len_source = max_seq_len_source + C.SPACE_FOR_XOS
    max_seq_len_target = max_seq_len_target + C.SPACE_FOR_XOS
    logger.info("Adjusting maximum length to reserve space for a BOS/EOS marker. New maximum length: (%d, %d)",
                max_seq_len_source, max_seq_len_target)

    with ExitStack() as exit_stack:
        train_iter, eval_iter, config_data, source_vocabs, target_vocabs = data_io.create_data_iters_and_vocabs(
            args=args,
            max_seq_len_source=max_seq_len_source,
            max_seq_len_target=max_seq_len_target,
            shared_vocab=args.shared_vocab,
            resume_training=os.path.exists(os.path.join(args.output, C.TRAINING_STATE_DIRNAME)),
            output_folder=args.output)

        if utils.is_primary_worker():
            vocab.save_source_vocabs(source_vocabs, args.output)
            vocab.save_target_vocabs(target_vocabs, args.output)

        model_config = model.ModelConfig.from_args(args, config_data, source_vocabs, target_vocabs)
        sockeye_model = model.SockeyeModel(model_config, train_decoder_only=args.fixed_param_strategy is not None)
        sockeye_model.to(device)
        sockeye_model.apply(model.initialize_parameters)

        optimizer, zero_grad_kwargs = _build_optimizer(sockeye_model, args, running_on_gpu=not args.use_cpu)

        # This starts as a reference to the original Sockeye model. It is
        # sequentially transformed/wrapped to produce the model instance used
        # for training.
        training_model = sockeye_model  # type: torch.nn.Module

        if args.apex_amp:
            try:
                import apex.amp
            except ImportError:
                logger.error('Cannot import NVIDIA Apex AMP. Please install Apex: https://github.com/NVIDIA/apex')
                sys.exit(1)
            # Optimization level 2 runs the entire model in FP16 mode with FP32
            # master weights and dynamic loss scaling.
            training_model, optimizer = apex.amp.initialize(training_model, optimizer, opt_level='O2')

        autocast, scaler = _amp_objects(args)

        if utils.is_distributed():
            # In distributed mode, wrap the traced model with a distributed
            # data-parallel model that shares (averages) gradients with models
            # in other worker processes.
            training_model = torch.nn.parallel.DistributedDataParallel(
                training_model,
                device_ids=None if args.use_cpu else [device],
                output_device=None if args.use_cpu else device)

        trainer = training.EarlyStoppingTrainer(
            config=training.TrainerConfig(output_dir=args.output,
                                          early_stopping_metric=args.optimized_metric,
                                          max_params_files_to_keep=args.keep_last_params,
                                          checkpoint_interval=args.checkpoint_interval,
                                          max_num_checkpoint_not_improved=args.max_num_checkpoint_not_improved,
                                          update_interval=args.update_interval,
                                          max_updates=args.max_updates),
            optimizer=optimizer,
            zero_grad_kwargs=zero_grad_kwargs,
            sockeye_model=sockeye_model,
            training_model=training_model,
            device=device,
            using_amp=using_amp,
            autocast=autocast,
            grad_scaler=scaler,
            using_apex_amp=args.apex_amp,
            custom_metrics_logger=custom_metrics_logger,
            checkpoint_callback=checkpoint_callback)

        cp_decoder = checkpoint_decoder.create_checkpoint_decoder(args, device, sockeye_model,
                                                                  source_vocabs, target_vocabs)

        training_state = trainer.fit(train_iter=train_iter, validation_iter=eval_iter,
                                     checkpoint_decoder=cp_decoder)
        return training_state


def check_resume(args: argparse.Namespace, output_folder: str) -> bool:
    """
    Check if we should resume a broken training run.

    :param args: Arguments as returned by argparse.
    :param output_folder: Main output folder for the model.

    :return: Flag signaling if we are resuming training.
    """
    resume_training = False
    training_state_dir = os.path.join(output_folder, C.TRAINING_STATE_DIRNAME)
    if os.path.exists(output_folder):
        if args.overwrite_output:
            if utils.is_primary_worker():
                logger.info("Removing existing output folder %s.", output_folder)
                shutil.rmtree(output_folder)
                os.makedirs(output_folder)
        elif os.path.exists(training_state_dir):
            resume_training = True
            logger.info("Found partial training in '%s'. Resuming from saved state.", training_state_dir)
        else:
            check_condition(os.path.exists(os.path.join(output_folder, C.LOG_NAME)) is False,
                            "Refusing to overwrite existing output folder %s." % output_folder)
    else:
        if utils.is_primary_worker():
            os.makedirs(output_folder)
    return resume_training


if __name__ == "__main__":
    main()
