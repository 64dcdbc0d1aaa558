# Copyright 2020-present the HuggingFace Inc. team.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
"""
The Trainer class, to easily train a 🤗 Transformers from scratch or finetune it on a new task.
"""

import contextlib
import functools
import os
import random
import time
import warnings
from typing import Any, Dict, Optional, Union

import numpy as np
import torch
from packaging import version
from torch import nn

from .trainer_utils import TrainerMemoryTracker, speed_metrics
from .training_args import ParallelMode, TrainingArguments
from .utils import is_apex_available, is_sagemaker_mp_enabled, logging


if is_apex_available():
    from apex import amp

logger = logging.get_logger(__name__)

TRAINER_STATE_NAME = "trainer_state.json"


class Trainer:
    def __init__(self, model: nn.Module = None, args: TrainingArguments = None, **kwargs):
        self.args = args
        self.model = model
        self._memory_tracker = TrainerMemoryTracker(self.args.skip_memory_metrics)
        self._memory_tracker.start()
        self.use_apex = False
        self.use_cpu_amp = False
        self.amp_dtype = None

        # Mixed precision setup
        if args.fp16 or args.bf16:
            if args.half_precision_backend == "auto":
                if args.device == torch.device("cpu"):
                    if args.fp16:
                        raise ValueError("Tried to use `fp16` but it is not supported on cpu")
                    else:
                        args.half_precision_backend = "cpu_amp"
                else:
                    args.half_precision_backend = "amp"
            logger.info(f"Using {args.half_precision_backend} half precision backend")

        if (args.fp16 or args.bf16) and not (args.deepspeed or is_sagemaker_mp_enabled()):
            if args.half_precision_backend == "cpu_amp":
                self.use_cpu_amp = True
                self.amp_dtype = torch.bfloat16
            elif args.half_precision_backend == "amp":
                self.amp_dtype = torch.float16 if args.fp16 else torch.bfloat16
                self.scaler = torch.cuda.amp.GradScaler()
            elif args.half_precision_backend == "apex":
                if not is_apex_available():
                    raise ImportError("Using FP16 with APEX but APEX is not installed")
                self.use_apex = True

        self._memory_tracker.stop_and_update_metrics()

    @staticmethod
    def get_optimizer_cls_and_kwargs(args: TrainingArguments):
        """
        Returns the optimizer class and optimizer parameters based on the training arguments.
        """
        optimizer_kwargs = {"lr": args.learning_rate}
        adam_kwargs = {"betas": (args.adam_beta1, args.adam_beta2), "eps": args.adam_epsilon}
        if args.optim == "adamw_torch":
            optimizer_cls = torch.optim.AdamW
            optimizer_kwargs.update(adam_kwargs)
        elif args.optim == "adamw_torch_fused":
            optimizer_cls = torch.optim.AdamW
            optimizer_kwargs.update(adam_kwargs)
            optimizer_kwargs.update({"fused": True})
        elif args.optim == "adamw_apex_fused":
            try:
                from apex.optimizers import FusedAdam

                optimizer_cls = FusedAdam
                optimizer_kwargs.update(adam_kwargs)
            except ImportError:
                raise ValueError("Trainer tried to instantiate apex FusedAdam but apex is not installed!")
        elif args.optim == "sgd":
            optimizer_cls = torch.optim.SGD
        else:
            raise ValueError(f"Trainer cannot instantiate unsupported optimizer: {args.optim}")
        return optimizer_cls, optimizer_kwargs

    def _device_memory_metrics(self, prefix: str) -> Dict[str, int]:
        # Device-side counterpart of the CPU RSS tracking done by TrainerMemoryTracker
        metrics = {}
        if torch.cuda.is_available():
            metrics[f"{prefix}_mem_gpu_alloc"] = torch.cuda.memory_allocated()
            metrics[f"{prefix}_mem_gpu_peaked"] = torch.cuda.max_memory_allocated()
            torch.cuda.reset_peak_memory_stats()
        return metrics

    def autocast_smart_context_manager(self, cache_enabled: Optional[bool] = True):
        """
        A helper wrapper that creates an appropriate context manager for `autocast` while feeding it the desired
        arguments, depending on the situation.
        """
        if self.use_cpu_amp:
            ctx_manager = torch.cpu.amp.autocast(cache_enabled=cache_enabled, dtype=self.amp_dtype)
        elif self.amp_dtype is not None:
            ctx_manager = torch.cuda.amp.autocast(cache_enabled=cache_enabled, dtype=self.amp_dtype)
        else:
            ctx_manager = contextlib.nullcontext()
        return ctx_manager

    def training_step(self, model: nn.Module, inputs: Dict[str, Union[torch.Tensor, Any]]) -> torch.Tensor:
        model.train()
        inputs = self._prepare_inputs(inputs)

        with self.autocast_smart_context_manager():
            loss = self.compute_loss(model, inputs)

        del inputs
        if (
            self.args.torch_empty_cache_steps is not None
            and self.state.global_step % self.args.torch_empty_cache_steps == 0
        ):
            if torch.backends.mps.is_available():
                torch.mps.empty_cache()
            else:
                torch.cuda.empty_cache()

        if self.args.n_gpu > 1:
            loss = loss.mean()  # mean() to average on multi-gpu parallel training

        if self.use_apex:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        elif self.amp_dtype == torch.float16:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()

        return loss.detach() / self.args.gradient_accumulation_steps

    def _wrap_model(self, model, training=True):
        # Multi-gpu training (should be after apex fp16 initialization)
        if self.args.n_gpu > 1:
            model = nn.DataParallel(model)
        if not training:
            return model
        if self.args.parallel_mode == ParallelMode.DISTRIBUTED:
            kwargs = {}
            if self.args.ddp_find_unused_parameters is not None:
                kwargs["find_unused_parameters"] = self.args.ddp_find_unused_parameters
            model = nn.parallel.DistributedDataParallel(model, device_ids=[self.args.local_rank], **kwargs)
        return model

    def _save_rng_state(self, output_dir):
        # Save RNG state in non-distributed training
        rng_states = {
            "python": random.getstate(),
            "numpy": np.random.get_state(),
            "cpu": torch.random.get_rng_state(),
        }
        if torch.cuda.is_available():
            if self.args.parallel_mode == ParallelMode.DISTRIBUTED:
                # In non distributed, we save the global CUDA RNG state (will take care of DataParallel)
                rng_states["cuda"] = torch.cuda.random.get_rng_state_all()
            else:
                rng_states["cuda"] = torch.cuda.random.get_rng_state()

        os.makedirs(output_dir, exist_ok=True)
        if self.args.world_size <= 1:
            torch.save(rng_states, os.path.join(output_dir, "rng_state.pth"))
        else:
            torch.save(rng_states, os.path.join(output_dir, f"rng_state_{self.args.process_index}.pth"))

    def _load_rng_state(self, checkpoint):
        if checkpoint is None:
            return
        rng_file = os.path.join(checkpoint, f"rng_state_{self.args.process_index}.pth")
        if not os.path.isfile(rng_file):
            rng_file = os.path.join(checkpoint, "rng_state.pth")
            if not os.path.isfile(rng_file):
                logger.info("Didn't find an RNG file, if you are resuming a training that wasn't launched in a distributed fashion, reproducibility is not guaranteed.")
                return

        checkpoint_rng_state = torch.load(rng_file)
        random.setstate(checkpoint_rng_state["python"])
        np.random.set_state(checkpoint_rng_state["numpy"])
        torch.random.set_rng_state(checkpoint_rng_state["cpu"])
        if torch.cuda.is_available():
            if self.args.parallel_mode == ParallelMode.DISTRIBUTED:
                torch.cuda.random.set_rng_state_all(checkpoint_rng_state["cuda"])
            else:
                try:
                    torch.cuda.random.set_rng_state(checkpoint_rng_state["cuda"])
                except Exception as e:
                    logger.info(f"Didn't manage to set back the RNG states of the GPU because of the following error:\n {e}"
                        "\nThis won't yield the same results as if the training had not been interrupted.")

    def evaluate(self, eval_dataset=None, metric_key_prefix: str = "eval") -> Dict[str, float]:
        self._memory_tracker.start()
        start_time = time.time()
        output = self.evaluation_loop(eval_dataset, description="Evaluation", metric_key_prefix=metric_key_prefix)
        total_batch_size = self.args.eval_batch_size * self.args.world_size
        if self.args.device.type == "cuda":
            torch.cuda.synchronize()
        output.metrics.update(
            speed_metrics(metric_key_prefix, start_time, num_samples=output.num_samples,
                          num_steps=max(1, output.num_samples // total_batch_size))
        )
        self._memory_tracker.stop_and_update_metrics(output.metrics)
        return output.metrics
