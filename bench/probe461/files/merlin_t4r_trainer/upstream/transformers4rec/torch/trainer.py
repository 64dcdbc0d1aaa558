#
# Copyright (c) 2021, NVIDIA CORPORATION.
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
#

import collections
import inspect
import logging
import random
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import torch
from torch.cuda.amp import autocast
from torch.utils.data.dataloader import DataLoader
from transformers import Trainer as BaseTrainer
from transformers.trainer_pt_utils import find_batch_size, nested_concat, nested_numpify
from transformers.trainer_utils import EvalLoopOutput, PredictionOutput, has_length

from merlin.io import Dataset
from merlin.schema import Schema

from ..config.trainer import T4RecTrainingArguments
from .model.base import Model
from .utils.data_utils import T4RecDataLoader

logger = logging.getLogger(__name__)


class Trainer(BaseTrainer):
    """
    A Trainer specialized for sequential recommendation
    including (session-based and sequtial recommendation)

    Parameters
    ----------
    model: Model
        The Model defined using Transformers4Rec api.
    args: T4RecTrainingArguments
        The training arguments needed to setup training and evaluation
        experiments.
    schema: Optional[Dataset.schema], optional
        The schema object including features to use and their properties.
        by default None
    train_dataset_or_path: Optional[Union[str, Dataset]], optional
        Path of parquet files or DataSet to use for training.
        by default None
    eval_dataset_or_path: Optional[str, Dataset], optional
        Path of parquet files or DataSet to use for evaluation.
        by default None
    test_dataset_or_path: Optional[str, Dataset], optional
        Path of parquet files or DataSet to use for testing.
        by default None
    """

    def __init__(
        self,
        model: Model,
        args: T4RecTrainingArguments,
        schema: Schema = None,
        train_dataset_or_path=None,
        eval_dataset_or_path=None,
        test_dataset_or_path=None,
        train_dataloader: Optional[DataLoader] = None,
        eval_dataloader: Optional[DataLoader] = None,
        test_dataloader: Optional[DataLoader] = None,
        callbacks: Optional[List] = [],
        compute_metrics=None,
        incremental_logging: bool = False,
        **kwargs,
    ):
        mock_dataset = DatasetMock()
        super(Trainer, self).__init__(
            model=model,
            args=args,
            train_dataset=mock_dataset,
            eval_dataset=mock_dataset,
            callbacks=callbacks,
            **kwargs,
        )
        self.compute_metrics = compute_metrics
        self.train_dataset_or_path = train_dataset_or_path
        self.eval_dataset_or_path = eval_dataset_or_path
        self.test_dataset_or_path = test_dataset_or_path
        self.train_dataloader = train_dataloader
        self.eval_dataloader = eval_dataloader
        self.test_dataloader = test_dataloader
        self.schema = schema
        self.incremental_logging = incremental_logging

    def get_test_dataloader(self, test_dataset=None):
        """
        Set the test dataloader to use by Trainer.
        It supports user defined data-loader set as an attribute in the constructor.
        When the attribute is None, The data-loader is defined using test_dataset
        and the `data_loader_engine` specified in Training Arguments.
        """
        if self.test_dataloader is not None:
            return self.test_dataloader

        if test_dataset is None and self.test_dataset_or_path is None:
            raise ValueError("Trainer: test requires an test_dataset.")
        test_dataset = test_dataset if test_dataset is not None else self.test_dataset_or_path
        assert self.schema is not None, "schema is required to generate Test Dataloader"
        return T4RecDataLoader.parse(self.args.data_loader_engine).from_schema(
            self.schema,
            test_dataset,
            self.args.per_device_eval_batch_size,
            max_sequence_length=self.args.max_sequence_length,
            drop_last=False,
            shuffle=False,
            shuffle_buffer_size=self.args.shuffle_buffer_size,
            # the merlin dataloader places batches on the GPU via cupy/dlpack
            device=self.args.local_rank if self.args.local_rank != -1 else 0,
        )

    def prediction_step(
        self,
        model: torch.nn.Module,
        inputs: Dict[str, torch.Tensor],
        prediction_loss_only: bool,
        ignore_keys: Optional[List[str]] = None,
        training: bool = False,
        testing: bool = True,
    ) -> Tuple[Optional[float], Optional[torch.Tensor], Optional[torch.Tensor], Optional[Dict[str, Any]]]:
        """
        Overriding :obj:`Trainer.prediction_step()` to provide more flexibility to the
        Transformers4Rec models. It runs the model in inference mode with mixed precision
        when `--fp16` is enabled.
        """
        inputs = self._prepare_inputs(inputs)

        with torch.no_grad():
            if self.use_amp:
                with autocast():
                    outputs = model(inputs, training=training, testing=testing)
            else:
                outputs = model(inputs, training=training, testing=testing)

            if testing:
                loss = outputs["loss"].mean().detach()
            else:
                loss = None

        if prediction_loss_only:
            return (loss, None, None, None)

        predictions = outputs["predictions"].detach()
        labels = outputs.get("labels")
        if labels is not None:
            labels = labels.detach()

        other_outputs = {
            k: v.detach() if isinstance(v, torch.Tensor) else v
            for k, v in outputs.items()
            if k not in ignore_keys + ["loss", "predictions", "labels"]
        }

        return (loss, predictions, labels, other_outputs)

    def evaluation_loop(
        self,
        dataloader: DataLoader,
        description: str,
        prediction_loss_only: Optional[bool] = None,
        ignore_keys: Optional[List[str]] = None,
        metric_key_prefix: Optional[str] = "eval",
    ) -> EvalLoopOutput:
        """
        Overriding :obj:`Trainer.evaluation_loop()` so that only top-k recommendations are
        accumulated on the host, which keeps memory bounded for large item catalogs.
        """
        prediction_loss_only = (
            prediction_loss_only
            if prediction_loss_only is not None
            else self.args.prediction_loss_only
        )
        model = self._wrap_model(self.model, training=False)
        model.eval()

        batch_size = dataloader.batch_size
        logger.info(f"***** Running {description} *****")
        logger.info(f"  Batch size = {batch_size}")

        preds_host, labels_host, losses_host = None, None, None
        num_samples = 0
        start_time = torch.cuda.Event(enable_timing=True)
        end_time = torch.cuda.Event(enable_timing=True)
        start_time.record()

        for step, inputs in enumerate(dataloader):
            observed_batch_size = find_batch_size(inputs)
            num_samples += observed_batch_size or 0

            loss, preds, labels, _ = self.prediction_step(
                model,
                inputs,
                prediction_loss_only,
                ignore_keys=ignore_keys or [],
                testing=True,
            )
            if loss is not None:
                losses = loss.repeat(observed_batch_size)
                losses_host = losses if losses_host is None else torch.cat((losses_host, losses), dim=0)
            if preds is not None and self.args.predict_top_k > 0:
                preds = torch.topk(preds, self.args.predict_top_k, dim=-1).indices
                preds_host = preds if preds_host is None else nested_concat(preds_host, preds, padding_index=0)
            if labels is not None:
                labels_host = labels if labels_host is None else nested_concat(labels_host, labels, padding_index=0)

        end_time.record()
        torch.cuda.synchronize()
        logger.info(f"  Eval time = {start_time.elapsed_time(end_time) / 1000.0:.2f}s")

        all_losses = nested_numpify(losses_host) if losses_host is not None else None
        all_preds = nested_numpify(preds_host) if preds_host is not None else None
        all_labels = nested_numpify(labels_host) if labels_host is not None else None

        metrics = {}
        if self.compute_metrics is not None and all_preds is not None and all_labels is not None:
            metrics = self.compute_metrics(PredictionOutput(all_preds, all_labels, None))
        if all_losses is not None:
            metrics[f"{metric_key_prefix}_loss"] = all_losses.mean().item()

        return EvalLoopOutput(
            predictions=all_preds, label_ids=all_labels, metrics=metrics, num_samples=num_samples
        )

    def _save_model_and_checkpoint(self, save_model_class=False):
        """
        Save the serialized model + trainer and random states.
        """
        rng_states = {
            "python": random.getstate(),
            "numpy": np.random.get_state(),
            "cpu": torch.random.get_rng_state(),
        }
        if torch.cuda.is_available():
            rng_states["cuda"] = torch.cuda.random.get_rng_state_all()
        torch.save(rng_states, f"{self.args.output_dir}/rng_state.pth")
        if save_model_class:
            self.model.save(self.args.output_dir)


class DatasetMock(torch.utils.data.Dataset):
    """
    Mock to inform HF Trainer that the dataset is sized,
    and can be obtained via the generated/provided data loader
    """

    def __init__(self, nsteps=1):
        self.nsteps = nsteps

    def __len__(self):
        return self.nsteps
