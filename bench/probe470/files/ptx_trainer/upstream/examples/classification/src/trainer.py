########## The following part is copied from Transformers' trainer (3.4.0) and later ported to be compatible with v4.4.2 and to support initialization from linear head probing. ##########

# coding=utf-8
# Copyright 2020-present the HuggingFace Inc. team.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
"""
The Trainer class, to easily train a 🤗 Transformers from scratch or finetune it on a new task.
"""

import collections
import gc
import json
import math
import os
from typing import Any, Dict, Optional, Union

import torch
import torch.nn.functional as F
import transformers
from packaging import version
from torch import nn
from torch.utils.data.dataloader import DataLoader
from torch.utils.data.dataset import Dataset
from torch.utils.data.distributed import DistributedSampler
from torch.utils.data.sampler import RandomSampler, SequentialSampler
from tqdm.auto import tqdm, trange
from transformers.optimization import get_linear_schedule_with_warmup
from transformers.trainer_utils import PredictionOutput, TrainOutput
from transformers.utils import logging

from .compiled_args import TrainingArguments
from .processors import compute_metrics_mapping

_use_native_amp = False
if version.parse(torch.__version__) >= version.parse("1.6"):
    _use_native_amp = True
    from torch.cuda.amp import autocast

logger = logging.get_logger(__name__)


def default_dev_objective(metrics):
    """
    Objective used for picking the best model on development sets
    """
    if "eval_mnli/acc" in metrics:
        return metrics["eval_mnli/acc"]
    elif "eval_mnli-mm/acc" in metrics:
        return metrics["eval_mnli-mm/acc"]
    elif "eval_f1" in metrics:
        return metrics["eval_f1"]
    elif "eval_mcc" in metrics:
        return metrics["eval_mcc"]
    elif "eval_pearson" in metrics:
        return metrics["eval_pearson"]
    elif "eval_acc" in metrics:
        return metrics["eval_acc"]

    raise Exception("No metric founded for {}".format(metrics))


