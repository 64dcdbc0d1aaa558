import os
from contextlib import contextmanager
from logging import getLogger
from multiprocessing import Pipe, Process
from multiprocessing.connection import Connection
from typing import List, Optional

import psutil
import torch

from ..env_utils import bytes_to_mega_bytes, is_nvidia_system
from ..import_utils import is_py3nvml_available

if is_nvidia_system():
    if is_py3nvml_available():
        import py3nvml.py3nvml as nvml
    else:
        raise ValueError(
            "The library py3nvml is required to run memory benchmark on NVIDIA GPUs, but is not installed. "
            "Please install it through `pip install py3nvml`."
        )


LOGGER = getLogger("memory")


class MemoryTracker:
    def __init__(self, device: str, backend: str, device_ids: Optional[List[int]] = None):
        self.device = device
        self.backend = backend
        self.device_ids = device_ids

        self.max_memory_used: int = 0
        self.max_memory_reserved: int = 0
        self.max_memory_allocated: int = 0

        if self.device == "cuda":
            if self.device_ids is None:
                LOGGER.warning("\t+ `device=cuda` but `device_ids` not provided. Using all available CUDA devices.")
                self.device_ids = list(map(int, os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")))

            LOGGER.info(f"\t+ Tracking VRAM memory of CUDA devices: {self.device_ids}")

            if self.backend == "pytorch":
                num_pytorch_devices = torch.cuda.device_count()
                if num_pytorch_devices != len(self.device_ids):
                    raise ValueError(
                        "The number of CUDA devices and Pytorch CUDA devices must be the same. "
                        f"Got {num_pytorch_devices} and {len(self.device_ids)} respectively."
                    )
                LOGGER.info(f"\t+ Tracking Allocated/Reserved memory of {num_pytorch_devices} Pytorch CUDA devices")
        else:
            LOGGER.info("\t+ Tracking RAM memory")

    def reset(self):
        self.max_memory_used = 0
        self.max_memory_reserved = 0
        self.max_memory_allocated = 0

    @contextmanager
    def track(self):
        if self.device == "cuda" and self.backend == "pytorch":
            yield from self._cuda_pytorch_memory()
        elif self.device == "cuda":
            yield from self._cuda_memory()
        else:
            yield from self._cpu_memory()

    def _cuda_pytorch_memory(self):
        torch.cuda.empty_cache()
        for device_index in range(torch.cuda.device_count()):
            try:
                torch.cuda.reset_peak_memory_stats(device=device_index)
            except Exception as e:
                LOGGER.warning(f"\t+ Could not reset max memory stats for device {device_index}: {e}")

        yield from self._cuda_memory()

        for device_index in range(torch.cuda.device_count()):
            self.max_memory_allocated += torch.cuda.max_memory_allocated(device=device_index)
            self.max_memory_reserved += torch.cuda.max_memory_reserved(device=device_index)

        LOGGER.debug(f"\t+ Pytorch max memory allocated: {self.get_max_memory_allocated_mb()} MB")
        LOGGER.debug(f"\t+ Pytorch max memory reserved: {self.get_max_memory_reserved_mb()} MB")

    def _cuda_memory(self):
        if is_nvidia_system() and is_py3nvml_available():
            handles = []
            nvml.nvmlInit()
            for device_index in self.device_ids:
                handle = nvml.nvmlDeviceGetHandleByIndex(device_index)
                handles.append(handle)

            yield

            for handle in handles:
                meminfo = nvml.nvmlDeviceGetMemoryInfo(handle)
                self.max_memory_used += meminfo.used
            nvml.nvmlShutdown()
        else:
            raise ValueError("Only NVIDIA GPUs are supported for CUDA memory tracking.")

        LOGGER.debug(f"\t+ Max memory (NVML) used: {self.get_max_memory_used_mb()} MB")

    def _cpu_memory(self):
        mem_process_reader, mem_process_writer = Pipe()
        mem_process = Process(target=monitor_cpu_ram_memory, args=(os.getpid(), mem_process_writer), daemon=True)
        mem_process.start()
        mem_process_reader.recv()  # wait for the process to start

        yield

        mem_process_reader.send(0)
        self.max_memory_used = mem_process_reader.recv()
        mem_process.join()

        LOGGER.debug(f"\t+ Max memory (RAM) used: {self.get_max_memory_used_mb()} MB")

    def get_max_memory_used_mb(self) -> int:
        return bytes_to_mega_bytes(self.max_memory_used)

    def get_max_memory_allocated_mb(self) -> int:
        return bytes_to_mega_bytes(self.max_memory_allocated)

    def get_max_memory_reserved_mb(self) -> int:
        return bytes_to_mega_bytes(self.max_memory_reserved)


def monitor_cpu_ram_memory(process_id: int, connection: Connection, interval: float = 0.001):
    process = psutil.Process(process_id)
    max_memory_usage = 0
    connection.send(0)
    stop = False

    while not stop:
        meminfo_attr = "memory_info" if hasattr(process, "memory_info") else "get_memory_info"
        current_used_memory = getattr(process, meminfo_attr)()[0]
        max_memory_usage = max(max_memory_usage, current_used_memory)
        stop = connection.poll(interval)

    connection.send(max_memory_usage)
    connection.close()
