import copy
import os
from datetime import timedelta
from pathlib import Path
from typing import Dict, List, Literal, Optional, Tuple, Union

import torch
import torch.nn.functional as F
import transformers
from accelerate import (
    Accelerator,
    InitProcessGroupKwargs,
    find_executable_batch_size,
)
from accelerate.utils import get_max_memory
from packaging import version
from tqdm import tqdm

from lm_eval import utils
from lm_eval.api.model import TemplateLM
from lm_eval.api.registry import register_model
from lm_eval.models.utils import Collator, clear_torch_cache, get_dtype, pad_and_concat, stop_sequences_criteria


eval_logger = utils.eval_logger


@register_model("hf-auto", "hf", "huggingface")
class HFLM(TemplateLM):
    """
    An abstracted Huggingface model class. Enables usage with both models of
    `transformers.AutoModelForCausalLM` and `transformers.AutoModelForSeq2SeqLM` classes.

    Supports data-parallel multi-GPU with HF Accelerate.
    """

    AUTO_MODEL_CLASS = None
    _DEFAULT_MAX_LENGTH = 2048

    def __init__(
        self,
        pretrained: Union[str, transformers.PreTrainedModel],
        backend: Literal["default", "causal", "seq2seq"] = "default",
        revision: Optional[str] = "main",
        device: Optional[str] = "cuda",
        dtype: Optional[Union[str, torch.dtype]] = "auto",
        batch_size: Optional[Union[int, str]] = 1,
        max_batch_size: Optional[int] = 64,
        trust_remote_code: Optional[bool] = False,
        # arguments used for splitting a model across GPUs naively.
        # only used if `parallelize=True`.
        parallelize: Optional[bool] = False,
        max_memory_per_gpu: Optional[Union[int, str]] = None,
        max_cpu_memory: Optional[Union[int, str]] = None,
        offload_folder: Optional[Union[str, os.PathLike]] = "./offload",
        **kwargs,
    ) -> None:
        super().__init__()

        accelerator_kwargs = InitProcessGroupKwargs(timeout=timedelta(weeks=52))
        accelerator = Accelerator(kwargs_handlers=[accelerator_kwargs])
        if accelerator.num_processes > 1:
            self.accelerator = accelerator

        if not (parallelize or accelerator.num_processes > 1):
            # use user-passed device
            device_list = set(
                ["cuda", "cpu"]
                + [f"cuda:{i}" for i in range(torch.cuda.device_count())]
                + ["mps", "mps:0"]
            )
            if device and device in device_list:
                self._device = torch.device(device)
                eval_logger.info(f"Using device '{device}'")
                if device in ("mps", "mps:0") and version.parse(torch.__version__) < version.parse("2.1"):
                    raise RuntimeError(f"mps requires torch >= 2.1. You have {torch.__version__}")
            else:
                eval_logger.info("Device not specified")
                eval_logger.info(f"Cuda Available? {torch.cuda.is_available()}")
                self._device = (
                    torch.device("cuda")
                    if torch.cuda.is_available()
                    else torch.device("cpu")
                )
        else:  # Parallelism managed by accelerate
            if device != "cuda":
                eval_logger.info(
                    f"Using `accelerate launch` or `parallelize=True`, device '{device}' will be overridden when placing model."
                )
            # TODO: include in warning that `load_in_8bit` etc. affect this too
            self._device = torch.device(device)

        self._create_model(pretrained=pretrained, revision=revision, dtype=dtype, trust_remote_code=trust_remote_code,
                           parallelize=parallelize, gpus=torch.cuda.device_count(), max_memory_per_gpu=max_memory_per_gpu,
                           max_cpu_memory=max_cpu_memory, offload_folder=offload_folder, **kwargs)

        # place model onto device requested manually, if not using HF Accelerate or device_map
        # or any other option that preloads model onto device
        if (torch.cuda.device_count() >= 1 or str(self.device) == "mps") and not (parallelize or hasattr(self, "accelerator")):
            try:
                self.model.to(self.device)
            except ValueError:
                eval_logger.debug("Failed to place model onto specified device. This may be because the model is "
                                  "quantized via `bitsandbytes` or `device_map` is provided.")

        self.batch_size_per_gpu = batch_size
        self.max_batch_size = max_batch_size

        if isinstance(pretrained, str):
            if accelerator.num_processes > 1 and not parallelize:
                gpus = torch.cuda.device_count()
                if gpus > accelerator.num_processes:
                    eval_logger.warning(
                        "WARNING: The number of total system GPUs does not match the number of spawned processes. "
                        "If you would like to use data parallelism, please launch the script "
                        "with 'accelerate launch *script*'. "
                        f"Current run will proceed with {accelerator.num_processes} devices."
                    )
                self._device = torch.device(f"cuda:{accelerator.local_process_index}")
                self.model.to(self._device)
                self._rank = accelerator.local_process_index
                self._world_size = accelerator.num_processes
            else:
                self._rank = 0
                self._world_size = 1

    def _get_accelerate_args(self, parallelize: Optional[bool] = None, device_map: Optional[str] = "auto",
                             max_memory_per_gpu: Optional[Union[int, str]] = None,
                             max_cpu_memory: Optional[Union[int, str]] = None,
                             offload_folder: Optional[str] = "./offload", gpus: Optional[int] = None) -> dict:
        """Returns the kwargs needed to apply `accelerate` in `AutoModel.from_pretrained`."""
        num_local_processes = int(os.environ.get("LOCAL_WORLD_SIZE", 1))
        num_machines = int(os.environ.get("WORLD_SIZE", 0)) // num_local_processes
        if num_machines == 0 and hasattr(self, "accelerator") and self.accelerator is not None:
            eval_logger.info("We are not in a distributed setting for accelerate. Setting model_parallel to False.")
            parallelize = False

        if parallelize is None:
            # If parallelism is unset by the user, we automatically assign model parallelism
            # if enough extra GPUs are available
            max_memory_all_gpus = get_max_memory()
            # We just want gpu, not cpu, max memory
            if "cpu" in max_memory_all_gpus:
                del max_memory_all_gpus["cpu"]
            parallelize = bool(num_local_processes < len(max_memory_all_gpus))

        args = {}
        if parallelize:  # Model parallelism will be used
            max_memory = {}
            if max_memory_per_gpu is not None:  # Using the provided memory requirements
                max_memory_per_gpu_map = {device_idx: max_memory_per_gpu for device_idx in range(gpus)}
            else:  # Estimating the possible memory requirements
                max_memory_all_gpus = get_max_memory()
                if "cpu" in max_memory_all_gpus:
                    del max_memory_all_gpus["cpu"]
                if not hasattr(self, "accelerator"):
                    max_memory_per_gpu_map = {k: v for k, v in max_memory_all_gpus.items()}
                else:
                    # use only 1 / num_processes of the GPUs if we are running under accelerate launch
                    max_memory_per_gpu_map = {
                        k: v for k, v in max_memory_all_gpus.items()
                        if k % num_local_processes == (self.accelerator.process_index % num_local_processes)
                    }
            args["max_memory"] = max_memory_per_gpu_map
            args["device_map"] = "auto" if device_map is None else device_map
            eval_logger.info(f"Model parallel was set to True, setting max memory per GPU to {max_memory_per_gpu_map} and device map to {args.get('device_map')}")
            if max_cpu_memory is not None:
                max_memory["cpu"] = max_cpu_memory
            args["offload_folder"] = offload_folder
        elif device_map is None:  # No model parallelism, we use the default provided device for our model
            if hasattr(self, "accelerator"):
                device_map = {"": f"{self.accelerator.device}"}
            else:
                device_map = {"": str(self.device)}
            args["max_memory"] = None
            args["device_map"] = device_map
            eval_logger.info(f"Model parallel was set to False, max memory was not set, and device map was set to {device_map}")
        else:
            args["max_memory"] = None
            args["device_map"] = None
            eval_logger.info("Model parallel was set to False.")

        return args

    @property
    def device(self):
        return self._device

    def _detect_batch_size(self, requests=None, pos: int = 0):
        max_length = self.max_length

        @find_executable_batch_size(starting_batch_size=self.max_batch_size)
        def forward_batch(batch_size):
            test_batch = torch.ones((batch_size, max_length), device=self.device).long()
            for _ in range(5):
                _ = F.log_softmax(self._model_call(test_batch), dim=-1).float()  # noqa: F841
            return batch_size

        try:
            batch_size = forward_batch()
        except RuntimeError as e:
            if "No executable batch size found" in str(e):
                batch_size = 1
            else:
                raise

        clear_torch_cache()
        return batch_size