class Trainer(transformers.Trainer):
    """
    Adding some functions based on Transformers' Trainer class.
    """

    def __init__(self, model_args=None, privacy_args=None, auxiliary_args=None, privacy_engine=None, **kwargs):
        super(Trainer, self).__init__(**kwargs)
        self.privacy_args = privacy_args
        self.model_args = model_args
        self.auxiliary_args = auxiliary_args
        self.privacy_engine = privacy_engine
        self.scaler = None
        if self.args.fp16 and _use_native_amp:
            if privacy_engine is not None:
                raise ValueError("fp16 training is not supported together with the privacy engine.")
            self.scaler = torch.cuda.amp.GradScaler()

    def get_training_setup(self):
        train_dataloader = self.get_train_dataloader()
        if self.args.max_steps > 0:
            t_total = self.args.max_steps
            num_train_epochs = self.args.max_steps // (
                len(train_dataloader) // self.args.gradient_accumulation_steps
            ) + 1
        else:
            t_total = int(
                len(train_dataloader)
                // self.args.gradient_accumulation_steps
                * self.args.num_train_epochs
            )
            num_train_epochs = self.args.num_train_epochs
        return dict(
            train_dataloader=train_dataloader,
            t_total=t_total,
            num_train_epochs=num_train_epochs,
        )

    def create_optimizer_and_scheduler(self, num_training_steps: int):
        """
        Setup the optimizer and the learning rate scheduler. The optimizer is created
        outside (see run_classification.py) when the privacy engine is used.
        """
        if self.optimizer is None:
            no_decay = ["bias", "LayerNorm.weight"]
            optimizer_grouped_parameters = [
                {
                    "params": [p for n, p in self.model.named_parameters() if not any(nd in n for nd in no_decay)],
                    "weight_decay": self.args.weight_decay,
                },
                {
                    "params": [p for n, p in self.model.named_parameters() if any(nd in n for nd in no_decay)],
                    "weight_decay": 0.0,
                },
            ]
            self.optimizer = torch.optim.AdamW(
                optimizer_grouped_parameters,
                lr=self.args.learning_rate,
                betas=(self.args.adam_beta1, self.args.adam_beta2),
                eps=self.args.adam_epsilon,
            )
        if self.lr_scheduler is None:
            self.lr_scheduler = get_linear_schedule_with_warmup(
                self.optimizer, num_warmup_steps=self.args.warmup_steps, num_training_steps=num_training_steps
            )

    def compute_loss(self, model, inputs, return_outputs=False, return_vector_loss=False):
        outputs = model(**inputs)
        logits = outputs[0] if isinstance(outputs, (tuple, list)) else outputs.logits
        labels = inputs["labels"]
        loss = F.cross_entropy(logits, labels, reduction="none")
        if not return_vector_loss:
            loss = loss.mean(dim=0)
        return (loss, outputs) if return_outputs else loss

    def training_step(self, model: nn.Module, inputs: Dict[str, Union[torch.Tensor, Any]]) -> dict:
        model.train()
        inputs = self._prepare_inputs(inputs)

        if self.privacy_engine is None and self.scaler is not None:
            with autocast():
                loss = self.compute_loss(model, inputs)
            if self.args.gradient_accumulation_steps > 1:
                loss = loss / self.args.gradient_accumulation_steps
            self.scaler.scale(loss).backward()
            return {"scalar_loss": loss.detach()}

        vector_loss = self.compute_loss(model, inputs, return_vector_loss=True)
        scalar_loss = vector_loss.mean(dim=0) / self.args.gradient_accumulation_steps
        if self.privacy_engine is None:
            scalar_loss.backward()
        return dict(vector_loss=vector_loss, scalar_loss=scalar_loss.detach())

    def train(self, model_path=None, dev_objective=None, **kwargs):
        """
        Main training entry point.

        The training logic is directly borrowed from transformers.Trainer (version 3.0.2).
        Add early stopping.
        """
        self.best_dir = None
        self.objective = -float("inf")
        self.dev_objective = dev_objective if dev_objective is not None else default_dev_objective

        training_setup = self.get_training_setup()
        train_dataloader = training_setup["train_dataloader"]
        t_total = training_setup["t_total"]
        num_train_epochs = training_setup["num_train_epochs"]

        self.create_optimizer_and_scheduler(num_training_steps=t_total)
        optimizer = self.optimizer
        scheduler = self.lr_scheduler

        model = self.model
        model.to(self.args.device)

        # Multi-gpu training (should be after apex fp16 initialization)
        if self.args.n_gpu > 1:
            model = torch.nn.DataParallel(model)

        # Train
        total_train_batch_size = self.args.train_batch_size * self.args.gradient_accumulation_steps
        logger.info("***** Running training *****")
        logger.info("  Num examples = %d", self.num_examples(train_dataloader))
        logger.info("  Num Epochs = %d", num_train_epochs)
        logger.info("  Instantaneous batch size per device = %d", self.args.per_device_train_batch_size)
        logger.info("  Total train batch size (w. parallel, distributed & accumulation) = %d", total_train_batch_size)
        logger.info("  Gradient Accumulation steps = %d", self.args.gradient_accumulation_steps)
        logger.info("  Total optimization steps = %d", t_total)

        self.state.global_step = 0
        self.epoch = 0
        epochs_trained = 0
        tr_loss = torch.tensor(0.0).to(self.args.device)
        logging_loss_scalar = 0.0
        model.zero_grad(set_to_none=True)
        metrics = None
        train_iterator = trange(epochs_trained, int(num_train_epochs), desc="Epoch", disable=not self.is_local_process_zero())
        for epoch in train_iterator:
            if isinstance(train_dataloader, DataLoader) and isinstance(train_dataloader.sampler, DistributedSampler):
                train_dataloader.sampler.set_epoch(epoch)

            epoch_iterator = tqdm(train_dataloader, desc="Iteration", disable=True)
            for step, inputs in enumerate(epoch_iterator):
                losses = self.training_step(model, inputs)
                tr_loss += losses["scalar_loss"]

                if (step + 1) % self.args.gradient_accumulation_steps == 0 or (
                    # last step in epoch but step is always smaller than gradient_accumulation_steps
                    len(epoch_iterator) <= self.args.gradient_accumulation_steps
                    and (step + 1) == len(epoch_iterator)
                ):
                    if self.privacy_engine is not None:
                        vector_loss = losses.get("vector_loss")
                        self.optimizer.step(loss=vector_loss)
                    elif self.scaler is not None:
                        self.scaler.unscale_(optimizer)
                        torch.nn.utils.clip_grad_norm_(model.parameters(), self.args.max_grad_norm)
                        self.scaler.step(optimizer)
                        self.scaler.update()
                    else:
                        torch.nn.utils.clip_grad_norm_(model.parameters(), self.args.max_grad_norm)
                        optimizer.step()

                    scheduler.step()
                    model.zero_grad(set_to_none=True)
                    self.state.global_step += 1
                    self.epoch = epoch + (step + 1) / len(epoch_iterator)

                    if self.args.logging_steps > 0 and self.state.global_step % self.args.logging_steps == 0:
                        logs = {}
                        tr_loss_scalar = tr_loss.item()
                        logs["loss"] = (tr_loss_scalar - logging_loss_scalar) / self.args.logging_steps
                        logs["learning_rate"] = scheduler.get_last_lr()[0]
                        logs["peak_mem_gb"] = torch.cuda.max_memory_allocated() / 1e9
                        logging_loss_scalar = tr_loss_scalar
                        if self.privacy_engine is not None:
                            logs.update(self.privacy_engine.get_privacy_spent())
                            logs.update(self.privacy_engine.get_training_stats())
                        self.log(logs)

                    if self.args.evaluation_strategy == "steps" and self.state.global_step % self.args.eval_steps == 0:
                        output = self.evaluate()
                        metrics = output.metrics
                        objective = self.dev_objective(metrics)
                        if objective > self.objective:
                            logger.info("Best dev result: {}".format(objective))
                            self.objective = objective
                            self.save_model(self.args.output_dir)

                if 0 < self.args.max_steps < self.state.global_step:
                    epoch_iterator.close()
                    break
            if 0 < self.args.max_steps < self.state.global_step:
                train_iterator.close()
                break

        if self.args.evaluate_after_training:
            output = self.evaluate()
            metrics = output.metrics
            logger.info(json.dumps(metrics, indent=4))

        return TrainOutput(self.state.global_step, tr_loss / self.state.global_step, metrics), self.objective

    def evaluate(self, eval_dataset: Optional[Dataset] = None) -> PredictionOutput:
        """
        Run evaluation and returns metrics.
        """
        if eval_dataset is not None and not isinstance(eval_dataset, collections.abc.Sized):
            raise ValueError("eval_dataset must implement __len__")

        eval_dataloader = self.get_eval_dataloader(eval_dataset)
        output = self.prediction_loop(eval_dataloader, description="Evaluation")
        self.log(output.metrics)

        # Release cached activations of the evaluation pass before going back to training.
        gc.collect()
        torch.cuda.empty_cache()
        return output
