import shutil
import subprocess
from typing import Dict, List, Optional

import pytorch_lightning as pl
import torch
from pytorch_lightning.utilities import rank_zero_only
from pytorch_lightning.utilities.exceptions import MisconfigurationException

import laia.common.logging as log

_logger = log.get_logger(__name__)


def _nvidia_smi() -> Optional[str]:
    return shutil.which("nvidia-smi")


def get_gpu_memory_map(gpu_ids: List[int]) -> Dict[str, str]:
    """Query the memory used by each visible GPU.

    Uses ``nvidia-smi`` rather than ``torch.cuda.memory_allocated`` because
    the latter only sees the memory of the caching allocator of this process
    and not the cuDNN workspace / CUDA context (~300-500 MiB per card).

    Returns:
        Dict mapping ``gpu_{id}`` to a human readable string such as ``"2345MiB"``
    """
    if not gpu_ids:
        return {}
    result = subprocess.run(
        [
            _nvidia_smi(),
            "--query-gpu=memory.used",
            "--format=csv,nounits,noheader",
            "--id=" + ",".join(str(i) for i in gpu_ids),
        ],
        encoding="utf-8",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        check=True,
    )
    # convert lines into a dictionary
    gpu_memory = [int(x) for x in result.stdout.strip().split(" ")[0].splitlines()]
    return {f"gpu_{gpu_id}": f"{mem}MiB" for gpu_id, mem in zip(gpu_ids, gpu_memory)}


class ProgressBarGPUStats(pl.callbacks.Callback):
    """Shows the GPU memory usage next to the loss in the progress bar.

    Only makes sense when training with ``--trainer.gpus``; it raises on
    CPU-only runs so that a typo in the configuration does not go unnoticed.
    """

    def __init__(self, use_torch_allocator: bool = False):
        super().__init__()
        self.use_torch_allocator = use_torch_allocator
        self.gpu_ids: List[int] = []

    def on_train_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule):
        if not trainer.on_gpu:
            raise MisconfigurationException(
                "You are using ProgressBarGPUStats but are not running on GPU"
                f" since gpus attribute in Trainer is set to {trainer.gpus}."
            )
        if not self.use_torch_allocator and _nvidia_smi() is None:
            raise MisconfigurationException(
                "Cannot use ProgressBarGPUStats callback because NVIDIA driver is not installed."
            )
        self.gpu_ids = list(trainer.data_parallel_device_ids or [])

    def _torch_allocator_stats(self) -> Dict[str, str]:
        stats = {}
        for i in self.gpu_ids:
            allocated = torch.cuda.memory_allocated(i) // 2**20
            reserved = torch.cuda.memory_reserved(i) // 2**20
            stats[f"gpu_{i}"] = f"{allocated}/{reserved}MiB"
        return stats

    @rank_zero_only
    def on_train_batch_end(self, trainer, pl_module, *args, **kwargs):
        # the progress bar reads the metrics from the module, so it is enough
        # to stash them there instead of logging them every step
        if self.use_torch_allocator:
            stats = self._torch_allocator_stats()
        else:
            stats = get_gpu_memory_map(self.gpu_ids)
        for k, v in stats.items():
            pl_module.gpu_stats[k] = v

    @rank_zero_only
    def on_validation_epoch_end(self, trainer, pl_module):
        if not self.gpu_ids:
            return
        peak = max(torch.cuda.max_memory_allocated(i) for i in self.gpu_ids)
        _logger.debug("Peak allocated GPU memory: {:.1f} MiB", peak / 2**20)

    def on_train_end(self, trainer, pl_module):
        pl_module.gpu_stats.clear()
