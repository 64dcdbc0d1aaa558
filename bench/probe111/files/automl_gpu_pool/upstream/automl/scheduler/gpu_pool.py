"""A tiny GPU pool for running many short HPO trials on one multi-GPU box.

The pool hands out device ids to trial subprocesses and keeps track of which
cards are busy. It is used by ``automl.scheduler.local.LocalTrialRunner`` as a
lighter alternative to Ray/NNI when all we need is "N trials on N GPUs".

Free memory / utilisation are read through NVML (``pynvml``); when NVML is
not available (e.g. inside some containers) we fall back to parsing
``nvidia-smi`` output.
"""

import logging
import os
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

try:
    import pynvml
    _HAS_NVML = True
except ImportError:  # pragma: no cover
    pynvml = None
    _HAS_NVML = False

logger = logging.getLogger(__name__)

MIN_FREE_MB = int(os.environ.get("AUTOML_MIN_FREE_MB", "4096"))
MAX_UTIL = int(os.environ.get("AUTOML_MAX_UTIL", "20"))


@dataclass
class GpuStatus:
    index: int
    name: str
    total_mb: int
    used_mb: int
    util: int
    processes: List[int] = field(default_factory=list)

    @property
    def free_mb(self) -> int:
        return self.total_mb - self.used_mb

    def is_idle(self, min_free_mb=MIN_FREE_MB, max_util=MAX_UTIL) -> bool:
        return self.free_mb >= min_free_mb and self.util <= max_util


