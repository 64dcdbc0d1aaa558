# -*- coding: utf-8 -*-

import gc
import importlib
import logging
import os
import platform
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Tuple, Union

import torch
import torch.distributed as dist
from coqpit import Coqpit
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP_th
from torch.utils.data import DataLoader

from trainer.callbacks import TrainerCallback
from trainer.generic_utils import (
    KeepAverage,
    count_parameters,
    get_experiment_folder_path,
    get_git_branch,
    isimplemented,
    remove_experiment_folder,
    set_partial_state_dict,
    setup_torch_training_env,
    to_cuda,
)
from trainer.io import copy_model_files, get_last_checkpoint, load_fsspec, save_best_model, save_checkpoint
from trainer.logging import ConsoleLogger, DummyLogger, logger_factory
from trainer.trainer_utils import get_optimizer, get_scheduler, is_apex_available
from trainer.utils.distributed import get_rank, init_distributed, rank_zero_logger_info, rank_zero_only

logger = logging.getLogger("trainer")


@dataclass
class TrainerConfig(Coqpit):
    """Config fields tweaking the Trainer for a model.
    A ````ModelConfig```, by inheriting ```TrainerConfig``` must be defined for using 👟.
    Inherit this by a new model config and override the fields as needed.
    All the fields can be overridden from comman-line as ```--coqpit.arg_name=value```.
    """

    output_path: str = field(default="output", metadata={"help": "Path to the output directory. Defaults to 'output'"})
    logger_uri: str = field(default=None, metadata={"help": "URI to save training artifacts by the logger."})
    run_name: str = field(default="run", metadata={"help": "Name of the run. Defaults to 'run'"})
    project_name: str = field(default=None, metadata={"help": "Name of the project. Defaults to None"})
    run_description: str = field(default="🐸Coqui trainer run.", metadata={"help": "Notes and description about the run."})
    # logging params
    print_step: int = field(default=25, metadata={"help": "Print training stats on the terminal every print_step steps."})
    plot_step: int = field(default=100, metadata={"help": "Plot training stats on the logger every plot_step steps."})
    dashboard_logger: str = field(default="tensorboard", metadata={"help": "Logger to use for the tracking dashboard."})
    # checkpointing
    save_step: int = field(default=10000, metadata={"help": "Save checkpoint every save_step steps. 0 disables saving."})
    save_n_checkpoints: int = field(default=5, metadata={"help": "Keep n last checkpoints. Defaults to 5."})
    save_checkpoints: bool = field(default=True, metadata={"help": "Save checkpoints every save_step steps."})
    # evaluation
    run_eval: bool = field(default=True, metadata={"help": "Run evalulation epoch after training epoch."})
    test_delay_epochs: int = field(default=0, metadata={"help": "Wait N epochs before running the test. Defaults to 0."})
    # distributed
    distributed_backend: str = field(default="nccl", metadata={"help": "Distributed backend to use. Defaults to 'nccl'"})
    distributed_url: str = field(default="tcp://localhost:54321", metadata={"help": "Distributed url to use."})
    # fp16 training
    mixed_precision: bool = field(default=False, metadata={"help": "Use mixed precision training. Defaults to False"})
    precision: str = field(default="fp16", metadata={"help": "Precision to use in mixed precision training. `fp16` for float16 and `bf16` for bfloat16. Defaults to 'fp16'"})
    # training params
    epochs: int = field(default=1000, metadata={"help": "Number of epochs to train. Defaults to 1000"})
    batch_size: int = field(default=32, metadata={"help": "Batch size to use. Defaults to 32"})
    eval_batch_size: int = field(default=16, metadata={"help": "Batch size to use for eval. Defaults to 16"})
    grad_clip: float = field(default=0.0, metadata={"help": "Gradient clipping value. Disabled if <= 0. Defaults to 0.0"})
    scheduler_after_epoch: bool = field(default=True, metadata={"help": "Step the scheduler after each epoch else step after each iteration."})
    # optimizer params
    lr: Union[float, List[float]] = field(default=0.001, metadata={"help": "Learning rate for each optimizer. Defaults to 0.001"})
    optimizer: Union[str, List[str]] = field(default=None, metadata={"help": "Optimizer(s) to use. Defaults to None"})
    optimizer_params: Union[Dict, List[Dict]] = field(default_factory=dict, metadata={"help": "Optimizer(s) arguments."})
    lr_scheduler: Union[str, List[str]] = field(default=None, metadata={"help": "Learning rate scheduler(s) to use."})
    lr_scheduler_params: Dict = field(default_factory=dict, metadata={"help": "Learning rate scheduler(s) arguments."})
    use_grad_scaler: bool = field(default=False, metadata={"help": "Enable/disable gradient scaler explicitly. It is enabled by default with AMP training."})
    allow_tf32: bool = field(default=False, metadata={"help": "A bool that controls whether TensorFloat-32 tensor cores may be used."})
    cudnn_enable: bool = field(default=True, metadata={"help": "Enable/disable cudnn explicitly. Defaults to True"})
    cudnn_deterministic: bool = field(default=False, metadata={"help": "Enable/disable deterministic cudnn operations."})
    cudnn_benchmark: bool = field(default=False, metadata={"help": "Enable/disable cudnn benchmark explicitly. Defaults to False"})
    training_seed: int = field(default=54321, metadata={"help": "Global seed for torch, random and numpy random number generator."})


