"""
Builder for the training args and trainer
"""

import abc
import importlib
import logging
import math
import os
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import torch
import transformers
from transformers import (
    DataCollatorWithFlattening,
    EarlyStoppingCallback,
    TrainerCallback,
)
from transformers.utils import is_torch_bf16_gpu_available

from axolotl.core.trainers.base import AxolotlTrainer
from axolotl.core.training_args import AxolotlTrainingArguments
from axolotl.utils.callbacks import (
    LossWatchDogCallback,
    SaveAxolotlConfigtoWandBCallback,
)
from axolotl.utils.collators import (
    BatchSamplerDataCollatorForSeq2Seq,
    DataCollatorForSeq2Seq,
    V2BatchSamplerDataCollatorForSeq2Seq,
)
from axolotl.utils.schedulers import get_cosine_schedule_with_quadratic_warmup

LOG = logging.getLogger("axolotl.core.trainer_builder")


class GPUStatsCallback(TrainerCallback):
    """Log peak GPU memory once, after the first optimizer step."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.logged = False

    def on_step_end(self, args, state, control, **kwargs):  # pylint: disable=unused-argument
        if not self.logged and state.global_step > 1:
            allocated = torch.cuda.memory_allocated() / 1024**3
            peak = torch.cuda.max_memory_allocated() / 1024**3
            reserved = torch.cuda.memory_reserved() / 1024**3
            LOG.info(
                f"GPU memory usage while training: {allocated:.3f}GB "
                f"(peak {peak:.3f}GB, +{reserved - allocated:.3f}GB cache)"
            )
            self.logged = True
        return control


class TrainerBuilderBase(abc.ABC):
    """Base class for trainer builder"""

    _train_dataset = None
    _eval_dataset = None
    _model_ref = None

    def __init__(self, cfg, model, tokenizer, processor=None):
        self.cfg = cfg
        self.model = model
        self.tokenizer = tokenizer
        self.processor = processor

        # in case the model supports tagging, add the axolotl tag
        if hasattr(self.model, "add_model_tags"):
            self.model.add_model_tags(["axolotl"])

    @property
    def train_dataset(self):
        return self._train_dataset

    @train_dataset.setter
    def train_dataset(self, dataset):
        self._train_dataset = dataset

    @property
    def eval_dataset(self):
        return self._eval_dataset

    @eval_dataset.setter
    def eval_dataset(self, dataset):
        self._eval_dataset = dataset

    @abc.abstractmethod
    def build(self, total_num_steps):
        pass

    def get_callbacks(self) -> List[TrainerCallback]:
        callbacks = []
        if self.cfg.use_wandb:
            callbacks.append(SaveAxolotlConfigtoWandBCallback(self.cfg.axolotl_config_path))
        if self.cfg.loss_watchdog_threshold is not None:
            callbacks.append(LossWatchDogCallback(self.cfg))
        # reports peak GPU memory after the first step (uses torch.cuda stats)
        callbacks.append(GPUStatsCallback(self.cfg))
        return callbacks


class HFCausalTrainerBuilder(TrainerBuilderBase):
    """Build the HuggingFace training args/trainer for causal models"""

    def _resolve_precision(self, training_arguments_kwargs: Dict[str, Any]):
        if self.cfg.bf16 == "auto":
            self.cfg.bf16 = is_torch_bf16_gpu_available()
        if self.cfg.bf16 and not torch.cuda.is_bf16_supported():
            raise ValueError(
                "bf16 requested, but AMP is not supported on this GPU. Requires Ampere series or above."
            )
        if self.cfg.bf16 == "full":
            training_arguments_kwargs["bf16_full_eval"] = True
        else:
            training_arguments_kwargs["bf16"] = self.cfg.bf16
        training_arguments_kwargs["fp16"] = (self.cfg.fp16 and not self.cfg.bf16) or False
        training_arguments_kwargs["tf32"] = self.cfg.tf32
        if self.cfg.tf32:
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True

    def build(self, total_num_steps):
        warmup_steps = self.cfg.warmup_steps or min(int(0.03 * total_num_steps), 100)
        logging_steps = self.cfg.logging_steps or max(min(int(0.005 * total_num_steps), 10), 1)

        training_arguments_kwargs: Dict[str, Any] = {}
        self._resolve_precision(training_arguments_kwargs)

        if self.cfg.sample_packing and torch.cuda.get_device_capability()[0] < 8:
            LOG.warning("sample packing with flash-attn varlen needs sm80+; expect a slow fallback")

        if self.cfg.gradient_checkpointing:
            training_arguments_kwargs["gradient_checkpointing"] = True
            training_arguments_kwargs["gradient_checkpointing_kwargs"] = (
                self.cfg.gradient_checkpointing_kwargs or {"use_reentrant": False}
            )
        if self.cfg.fsdp:
            training_arguments_kwargs["fsdp"] = self.cfg.fsdp
            if self.cfg.fsdp_config:
                training_arguments_kwargs["fsdp_config"] = dict(self.cfg.fsdp_config)
        if self.cfg.deepspeed:
            training_arguments_kwargs["deepspeed"] = self.cfg.deepspeed

        if self.cfg.ddp_timeout:
            training_arguments_kwargs["ddp_timeout"] = self.cfg.ddp_timeout
        training_arguments_kwargs["ddp_backend"] = "nccl"
        if self.cfg.ddp_bucket_cap_mb:
            training_arguments_kwargs["ddp_bucket_cap_mb"] = self.cfg.ddp_bucket_cap_mb
        if self.cfg.ddp_broadcast_buffers is not None:
            training_arguments_kwargs["ddp_broadcast_buffers"] = self.cfg.ddp_broadcast_buffers

        if self.cfg.torch_compile:
            if torch.__version__ < "2.1.0":
                LOG.warning("torch>=2.1.0 required for torch_compile to work properly")
            else:
                training_arguments_kwargs["torch_compile"] = True
                training_arguments_kwargs["torch_compile_backend"] = self.cfg.torch_compile_backend or "inductor"
                training_arguments_kwargs["torch_compile_mode"] = self.cfg.torch_compile_mode or "max-autotune"

        training_arguments_kwargs["dataloader_pin_memory"] = True
        training_arguments_kwargs["dataloader_num_workers"] = self.cfg.dataloader_num_workers or 4
        training_arguments_kwargs["dataloader_prefetch_factor"] = self.cfg.dataloader_prefetch_factor

        optim = self.cfg.optimizer or "adamw_torch_fused"
        if optim == "adamw_apex_fused":
            try:
                from apex.optimizers import FusedAdam  # noqa: F401
            except ImportError:
                LOG.warning("apex not installed, falling back to adamw_torch_fused")
                optim = "adamw_torch_fused"

        training_args = AxolotlTrainingArguments(
            output_dir=self.cfg.output_dir,
            per_device_train_batch_size=self.cfg.micro_batch_size,
            per_device_eval_batch_size=self.cfg.eval_batch_size or self.cfg.micro_batch_size,
            gradient_accumulation_steps=self.cfg.gradient_accumulation_steps,
            num_train_epochs=self.cfg.num_epochs,
            learning_rate=self.cfg.learning_rate,
            warmup_steps=warmup_steps,
            logging_steps=logging_steps,
            optim=optim,
            lr_scheduler_type=self.cfg.lr_scheduler or "cosine",
            weight_decay=self.cfg.weight_decay or 0.0,
            sample_packing=bool(self.cfg.sample_packing),
            report_to="wandb" if self.cfg.use_wandb else "none",
            **training_arguments_kwargs,
        )

        data_collator = self.build_collator(training_args)
        trainer = AxolotlTrainer(
            model=self.model,
            args=training_args,
            train_dataset=self.train_dataset,
            eval_dataset=self.eval_dataset,
            tokenizer=self.tokenizer,
            data_collator=data_collator,
            callbacks=self.get_callbacks(),
        )
        return trainer

    def build_collator(self, training_args):
        if training_args.sample_packing:
            if self.cfg.flash_attention and not self.cfg.pretraining_dataset:
                # flash-attn varlen consumes position_ids directly
                return DataCollatorWithFlattening(return_position_ids=True)
            return V2BatchSamplerDataCollatorForSeq2Seq(
                self.tokenizer, return_tensors="pt", pad_to_multiple_of=64
            )
        return DataCollatorForSeq2Seq(self.tokenizer, return_tensors="pt", padding=True)
