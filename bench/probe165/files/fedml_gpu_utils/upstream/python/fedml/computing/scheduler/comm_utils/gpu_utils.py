"""Helpers the FedML launcher/agent uses to find and reserve GPUs on an edge device.

The agent reports the available cards to the MLOps backend and picks the least
loaded ones when a job asks for ``computing.minimum_num_gpus``.
"""
import logging
import os
import shutil
import subprocess
from typing import Dict, List, Optional

try:
    import GPUtil
except ImportError:  # GPUtil is optional, fall back to parsing nvidia-smi
    GPUtil = None

try:
    import pynvml
except ImportError:
    pynvml = None

import torch


class GPUCard:
    def __init__(self, id, name, driver, serial, memoryTotal, memoryFree, memoryUsed, memoryUtil, load, uuid=None, temperature=None):
        self.id = id
        self.name = name
        self.driver = driver
        self.serial = serial
        self.memoryTotal = memoryTotal
        self.memoryFree = memoryFree
        self.memoryUsed = memoryUsed
        self.memoryUtil = memoryUtil
        self.load = load
        self.uuid = uuid
        self.temperature = temperature

    def to_dict(self) -> Dict:
        return dict(self.__dict__)

    def __repr__(self):
        return "GPUCard(id=%s, name=%s, free=%sMB/%sMB, load=%.2f)" % (
            self.id, self.name, self.memoryFree, self.memoryTotal, self.load or 0.0)


def _nvidia_smi_available() -> bool:
    return shutil.which("nvidia-smi") is not None


def get_gpu_cards() -> List[GPUCard]:
    """Return every GPU on this host with its memory and load."""
    if GPUtil is not None:
        return [
            GPUCard(
                id=g.id, name=g.name, driver=g.driver, serial=g.serial,
                memoryTotal=g.memoryTotal, memoryFree=g.memoryFree, memoryUsed=g.memoryUsed,
                memoryUtil=g.memoryUtil, load=g.load, uuid=g.uuid, temperature=g.temperature,
            )
            for g in GPUtil.getGPUs()
        ]
    if not _nvidia_smi_available():
        return []
    out = subprocess.check_output(
        [
            "nvidia-smi",
            "--query-gpu=index,name,driver_version,serial,memory.total,memory.free,memory.used,utilization.gpu,uuid,temperature.gpu",
            "--format=csv,noheader,nounits",
        ]
    ).decode("utf-8")
    cards = []
    for line in out.strip().splitlines():
        idx, name, driver, serial, total, free, used, util, uuid, temp = [c.strip() for c in line.split(",")]
        cards.append(
            GPUCard(int(idx), name, driver, serial, float(total), float(free), float(used),
                    float(used) / max(float(total), 1.0), float(util) / 100.0, uuid, float(temp))
        )
    return cards


def get_gpu_count() -> int:
    if pynvml is not None:
        try:
            pynvml.nvmlInit()
            count = pynvml.nvmlDeviceGetCount()
            pynvml.nvmlShutdown()
            return count
        except pynvml.NVMLError as e:
            logging.info("nvml init failed: %s" % e)
    return torch.cuda.device_count()


def get_available_gpu_id_list(limit=1, max_load=0.01, max_memory=0.01) -> List[int]:
    """Ids of idle GPUs, least loaded first (same semantics as GPUtil.getAvailable)."""
    if GPUtil is not None:
        return GPUtil.getAvailable(order="memory", limit=limit, maxLoad=max_load, maxMemory=max_memory)
    cards = [c for c in get_gpu_cards() if c.load <= max_load and c.memoryUtil <= max_memory]
    cards.sort(key=lambda c: c.memoryUsed)
    return [c.id for c in cards[:limit]]


def get_gpu_driver_version() -> Optional[str]:
    if pynvml is None:
        return None
    try:
        pynvml.nvmlInit()
        version = pynvml.nvmlSystemGetDriverVersion()
        pynvml.nvmlShutdown()
        return version.decode() if isinstance(version, bytes) else version
    except pynvml.NVMLError:
        return None


def get_cuda_version() -> Optional[str]:
    """CUDA runtime that torch was built against; reported to MLOps as 'cuda_version'."""
    return torch.version.cuda


def reserve_gpus_for_job(run_id, request_num_gpus: int) -> str:
    """Pick ``request_num_gpus`` idle cards and return them as a CUDA_VISIBLE_DEVICES string."""
    gpu_ids = get_available_gpu_id_list(limit=request_num_gpus)
    if len(gpu_ids) < request_num_gpus:
        raise RuntimeError(
            "run %s requested %d GPUs but only %d are idle" % (run_id, request_num_gpus, len(gpu_ids))
        )
    visible = ",".join(str(i) for i in gpu_ids)
    logging.info("run %s -> CUDA_VISIBLE_DEVICES=%s" % (run_id, visible))
    return visible


def export_visible_devices(env: Dict[str, str], gpu_ids: str) -> Dict[str, str]:
    """Environment for the job subprocess started by the agent."""
    env = dict(env)
    env["CUDA_VISIBLE_DEVICES"] = gpu_ids
    env["FEDML_CURRENT_GPU_IDS"] = gpu_ids
    return env


def get_device_info_for_mlops() -> Dict:
    cards = get_gpu_cards()
    return {
        "gpu_count": len(cards),
        "gpu_type": cards[0].name if cards else "",
        "gpu_available_mem": sum(c.memoryFree for c in cards),
        "gpu_total_mem": sum(c.memoryTotal for c in cards),
        "driver_version": get_gpu_driver_version(),
        "cuda_version": get_cuda_version(),
        "cpu_count": os.cpu_count(),
    }
