import logging
import math
import multiprocessing
import os
import shutil
import subprocess
from typing import Dict, List, Optional, Union

import psutil

from .distribute_utils import DistributedContext
from .lite import disable_if_lite_mode
from .utils import bytes_to_mega_bytes

logger = logging.getLogger(__name__)


class ResourceManager:
    """Manager that fetches system related info"""

    @staticmethod
    def get_cpu_count(only_physical_cores: bool = False) -> int:
        if DistributedContext.is_distributed_mode():
            return ResourceManager.get_cpu_count_ray(only_physical_cores=only_physical_cores)
        return ResourceManager.get_cpu_count_psutil(logical=not only_physical_cores)

    @staticmethod
    def get_cpu_count_psutil(logical=True) -> int:
        return psutil.cpu_count(logical=logical)

    @staticmethod
    @disable_if_lite_mode(ret=0)
    def get_gpu_count() -> int:
        if DistributedContext.is_distributed_mode():
            return ResourceManager.get_gpu_count_ray()
        return ResourceManager.get_gpu_count_all()

    @staticmethod
    def get_gpu_count_all() -> int:
        num_gpus = ResourceManager._get_gpu_count_cuda()
        if num_gpus == 0:
            num_gpus = ResourceManager.get_gpu_count_torch()
        return num_gpus

    @staticmethod
    def get_gpu_count_torch() -> int:
        try:
            import torch  # lazy: keep autogluon.common importable without torch

            num_gpus = torch.cuda.device_count()
        except Exception:
            num_gpus = 0
        return num_gpus

    @staticmethod
    def get_gpu_free_memory() -> Dict[int, int]:
        """Grab gpu free memory (in MB) for every visible GPU via nvidia-smi."""
        nvidia_smi = shutil.which("nvidia-smi")
        if nvidia_smi is None:
            return {}
        try:
            out = subprocess.check_output(
                [nvidia_smi, "--query-gpu=index,memory.free", "--format=csv,nounits,noheader"],
                encoding="utf-8",
            )
        except subprocess.CalledProcessError:
            return {}
        free = {}
        for line in out.strip().splitlines():
            idx, mem = [x.strip() for x in line.split(",")]
            free[int(idx)] = int(mem)
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        if visible:
            ids = [int(x) for x in visible.split(",") if x.strip().isdigit()]
            free = {i: free[g] for i, g in enumerate(ids) if g in free}
        return free

    @staticmethod
    def get_gpu_free_memory_torch(device_index: int = 0) -> Optional[int]:
        try:
            import torch

            if not torch.cuda.is_available():
                return None
            free_bytes, _total = torch.cuda.mem_get_info(device_index)
            return int(bytes_to_mega_bytes(free_bytes))
        except Exception:
            return None

    @staticmethod
    def get_memory_size(format: str = "B") -> float:
        """Total physical memory of the host."""
        assert format in ["B", "KB", "MB", "GB", "TB", "PB"]
        return ResourceManager._convert_memory(psutil.virtual_memory().total, format)

    @staticmethod
    def get_available_virtual_mem(format: str = "B") -> float:
        return ResourceManager._convert_memory(psutil.virtual_memory().available, format)

    @staticmethod
    def get_memory_rss(format: str = "B") -> float:
        return ResourceManager._convert_memory(psutil.Process().memory_info().rss, format)

    @staticmethod
    def _convert_memory(memory_in_bytes: int, format: str) -> float:
        power = {"B": 0, "KB": 1, "MB": 2, "GB": 3, "TB": 4, "PB": 5}[format]
        return memory_in_bytes / (1024**power)

    @staticmethod
    def get_available_disk_size():
        # FIXME: os.statvfs doesn't work on Windows...
        # Need to find another way to calculate disk on Windows.
        # Return None for now
        try:
            statvfs = os.statvfs(".")
            available_blocks = statvfs.f_frsize * statvfs.f_bavail
            return bytes_to_mega_bytes(available_blocks)
        except Exception:
            return None

    @staticmethod
    def get_cpu_count_ray(only_physical_cores: bool = False) -> int:
        import ray

        cluster_resources = ray.cluster_resources()
        num_cpus = int(cluster_resources.get("CPU", 0))
        if only_physical_cores:
            num_cpus = max(1, num_cpus // 2)
        return num_cpus

    @staticmethod
    def get_gpu_count_ray() -> int:
        # NOTE: Ray reports GPUs it detected via CUDA_VISIBLE_DEVICES / nvidia-smi at `ray start`
        import ray

        return int(ray.cluster_resources().get("GPU", 0))

    @staticmethod
    def _get_gpu_count_cuda() -> int:
        # FIXME: Sometimes doesn't detect GPU on Windows
        # FIXME: Doesn't ensure the GPUs are actually usable by the model (PyTorch, etc.)
        from .nvutil import cudaDeviceGetCount, cudaInit, cudaShutdown

        if not cudaInit():
            return 0
        gpu_count = cudaDeviceGetCount()
        cudaShutdown()
        return gpu_count


class RayResourceManager:
    """Manager that fetches ray cluster resources info. This class should only be used within a ray cluster."""

    @staticmethod
    def _init_ray():
        """Initialize ray runtime if not already initialized. Will force the existence of a cluster already being spinned up"""
        try_import_ray()
        import ray

        if not ray.is_initialized():
            ray.init(
                address="auto",  # Force ray to connect to an existing cluster. There should be one. Otherwise, something went wrong
                log_to_driver=False,
                logging_level=logging.ERROR,
            )

    @staticmethod
    def _get_cluster_resources(key: str, default_val: int = 0):
        """
        Get value of resources available in the cluster.

        Parameter
        ---------
        key: str
            The key of the resource
        default_val: int
            The default value to return if the key is not available
        """
        RayResourceManager._init_ray()
        import ray

        return ray.cluster_resources().get(key, default_val)

    @staticmethod
    def get_cpu_count() -> int:
        """Get number of cpu cores (virtual) available in the cluster"""
        return int(RayResourceManager._get_cluster_resources("CPU"))

    @staticmethod
    def get_gpu_count() -> int:
        """Get number of gpus available in the cluster"""
        return int(RayResourceManager._get_cluster_resources("GPU"))


def try_import_ray():
    try:
        import ray  # noqa: F401
    except ImportError as e:
        raise ImportError("ray is required; `pip install autogluon.core[all]`") from e


def get_resource_manager():
    """Get resource manager class based on the distributed mode"""
    return RayResourceManager if DistributedContext.is_distributed_mode() else ResourceManager


def _get_device_id_list(num_gpus: Union[int, float]) -> List[int]:
    """Pick the GPUs with the most free memory for a fit that requests `num_gpus`."""
    if num_gpus <= 0:
        return []
    free = ResourceManager.get_gpu_free_memory()
    if not free:
        return list(range(math.ceil(num_gpus)))
    ranked = sorted(free.items(), key=lambda kv: kv[1], reverse=True)
    return [idx for idx, _ in ranked[: math.ceil(num_gpus)]]


def get_cuda_visible_devices_for_fit(num_gpus: Union[int, float]) -> Optional[str]:
    """CUDA_VISIBLE_DEVICES value to hand to a child process that fits one bag fold."""
    ids = _get_device_id_list(num_gpus)
    if not ids:
        return None
    return ",".join(str(i) for i in ids)


def set_cuda_visible_devices_in_env(env: Dict[str, str], num_gpus: Union[int, float]) -> Dict[str, str]:
    env = dict(env)
    visible = get_cuda_visible_devices_for_fit(num_gpus)
    if visible is not None:
        env["CUDA_VISIBLE_DEVICES"] = visible
    return env


def get_multiprocessing_context():
    # CUDA cannot be re-initialised in a forked subprocess
    return multiprocessing.get_context("spawn")