@dataclass
class TrainerArgs(Coqpit):
    """Trainer arguments to be defined externally. It helps integrating the `Trainer` with the higher level APIs and
    set the values for distributed training."""

    continue_path: str = field(default="", metadata={"help": "Path to a training folder to continue training."})
    restore_path: str = field(default="", metadata={"help": "Path to a model checkpoit. Restore the model with the given checkpoint and start a new training."})
    use_ddp: bool = field(default=False, metadata={"help": "Use DDP in distributed training. It is to set in `distribute.py`."})
    use_accelerate: bool = field(default=False, metadata={"help": "Use HF Accelerate as the back end for training."})
    grad_accum_steps: int = field(default=1, metadata={"help": "Number of gradient accumulation steps."})
    overfit_batch: bool = field(default=False, metadata={"help": "Overfit a single batch for debugging."})
    skip_train_epoch: bool = field(default=False, metadata={"help": "Skip training and only run evaluation and test."})
    start_with_eval: bool = field(default=False, metadata={"help": "Start with evaluation and test."})
    gpu: int = field(default=None, metadata={"help": "GPU ID to use if ```CUDA_VISIBLE_DEVICES``` is not set. Defaults to None."})
    # only for DDP
    rank: int = field(default=0, metadata={"help": "Process rank in a distributed training. Don't set manually."})
    group_id: str = field(default="", metadata={"help": "Process group id in a distributed training. Don't set manually."})


