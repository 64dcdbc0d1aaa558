import json
import logging
import os
import platform
import subprocess
import sys
import time
from typing import Dict, List, Optional

import GPUtil
import psutil
import torch

try:
    from pynvml import (
        nvmlDeviceGetCount,
        nvmlDeviceGetHandleByIndex,
        nvmlDeviceGetMemoryInfo,
        nvmlDeviceGetUtilizationRates,
        nvmlInit,
        nvmlShutdown,
    )

    _NVML_IMPORTED = True
except ImportError:
    _NVML_IMPORTED = False

FETCH_GPU_INTERVAL_SEC = 2


def get_device_type() -> str:
    """'gpu' when the edge device can run CUDA jobs, otherwise 'cpu'."""
    return "gpu" if torch.cuda.is_available() else "cpu"


def get_sys_runner_info() -> Dict:
    info = {
        "os_name": platform.system(),
        "os_version": platform.version(),
        "python_version": sys.version.split(" ")[0],
        "torch_version": torch.__version__,
        "cpu_count": psutil.cpu_count(),
        "total_mem": psutil.virtual_memory().total,
        "gpu_count": 0,
        "gpu_names": [],
    }
    if torch.cuda.is_available():
        info["gpu_count"] = torch.cuda.device_count()
        info["gpu_names"] = [torch.cuda.get_device_name(i) for i in range(info["gpu_count"])]
        info["cuda_version"] = torch.version.cuda
    return info


def get_sys_realtime_stats() -> Dict:
    """CPU / memory / accelerator utilisation pushed to MLOps every few seconds."""
    stats = {
        "cpu_utilization": psutil.cpu_percent(),
        "process_cpu_threads_in_use": psutil.Process(os.getpid()).num_threads(),
        "system_memory_utilization": psutil.virtual_memory().percent,
        "disk_utilization": psutil.disk_usage("/").percent,
        "network_traffic": psutil.net_io_counters().bytes_sent + psutil.net_io_counters().bytes_recv,
        "gpu_utilization": None,
        "gpu_memory_utilization": None,
    }
    if _NVML_IMPORTED:
        try:
            nvmlInit()
            n = nvmlDeviceGetCount()
            util, mem = 0.0, 0.0
            for i in range(n):
                h = nvmlDeviceGetHandleByIndex(i)
                util += nvmlDeviceGetUtilizationRates(h).gpu
                m = nvmlDeviceGetMemoryInfo(h)
                mem += 100.0 * m.used / max(m.total, 1)
            if n:
                stats["gpu_utilization"] = util / n
                stats["gpu_memory_utilization"] = mem / n
            nvmlShutdown()
        except Exception as e:  # driver missing, container without GPUs, ...
            logging.debug("NVML unavailable: %s", e)
    return stats


def get_gpu_list() -> List[Dict]:
    """All accelerators on this edge device, as reported to the scheduler."""
    gpu_list = GPUtil.getGPUs()
    ret = []
    for gpu in gpu_list:
        ret.append(
            {
                "ID": gpu.id,
                "uuid": gpu.uuid,
                "load": gpu.load,
                "memoryTotal": gpu.memoryTotal,
                "memoryUsed": gpu.memoryUsed,
                "memoryFree": gpu.memoryFree,
                "driver": gpu.driver,
                "gpu_name": gpu.name,
                "serial": gpu.serial,
                "display_mode": gpu.display_mode,
                "display_active": gpu.display_active,
                "temperature": gpu.temperature,
            }
        )
    return ret


def get_available_gpu_id_list(limit: int = 1) -> List[int]:
    """Ids of idle GPUs, most free memory first."""
    gpu_available_list = GPUtil.getAvailable(order="memory", limit=limit, maxLoad=0.01, maxMemory=0.01)
    return gpu_available_list


def get_gpu_count_vendor() -> (int, str):
    gpus = get_gpu_list()
    return len(gpus), "nvidia" if gpus else ""


def build_job_env(run_id: int, gpu_ids: List[int], base_env: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """Environment for the subprocess that runs one FedML job on this edge device."""
    env = dict(base_env or os.environ)
    env["FEDML_CURRENT_RUN_ID"] = str(run_id)
    if gpu_ids:
        env["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in gpu_ids)
        env["FEDML_GPU_NUM"] = str(len(gpu_ids))
    else:
        env["FEDML_GPU_NUM"] = "0"
    env.setdefault("OMP_NUM_THREADS", str(max(1, psutil.cpu_count() // 4)))
    return env


def launch_job(run_id: int, entry_cmd: List[str], request_gpu_num: int, workdir: str) -> subprocess.Popen:
    gpu_ids: List[int] = []
    deadline = time.time() + 600
    while request_gpu_num > 0:
        gpu_ids = get_available_gpu_id_list(limit=request_gpu_num)
        if len(gpu_ids) >= request_gpu_num:
            break
        if time.time() > deadline:
            raise RuntimeError(
                f"run {run_id}: requested {request_gpu_num} GPUs, only {len(gpu_ids)} idle after 10 min"
            )
        time.sleep(FETCH_GPU_INTERVAL_SEC)

    env = build_job_env(run_id, gpu_ids)
    logging.info("run %s: launching %s on GPUs %s", run_id, " ".join(entry_cmd), gpu_ids)
    return subprocess.Popen(entry_cmd, cwd=workdir, env=env, stdout=sys.stdout, stderr=sys.stderr)


if __name__ == "__main__":
    print(json.dumps(get_sys_runner_info(), indent=2))
    print(json.dumps(get_sys_realtime_stats(), indent=2))
    print(json.dumps(get_gpu_list(), indent=2))
