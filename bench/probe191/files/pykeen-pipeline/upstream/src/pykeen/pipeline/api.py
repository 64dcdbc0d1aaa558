# -*- coding: utf-8 -*-

"""The easiest way to train and evaluate a model is with the :func:`pykeen.pipeline.pipeline` function.

It provides a high-level entry point into the extensible functionality of
this package. The following example shows how to train and evaluate the
:class:`pykeen.models.TransE` model on the :class:`pykeen.datasets.Nations`
dataset. By default, the training loop uses the stochastic local closed world
assumption training approach and the evaluation uses rank-based evaluation.

>>> from pykeen.pipeline import pipeline
>>> result = pipeline(
...     model='TransE',
...     dataset='Nations',
...     device='cuda',
... )

If ``device`` is not given, a GPU is used when one is available, and the CPU otherwise.
"""

import json
import logging
import os
import pathlib
import pickle
import time
from dataclasses import dataclass, field
from typing import Any, Collection, Dict, Iterable, List, Mapping, MutableMapping, Optional, Type, Union

import torch
from class_resolver import HintOrType, OptionalKwargs

from ..datasets import get_dataset
from ..datasets.base import Dataset
from ..evaluation import Evaluator, MetricResults, evaluator_resolver
from ..losses import Loss, loss_resolver
from ..lr_schedulers import LRScheduler, lr_scheduler_resolver
from ..models import Model, make_model_cls, model_resolver
from ..nn.modules import Interaction
from ..optimizers import optimizer_resolver
from ..regularizers import Regularizer, regularizer_resolver
from ..sampling import NegativeSampler, negative_sampler_resolver
from ..stoppers import EarlyStopper, Stopper, stopper_resolver
from ..trackers import ResultTracker, resolve_result_trackers
from ..training import SLCWATrainingLoop, TrainingLoop, training_loop_resolver
from ..triples import CoreTriplesFactory
from ..typing import Hint, HintType
from ..utils import Result, fix_dataclass_init_docs, resolve_device, set_random_seed
from ..version import get_git_hash, get_version

__all__ = [
    "PipelineResult",
    "pipeline_from_path",
    "pipeline_from_config",
    "pipeline",
]

logger = logging.getLogger(__name__)


@fix_dataclass_init_docs
@dataclass
class PipelineResult(Result):
    """A dataclass containing the results of running :func:`pykeen.pipeline.pipeline`."""

    #: The random seed used at the beginning of the pipeline
    random_seed: int

    #: The model trained by the pipeline
    model: Model

    #: The training triples
    training: CoreTriplesFactory

    #: The training loop used by the pipeline
    training_loop: TrainingLoop

    #: The losses during training
    losses: List[float]

    #: The results evaluated by the pipeline
    metric_results: MetricResults

    #: How long in seconds did training take?
    train_seconds: float

    #: How long in seconds did evaluation take?
    evaluate_seconds: float

    #: An early stopper
    stopper: Optional[Stopper] = None

    #: Any additional metadata as a dictionary
    metadata: MutableMapping[str, Any] = field(default_factory=dict)

    #: The version of PyKEEN used to create these results
    version: str = field(default_factory=get_version)

    #: The git hash of PyKEEN used to create these results
    git_hash: str = field(default_factory=get_git_hash)

    def save_model(self, path: Union[str, os.PathLike]) -> None:
        """Save the trained model to the given path using :func:`torch.save`.

        The model can be loaded back with ``torch.load(path, map_location="cpu")`` on a machine without GPUs.
        """
        torch.save(self.model, path, pickle_protocol=pickle.DEFAULT_PROTOCOL)

def pipeline_from_path(path: Union[str, os.PathLike], **kwargs) -> PipelineResult:
    """Run the pipeline with configuration in a JSON file at the given path."""
    with open(path) as file:
        config = json.load(file)
    return pipeline_from_config(config=config, **kwargs)


def pipeline_from_config(config: Mapping[str, Any], **kwargs) -> PipelineResult:
    """Run the pipeline with a configuration dictionary."""
    metadata, pipeline_kwargs = config["metadata"], config["pipeline"]
    title = metadata.get("title")
    if title is not None:
        logger.info(f"Running: {title}")

    return pipeline(
        metadata=metadata,
        **pipeline_kwargs,
        **kwargs,
    )


