"""
Module to collect system metrics for front-end.

The Java frontend starts this script every `metrics_interval` seconds as
    python ts/metrics/metric_collector.py --gpu <number_of_gpu>
and parses the lines printed on stdout (one metric per line, StatsD-like format).
"""
import logging
import subprocess
import types
from builtins import str

import psutil

from ts.metrics.dimension import Dimension
from ts.metrics.metric import Metric

system_metrics = []
dimension = [Dimension("Level", "Host")]


def cpu_utilization():
    data = psutil.cpu_percent()
    system_metrics.append(Metric("CPUUtilization", data, "percent", dimension))


def memory_used():
    data = psutil.virtual_memory().used / (1024 * 1024)  # in MB
    system_metrics.append(Metric("MemoryUsed", data, "MB", dimension))


def memory_available():
    data = psutil.virtual_memory().available / (1024 * 1024)  # in MB
    system_metrics.append(Metric("MemoryAvailable", data, "MB", dimension))


def memory_utilization():
    data = psutil.virtual_memory().percent
    system_metrics.append(Metric("MemoryUtilization", data, "percent", dimension))


def disk_used():
    data = psutil.disk_usage("/").used / (1024 * 1024 * 1024)  # in GB
    system_metrics.append(Metric("DiskUsage", data, "GB", dimension))


def disk_utilization():
    data = psutil.disk_usage("/").percent
    system_metrics.append(Metric("DiskUtilization", data, "percent", dimension))


def disk_available():
    data = psutil.disk_usage("/").free / (1024 * 1024 * 1024)  # in GB
    system_metrics.append(Metric("DiskAvailable", data, "GB", dimension))


def _smi_fallback(num_of_gpu):
    """Used when NVML cannot report utilisation (e.g. MIG slices)."""
    query = "index,utilization.gpu,memory.used,memory.total"
    out = subprocess.check_output(
        ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits"],
        universal_newlines=True,
    )
    rows = []
    for line in out.strip().splitlines()[:num_of_gpu]:
        idx, util, used, total = [x.strip() for x in line.split(",")]
        rows.append(
            {
                "index": int(idx),
                "utilization": float(util),
                "mem_used": float(used),
                "mem_used_percent": 100.0 * float(used) / max(float(total), 1.0),
            }
        )
    return rows


def gpu_utilization(num_of_gpu):
    """
    Collect gpu metrics.
    :param num_of_gpu:
    :return:
    """
    if num_of_gpu <= 0:
        return

    # pylint: disable=wrong-import-position
    # pylint: disable=import-outside-toplevel
    import nvgpu
    import pynvml
    from nvgpu import list_gpus

    # pylint: enable=wrong-import-position
    # pylint: enable=import-outside-toplevel

    info = nvgpu.gpu_info()
    for value in info:
        dimension_gpu = [
            Dimension("Level", "Host"),
            Dimension("device_id", value["index"]),
        ]
        system_metrics.append(
            Metric(
                "GPUMemoryUtilization",
                value["mem_used_percent"],
                "percent",
                dimension_gpu,
            )
        )
        system_metrics.append(
            Metric("GPUMemoryUsed", value["mem_used"], "MB", dimension_gpu)
        )

    try:
        statuses = list_gpus.device_statuses()
    except pynvml.nvml.NVMLError_NotSupported:
        logging.error("gpu device monitoring not supported")
        statuses = _smi_fallback(num_of_gpu)

    for idx, status in enumerate(statuses):
        dimension_gpu = [Dimension("Level", "Host"), Dimension("device_id", idx)]
        system_metrics.append(
            Metric("GPUUtilization", status["utilization"], "percent", dimension_gpu)
        )


def gpu_power(num_of_gpu):
    """Board power draw per device; only exported when enable_gpu_power_metrics=true."""
    if num_of_gpu <= 0:
        return
    import pynvml  # pylint: disable=import-outside-toplevel

    pynvml.nvmlInit()
    try:
        for idx in range(num_of_gpu):
            handle = pynvml.nvmlDeviceGetHandleByIndex(idx)
            milliwatts = pynvml.nvmlDeviceGetPowerUsage(handle)
            dimension_gpu = [Dimension("Level", "Host"), Dimension("device_id", idx)]
            system_metrics.append(
                Metric("GPUPowerDraw", milliwatts / 1000.0, "W", dimension_gpu)
            )
    finally:
        pynvml.nvmlShutdown()


def collect_all(mod, num_of_gpu, with_power=False):
    """
    Collect all system metrics.

    :param mod:
    :param num_of_gpu:
    :param with_power:
    :return:
    """
    members = dir(mod)
    for i in members:
        value = getattr(mod, i)
        if isinstance(value, types.FunctionType) and value.__name__ not in (
            "collect_all",
            "gpu_power",
            "_smi_fallback",
        ):
            if value.__name__ == "gpu_utilization":
                value(num_of_gpu)
            else:
                value()
    if with_power:
        gpu_power(num_of_gpu)

    for met in system_metrics:
        logging.info(str(met))

    logging.info("")
