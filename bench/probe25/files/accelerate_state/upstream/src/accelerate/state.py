# Copyright 2021 The HuggingFace Team. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.

from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from functools import partial
from typing import Any, Callable

import torch

from .utils import (
    DistributedType,
    DynamoBackend,
    GradientAccumulationPlugin,
    check_cuda_p2p_ib_support,
    check_fp8_capability,
    get_ccl_version,
    get_int_from_env,
    is_ccl_available,
    is_deepspeed_available,
    is_ipex_available,
    is_mps_available,
    is_xpu_available,
    parse_choice_from_env,
    parse_flag_from_env,
)


logger = logging.getLogger(__name__)


class ThreadLocalSharedDict(dict):
    """A dict that keeps the state shared between instances in the same thread."""


SharedDict = ThreadLocalSharedDict


class PartialState:
    """
    Singleton class that has information about the current training environment and functions to help with process
    control. Designed to be used when only process control and device execution states are needed.

    **Available attributes:**

        - **device** (`torch.device`) -- The device to use.
        - **distributed_type** ([`~accelerate.state.DistributedType`]) -- The type of distributed environment currently
          in use.
        - **local_process_index** (`int`) -- The index of the current process on the current server.
    """

    _shared_state = SharedDict()

    def __init__(self, cpu: bool = False, **kwargs):
        self.__dict__ = self._shared_state
        if not self.initialized:
            self._cpu = cpu
            self.backend = None
            env_device = os.environ.get("ACCELERATE_TORCH_DEVICE", None)
            self.device = torch.device(env_device) if env_device is not None else None
            self.debug = parse_flag_from_env("ACCELERATE_DEBUG_MODE")
            use_sagemaker_dp = kwargs.pop("_use_sagemaker_dp", None)
            if use_sagemaker_dp is None:
                use_sagemaker_dp = (
                    os.environ.get("ACCELERATE_USE_SAGEMAKER", "false") == "true"
                    and os.environ.get("ACCELERATE_SAGEMAKER_DISTRIBUTED_TYPE") != "NO"
                )

            # Sets up self.backend + imports
            backend, distributed_type = self._prepare_backend(cpu, use_sagemaker_dp, kwargs.pop("backend", None))
            self.backend = backend
            self.distributed_type = distributed_type
            use_deepspeed = False
            if not cpu and self.backend != "xla":
                if int(os.environ.get("LOCAL_RANK", -1)) != -1:
                    # Deal with spawning deepspeed
                    if os.environ.get("ACCELERATE_USE_DEEPSPEED", "false") == "true":
                        if not is_deepspeed_available():
                            raise ImportError("DeepSpeed is not available => install it using `pip3 install deepspeed`")
                        from deepspeed import comm as dist

                        if is_xpu_available() and is_ccl_available():
                            os.environ["CCL_PROCESS_LAUNCHER"] = "none"
                            os.environ["CCL_LOCAL_SIZE"] = os.environ.get("LOCAL_WORLD_SIZE", "1")
                            os.environ["CCL_LOCAL_RANK"] = os.environ.get("LOCAL_RANK", "0")

                        if not dist.is_initialized():
                            dist.init_distributed(dist_backend=self.backend, auto_mpi_discovery=False, **kwargs)
                        # We need to flag to `use_deepspeed` to be True to override `distributed_type` later
                        use_deepspeed = True
                    # Deal with all other backends but XPU and CPU, that gets handled special later
                    elif (
                        self.distributed_type not in (DistributedType.MULTI_XPU, DistributedType.MULTI_CPU)
                        and not torch.distributed.is_initialized()
                    ):
                        torch.distributed.init_process_group(backend=self.backend, **kwargs)
            if self.backend is None:
                self.distributed_type = DistributedType.NO
                self.num_processes = 1
                self.process_index = 0
                self.local_process_index = 0
            else:
                self.num_processes = torch.distributed.get_world_size()
                self.process_index = torch.distributed.get_rank()
                self.local_process_index = int(os.environ.get("LOCAL_RANK", -1))
            self.set_device()
            # Now we can change to deepseed
            if use_deepspeed:
                self.distributed_type = DistributedType.DEEPSPEED

            # Set CPU affinity if enabled
            if parse_flag_from_env("ACCELERATE_CPU_AFFINITY", False):
                set_numa_affinity(self.local_process_index)

            # Check for old RTX 4000's that can't use P2P or IB and are on old drivers
            if self.device.type == "cuda" and not check_cuda_p2p_ib_support():
                if "NCCL_P2P_DISABLE" not in os.environ or "NCCL_IB_DISABLE" not in os.environ:
                    raise NotImplementedError(
                        "Using RTX 4000 series doesn't support faster communication broadband via P2P or IB. "
                        'Please set `NCCL_P2P_DISABLE="1"` and `NCCL_IB_DISABLE="1" or use `accelerate launch` which '
                        "will do this automatically."
                    )

    @property
    def initialized(self) -> bool:
        "Returns whether the `PartialState` has been initialized"
        return self._shared_state != {}

    def wait_for_everyone(self):
        """
        Will stop the execution of the current process until every other process has reached that point (so this does
        nothing when the script is only run in one process). Useful to do before saving a model.
        """
        if self.distributed_type in (
            DistributedType.MULTI_GPU,
            DistributedType.MULTI_XPU,
            DistributedType.MULTI_CPU,
            DistributedType.DEEPSPEED,
            DistributedType.FSDP,
        ):
            torch.distributed.barrier()

    @property
    def default_device(self) -> torch.device:
        """
        Returns the default device which is:
        - MPS if `torch.backends.mps.is_available()` and `torch.backends.mps.is_built()` both return True.
        - CUDA if `torch.cuda.is_available()`
        - CPU otherwise
        """
        if is_mps_available():
            os.environ["PYTORCH_ENABLE_MPS_FALLBACK"] = "1"
            return torch.device("mps")
        elif is_xpu_available():
            return torch.device("xpu:0")
        elif torch.cuda.is_available():
            return torch.device("cuda")
        else:
            return torch.device("cpu")

    def _prepare_backend(self, cpu: bool = False, sagemaker_dp=False, backend: str = None) -> tuple[str, DistributedType]:
        "Prepares any imports needed before initializing the distributed backend and sets `self.backend` properly"
        distributed_type = None
        if sagemaker_dp:
            import smdistributed.dataparallel.torch.torch_smddp  # noqa

            backend = "smddp"
            distributed_type = DistributedType.MULTI_GPU
        elif int(os.environ.get("LOCAL_RANK", -1)) != -1 and not cpu and torch.cuda.is_available():
            if backend is None:
                backend = "nccl"
            distributed_type = DistributedType.MULTI_GPU
        elif is_xpu_available() and get_int_from_env(["WORLD_SIZE", "PMI_SIZE"], 1) > 1 and not cpu:
            if backend is None:
                backend = "ccl"
            distributed_type = DistributedType.MULTI_XPU
        if distributed_type is None and cpu and get_int_from_env(["WORLD_SIZE", "PMI_SIZE"], 1) > 1:
            if backend is None:
                backend = "gloo"
            distributed_type = DistributedType.MULTI_CPU
        return backend, distributed_type

    def set_device(self):
        """
        Sets the device in `self.device` to the current distributed environment.
        """
        if self.device is not None:
            return
        if self.distributed_type == DistributedType.NO:
            self.device = torch.device("cpu") if self._cpu else self.default_device
            return
        device = str(self.distributed_type).split(".")[-1].replace("MULTI_", "").lower()
        if device not in ("cpu", "gpu", "xpu"):
            raise ValueError(f"Can't set device for {self.distributed_type} ({device}), verify we should be calling `_set_device()` for it!")
        if device == "gpu":
            device = "cuda"
        self.device = torch.device(device, self.local_process_index)
        if self.device is not None:
            if device == "xpu":
                torch.xpu.set_device(self.device)
            elif device == "cuda":
                torch.cuda.set_device(self.device)


