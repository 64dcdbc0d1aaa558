"""Trainer module (condensed from ESPnet2): AMP, DP/DDP wrapping, iterator-stop synchronisation."""
import dataclasses
import logging
import os
import time
from contextlib import contextmanager
from dataclasses import is_dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

import humanfriendly
import numpy as np
import torch
import torch.nn
import torch.optim
from torch.cuda.amp import GradScaler, autocast
from torch.distributed import ReduceOp

from espnet2.torch_utils.device_funcs import to_device
from espnet2.torch_utils.recursive_op import recursive_average
from espnet2.train.reporter import Reporter, SubReporter


@dataclasses.dataclass
class DistributedOption:
    distributed: bool = False
    dist_backend: str = "nccl"
    dist_init_method: str = "env://"
    dist_world_size: Optional[int] = None
    dist_rank: Optional[int] = None
    local_rank: Optional[int] = None
    ngpu: int = 0

    def init_torch_distributed(self):
        if not self.distributed:
            return
        # See:
        # https://docs.nvidia.com/deeplearning/sdk/nccl-developer-guide/docs/env.html
        os.environ.setdefault("NCCL_DEBUG", "INFO")
        # See:
        # https://pytorch.org/docs/stable/distributed.html#torch.distributed.init_process_group
        os.environ.setdefault("NCCL_BLOCKING_WAIT", "1")
        torch.distributed.init_process_group(
            backend=self.dist_backend,
            init_method=self.dist_init_method,
            world_size=self.dist_world_size,
            rank=self.dist_rank,
        )
        # About distributed model:
        # if self.local_rank is not None and ngpu == 1
        #    => Distributed with n-Process and n-GPUs
        # if self.local_rank is None and ngpu >= 1
        #    => Distributed with 1-Process and n-GPUs
        if self.local_rank is not None and self.ngpu > 0:
            torch.cuda.set_device(self.local_rank)


@dataclasses.dataclass
class TrainerOptions:
    ngpu: int
    use_amp: bool
    accum_grad: int
    grad_clip: float
    grad_clip_type: float
    log_interval: Optional[int]
    unused_parameters: bool
    max_epoch: int
    output_dir: Union[Path, str]