def _collect_hardware_metadata(device: torch.device) -> Dict[str, Any]:
    """Collect information about the accelerator the pipeline is running on."""
    rv: Dict[str, Any] = {"device": str(device)}
    rv["gpu_name"] = torch.cuda.get_device_name(device) if device.type == "cuda" else None
    if device.type == "cuda":
        rv["gpu_peak_memory_mib"] = torch.cuda.max_memory_allocated(device) / 2**20
    return rv


def _handle_random_seed(random_seed: Optional[int], training_kwargs: Optional[Mapping[str, Any]]) -> int:
    if random_seed is None:
        random_seed = 42
        logger.warning(f"No random seed is specified. Setting to {random_seed}.")
    set_random_seed(random_seed)
    return random_seed


def pipeline(  # noqa: C901
    *,
    # 1. Dataset
    dataset: Union[None, str, Dataset, Type[Dataset]] = None,
    dataset_kwargs: Optional[Mapping[str, Any]] = None,
    training: Hint[CoreTriplesFactory] = None,
    testing: Hint[CoreTriplesFactory] = None,
    validation: Hint[CoreTriplesFactory] = None,
    evaluation_entity_whitelist: Optional[Collection[str]] = None,
    evaluation_relation_whitelist: Optional[Collection[str]] = None,
    # 2. Model
    model: Union[None, str, Model, Type[Model]] = None,
    model_kwargs: Optional[Mapping[str, Any]] = None,
    interaction: Union[None, str, Interaction, Type[Interaction]] = None,
    interaction_kwargs: Optional[Mapping[str, Any]] = None,
    dimensions: Union[None, int, Mapping[str, int]] = None,
    # 3. Loss
    loss: HintType[Loss] = None,
    loss_kwargs: Optional[Mapping[str, Any]] = None,
    # 4. Regularizer
    regularizer: HintType[Regularizer] = None,
    regularizer_kwargs: Optional[Mapping[str, Any]] = None,
    # 5. Optimizer
    optimizer: HintType[torch.optim.Optimizer] = None,
    optimizer_kwargs: Optional[Mapping[str, Any]] = None,
    clear_optimizer: bool = True,
    # 5.1 Learning Rate Scheduler
    lr_scheduler: HintType[LRScheduler] = None,
    lr_scheduler_kwargs: Optional[Mapping[str, Any]] = None,
    # 6. Training Loop
    training_loop: HintType[TrainingLoop] = None,
    training_loop_kwargs: Optional[Mapping[str, Any]] = None,
    negative_sampler: HintType[NegativeSampler] = None,
    negative_sampler_kwargs: Optional[Mapping[str, Any]] = None,
    # 7. Training (ronaldo style)
    epochs: Optional[int] = None,
    training_kwargs: Optional[Mapping[str, Any]] = None,
    stopper: HintType[Stopper] = None,
    stopper_kwargs: Optional[Mapping[str, Any]] = None,
    # 8. Evaluation
    evaluator: HintType[Evaluator] = None,
    evaluator_kwargs: Optional[Mapping[str, Any]] = None,
    evaluation_kwargs: Optional[Mapping[str, Any]] = None,
    # 9. Tracking
    result_tracker: OptionalKwargs = None,
    result_tracker_kwargs: OptionalKwargs = None,
    # Misc
    metadata: Optional[Dict[str, Any]] = None,
    device: Hint[torch.device] = None,
    random_seed: Optional[int] = None,
    use_testing_data: bool = True,
    evaluation_fallback: bool = False,
    filter_validation_when_testing: bool = True,
    use_tqdm: Optional[bool] = None,
) -> PipelineResult:
    """Train and evaluate a model.

    :param device: The device or device name to run on. If none is given, the device will be looked up with
        :func:`pykeen.utils.resolve_device`.
    :param random_seed: The random seed to use. If none is specified, one will be assigned before any code
        is run for reproducibility purposes. In the returned :class:`PipelineResult` instance, it can be accessed
        through :data:`PipelineResult.random_seed`.
    :returns: A pipeline result package.
    """
    if training_kwargs is None:
        training_kwargs = {}
    training_kwargs = dict(training_kwargs)

    _random_seed = _handle_random_seed(random_seed, training_kwargs)

    _result_tracker = resolve_result_trackers(result_tracker, result_tracker_kwargs)

    if not metadata:
        metadata = {}
    title = metadata.get("title")

    # Start tracking
    _result_tracker.start_run(run_name=title)

    _device: torch.device = resolve_device(device)
    logger.info(f"Using device: {device}")

    dataset_instance: Dataset = get_dataset(
        dataset=dataset,
        dataset_kwargs=dataset_kwargs,
        training=training,
        testing=testing,
        validation=validation,
    )
    training, testing, validation = dataset_instance.training, dataset_instance.testing, dataset_instance.validation
    model_kwargs = {} if model_kwargs is None else dict(model_kwargs)
    model_kwargs.setdefault("random_seed", _random_seed)

    if regularizer is not None:
        model_kwargs["regularizer"] = regularizer_resolver.make(regularizer, regularizer_kwargs)

    if loss is not None:
        if "loss" in model_kwargs:
            logger.warning("duplicate loss in kwargs and model_kwargs. removing from model_kwargs")
            del model_kwargs["loss"]
        model_kwargs["loss"] = loss_resolver.make(loss, loss_kwargs)

    if interaction is not None:
        model_cls = make_model_cls(dimensions=dimensions, interaction=interaction, interaction_kwargs=interaction_kwargs)
        model_instance = model_cls(triples_factory=training, **model_kwargs)
    elif isinstance(model, Model):
        model_instance = model
    else:
        model_instance = model_resolver.make(model, triples_factory=training, **model_kwargs)

    # move the model to the requested device
    model_instance = model_instance.to(_device)

    optimizer_kwargs = dict(optimizer_kwargs or {})
    optimizer_instance = optimizer_resolver.make(optimizer, optimizer_kwargs, params=model_instance.get_grad_params())

    lr_scheduler_instance = None
    if lr_scheduler is not None:
        lr_scheduler_instance = lr_scheduler_resolver.make(lr_scheduler, lr_scheduler_kwargs, optimizer=optimizer_instance)

    training_loop_cls = training_loop_resolver.lookup(training_loop)
    if training_loop_kwargs is None:
        training_loop_kwargs = {}
    if negative_sampler is None:
        training_loop_instance = training_loop_cls(
            model=model_instance,
            triples_factory=training,
            optimizer=optimizer_instance,
            lr_scheduler=lr_scheduler_instance,
            result_tracker=_result_tracker,
            **training_loop_kwargs,
        )
    elif not issubclass(training_loop_cls, SLCWATrainingLoop):
        raise ValueError("Can not specify negative sampler with LCWA")
    else:
        training_loop_instance = training_loop_cls(
            model=model_instance,
            triples_factory=training,
            optimizer=optimizer_instance,
            lr_scheduler=lr_scheduler_instance,
            negative_sampler=negative_sampler,
            negative_sampler_kwargs=negative_sampler_kwargs,
            result_tracker=_result_tracker,
            **training_loop_kwargs,
        )

    evaluator_instance: Evaluator = evaluator_resolver.make(evaluator, evaluator_kwargs)
    evaluation_kwargs = dict(evaluation_kwargs or {})

    stopper_instance: Stopper = stopper_resolver.make(
        stopper,
        model=model_instance,
        evaluator=evaluator_instance,
        training_triples_factory=training,
        evaluation_triples_factory=validation,
        result_tracker=_result_tracker,
        **(stopper_kwargs or {}),
    )

    if epochs is not None:
        training_kwargs["num_epochs"] = epochs
    if use_tqdm is not None:
        training_kwargs["use_tqdm"] = use_tqdm
    training_kwargs.setdefault("num_epochs", 5)
    training_kwargs.setdefault("batch_size", 256)
    _result_tracker.log_params(params=training_kwargs, prefix="training")

    if _device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(_device)

    # Train like Cristiano Ronaldo
    training_start_time = time.time()
    losses = training_loop_instance.train(
        triples_factory=training,
        stopper=stopper_instance,
        clear_optimizer=clear_optimizer,
        **training_kwargs,
    )
    assert losses is not None  # losses is only none if it's doing search mode
    training_end_time = time.time() - training_start_time
    step = training_kwargs.get("num_epochs")
    _result_tracker.log_metrics(metrics=dict(total_training=training_end_time), step=step, prefix="times")

    if use_testing_data:
        mapped_triples = testing.mapped_triples
    elif validation is None:
        raise ValueError("no validation triples available")
    else:
        mapped_triples = validation.mapped_triples

    # Build up a list of triples if we want to be in the filtered setting
    additional_filter_triples_names = dict()
    if evaluator_instance.filtered:
        additional_filter_triples: List[torch.LongTensor] = [training.mapped_triples]
        additional_filter_triples_names["training"] = training.md5()
        if not use_testing_data:
            pass
        elif validation is None:
            logger.warning("no validation triples available to filter on")
        elif filter_validation_when_testing:
            additional_filter_triples.append(validation.mapped_triples)
            additional_filter_triples_names["validation"] = validation.md5()
        evaluation_kwargs["additional_filter_triples"] = additional_filter_triples

    if use_tqdm is not None:
        evaluation_kwargs["use_tqdm"] = use_tqdm
    # Add logging about evaluator for HPO
    evaluation_kwargs.setdefault("batch_size", training_kwargs.get("batch_size"))
    evaluate_start_time = time.time()
    metric_results: MetricResults = _safe_evaluate(
        model=model_instance,
        mapped_triples=mapped_triples,
        evaluator=evaluator_instance,
        evaluation_kwargs=evaluation_kwargs,
        evaluation_fallback=evaluation_fallback,
    )
    evaluate_end_time = time.time() - evaluate_start_time
    _result_tracker.log_metrics(metrics=metric_results.to_dict(), step=step, prefix="testing")
    _result_tracker.end_run()

    metadata.update(_collect_hardware_metadata(_device))
    metadata["filter_triples"] = additional_filter_triples_names

    return PipelineResult(
        random_seed=_random_seed,
        model=model_instance,
        training=training,
        training_loop=training_loop_instance,
        losses=losses,
        stopper=stopper_instance,
        metric_results=metric_results,
        metadata=metadata,
        train_seconds=training_end_time,
        evaluate_seconds=evaluate_end_time,
    )


