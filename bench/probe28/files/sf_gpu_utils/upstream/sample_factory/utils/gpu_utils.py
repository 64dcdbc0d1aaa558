import os
from typing import List, Optional

import torch

from sample_factory.utils.get_available_gpus import get_gpus_without_triggering_pytorch_cuda_initialization
from sample_factory.utils.utils import log

CUDA_ENVVAR = "CUDA_VISIBLE_DEVICES"


def get_available_gpus() -> List[int]:
    """
    Returns indices of GPUs specified by CUDA_VISIBLE_DEVICES.
    """
    orig_visible_devices = os.environ[f"{CUDA_ENVVAR}_backup_"]
    available_gpus = [int(g.strip()) for g in orig_visible_devices.split(",") if g and not g.isspace()]
    return available_gpus


def set_global_cuda_envvars(cfg):
    if CUDA_ENVVAR not in os.environ:
        if cfg.device == "cpu":
            available_gpus = ""
        else:
            available_gpus = get_gpus_without_triggering_pytorch_cuda_initialization(os.environ)
        os.environ[CUDA_ENVVAR] = available_gpus
    os.environ[f"{CUDA_ENVVAR}_backup_"] = os.environ[CUDA_ENVVAR]
    os.environ[CUDA_ENVVAR] = ""


def get_gpus_for_process(process_idx: int, num_gpus_per_process: int, gpu_mask: Optional[List[int]] = None) -> List[int]:
    available_gpus = get_available_gpus()
    if gpu_mask is not None:
        assert len(available_gpus) >= len(gpu_mask)
        available_gpus = [available_gpus[g] for g in gpu_mask]
    num_gpus = len(available_gpus)

    gpus_to_use = []
    if num_gpus == 0:
        return gpus_to_use

    first_gpu_idx = process_idx * num_gpus_per_process
    for i in range(num_gpus_per_process):
        index_mod_num_gpus = (first_gpu_idx + i) % num_gpus
        gpus_to_use.append(available_gpus[index_mod_num_gpus])
    return gpus_to_use


def set_gpus_for_process(process_idx, num_gpus_per_process, process_type, gpu_mask=None):
    gpus_to_use = get_gpus_for_process(process_idx, num_gpus_per_process, gpu_mask)

    if not gpus_to_use:
        os.environ[CUDA_ENVVAR] = ""
        log.debug("Not using GPUs for %s process %d", process_type, process_idx)
    else:
        os.environ[CUDA_ENVVAR] = ",".join([str(g) for g in gpus_to_use])
        log.info(
            "Set environment var %s to %r (GPU indices %r) for %s process %d",
            CUDA_ENVVAR,
            os.environ[CUDA_ENVVAR],
            gpus_to_use,
            process_type,
            process_idx,
        )
        log.debug("Num visible devices: %r", torch.cuda.device_count())

    return gpus_to_use


def cuda_envvars_for_policy(policy_id, process_type):
    set_gpus_for_process(policy_id, 1, process_type)


def gpus_for_process_type(cfg, process_type: str):
    if cfg.device == "cpu":
        return []
    return get_available_gpus()


def torch_device_for_worker(cfg, process_type: str, policy_id: int = 0) -> torch.device:
    if cfg.device == "gpu":
        # we set CUDA_VISIBLE_DEVICES for each worker, so index 0 is always "our" GPU
        torch.backends.cudnn.benchmark = True
        device = torch.device("cuda", index=0)
        torch.cuda.set_device(0)
        log.debug("%s %d using device %s (%s)", process_type, policy_id, device, torch.cuda.get_device_name(0))
    else:
        device = torch.device("cpu")
    return device


def gpu_memory_summary(device: torch.device) -> str:
    if device.type != "cuda":
        return ""
    allocated = torch.cuda.memory_allocated(device) / 2**20
    reserved = torch.cuda.memory_reserved(device) / 2**20
    return f"allocated {allocated:.1f}MiB, reserved {reserved:.1f}MiB"
