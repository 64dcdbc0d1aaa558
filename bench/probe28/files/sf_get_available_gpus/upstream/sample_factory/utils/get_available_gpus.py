"""
Enumerate GPUs without initializing CUDA in the main process.

Initializing CUDA in the parent process breaks fork()-based multiprocessing, so we spawn a tiny child
process (or ask nvidia-smi) to learn how many devices there are.
"""
import os
import subprocess
import sys
from multiprocessing import get_context
from typing import Dict, List

from sample_factory.utils.utils import log


def _count_gpus_in_subprocess(queue):
    import torch

    queue.put(torch.cuda.device_count())


def get_num_gpus_torch() -> int:
    ctx = get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_count_gpus_in_subprocess, args=(q,))
    p.start()
    num = q.get(timeout=60)
    p.join()
    return num


def get_num_gpus_nvidia_smi() -> int:
    try:
        out = subprocess.check_output(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"], timeout=30)
    except (FileNotFoundError, subprocess.CalledProcessError, subprocess.TimeoutExpired):
        log.warning("nvidia-smi not found or failed, assuming 0 GPUs")
        return 0
    lines = [ln for ln in out.decode().splitlines() if ln.strip()]
    return len(lines)


def get_gpus_without_triggering_pytorch_cuda_initialization(envvars: Dict[str, str] = os.environ) -> str:
    if "CUDA_VISIBLE_DEVICES" in envvars:
        return envvars["CUDA_VISIBLE_DEVICES"]

    num_gpus = get_num_gpus_nvidia_smi()
    if num_gpus == 0:
        num_gpus = get_num_gpus_torch()
    available: List[str] = [str(i) for i in range(num_gpus)]
    log.debug("Detected %d GPUs: %r", num_gpus, available)
    return ",".join(available)


def main():
    print(get_gpus_without_triggering_pytorch_cuda_initialization())
    return 0


if __name__ == "__main__":
    sys.exit(main())
