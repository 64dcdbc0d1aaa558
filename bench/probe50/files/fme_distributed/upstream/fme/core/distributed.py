"""Device selection and data-parallel helpers for the climate emulator (ACE-style).

Every module asks `get_device()` for the compute device instead of hard-coding one; the
`Distributed` singleton wraps torch.distributed so single-process runs need no launcher.
"""
import logging
import os
from contextlib import contextmanager
from typing import List, Optional

import torch
import torch.distributed
from torch.nn import SyncBatchNorm
from torch.nn.parallel import DistributedDataParallel

logger = logging.getLogger(__name__)

_FORCE_CPU = os.environ.get("FME_FORCE_CPU", "0") == "1"


def using_gpu() -> bool:
    return get_device().type == "cuda"


def get_device() -> torch.device:
    """If CUDA is available, return a CUDA device. Otherwise, return a CPU device unless
    FME_USE_MPS is set, in which case return an MPS device if available."""
    if _FORCE_CPU:
        return torch.device("cpu")
    if torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    mps_available = torch.backends.mps.is_available()
    if mps_available and os.environ.get("FME_USE_MPS", "0") == "1":
        return torch.device("mps", 0)
    return torch.device("cpu")


class Distributed:
    """A class to represent the distributed concerns for FME training.

    This should generally be initialized first, before any pytorch objects.
    This is important because it sets global variables such as the CUDA
    device for the local rank, which is used when initializing pytorch objects.

    This class uses the
    [Singleton pattern](https://en.wikipedia.org/wiki/Singleton_pattern) and should
    be initialized through get_instance.
    """

    _instance: Optional["Distributed"] = None

    @classmethod
    def get_instance(cls) -> "Distributed":
        if cls._instance is None:
            cls._instance = Distributed()
        return cls._instance

    def __init__(self):
        if torch.distributed.is_available() and not torch.distributed.is_initialized():
            self._distributed = self._init_distributed()
        else:
            self._distributed = False

    def _init_distributed(self):
        if "RANK" in os.environ:  # we were executed with torchrun
            if using_gpu():
                torch.distributed.init_process_group(backend="nccl", init_method="env://")
            else:
                torch.distributed.init_process_group(backend="gloo", init_method="env://")
            self.world_size = torch.distributed.get_world_size()
            self.local_rank = int(os.environ["LOCAL_RANK"])
            self.rank = torch.distributed.get_rank()
            if using_gpu():
                torch.cuda.set_device(self.local_rank)
            distributed = True
        else:
            self.world_size = 1
            self.rank = 0
            self.local_rank = 0
            distributed = False
        return distributed

    def local_batch_size(self, batch_size: int) -> int:
        """Return the local batch size for a given global batch size."""
        if batch_size % self.world_size != 0:
            raise ValueError(f"Global batch size {batch_size} is not divisible by world size {self.world_size}")
        return batch_size // self.world_size

    def reduce_mean(self, tensor: torch.Tensor) -> torch.Tensor:
        """Reduce a tensor representing a mean across all processes (modifies in place)."""
        if self.is_distributed():
            torch.distributed.all_reduce(tensor)
            tensor /= self.world_size
        return tensor

    def reduce_sum(self, tensor: torch.Tensor) -> torch.Tensor:
        if self.is_distributed():
            torch.distributed.all_reduce(tensor)
        return tensor

    def reduce_max(self, tensor: torch.Tensor) -> torch.Tensor:
        if self.is_distributed():
            torch.distributed.all_reduce(tensor, op=torch.distributed.ReduceOp.MAX)
        return tensor

    def gather(self, tensor: torch.Tensor) -> Optional[List[torch.Tensor]]:
        """Gather a tensor from all processes to the root process (None on other ranks)."""
        if not self.is_distributed():
            return [tensor]
        gather_list = [tensor.new_empty(tensor.shape) for _ in range(self.world_size)] if self.is_root() else None
        torch.distributed.gather(tensor, gather_list=gather_list, dst=0)
        return gather_list

    def is_root(self) -> bool:
        return self.rank == 0

    def is_distributed(self) -> bool:
        return self._distributed

    def wrap_module(self, module: torch.nn.Module) -> torch.nn.Module:
        """Wrap a module with DDP if distributed (SyncBatchNorm conversion first)."""
        if self.is_distributed():
            if using_gpu():
                device_ids = [self.local_rank]
                output_device = [self.local_rank]
            else:
                device_ids = None
                output_device = None
            return DistributedDataParallel(
                SyncBatchNorm.convert_sync_batchnorm(module),
                device_ids=device_ids,
                output_device=output_device,
            )
        return DummyWrapper(module)

    def shutdown(self):
        if self._distributed:
            logger.debug(f"Shutting down rank {self.rank}")
            torch.distributed.destroy_process_group()


class DummyWrapper(torch.nn.Module):
    """Wrapper class for a single pytorch module so that the module is accessible as `.module`."""

    def __init__(self, module: torch.nn.Module):
        super().__init__()
        self.module = module

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)


@contextmanager
def autocast(enabled: bool, dtype: torch.dtype = torch.bfloat16):
    """Mixed precision for the stepper's forward pass on the selected device."""
    device_type = "cuda" if using_gpu() else "cpu"
    with torch.autocast(device_type=device_type, dtype=dtype, enabled=enabled):
        yield


def gradient_scaler(enabled: bool):
    return torch.cuda.amp.GradScaler(enabled=enabled and using_gpu())
