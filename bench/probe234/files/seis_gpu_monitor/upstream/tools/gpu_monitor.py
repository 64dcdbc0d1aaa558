"""
Background GPU monitor used during the long DAS / FWI runs.

Samples utilisation, memory and temperature of the GPUs used by this process
every ``interval`` seconds in a daemon thread and writes them to a CSV file.
Also usable from the command line:

    python tools/gpu_monitor.py --interval 5 --out gpu_usage.csv --duration 3600
"""
import argparse
import csv
import os
import shutil
import subprocess
import threading
import time
from datetime import datetime

import torch

try:
    import pynvml
    pynvml.nvmlInit()
    _NVML = True
except Exception:  # library missing or no driver
    _NVML = False


def visible_gpu_indices():
    """Physical indices of the GPUs visible to this process (honours CUDA_VISIBLE_DEVICES)."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env:
        return [int(x) for x in env.split(",") if x.strip().isdigit()]
    return list(range(torch.cuda.device_count()))


def sample_nvml(indices):
    rows = []
    for i in indices:
        h = pynvml.nvmlDeviceGetHandleByIndex(i)
        util = pynvml.nvmlDeviceGetUtilizationRates(h)
        mem = pynvml.nvmlDeviceGetMemoryInfo(h)
        temp = pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU)
        power = pynvml.nvmlDeviceGetPowerUsage(h) / 1000.0
        rows.append({
            "gpu": i,
            "util_pct": util.gpu,
            "mem_used_mb": mem.used / 2 ** 20,
            "mem_total_mb": mem.total / 2 ** 20,
            "temp_c": temp,
            "power_w": power,
        })
    return rows


def sample_smi(indices):
    """Fallback via nvidia-smi when the NVML bindings are not installed."""
    if shutil.which("nvidia-smi") is None:
        return []
    out = subprocess.run(
        ["nvidia-smi", "--query-gpu=index,utilization.gpu,memory.used,memory.total,temperature.gpu,power.draw",
         "--format=csv,noheader,nounits"],
        capture_output=True, text=True, check=False,
    ).stdout
    rows = []
    for line in out.strip().splitlines():
        idx, util, used, total, temp, power = [x.strip() for x in line.split(",")]
        if int(idx) not in indices:
            continue
        rows.append({"gpu": int(idx), "util_pct": float(util), "mem_used_mb": float(used),
                     "mem_total_mb": float(total), "temp_c": float(temp), "power_w": float(power)})
    return rows


def sample_torch():
    """Memory as seen by the PyTorch caching allocator of this process."""
    rows = []
    for i in range(torch.cuda.device_count()):
        rows.append({
            "gpu": i,
            "torch_alloc_mb": torch.cuda.memory_allocated(i) / 2 ** 20,
            "torch_reserved_mb": torch.cuda.memory_reserved(i) / 2 ** 20,
        })
    return rows


class GPUMonitor:
    FIELDS = ["time", "gpu", "util_pct", "mem_used_mb", "mem_total_mb", "temp_c", "power_w",
              "torch_alloc_mb", "torch_reserved_mb"]

    def __init__(self, out, interval=10.0):
        self.out = out
        self.interval = interval
        self.indices = visible_gpu_indices()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self):
        rows = sample_nvml(self.indices) if _NVML else sample_smi(self.indices)
        torch_rows = {r["gpu"]: r for r in sample_torch()}
        now = datetime.now().isoformat(timespec="seconds")
        for logical, row in enumerate(rows):
            row.update(torch_rows.get(logical, {}))
            row["time"] = now
        return rows

    def _run(self):
        new = not os.path.exists(self.out)
        with open(self.out, "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=self.FIELDS)
            if new:
                w.writeheader()
            while not self._stop.is_set():
                for row in self._sample():
                    w.writerow(row)
                f.flush()
                self._stop.wait(self.interval)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=self.interval + 1)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--interval", type=float, default=5.0)
    p.add_argument("--duration", type=float, default=None)
    p.add_argument("--out", default="gpu_usage.csv")
    args = p.parse_args()
    print(f"NVML: {_NVML}, GPUs: {visible_gpu_indices()}")
    mon = GPUMonitor(args.out, args.interval).start()
    try:
        t0 = time.time()
        while args.duration is None or time.time() - t0 < args.duration:
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    finally:
        mon.stop()


if __name__ == "__main__":
    main()