def _query_nvml() -> List[GpuStatus]:
    pynvml.nvmlInit()
    try:
        out = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            mem = pynvml.nvmlDeviceGetMemoryInfo(h)
            util = pynvml.nvmlDeviceGetUtilizationRates(h)
            procs = [p.pid for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h)]
            name = pynvml.nvmlDeviceGetName(h)
            if isinstance(name, bytes):
                name = name.decode()
            out.append(GpuStatus(i, name, mem.total // 2 ** 20, mem.used // 2 ** 20, util.gpu, procs))
        return out
    finally:
        pynvml.nvmlShutdown()


def _query_smi() -> List[GpuStatus]:
    if shutil.which("nvidia-smi") is None:
        return []
    cmd = ["nvidia-smi", "--query-gpu=index,name,memory.total,memory.used,utilization.gpu",
           "--format=csv,noheader,nounits"]
    text = subprocess.check_output(cmd, text=True, timeout=30)
    out = []
    for line in text.strip().splitlines():
        idx, name, total, used, util = [x.strip() for x in line.split(",")]
        out.append(GpuStatus(int(idx), name, int(total), int(used), int(util)))
    return out


def query_gpus() -> List[GpuStatus]:
    """Status of every physical GPU on the host (ignores CUDA_VISIBLE_DEVICES)."""
    if _HAS_NVML:
        try:
            return _query_nvml()
        except pynvml.NVMLError as err:
            logger.warning("NVML query failed (%s), falling back to nvidia-smi", err)
    return _query_smi()


def visible_gpu_ids() -> List[int]:
    """Physical ids this process may use, honouring CUDA_VISIBLE_DEVICES."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is None or env.strip() == "":
        return [g.index for g in query_gpus()]
    return [int(x) for x in env.split(",") if x.strip().isdigit()]


class GpuPool:
    """Thread-safe allocator of whole GPUs to trials."""

    def __init__(self, gpu_ids: Optional[List[int]] = None, trials_per_gpu: int = 1,
                 only_idle: bool = True, poll_interval: float = 5.0):
        self.gpu_ids = list(gpu_ids) if gpu_ids is not None else visible_gpu_ids()
        if not self.gpu_ids:
            raise RuntimeError("GpuPool: no GPUs found (is the NVIDIA driver loaded?)")
        self.trials_per_gpu = trials_per_gpu
        self.only_idle = only_idle
        self.poll_interval = poll_interval
        self._load: Dict[int, int] = {g: 0 for g in self.gpu_ids}
        self._cv = threading.Condition()
        logger.info("GpuPool over GPUs %s, %d trial(s) per GPU", self.gpu_ids, trials_per_gpu)

    def _candidates(self) -> List[int]:
        free = [g for g in self.gpu_ids if self._load[g] < self.trials_per_gpu]
        if not self.only_idle or not free:
            return free
        status = {s.index: s for s in query_gpus()}
        # cards we already gave out count as idle for our own purposes
        return [g for g in free if self._load[g] > 0 or (g in status and status[g].is_idle())]

    def acquire(self, timeout: Optional[float] = None) -> int:
        deadline = None if timeout is None else time.time() + timeout
        with self._cv:
            while True:
                cands = self._candidates()
                if cands:
                    gpu = min(cands, key=lambda g: self._load[g])
                    self._load[gpu] += 1
                    return gpu
                remaining = None if deadline is None else deadline - time.time()
                if remaining is not None and remaining <= 0:
                    raise TimeoutError("no free GPU within %.0fs" % timeout)
                self._cv.wait(self.poll_interval if remaining is None else min(self.poll_interval, remaining))

    def release(self, gpu: int) -> None:
        with self._cv:
            self._load[gpu] = max(0, self._load[gpu] - 1)
            self._cv.notify_all()

    def trial_env(self, gpu: int, base_env: Optional[Dict[str, str]] = None) -> Dict[str, str]:
        """Environment for a trial subprocess pinned to ``gpu``."""
        env = dict(os.environ if base_env is None else base_env)
        env["CUDA_VISIBLE_DEVICES"] = str(gpu)
        env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
        # keep per-trial caching allocator from fragmenting on long sweeps
        env.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
        env["AUTOML_ASSIGNED_GPU"] = str(gpu)
        return env

    def run_trial(self, cmd: List[str], log_path: str, timeout: Optional[float] = None) -> int:
        gpu = self.acquire()
        try:
            with open(log_path, "w") as log_f:
                logger.info("trial %s -> GPU %d", " ".join(cmd), gpu)
                proc = subprocess.Popen(cmd, env=self.trial_env(gpu), stdout=log_f,
                                        stderr=subprocess.STDOUT)
                return proc.wait(timeout=timeout)
        finally:
            self.release(gpu)

    def snapshot(self) -> List[Dict]:
        status = {s.index: s for s in query_gpus()}
        rows = []
        for g in self.gpu_ids:
            s = status.get(g)
            rows.append({
                "gpu": g,
                "name": s.name if s else "?",
                "trials": self._load[g],
                "free_mb": s.free_mb if s else None,
                "util": s.util if s else None,
            })
        return rows


class LocalTrialRunner:
    """Run a list of trial commands over the pool, at most one batch per free card.

    ``commands`` are argv lists; ``{trial}`` in any argument is replaced by the
    trial index so that every trial writes to its own output directory.
    """

    def __init__(self, pool: GpuPool, log_dir: str = "trial_logs", timeout: Optional[float] = None):
        self.pool = pool
        self.log_dir = log_dir
        self.timeout = timeout
        os.makedirs(log_dir, exist_ok=True)
        self.results: Dict[int, int] = {}
        self._lock = threading.Lock()

    def _run_one(self, idx: int, cmd: List[str]) -> None:
        argv = [a.replace("{trial}", str(idx)) for a in cmd]
        log_path = os.path.join(self.log_dir, "trial_%04d.log" % idx)
        t0 = time.time()
        try:
            rc = self.pool.run_trial(argv, log_path, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            rc = -9
        with self._lock:
            self.results[idx] = rc
        logger.info("trial %d finished rc=%d in %.0fs", idx, rc, time.time() - t0)

    def run(self, commands: List[List[str]]) -> Dict[int, int]:
        n_slots = len(self.pool.gpu_ids) * self.pool.trials_per_gpu
        threads: List[threading.Thread] = []
        for idx, cmd in enumerate(commands):
            while sum(t.is_alive() for t in threads) >= n_slots:
                time.sleep(1.0)
            t = threading.Thread(target=self._run_one, args=(idx, cmd), daemon=True)
            t.start()
            threads.append(t)
        for t in threads:
            t.join()
        failed = [i for i, rc in self.results.items() if rc != 0]
        if failed:
            logger.warning("%d/%d trials failed: %s", len(failed), len(commands), failed[:20])
        return self.results


def main(argv=None):
    import argparse
    import json

    parser = argparse.ArgumentParser(description="Run trial commands from a JSON file over local GPUs")
    parser.add_argument("commands", help="JSON file with a list of argv lists")
    parser.add_argument("--gpus", default=None, help="comma separated physical GPU ids")
    parser.add_argument("--trials-per-gpu", type=int, default=1)
    parser.add_argument("--ignore-busy", action="store_true", help="also use GPUs other users are on")
    parser.add_argument("--log-dir", default="trial_logs")
    args = parser.parse_args(argv)

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    with open(args.commands) as f:
        commands = json.load(f)
    gpu_ids = [int(x) for x in args.gpus.split(",")] if args.gpus else None
    pool = GpuPool(gpu_ids, trials_per_gpu=args.trials_per_gpu, only_idle=not args.ignore_busy)
    for row in pool.snapshot():
        logger.info("GPU %(gpu)s %(name)s free=%(free_mb)s MiB util=%(util)s%%", row)
    results = LocalTrialRunner(pool, log_dir=args.log_dir).run(commands)
    return 0 if all(rc == 0 for rc in results.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