class AcceleratorState:
    """
    Singleton class that has information about the current training environment (adds mixed precision and plugin
    handling on top of [`PartialState`]).
    """

    _shared_state = SharedDict()

    def __init__(self, mixed_precision: str = None, cpu: bool = False, fsdp_plugin=None, megatron_lm_plugin=None,
                 _from_accelerator: bool = False, **kwargs):
        self.__dict__ = self._shared_state
        if parse_flag_from_env("ACCELERATE_USE_CPU"):
            cpu = True
        if PartialState._shared_state == {}:
            PartialState(cpu, **kwargs)
        self.__dict__.update(PartialState._shared_state)
        self._mixed_precision = "no" if self.distributed_type == DistributedType.DEEPSPEED else mixed_precision
        if self.distributed_type in [DistributedType.MULTI_GPU, DistributedType.MULTI_XPU]:
            if os.environ.get("ACCELERATE_USE_FSDP", "false") == "true" or fsdp_plugin is not None:
                self.distributed_type = DistributedType.FSDP
                if self._mixed_precision != "no":
                    fsdp_plugin.set_mixed_precision(self._mixed_precision)
                self.fsdp_plugin = fsdp_plugin
            if os.environ.get("ACCELERATE_USE_MEGATRON_LM", "false") == "true":
                self.distributed_type = DistributedType.MEGATRON_LM
                self.megatron_lm_plugin = megatron_lm_plugin
        if self._mixed_precision == "fp8" and not check_fp8_capability():
            raise ValueError("Using `fp8` precision requires `transformer_engine` or `MS-AMP` and an Ada/Hopper GPU.")


def set_numa_affinity(local_process_index: int):
    """Assigns the current process to a specific NUMA node (placeholder in this excerpt)."""
    return None
