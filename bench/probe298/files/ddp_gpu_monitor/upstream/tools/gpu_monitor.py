"""Background GPU utilisation / memory logger.

Started by the launcher on local rank 0 of every node when ``CXR_GPU_MONITOR=1``:

    CXR_GPU_MONITOR=1 ./scripts/train_8gpu.sh configs/densenet121_chexpert.yaml

Writes one CSV row per device every ``interval`` seconds so that data-loader stalls
(utilisation dips) can be correlated with the training log afterwards.
"""
import csv
import os
import threading
import time

import pynvml


class GPUMonitor(threading.Thread):
    def __init__(self, out_path, interval=10.0, devices=None):
        super().__init__(daemon=True)
        self.out_path = out_path
        self.interval = interval
        self._stop_event = threading.Event()
        pynvml.nvmlInit()
        count = pynvml.nvmlDeviceGetCount()
        self.devices = list(range(count)) if devices is None else list(devices)
        self.handles = {i: pynvml.nvmlDeviceGetHandleByIndex(i) for i in self.devices}

    def sample(self):
        rows = []
        now = time.time()
        for idx, handle in self.handles.items():
            util = pynvml.nvmlDeviceGetUtilizationRates(handle)
            mem = pynvml.nvmlDeviceGetMemoryInfo(handle)
            rows.append({
                "time": f"{now:.1f}",
                "device": idx,
                "util_pct": util.gpu,
                "mem_used_mb": mem.used // (1024 * 1024),
                "mem_total_mb": mem.total // (1024 * 1024),
            })
        return rows

    def run(self):
        new_file = not os.path.exists(self.out_path)
        with open(self.out_path, "a", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=["time", "device", "util_pct", "mem_used_mb", "mem_total_mb"])
            if new_file:
                writer.writeheader()
            while not self._stop_event.is_set():
                for row in self.sample():
                    writer.writerow(row)
                f.flush()
                self._stop_event.wait(self.interval)

    def stop(self):
        self._stop_event.set()
        self.join(timeout=self.interval + 1)
        pynvml.nvmlShutdown()


def maybe_start_monitor(output_dir, local_rank):
    """Start the monitor on local rank 0 if CXR_GPU_MONITOR=1; returns the thread or None."""
    if os.environ.get("CXR_GPU_MONITOR", "0") != "1" or local_rank != 0:
        return None
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    devices = None
    if visible:
        # NVML ignores CUDA_VISIBLE_DEVICES and enumerates physical devices
        devices = [int(d) for d in visible.split(",") if d.strip()]
    mon = GPUMonitor(os.path.join(output_dir, "gpu_util.csv"), devices=devices)
    mon.start()
    return mon


if __name__ == "__main__":
    m = GPUMonitor("gpu_util.csv", interval=2.0)
    m.start()
    try:
        while True:
            time.sleep(60)
    except KeyboardInterrupt:
        m.stop()