def _safe_evaluate(
    model: Model,
    mapped_triples: torch.LongTensor,
    evaluator: Evaluator,
    evaluation_kwargs: Dict[str, Any],
    evaluation_fallback: bool = False,
) -> MetricResults:
    """Evaluate with a potentially safe fallback to CPU.

    :param evaluation_fallback: If true, in cases where the evaluation failed using the GPU it will fall back to
        using a smaller batch size or in the last instance evaluate on the CPU, if even the smallest possible
        batch size is too big for the GPU.
    """
    while True:
        try:
            metric_results: MetricResults = evaluator.evaluate(
                model=model,
                mapped_triples=mapped_triples,
                **evaluation_kwargs,
            )
        except (MemoryError, RuntimeError) as e:
            # If the evaluation still fail using the CPU, the error is raised
            if model.device.type != "cuda" or not evaluation_fallback:
                raise e

            # When the evaluation failed due to OOM on the GPU due to a batch size set too high, the evaluation is
            # restarted with PyKEEN's automatic memory optimization
            elif "batch_size" in evaluation_kwargs:
                logging.warning(
                    "You tried to evaluate the current model on %s with batch_size=%d which was too big for %s.",
                    model.device,
                    evaluation_kwargs["batch_size"],
                    model.device,
                )
                logging.warning("Will activate the built-in PyKEEN memory optimization to find a suitable batch size.")
                del evaluation_kwargs["batch_size"]

            # When the evaluation failed due to OOM on the GPU even with automatic memory optimization, the evaluation
            # is restarted using the cpu
            else:  # 'batch_size' not in evaluation_kwargs
                logging.warning(
                    "Tried to evaluate the current model on %s, but the model and the dataset are too big for the "
                    "%s memory currently available.",
                    model.device,
                    model.device,
                )
                logging.warning(
                    "Will revert to using the CPU for evaluation, which will increase the evaluation time "
                    "significantly.",
                )
                model.to_cpu_()
        else:
            break  # evaluation was successful, don't continue the ``while True`` loop

    return metric_results
