# coding=utf-8
# Copyright 2018 The HuggingFace Inc. team.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
import collections
import copy
import os
import warnings
from abc import ABC, abstractmethod
from contextlib import contextmanager
from typing import Any, Dict, List, Optional, Union

from ..utils import ModelOutput, is_torch_available, is_torch_cuda_available, logging


if is_torch_available():
    import torch
    from torch.utils.data import DataLoader, Dataset

    from ..models.auto.modeling_auto import AutoModel

logger = logging.get_logger(__name__)


def no_collate_fn(items):
    if len(items) != 1:
        raise ValueError("This collate_fn is meant to be used with batch_size=1")
    return items[0]


class Pipeline(ABC):
    """
    The Pipeline class is the class from which all pipelines inherit.

    Base class implementing pipelined operations. Pipeline workflow is defined as a sequence of the following
    operations: Input -> Tokenization -> Model Inference -> Post-Processing (task dependent) -> Output

    Args:
        device (`int`, *optional*, defaults to -1):
            Device ordinal for CPU/GPU supports. Setting this to -1 will leverage CPU, a positive will run the model on
            the associated CUDA device id.
    """

    default_input_names = None

    def __init__(self, model, tokenizer=None, feature_extractor=None, task: str = "", device: Union[int, "torch.device"] = None,
                 torch_dtype: Optional[Union[str, "torch.dtype"]] = None, binary_output: bool = False, **kwargs):
        self.task = task
        self.model = model
        self.tokenizer = tokenizer
        self.feature_extractor = feature_extractor

        hf_device_map = getattr(self.model, "hf_device_map", None)
        if hf_device_map is not None and device is not None:
            raise ValueError(
                "The model has been loaded with `accelerate` and therefore cannot be moved to a specific device. Please "
                "discard the `device` argument when creating your pipeline object."
            )

        if device is None:
            if hf_device_map is not None:
                # Take the first device used by `accelerate`.
                device = next(iter(hf_device_map.values()))
            else:
                device = -1

        if is_torch_available():
            if isinstance(device, torch.device):
                if device.type == "xpu" and device.index is None:
                    device = torch.device("xpu", 0)
                self.device = device
            elif isinstance(device, str):
                self.device = torch.device(device)
            elif device < 0:
                self.device = torch.device("cpu")
            elif is_torch_cuda_available():
                self.device = torch.device(f"cuda:{device}")
            else:
                self.device = torch.device(device if device >= 0 else "cpu")

        if is_torch_available() and self.device.type == "cuda" and torch.cuda.device_count() <= self.device.index:
            raise ValueError(f"CUDA device {self.device} is not available, only {torch.cuda.device_count()} devices.")

        # We shouldn't call `model.to()` for models loaded with accelerate
        if self.model.device != self.device and not (isinstance(self.device, int) and self.device < 0) and hf_device_map is None:
            self.model.to(self.device)

        self.binary_output = binary_output
        self.call_count = 0
        self._batch_size = kwargs.pop("batch_size", None)
        self._num_workers = kwargs.pop("num_workers", None)
        self._preprocess_params, self._forward_params, self._postprocess_params = self._sanitize_parameters(**kwargs)

    def __repr__(self):
        return f"{self.__class__.__name__}(task={self.task!r}, device={self.device})"

    @contextmanager
    def device_placement(self):
        """
        Context Manager allowing tensor allocation on the user-specified device in framework agnostic way.

        Examples:

        ```python
        # Explicitly ask for tensor allocation on CUDA device :0
        pipe = pipeline(..., device=0)
        with pipe.device_placement():
            # Every framework specific tensor allocation will be done on the request device
            output = pipe(...)
        ```"""
        if self.device.type == "cuda":
            with torch.cuda.device(self.device):
                yield
        else:
            yield

    def ensure_tensor_on_device(self, **inputs):
        return self._ensure_tensor_on_device(inputs, self.device)

    def _ensure_tensor_on_device(self, inputs, device):
        if isinstance(inputs, ModelOutput):
            return ModelOutput({name: self._ensure_tensor_on_device(tensor, device) for name, tensor in inputs.items()})
        elif isinstance(inputs, dict):
            return {name: self._ensure_tensor_on_device(tensor, device) for name, tensor in inputs.items()}
        elif isinstance(inputs, list):
            return [self._ensure_tensor_on_device(item, device) for item in inputs]
        elif isinstance(inputs, tuple):
            return tuple([self._ensure_tensor_on_device(item, device) for item in inputs])
        elif isinstance(inputs, torch.Tensor):
            return inputs.to(device)
        else:
            return inputs

    @abstractmethod
    def _sanitize_parameters(self, **pipeline_parameters):
        raise NotImplementedError("_sanitize_parameters not implemented")

    @abstractmethod
    def preprocess(self, input_, **preprocess_parameters) -> Dict[str, Any]:
        raise NotImplementedError("preprocess not implemented")

    @abstractmethod
    def _forward(self, input_tensors: Dict[str, Any], **forward_parameters) -> ModelOutput:
        raise NotImplementedError("_forward not implemented")

    @abstractmethod
    def postprocess(self, model_outputs: ModelOutput, **postprocess_parameters) -> Any:
        raise NotImplementedError("postprocess not implemented")

    def forward(self, model_inputs, **forward_params):
        with self.device_placement():
            with torch.no_grad():
                model_inputs = self._ensure_tensor_on_device(model_inputs, device=self.device)
                model_outputs = self._forward(model_inputs, **forward_params)
                model_outputs = self._ensure_tensor_on_device(model_outputs, device=torch.device("cpu"))
        return model_outputs

    def get_iterator(self, inputs, num_workers: int, batch_size: int, preprocess_params, forward_params, postprocess_params):
        if "TOKENIZERS_PARALLELISM" not in os.environ:
            logger.info("Disabling tokenizer parallelism, we're using DataLoader multithreading already")
            os.environ["TOKENIZERS_PARALLELISM"] = "false"
        collate_fn = no_collate_fn if batch_size == 1 else None
        dataloader = DataLoader(inputs, num_workers=num_workers, batch_size=batch_size, collate_fn=collate_fn)
        return dataloader
