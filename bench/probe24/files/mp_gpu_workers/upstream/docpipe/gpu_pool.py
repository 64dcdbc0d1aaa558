"""A pool of long-lived GPU worker processes for page-level document OCR.

Each worker is pinned to one card by setting CUDA_VISIBLE_DEVICES *before* torch
initialises CUDA in the child, so inside the worker the card is always cuda:0.
Work items are (doc_id, page_no, png_bytes); results go back on a shared queue.
"""
import logging
import os
import queue
import signal
import time
import traceback
from dataclasses import dataclass
from typing import Iterable, List, Optional

import torch
import torch.multiprocessing as mp

log = logging.getLogger("docpipe.gpu_pool")

_STOP = None


@dataclass
class PoolConfig:
    devices: List[int]
    workers_per_device: int = 1
    model_name: str = "surya"
    fp16: bool = True
    max_queue: int = 256


def visible_devices() -> List[int]:
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env:
        return [int(x) for x in env.split(",") if x.strip() != ""]
    return list(range(torch.cuda.device_count()))


def query_gpu_memory():
    """Free memory per physical card via NVML (used to skip busy cards)."""
    import pynvml

    pynvml.nvmlInit()
    try:
        out = {}
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            mem = pynvml.nvmlDeviceGetMemoryInfo(h)
            out[i] = mem.free // 2**20
        return out
    finally:
        pynvml.nvmlShutdown()


def _worker_main(rank: int, physical_id: int, cfg: PoolConfig, in_q, out_q):
    # Must happen before the first CUDA call in this process.
    os.environ["CUDA_VISIBLE_DEVICES"] = str(physical_id)
    os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:256")
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    from docpipe.models import build_page_model  # heavy import, after env setup

    torch.cuda.set_device(0)
    device = torch.device("cuda", 0)
    torch.backends.cuda.matmul.allow_tf32 = True
    model = build_page_model(cfg.model_name).to(device).eval()
    if cfg.fp16:
        model = model.half()
    log.info("worker %d on GPU %d (%s)", rank, physical_id, torch.cuda.get_device_name(0))

    while True:
        item = in_q.get()
        if item is _STOP:
            break
        doc_id, page_no, png = item
        t0 = time.perf_counter()
        try:
            with torch.inference_mode():
                pixels = model.preprocess(png).to(device, non_blocking=True)
                if cfg.fp16:
                    pixels = pixels.half()
                result = model(pixels)
            torch.cuda.current_stream().synchronize()
            out_q.put((doc_id, page_no, result, time.perf_counter() - t0, None))
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()  # drop cached blocks and keep serving
            out_q.put((doc_id, page_no, None, 0.0, "oom"))
        except Exception:
            out_q.put((doc_id, page_no, None, 0.0, traceback.format_exc()))

    del model
    torch.cuda.empty_cache()


class GPUPool:
    def __init__(self, cfg: PoolConfig):
        self.cfg = cfg
        ctx = mp.get_context("spawn")  # CUDA cannot be re-initialised in a forked child
        self.in_q = ctx.Queue(maxsize=cfg.max_queue)
        self.out_q = ctx.Queue()
        self.procs = []
        rank = 0
        for dev in cfg.devices:
            for _ in range(cfg.workers_per_device):
                p = ctx.Process(target=_worker_main,
                                args=(rank, dev, cfg, self.in_q, self.out_q), daemon=True)
                p.start()
                self.procs.append(p)
                rank += 1
        log.info("started %d GPU workers on devices %s", len(self.procs), cfg.devices)

    def submit_many(self, items: Iterable):
        n = 0
        for item in items:
            self.in_q.put(item)
            n += 1
        return n

    def results(self, n: int, timeout: Optional[float] = 600.0):
        for _ in range(n):
            try:
                yield self.out_q.get(timeout=timeout)
            except queue.Empty:
                raise TimeoutError("GPU workers stopped answering")

    def close(self):
        for _ in self.procs:
            self.in_q.put(_STOP)
        for p in self.procs:
            p.join(timeout=30)
            if p.is_alive():
                p.terminate()


def default_pool(workers_per_device: int = 2, min_free_mb: int = 6000) -> GPUPool:
    devices = visible_devices()
    try:
        free = query_gpu_memory()
        devices = [d for d in devices if free.get(d, 0) >= min_free_mb]
    except Exception:  # NVML not available (e.g. inside some containers)
        pass
    if not devices:
        raise RuntimeError("no GPU with enough free memory")
    return GPUPool(PoolConfig(devices=devices, workers_per_device=workers_per_device))
