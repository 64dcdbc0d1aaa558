"""Health / readiness endpoints for the model server.

/healthz  - liveness: process is up
/readyz   - readiness: model loaded, GPU reachable, enough free memory
/metrics  - Prometheus gauges for GPU memory and utilization
"""
import logging
import os
import shutil
import subprocess
import time
from typing import Dict, List

import pynvml
import torch
from fastapi import APIRouter, Response, status
from prometheus_client import CONTENT_TYPE_LATEST, Gauge, generate_latest

log = logging.getLogger("server.health")
router = APIRouter()

MIN_FREE_MB = int(os.environ.get("HEALTH_MIN_FREE_MB", "1024"))
GPU_INDEX = int(os.environ.get("SERVE_GPU", "0"))
_START = time.time()

GPU_MEM_USED = Gauge("gpu_memory_used_bytes", "Device memory in use", ["device"])
GPU_MEM_TOTAL = Gauge("gpu_memory_total_bytes", "Device memory total", ["device"])
GPU_UTIL = Gauge("gpu_utilization_percent", "Device utilization", ["device"])
TORCH_ALLOC = Gauge("torch_allocated_bytes", "Bytes allocated by the PyTorch caching allocator", ["device"])

_nvml_ok = False
try:
    pynvml.nvmlInit()
    _nvml_ok = True
except pynvml.NVMLError as e:  # pragma: no cover
    log.warning("NVML unavailable: %s", e)


def gpu_snapshot(index: int) -> Dict[str, float]:
    snap = {"index": index}
    if torch.cuda.is_available():
        free, total = torch.cuda.mem_get_info(index)
        snap.update(free_mb=free / 2**20, total_mb=total / 2**20,
                    torch_allocated_mb=torch.cuda.memory_allocated(index) / 2**20,
                    torch_reserved_mb=torch.cuda.memory_reserved(index) / 2**20,
                    name=torch.cuda.get_device_name(index))
    if _nvml_ok:
        h = pynvml.nvmlDeviceGetHandleByIndex(index)
        util = pynvml.nvmlDeviceGetUtilizationRates(h)
        temp = pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU)
        snap.update(util_percent=util.gpu, temperature_c=temp)
    return snap


def nvidia_smi_processes() -> List[Dict[str, str]]:
    if shutil.which("nvidia-smi") is None:
        return []
    out = subprocess.run(
        ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
        capture_output=True, text=True, timeout=5)
    rows = []
    for line in out.stdout.strip().splitlines():
        pid, mem = [v.strip() for v in line.split(",")]
        rows.append({"pid": pid, "used_mb": mem})
    return rows


@router.get("/healthz")
def healthz():
    return {"status": "ok", "uptime_s": round(time.time() - _START, 1)}


@router.get("/readyz")
def readyz(response: Response):
    from server.state import MODEL  # set by the startup hook

    problems = []
    if MODEL is None:
        problems.append("model not loaded")
    if not torch.cuda.is_available():
        problems.append("no CUDA device visible")
    else:
        snap = gpu_snapshot(GPU_INDEX)
        if snap["free_mb"] < MIN_FREE_MB:
            problems.append(f"low device memory: {snap['free_mb']:.0f} MB free")
        try:
            x = torch.ones(8, device=f"cuda:{GPU_INDEX}")
            torch.cuda.synchronize(GPU_INDEX)
            assert float(x.sum().cpu()) == 8.0
        except Exception as e:  # noqa: BLE001
            problems.append(f"device probe failed: {e}")
    if problems:
        response.status_code = status.HTTP_503_SERVICE_UNAVAILABLE
        return {"status": "not ready", "problems": problems}
    return {"status": "ready", "device": gpu_snapshot(GPU_INDEX)}


@router.get("/metrics")
def metrics():
    for i in range(torch.cuda.device_count()):
        snap = gpu_snapshot(i)
        label = str(i)
        if "total_mb" in snap:
            GPU_MEM_TOTAL.labels(label).set(snap["total_mb"] * 2**20)
            GPU_MEM_USED.labels(label).set((snap["total_mb"] - snap["free_mb"]) * 2**20)
            TORCH_ALLOC.labels(label).set(snap["torch_allocated_mb"] * 2**20)
        if "util_percent" in snap:
            GPU_UTIL.labels(label).set(snap["util_percent"])
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)


@router.get("/debug/processes")
def processes():
    return {"processes": nvidia_smi_processes()}