class Trainer:
    """Training loop shared by every ESPnet2 task (ASR, TTS, ENH, ...)."""

    def __init__(self):
        raise RuntimeError("This class can't be instantiated.")

    @classmethod
    def run(cls, model: torch.nn.Module, optimizers: Sequence[torch.optim.Optimizer], schedulers,
            train_iter_factory, trainer_options: TrainerOptions, distributed_option: DistributedOption) -> None:
        assert is_dataclass(trainer_options), type(trainer_options)
        if trainer_options.use_amp:
            scaler = GradScaler()
        else:
            scaler = None

        if distributed_option.distributed:
            dp_model = torch.nn.parallel.DistributedDataParallel(
                model,
                device_ids=([torch.cuda.current_device()] if distributed_option.ngpu == 1 else None),
                output_device=(torch.cuda.current_device() if distributed_option.ngpu == 1 else None),
                find_unused_parameters=trainer_options.unused_parameters,
            )
        elif distributed_option.ngpu > 1:
            dp_model = torch.nn.parallel.DataParallel(model, device_ids=list(range(distributed_option.ngpu)))
        else:
            # NOTE(kamo): DataParallel also should work with ngpu=1,
            # but for debuggability it's better to keep this block.
            dp_model = model

        reporter = Reporter()
        output_dir = Path(trainer_options.output_dir)
        start_time = time.perf_counter()
        for iepoch in range(reporter.get_epoch() + 1, trainer_options.max_epoch + 1):
            if iepoch != reporter.get_epoch() + 1:
                logging.info(
                    "{}/{}epoch started. Estimated time to finish: {}".format(
                        iepoch, trainer_options.max_epoch,
                        humanfriendly.format_timespan((time.perf_counter() - start_time)
                                                      / (iepoch - reporter.get_epoch() - 1)
                                                      * (trainer_options.max_epoch - iepoch + 1))))
            reporter.set_epoch(iepoch)
            with reporter.observe("train") as sub_reporter:
                all_steps_are_invalid = cls.train_one_epoch(
                    model=dp_model,
                    optimizers=optimizers,
                    schedulers=schedulers,
                    iterator=train_iter_factory.build_iter(iepoch),
                    reporter=sub_reporter,
                    scaler=scaler,
                    options=trainer_options,
                    distributed_option=distributed_option,
                )
            if all_steps_are_invalid:
                logging.warning(f"The gradients at all steps are invalid in this epoch. "
                                f"Something seems wrong. This training was stopped at {iepoch}epoch")
                break
            if not distributed_option.distributed or distributed_option.dist_rank == 0:
                torch.save(model.state_dict(), output_dir / f"{iepoch}epoch.pth")

    @classmethod
    def train_one_epoch(cls, model: torch.nn.Module, iterator: Iterable[Tuple[List[str], Dict[str, torch.Tensor]]],
                        optimizers: Sequence[torch.optim.Optimizer], schedulers, scaler: Optional[GradScaler],
                        reporter: SubReporter, options: TrainerOptions,
                        distributed_option: DistributedOption) -> bool:
        grad_noise = False
        accum_grad = options.accum_grad
        grad_clip = options.grad_clip
        grad_clip_type = options.grad_clip_type
        log_interval = options.log_interval or 100
        ngpu = options.ngpu
        distributed = distributed_option.distributed

        model.train()
        all_steps_are_invalid = True
        # [For distributed] Because iteration counts are not always equals between
        # processes, send stop-flag to the other processes if iterator is finished
        iterator_stop = torch.tensor(0).to("cuda" if ngpu > 0 else "cpu")

        start_time = time.perf_counter()
        for iiter, (utt_id, batch) in enumerate(reporter.measure_iter_time(iterator, "iter_time"), 1):
            assert isinstance(batch, dict), type(batch)
            if distributed:
                torch.distributed.all_reduce(iterator_stop, ReduceOp.SUM)
                if iterator_stop > 0:
                    break

            batch = to_device(batch, "cuda" if ngpu > 0 else "cpu")
            try:
                with reporter.measure_time("forward_time"):
                    with autocast(scaler is not None):
                        retval = model(**batch)
                        loss, stats, weight = retval["loss"], retval["stats"], retval["weight"]
                    stats = {k: v for k, v in stats.items() if v is not None}
                    if ngpu > 1 or distributed:
                        # Apply weighted averaging for loss and stats
                        loss = (loss * weight.type(loss.dtype)).sum()
                        stats, weight = recursive_average(stats, weight, distributed)
                        loss /= weight
                    if distributed:
                        # NOTE(kamo): Multiply world_size because DistributedDataParallel
                        # automatically normalizes the gradient by world_size.
                        loss *= torch.distributed.get_world_size()
                    loss /= accum_grad
                reporter.register(stats, weight)

                with reporter.measure_time("backward_time"):
                    if scaler is not None:
                        scaler.scale(loss).backward()
                    else:
                        loss.backward()
            except RuntimeError as e:
                if "CUDA out of memory" in str(e):
                    logging.warning(f"OOM at iteration {iiter} (utt: {utt_id[0]}...), skipping the batch")
                    for p in model.parameters():
                        p.grad = None
                    torch.cuda.empty_cache()
                    continue
                raise

            if iiter % accum_grad == 0:
                if scaler is not None:
                    for iopt, optimizer in enumerate(optimizers):
                        scaler.unscale_(optimizer)
                grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=grad_clip,
                                                           norm_type=grad_clip_type)
                if not torch.isfinite(grad_norm):
                    logging.warning(f"The grad norm is {grad_norm}. Skipping updating the model.")
                    if scaler is not None:
                        for iopt, optimizer in enumerate(optimizers):
                            scaler.step(optimizer)
                            scaler.update()
                else:
                    all_steps_are_invalid = False
                    with reporter.measure_time("optim_step_time"):
                        for iopt, optimizer in enumerate(optimizers):
                            if scaler is not None:
                                scaler.step(optimizer)
                                scaler.update()
                            else:
                                optimizer.step()
                for iopt, optimizer in enumerate(optimizers):
                    optimizer.zero_grad()
                reporter.register(dict(grad_norm=grad_norm.item(),
                                       clip=torch.where(grad_norm > grad_clip, grad_norm.new_tensor(100),
                                                        grad_norm.new_tensor(0)),
                                       loss_scale=scaler.get_scale() if scaler else 1.0))
            if torch.cuda.is_available():
                reporter.register({"gpu_max_cached_mem_GB": torch.cuda.max_memory_reserved() / 2 ** 30})
            reporter.register(dict(train_time=time.perf_counter() - start_time))
            start_time = time.perf_counter()
            if iiter % log_interval == 0:
                logging.info(reporter.log_message(-log_interval))
        else:
            if distributed:
                iterator_stop.fill_(1)
                torch.distributed.all_reduce(iterator_stop, ReduceOp.SUM)
        return all_steps_are_invalid