class Trainer:
    def __init__(  # pylint: disable=dangerous-default-value
        self,
        args: TrainerArgs,
        config: Coqpit,
        output_path: str,
        c_logger: ConsoleLogger = None,
        dashboard_logger=None,
        model: nn.Module = None,
        get_model: Callable = None,
        get_data_samples: Callable = None,
        train_samples: List = None,
        eval_samples: List = None,
        test_samples: List = None,
        train_loader: DataLoader = None,
        eval_loader: DataLoader = None,
        training_assets: Dict = {},
        parse_command_line_args: bool = True,
        callbacks: Dict[str, Callable] = {},
        gpu: int = None,
    ) -> None:
        self.args = args
        self.config = config
        self.output_path = output_path
        self.training_assets = training_assets
        self.grad_accum_steps = args.grad_accum_steps
        self.overfit_batch = args.overfit_batch
        self.skip_train_epoch = args.skip_train_epoch
        self.start_with_eval = args.start_with_eval

        # setup torch environment
        self.use_cuda, self.num_gpus = setup_torch_training_env(
            args=args,
            cudnn_enable=config.cudnn_enable,
            cudnn_deterministic=config.cudnn_deterministic,
            cudnn_benchmark=config.cudnn_benchmark,
            use_ddp=args.use_ddp,
            training_seed=config.training_seed,
            allow_tf32=config.allow_tf32,
            gpu=gpu if args.gpu is None else args.gpu,
        )

        # init loggers
        self.c_logger = ConsoleLogger() if c_logger is None else c_logger
        self.dashboard_logger = dashboard_logger

        # setup distributed
        self.use_ddp = args.use_ddp
        if self.use_ddp:
            init_distributed(
                args.rank,
                self.num_gpus,
                args.group_id,
                self.config.distributed_backend,
                self.config.distributed_url,
            )

        # init model
        self.model = model if model is not None else get_model(self.config)

        # init criterion
        self.criterion = self.get_criterion(self.model)

        # setup mixed precision
        self.use_amp_scaler = (
            self.use_cuda and self.config.mixed_precision and self.config.precision == "fp16"
        ) or self.config.use_grad_scaler
        if self.use_amp_scaler:
            self.scaler = torch.cuda.amp.GradScaler()
        else:
            self.scaler = None

        # move model and criterion to the device
        if self.use_cuda:
            self.model.cuda()
            if isinstance(self.criterion, list):
                for criterion in self.criterion:
                    if isinstance(criterion, torch.nn.Module):
                        criterion.cuda()
            else:
                if isinstance(self.criterion, torch.nn.Module):
                    self.criterion.cuda()

        # setup optimizer and scheduler
        self.optimizer = self.get_optimizer(self.model, self.config)
        self.scheduler = self.get_scheduler(self.model, self.config, self.optimizer)

        # DISTRIBUTED
        if self.use_ddp:
            self.model = DDP_th(self.model, device_ids=[args.rank], output_device=args.rank)

        # count model size
        num_params = count_parameters(self.model)
        rank_zero_logger_info(f"\n > Model has {num_params} parameters", logger)

        self.keep_avg_train = None
        self.keep_avg_eval = None
        self.total_steps_done = 0
        self.epochs_done = 0

    @staticmethod
    def get_criterion(model: nn.Module) -> nn.Module:
        return model.get_criterion() if hasattr(model, "get_criterion") else None

    @staticmethod
    def get_optimizer(model: nn.Module, config: Coqpit):
        if isimplemented(model, "get_optimizer"):
            return model.get_optimizer()
        optimizer_name = config.optimizer
        optimizer_params = {} if config.optimizer_params is None else config.optimizer_params
        return get_optimizer(optimizer_name, optimizer_params, config.lr, model)

    @staticmethod
    def get_scheduler(model: nn.Module, config: Coqpit, optimizer):
        if isimplemented(model, "get_scheduler"):
            return model.get_scheduler(optimizer)
        lr_scheduler = config.lr_scheduler
        lr_scheduler_params = config.lr_scheduler_params
        return get_scheduler(lr_scheduler, lr_scheduler_params, optimizer)

    def format_batch(self, batch: List) -> Dict:
        """Format the dataloader output and return a batch, moving every tensor to the GPU."""
        model = self.model.module if self.num_gpus > 1 else self.model
        if hasattr(model, "format_batch"):
            batch = model.format_batch(batch)
        if self.use_cuda:
            for k, v in batch.items():
                batch[k] = to_cuda(v)
        if hasattr(model, "format_batch_on_device"):
            batch = model.format_batch_on_device(batch)
        return batch

    @staticmethod
    def _get_autocast_args(mixed_precision: bool, precision: str):
        device = "cpu"
        dtype = torch.get_autocast_cpu_dtype()
        if torch.cuda.is_available():
            device = "cuda"
            dtype = torch.float32
            if mixed_precision:
                if precision == "fp16":
                    dtype = torch.float16
                elif precision == "bf16":
                    dtype = torch.bfloat16
                else:
                    raise ValueError(f" ❗ Unknown precision {precision}")
        elif mixed_precision:
            dtype = torch.bfloat16
        return device, dtype

    def _model_train_step(self, batch: Dict, model: nn.Module, criterion: nn.Module, optimizer_idx: int = None) -> Tuple[Dict, Dict]:
        input_args = [batch, criterion]
        if optimizer_idx is not None:
            input_args.append(optimizer_idx)
        # unwrap model in DDP training
        if hasattr(model, "module"):
            return model.module.train_step(*input_args)
        return model.train_step(*input_args)

    def optimize(self, batch: Dict, model: nn.Module, optimizer, scaler, criterion, scheduler, config: Coqpit, optimizer_idx: int = None, step_optimizer: bool = True, num_optimizers: int = 1) -> Tuple[Dict, Dict, int]:
        step_start_time = time.time()

        # forward pass and loss computation
        device, dtype = self._get_autocast_args(config.mixed_precision, config.precision)
        with torch.autocast(device_type=device, dtype=dtype, enabled=config.mixed_precision):
            if optimizer_idx is not None:
                outputs, loss_dict = self._model_train_step(batch, model, criterion, optimizer_idx=optimizer_idx)
            else:
                outputs, loss_dict = self._model_train_step(batch, model, criterion)

        # skip the rest
        if outputs is None:
            step_time = time.time() - step_start_time
            return None, {}, step_time

        # accumulated gradients adjustment
        loss_dict["loss"] = loss_dict["loss"] / float(self.grad_accum_steps)

        # set gradient clipping threshold
        grad_clip = config.grad_clip if config.grad_clip is not None else 0.0
        grad_norm = 0

        # optimizer step
        update_lr_scheduler = True
        if self.use_amp_scaler:
            # model optimizer step in mixed precision mode
            scaler.scale(loss_dict["loss"]).backward()
            if step_optimizer:
                scaler.unscale_(optimizer)
                if grad_clip > 0:
                    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
                scale_prev = scaler.get_scale()
                scaler.step(optimizer)
                scaler.update()
                # skip the lr scheduler step if the scaler skipped the optimizer step (inf/nan grads)
                update_lr_scheduler = scale_prev <= scaler.get_scale()
        else:
            # main model optimizer step
            loss_dict["loss"].backward()
            if step_optimizer:
                if grad_clip > 0:
                    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
                optimizer.step()

        step_time = time.time() - step_start_time

        # setup lr
        if scheduler is not None and update_lr_scheduler and not self.config.scheduler_after_epoch and step_optimizer:
            scheduler.step()

        # detach losses
        loss_dict = self._detach_loss_dict(loss_dict)
        if optimizer_idx is not None:
            loss_dict[f"loss_{optimizer_idx}"] = loss_dict.pop("loss")
            loss_dict[f"grad_norm_{optimizer_idx}"] = grad_norm
        else:
            loss_dict["grad_norm"] = grad_norm
        if step_optimizer:
            optimizer.zero_grad(set_to_none=True)
        return outputs, loss_dict, step_time

    @staticmethod
    def _detach_loss_dict(loss_dict: Dict) -> Dict:
        return {k: (v if isinstance(v, (int, float)) else v.detach().item()) for k, v in loss_dict.items()}

    def train_step(self, batch: Dict, batch_n_steps: int, step: int, loader_start_time: float) -> Tuple[Dict, Dict]:
        self.callbacks_on_train_step_start() if hasattr(self, "callbacks_on_train_step_start") else None
        # format data
        batch = self.format_batch(batch)
        loader_time = time.time() - loader_start_time

        step_optimizer = ((step + 1) % self.grad_accum_steps == 0) or (step + 1 == batch_n_steps)
        outputs, loss_dict, step_time = self.optimize(
            batch, self.model, self.optimizer, self.scaler, self.criterion, self.scheduler, self.config,
            step_optimizer=step_optimizer,
        )
        if outputs is None:
            return None, None

        # peak memory of the device, reported next to the losses
        if self.use_cuda:
            loss_dict["max_memory_gb"] = torch.cuda.max_memory_allocated() / 1024**3

        self.keep_avg_train.update_values({"avg_loader_time": loader_time, "avg_step_time": step_time})
        for key, value in loss_dict.items():
            self.keep_avg_train.update_value(f"avg_{key}", value)
        self.total_steps_done += 1
        return outputs, loss_dict

    def train_epoch(self, train_loader: DataLoader) -> None:
        self.model.train()
        epoch_start_time = time.time()
        self.keep_avg_train = KeepAverage()
        batch_num_steps = len(train_loader)
        loader_start_time = time.time()
        for cur_step, batch in enumerate(train_loader):
            outputs, _ = self.train_step(batch, batch_num_steps, cur_step, loader_start_time)
            if outputs is None:
                logger.info(" [!] `train_step()` retuned `None` outputs. Skipping training step.")
                continue
            del outputs
            loader_start_time = time.time()
        epoch_time = time.time() - epoch_start_time
        if self.config.scheduler_after_epoch and self.scheduler is not None:
            self.scheduler.step()
        # release cached blocks between epochs; variable-length batches fragment the allocator
        gc.collect()
        torch.cuda.empty_cache()
        rank_zero_logger_info(f" > Epoch time: {epoch_time:.2f}s", logger)

    def fit(self) -> None:
        """Where the ✨️magic✨️ happens..."""
        try:
            for epoch in range(self.epochs_done, self.config.epochs):
                if self.num_gpus > 1:
                    # let all processes sync up before starting with a new epoch of training
                    dist.barrier()
                self.train_epoch(self.train_loader)
                self.epochs_done = epoch + 1
        except KeyboardInterrupt:
            logger.info(" > Keyboard interrupt detected.")
            if self.num_gpus > 1:
                dist.destroy_process_group()
            raise
        except BaseException:  # pylint: disable=broad-except
            remove_experiment_folder(self.output_path)
            traceback.print_exc()
            sys.exit(1)
